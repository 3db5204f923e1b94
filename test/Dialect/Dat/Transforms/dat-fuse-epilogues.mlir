// RUN: dat-opt %s --split-input-file --dat-fuse-epilogues="rows=16" --canonicalize | FileCheck %s
// RUN: not dat-opt %s --split-input-file --dat-fuse-epilogues="rows=0" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: dat-fuse-epilogues: rows must be positive, got 0

// y = relu(x·Wᵀ + b) + x: the residual add is tiled by 16 rows (batch one
// at a time, the features whole); the add, the activation, the contraction
// and the bias broadcast it accumulates onto are all computed per tile, so
// no [2,40,32] tensor but the result is ever produced.
#bias = affine_map<(d0, d1, d2) -> (d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#x = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#y = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @linear_relu_residual
// CHECK-NOT: linalg.generic
// CHECK: scf.forall (%[[B:.+]], %[[R:.+]]) = (0, 0) to (2, 40) step (1, 16)
// CHECK:   linalg.generic {{.*}} ins(%{{.+}} : tensor<32xf32>) outs(%{{.+}} : tensor<1x?x32xf32>)
// CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%{{.+}}, %{{.+}} : tensor<1x?x32xf32>, tensor<32x32xf32>)
// CHECK:   arith.maximumf
// CHECK:   arith.addf
// CHECK:   scf.forall.in_parallel
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @linear_relu_residual(%x: tensor<2x40x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>) -> tensor<2x40x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x40x32xf32>
  %init = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<32xf32>) outs(%e : tensor<2x40x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<2x40x32xf32>
  %lin = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x40x32xf32>, tensor<32x32xf32>) outs(%init : tensor<2x40x32xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x40x32xf32>
  %act = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%lin : tensor<2x40x32xf32>) outs(%e : tensor<2x40x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x40x32xf32>
  %res = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %act : tensor<2x40x32xf32>, tensor<2x40x32xf32>) outs(%e : tensor<2x40x32xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %r = arith.addf %v, %a : f32
    linalg.yield %r : f32
  } -> tensor<2x40x32xf32>
  return %res : tensor<2x40x32xf32>
}

// -----

// The projection is also returned: fusing it would compute it twice, so
// nothing is tiled. An elementwise chain without a contraction stays too.
#id = affine_map<(d0, d1) -> (d0, d1)>
#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1, d2)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @shared_projection
// CHECK-NOT: scf.forall
// CHECK: return
func.func @shared_projection(%x: tensor<40x32xf32>, %w: tensor<32x32xf32>) -> (tensor<40x32xf32>, tensor<40x32xf32>, tensor<40x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<40x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<40x32xf32>) -> tensor<40x32xf32>
  %lin = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<40x32xf32>, tensor<32x32xf32>) outs(%init : tensor<40x32xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<40x32xf32>
  %act = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%lin : tensor<40x32xf32>) outs(%e : tensor<40x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<40x32xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<40x32xf32>) outs(%e : tensor<40x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.negf %v : f32
    linalg.yield %r : f32
  } -> tensor<40x32xf32>
  return %act, %lin, %neg : tensor<40x32xf32>, tensor<40x32xf32>, tensor<40x32xf32>
}

// -----

// The consumer reads the projection's first row for every row (a
// broadcast): a row tile would need the whole projection, recomputed per
// tile, so nothing is fused.
#x = affine_map<(d0, d1, d2) -> (d0, d2)>
#w = affine_map<(d0, d1, d2) -> (d1, d2)>
#y = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row0 = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @broadcast_read
// CHECK-NOT: scf.forall
// CHECK: return
func.func @broadcast_read(%x: tensor<40x32xf32>, %w: tensor<32x32xf32>) -> tensor<40x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<40x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<40x32xf32>) -> tensor<40x32xf32>
  %lin = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<40x32xf32>, tensor<32x32xf32>) outs(%init : tensor<40x32xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<40x32xf32>
  %r = linalg.generic {indexing_maps = [#row0, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%lin, %x : tensor<40x32xf32>, tensor<40x32xf32>) outs(%e : tensor<40x32xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %s = arith.addf %v, %a : f32
    linalg.yield %s : f32
  } -> tensor<40x32xf32>
  return %r : tensor<40x32xf32>
}
