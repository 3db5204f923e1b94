// RUN: dat-opt %s --split-input-file --dat-fuse-epilogues="threads=2" --canonicalize | FileCheck %s
// RUN: dat-opt %s --split-input-file --dat-fuse-epilogues --canonicalize | FileCheck %s --check-prefix=ONE
// RUN: not dat-opt %s --split-input-file --dat-fuse-epilogues="threads=-1" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: dat-fuse-epilogues: threads must be positive or 0, got -1

// x·Wᵀ over 1000 rows on two threads: tiles of 64 rows are 15 full ones,
// 8 and 7 per thread, and 40 rows after them (552 rows on the longer
// thread); tiles of 80 are 12, 6 and 6, then 40 (520). Alone (or for one
// thread) the tiles keep their 64 rows.
#x = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#y = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @rows_for_two_threads
// CHECK: scf.forall (%{{.+}}) = (0) to (1000) step (80)
// ONE-LABEL: func.func @rows_for_two_threads
// ONE: scf.forall (%{{.+}}) = (0) to (1000) step (64)
func.func @rows_for_two_threads(%x: tensor<1x1000x32xf32>, %w: tensor<64x32xf32>) -> tensor<1x1000x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1000x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1000x64xf32>) -> tensor<1x1000x64xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x1000x32xf32>, tensor<64x32xf32>) outs(%init : tensor<1x1000x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x1000x64xf32>
  return %y : tensor<1x1000x64xf32>
}

// -----

// 960 rows: 15 tiles of 64, one more on one thread, but a row count that 64
// divides keeps its tiles (K packed in blocks of 64 keys moves into its
// projection's loop only where a tile is a block). 900 rows: 14 tiles and 4
// rows, within 3% of even.
#x = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#y = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @rows_kept
// CHECK: scf.forall (%{{.+}}) = (0) to (960) step (64)
// CHECK: scf.forall (%{{.+}}) = (0) to (900) step (64)
func.func @rows_kept(%x: tensor<1x960x32xf32>, %x2: tensor<1x900x32xf32>, %w: tensor<64x32xf32>) -> (tensor<1x960x64xf32>, tensor<1x900x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x960x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x960x64xf32>) -> tensor<1x960x64xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x960x32xf32>, tensor<64x32xf32>) outs(%init : tensor<1x960x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x960x64xf32>
  %e2 = tensor.empty() : tensor<1x900x64xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x900x64xf32>) -> tensor<1x900x64xf32>
  %y2 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x2, %w : tensor<1x900x32xf32>, tensor<64x32xf32>) outs(%init2 : tensor<1x900x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x900x64xf32>
  return %y, %y2 : tensor<1x960x64xf32>, tensor<1x900x64xf32>
}
