// RUN: dat-opt %s --dat-register-tiles --canonicalize | FileCheck %s
// RUN: dat-opt %s --dat-register-tiles="reduction-tile=0" --canonicalize | FileCheck %s --check-prefix=WHOLE
// RUN: not dat-opt %s --dat-register-tiles="reduction-tile=-1" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: dat-register-tiles: reduction-tile must be positive or 0, got -1

// A projection whose reduction (256) the reduction tile (128) divides: the
// reduction in blocks of 128, the outermost loop; inside, the weight's
// register panels, then the row tiles, so that the panel's 128 × 32 block
// (16 KiB) is read from L1 by all 8 row tiles. The first block is peeled
// and takes the fill: its register tiles start from zeros in registers, and
// the output is never filled; the blocks after it accumulate into what it
// wrote (here one block: its loop folds away).
// CHECK-LABEL: func.func @projection
// CHECK-NOT: linalg.fill
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0] [2, 128, 32] [1, 1, 1] : tensor<2x256x32xf32> to tensor<2x128x32xf32>
// CHECK: scf.for %{{.+}} = %c0 to %c2 step %c1
// CHECK: scf.for %{{.+}} = %c0 to %c64 step %c8
// CHECK: scf.for %{{.+}} = %c0 to %c128 step %c4 iter_args(%{{.+}} = %cst) -> (vector<8x32xf32>)
// CHECK: tensor.extract_slice %{{.+}}[0, 128, 0] [2, 128, 32] [1, 1, 1] : tensor<2x256x32xf32> to tensor<2x128x32xf32>
// CHECK: scf.for %{{.+}} = %c0 to %c2 step %c1
// CHECK: scf.for %{{.+}} = %c0 to %c64 step %c8
// CHECK: %[[ACC:.+]] = vector.transfer_read {{.+}} : tensor<1x8x1x32xf32>, vector<8x32xf32>
// CHECK: scf.for %{{.+}} = %c0 to %c128 step %c4 iter_args(%{{.+}} = %[[ACC]]) -> (vector<8x32xf32>)
// CHECK-NOT: linalg.fill

// Without blocks: rows outside the panels, the whole reduction innermost,
// the accumulators starting as zeros in registers.
// WHOLE-LABEL: func.func @projection
// WHOLE-NOT: linalg.fill
// WHOLE: scf.for %{{.+}} = %c0 to %c64 step %c8
// WHOLE: scf.for %{{.+}} = %c0 to %c2 step %c1
// WHOLE: scf.for %{{.+}} = %c0 to %c256 step %c4 iter_args(%{{.+}} = %cst{{.*}}) -> (vector<8x32xf32>)
func.func @projection(%x: tensor<1x64x256xf32>, %w: tensor<64x256xf32>) -> tensor<1x64x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x64xf32>
  %o = linalg.fill ins(%cst : f32) outs(%e : tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                                        affine_map<(b, m, n, k) -> (n, k)>,
                                        affine_map<(b, m, n, k) -> (b, m, n)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x64x256xf32>, tensor<64x256xf32>) outs(%o : tensor<1x64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x64x64xf32>
  return %y : tensor<1x64x64xf32>
}
