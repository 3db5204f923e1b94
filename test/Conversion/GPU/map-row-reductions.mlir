// RUN: dat-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(dat-gpu-map-row-reductions))" | FileCheck %s
// RUN: dat-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(dat-gpu-map-row-reductions{min-length=2048}))" | FileCheck %s --check-prefix=LONG
// RUN: not dat-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(dat-gpu-map-row-reductions{min-length=0}))" 2>&1 | FileCheck %s --check-prefix=BAD

// A layer norm's variance over rows of 1024 (M1's, smaller): a warp per
// output element. The lanes fold every 32nd element from the identity in a
// register (the body cloned, its input loaded at the row and k), five xor
// shuffles combine them, and lane 0 adds the total to the output once.
// (-0, not +0, is the sum's identity: a row of -0s stays -0.)
// CHECK-LABEL: func.func @variance
// CHECK: %[[ROWS:.+]] = arith.muli %{{.+}}, %c16 : index
// CHECK: %[[GRID:.+]] = arith.ceildivui %[[ROWS]], %c8 : index
// CHECK: gpu.launch blocks(%[[BX:[^,]+]], {{.+}} in (%{{[^ ]+}} = %[[GRID]], {{.+}} threads(%[[TX:[^,]+]], {{.+}} in (%{{[^ ]+}} = %c256, {{.+}} function(@variance_row_reduction) {
// CHECK: %[[LANE:.+]] = arith.remui %[[TX]], %c32{{.*}} : index
// CHECK: %[[WARP:.+]] = arith.divui %[[TX]], %c32{{.*}} : index
// CHECK: %[[FIRST:.+]] = arith.muli %[[BX]], %c8{{.*}} : index
// CHECK: %[[ROW:.+]] = arith.addi %[[FIRST]], %[[WARP]] : index
// CHECK: %[[VALID:.+]] = arith.cmpi ult, %[[ROW]], %[[ROWS]] : index
// CHECK: %[[ZERO:.+]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[END:.+]] = arith.select %[[VALID]], %c1024, %{{.+}} : index
// CHECK: %[[SUM:.+]] = scf.for %[[K:.+]] = %[[LANE]] to %[[END]] step %c32{{.*}} iter_args(%[[ACC:.+]] = %[[ZERO]]) -> (f32) {
// CHECK: memref.load %{{.+}}[%{{.+}}, %{{.+}}, %[[K]]] : memref<2x16x1024xbf16>
// CHECK: memref.load %{{.+}}[%{{.+}}, %{{.+}}] : memref<2x16xf32>
// CHECK: arith.divf
// CHECK: %[[SQ:.+]] = arith.mulf
// CHECK: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[SQ]] : f32
// CHECK: scf.yield %[[NEXT]] : f32
// CHECK: %[[S1:.+]], %{{.+}} = gpu.shuffle  xor %[[SUM]], %c16_i32, %c32_i32 : f32
// CHECK: %[[T1:.+]] = arith.addf %[[SUM]], %[[S1]] : f32
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK: %[[TOTAL:.+]] = arith.addf
// CHECK: %[[ISFIRST:.+]] = arith.cmpi eq, %[[LANE]], %{{.+}} : index
// CHECK: %[[STORE:.+]] = arith.andi %[[VALID]], %[[ISFIRST]] : i1
// CHECK: scf.if %[[STORE]] {
// CHECK: %[[OLD:.+]] = memref.load %{{.+}}[%{{.+}}, %{{.+}}] : memref<2x16xf32>
// CHECK: %[[NEW:.+]] = arith.addf %[[OLD]], %[[TOTAL]] : f32
// CHECK: memref.store %[[NEW]], %{{.+}}[%{{.+}}, %{{.+}}] : memref<2x16xf32>
// CHECK-NOT: linalg.generic
// LONG-LABEL: func.func @variance
// LONG: linalg.generic
// LONG-NOT: gpu.launch
// BAD: dat-gpu-map-row-reductions: min-length must be positive, got 0
func.func @variance(%x: memref<2x16x1024xbf16>, %mean: memref<2x16xf32>, %out: memref<2x16xf32>) {
  %n = arith.constant 1.024000e+03 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %mean : memref<2x16x1024xbf16>, memref<2x16xf32>) outs(%out : memref<2x16xf32>) {
  ^bb0(%in: bf16, %m: f32, %acc: f32):
    %e = arith.extf %in : bf16 to f32
    %mu = arith.divf %m, %n : f32
    %d = arith.subf %e, %mu : f32
    %sq = arith.mulf %d, %d : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A max, the accumulator its second operand: -inf is its identity. A
// dynamic length is taken whatever min-length says.
// CHECK-LABEL: func.func @row_max
// LONG-LABEL: func.func @row_max
// LONG: gpu.launch
// CHECK: gpu.launch {{.+}} function(@row_max_row_reduction) {
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: scf.for
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : f32
// CHECK-COUNT-5: gpu.shuffle  xor
// A maxnumf's identity is NaN (maxnum(NaN, x) = x); the second kernel of a
// function gets its own name.
// CHECK: gpu.launch {{.+}} function(@row_max_row_reduction_1) {
// CHECK: arith.constant 0x7FC00000 : f32
// CHECK: scf.for
// CHECK: arith.maxnumf
func.func @row_max(%x: memref<64x?xf32>, %out: memref<64xf32>, %out2: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<64x?xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<64x?xf32>) outs(%out2 : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maxnumf %in, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Left as they are: a reduction over a dim that is not the input's
// innermost (a warp's lanes would read 4 KiB apart), a short one (under
// min-length), an accumulator used twice, an i32 output, a subtraction, a
// product (reassociated it can overflow), a max under fastmath ninf (its
// -inf identity would be poison), a matmul (its B indexed by the reduced
// dim in its outer dim), a body with a side effect, an input that is the
// output.
// CHECK-LABEL: func.func @not_taken
// CHECK-NOT: gpu.launch
// CHECK-COUNT-7: linalg.generic
// CHECK: linalg.matmul
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: gpu.launch
func.func @not_taken(%x: memref<1024x64xf32>, %y: memref<64x1024xf32>, %s: memref<64x16xf32>, %i: memref<64x1024xi32>, %out: memref<64xf32>, %iout: memref<64xi32>, %bm: memref<1024x64xf32>, %c: memref<64x64xf32>, %count: memref<i32>, %sq: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<1024x64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%s : memref<64x16xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%y : memref<64x1024xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.mulf %acc, %acc : f32
    %b = arith.addf %a, %in : f32
    linalg.yield %b : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%i : memref<64x1024xi32>) outs(%iout : memref<64xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %a = arith.addi %acc, %in : i32
    linalg.yield %a : i32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%y : memref<64x1024xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.subf %acc, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%y : memref<64x1024xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.mulf %acc, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%y : memref<64x1024xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.maximumf %acc, %in fastmath<ninf> : f32
    linalg.yield %a : f32
  }
  linalg.matmul ins(%y, %bm : memref<64x1024xf32>, memref<1024x64xf32>) outs(%c : memref<64x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%y : memref<64x1024xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %one = arith.constant 1 : i32
    %old = memref.atomic_rmw addi %one, %count[] : (i32, memref<i32>) -> i32
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  %view = memref.subview %sq[0, 0] [64, 1] [1, 1] : memref<64x64xf32> to memref<64xf32, strided<[64]>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%sq : memref<64x64xf32>) outs(%view : memref<64xf32, strided<[64]>>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  return
}
