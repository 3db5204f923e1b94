// RUN: dat-opt %s --split-input-file --dat-pad-dynamic-tiles | FileCheck %s
// RUN: dat-opt %s --split-input-file --dat-pad-dynamic-tiles --dat-pad-dynamic-tiles | FileCheck %s --check-prefix=TWICE

// The last block of a loop over a dynamic length (at most 64 columns) is
// computed on operands padded to 64: a row maximum pads its reduced
// dimension with -inf; its destination, static, is written in place.
// (Padded ops are static: a second run pads nothing more.)
// TWICE-LABEL: func.func @row_max
// TWICE-COUNT-1: tensor.pad
// TWICE-NOT: tensor.pad
// TWICE-LABEL: func.func @contraction
// CHECK-LABEL: func.func @row_max
// CHECK: scf.for
// CHECK: %[[P:.+]] = tensor.pad %{{.+}} low[0, 0] high[0, %{{.+}}]
// CHECK: tensor.yield %cst
// CHECK: linalg.generic {{.+}} ins(%[[P]] : tensor<8x64xf32>) outs(%arg3 : tensor<8xf32>)
// CHECK: arith.maximumf
// CHECK-NOT: linalg.copy
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_max(%s: tensor<8x?xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %s, %c1 : tensor<8x?xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> tensor<8xf32> {
    %m = affine.min affine_map<(d0)[s0] -> (-d0 + s0, 64)>(%i)[%n]
    %blk = tensor.extract_slice %s[0, %i] [8, %m] [1, 1] : tensor<8x?xf32> to tensor<8x?xf32>
    %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%blk : tensor<8x?xf32>) outs(%acc : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.maximumf %in, %out : f32
      linalg.yield %v : f32
    } -> tensor<8xf32>
    scf.yield %max : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// A contraction over the dynamic dimension (out + a·b): both inputs padded
// with 0.
// CHECK-LABEL: func.func @contraction
// CHECK-DAG: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: tensor.pad
// CHECK: tensor.yield %[[Z]]
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<4x64xf32>, tensor<64x16xf32>)
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @contraction(%p: tensor<4x?xf32>, %v: tensor<?x16xf32>, %o: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %p, %c1 : tensor<4x?xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %o) -> tensor<4x16xf32> {
    %m = affine.min affine_map<(d0)[s0] -> (-d0 + s0, 64)>(%i)[%n]
    %pb = tensor.extract_slice %p[0, %i] [4, %m] [1, 1] : tensor<4x?xf32> to tensor<4x?xf32>
    %vb = tensor.extract_slice %v[%i, 0] [%m, 16] [1, 1] : tensor<?x16xf32> to tensor<?x16xf32>
    %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%pb, %vb : tensor<4x?xf32>, tensor<?x16xf32>) outs(%acc : tensor<4x16xf32>) {
    ^bb0(%x: f32, %w: f32, %out: f32):
      %t = arith.mulf %x, %w : f32
      %u = arith.addf %out, %t : f32
      linalg.yield %u : f32
    } -> tensor<4x16xf32>
    scf.yield %y : tensor<4x16xf32>
  }
  return %r : tensor<4x16xf32>
}

// -----

// A sum of exponentials: a padded element would add exp(pad) to the sum,
// so the padded op keeps its accumulator at the padded columns.
// CHECK-LABEL: func.func @sum_exp
// CHECK: %[[P:.+]] = tensor.pad
// CHECK: %[[N:.+]] = tensor.dim %[[S:.+]], %{{.+}} : tensor<8x?xf32>
// CHECK: linalg.generic {{.+}} ins(%[[P]] : tensor<8x64xf32>)
// CHECK: %[[E:.+]] = math.exp
// CHECK: %[[SUM:.+]] = arith.addf %[[E]], %[[OUT:.+]] : f32
// CHECK: %[[J:.+]] = linalg.index 1 : index
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[J]], %[[N]] : index
// CHECK: %[[KEPT:.+]] = arith.select %[[IN]], %[[SUM]], %[[OUT]] : f32
// CHECK: linalg.yield %[[KEPT]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @sum_exp(%s: tensor<8x?xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %s, %c1 : tensor<8x?xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> tensor<8xf32> {
    %m = affine.min affine_map<(d0)[s0] -> (-d0 + s0, 64)>(%i)[%n]
    %blk = tensor.extract_slice %s[0, %i] [8, %m] [1, 1] : tensor<8x?xf32> to tensor<8x?xf32>
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%blk : tensor<8x?xf32>) outs(%acc : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %e = math.exp %in : f32
      %v = arith.addf %e, %out : f32
      linalg.yield %v : f32
    } -> tensor<8xf32>
    scf.yield %sum : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// A function of static arguments keeps its dynamic tiles (a decode step's
// key loop up to its position).
// CHECK-LABEL: func.func @static_function
// CHECK-NOT: tensor.pad
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @static_function(%s: tensor<8x100xf32>, %init: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> tensor<8xf32> {
    %m = affine.min affine_map<(d0)[s0] -> (-d0 + s0, 64)>(%i)[%n]
    %blk = tensor.extract_slice %s[0, %i] [8, %m] [1, 1] : tensor<8x100xf32> to tensor<8x?xf32>
    %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%blk : tensor<8x?xf32>) outs(%acc : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.maximumf %in, %out : f32
      linalg.yield %v : f32
    } -> tensor<8xf32>
    scf.yield %max : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// An elementwise op on a tile of dynamic size: computed on 64 rows, its
// result sliced back and copied into the op's own (dynamic) destination.
// CHECK-LABEL: func.func @elementwise
// CHECK: %[[P:.+]] = tensor.pad
// CHECK: %[[O:.+]] = tensor.pad
// CHECK: %[[E:.+]] = linalg.generic {{.+}} ins(%[[P]] : tensor<64x16xf32>) outs(%[[O]] : tensor<64x16xf32>)
// CHECK: %[[S:.+]] = tensor.extract_slice %[[E]][0, 0] [%{{.+}}, 16] [1, 1] : tensor<64x16xf32> to tensor<?x16xf32>
// CHECK: linalg.copy ins(%[[S]] : tensor<?x16xf32>) outs(%{{.+}} : tensor<?x16xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @elementwise(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%n) : tensor<?x16xf32>
  %r = scf.forall (%i) = (0) to (%n) step (64) shared_outs(%o = %e) -> (tensor<?x16xf32>) {
    %m = affine.min affine_map<(d0)[s0] -> (-d0 + s0, 64)>(%i)[%n]
    %s = tensor.extract_slice %x[%i, 0] [%m, 16] [1, 1] : tensor<?x16xf32> to tensor<?x16xf32>
    %d = tensor.extract_slice %o[%i, 0] [%m, 16] [1, 1] : tensor<?x16xf32> to tensor<?x16xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%s : tensor<?x16xf32>) outs(%d : tensor<?x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = math.exp %in : f32
      linalg.yield %v : f32
    } -> tensor<?x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %y into %o[%i, 0] [%m, 16] [1, 1] : tensor<?x16xf32> into tensor<?x16xf32>
    }
  }
  return %r : tensor<?x16xf32>
}

// -----

// A projection's last row tile over a dynamic length (fewer than 64 rows):
// computed in blocks of 8 rows, the full blocks as they are (static), only
// the last one padded, to 8 rows rather than 64.
// CHECK-LABEL: func.func @projection_rest_rows
// CHECK: scf.forall
// CHECK: %[[FULL:.+]] = affine.apply
// CHECK: scf.for %{{.+}} = %c0{{.*}} to %[[FULL]] step %c8
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<8x32xf32>, tensor<32x16xf32>) outs(%{{.+}} : tensor<8x16xf32>)
// CHECK: tensor.pad
// CHECK: : tensor<?x32xf32> to tensor<7x32xf32>
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<7x32xf32>, tensor<32x16xf32>) outs(%{{.+}} : tensor<7x16xf32>)
// CHECK: dat.origin = "projection", dat.rest_of_split
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @projection_rest_rows(%x: tensor<?x32xf32>, %w: tensor<32x16xf32>, %full: index) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x32xf32>
  %e = tensor.empty(%n) : tensor<?x16xf32>
  %r = scf.forall (%i) = (%full) to (%n) step (64) shared_outs(%o = %e) -> (tensor<?x16xf32>) {
    %m = affine.min affine_map<(d0)[s0] -> (s0 - d0, 63)>(%i)[%n]
    %xs = tensor.extract_slice %x[%i, 0] [%m, 32] [1, 1] : tensor<?x32xf32> to tensor<?x32xf32>
    %os = tensor.extract_slice %o[%i, 0] [%m, 16] [1, 1] : tensor<?x16xf32> to tensor<?x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%os : tensor<?x16xf32>) -> tensor<?x16xf32>
    %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%xs, %w : tensor<?x32xf32>, tensor<32x16xf32>) outs(%f : tensor<?x16xf32>) {
    ^bb0(%in: f32, %in2: f32, %out: f32):
      %p = arith.mulf %in, %in2 : f32
      %s = arith.addf %out, %p : f32
      linalg.yield %s : f32
    } -> tensor<?x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %y into %o[%i, 0] [%m, 16] [1, 1] : tensor<?x16xf32> into tensor<?x16xf32>
    }
  } {dat.origin = "projection", dat.rest_of_split}
  return %r : tensor<?x16xf32>
}

// -----

// A key loop's last block over a dynamic length (what scf-for-loop-peeling
// leaves of a loop in blocks of 64: the block from the split to n, of size
// n - j): computed in blocks of 16 keys, the full ones static, only the
// last padded (to 15 keys rather than 63).
// CHECK-LABEL: func.func @last_key_block
// CHECK: %[[MID:.+]] = affine.apply
// CHECK: scf.for %{{.+}} = %arg2 to %[[MID]] step %c16
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : tensor<8x16xf32>)
// CHECK: scf.for %{{.+}} = %[[MID]] to %{{.+}} step %c16
// CHECK: tensor<8x15xf32>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row2 = affine_map<(d0, d1) -> (d0)>
func.func @last_key_block(%s: tensor<8x?xf32>, %init: tensor<8xf32>, %split: index) -> tensor<8xf32> {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %n = tensor.dim %s, %c1 : tensor<8x?xf32>
  %r = scf.for %j = %split to %n step %c64 iter_args(%acc = %init) -> tensor<8xf32> {
    %m = affine.apply affine_map<(d0)[s0] -> (s0 - d0)>(%j)[%n]
    %blk = tensor.extract_slice %s[0, %j] [8, %m] [1, 1] : tensor<8x?xf32> to tensor<8x?xf32>
    %max = linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
        ins(%blk : tensor<8x?xf32>) outs(%acc : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.maximumf %in, %out : f32
      linalg.yield %v : f32
    } -> tensor<8xf32>
    scf.yield %max : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// A flash tile loop's last query tile over a dynamic length: the whole tile
// at its bound of 64 rows — the query rows and the destination padded with
// zeros once, the tile's own tensors made at 64 rows (here a row scale),
// the result's actual rows inserted — rather than each op padded.

// CHECK-LABEL: func.func @last_query_tile
// CHECK: scf.forall
// CHECK:   %[[ROWS:.+]] = affine.min
// CHECK:   %[[Q:.+]] = tensor.extract_slice %{{.+}}[%{{.+}}, 0] [%[[ROWS]], 64] [1, 1]
// CHECK:   %[[QP:.+]] = tensor.pad %[[Q]] low[0, 0] high[%{{.+}}, 0]
// CHECK:   %[[R:.+]] = linalg.generic {{.*}} ins(%{{.+}} : tensor<64x64xf32>) outs(%{{.+}} : tensor<64x64xf32>)
// CHECK:   %[[OUT:.+]] = tensor.extract_slice %[[R]][0, 0] [%[[ROWS]], 64] [1, 1] : tensor<64x64xf32> to tensor<?x64xf32>
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %[[OUT]] into %{{.+}}[%{{.+}}, 0] [%[[ROWS]], 64] [1, 1]
// CHECK-NOT: tensor.pad
func.func @last_query_tile(%q: tensor<?x64xf32>, %out: tensor<?x64xf32>, %split: index) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %q, %c0 : tensor<?x64xf32>
  %r = scf.forall (%i) = (%split) to (%n) step (64) shared_outs(%o = %out) -> (tensor<?x64xf32>) {
    %rows = affine.min affine_map<(d0)[s0] -> (64, s0 - d0)>(%i)[%n]
    %qt = tensor.extract_slice %q[%i, 0] [%rows, 64] [1, 1] : tensor<?x64xf32> to tensor<?x64xf32>
    %e = tensor.empty(%rows) : tensor<?x64xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%qt : tensor<?x64xf32>) outs(%e : tensor<?x64xf32>) {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %a : f32
      linalg.yield %m : f32
    } -> tensor<?x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%i, 0] [%rows, 64] [1, 1] : tensor<?x64xf32> into tensor<?x64xf32>
    }
  } {dat.origin = "dat.attention", dat.rest_of_split}
  return %r : tensor<?x64xf32>
}
