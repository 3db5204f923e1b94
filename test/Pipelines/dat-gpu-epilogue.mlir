// REQUIRES: cuda-toolkit
// RUN: dat-opt %s --dat-gpu-pipeline="toolkit=%cuda_toolkit format=isa gemm=generated" | FileCheck %s --check-prefix=FUSED
// RUN: dat-opt %s --dat-gpu-pipeline="toolkit=%cuda_toolkit format=isa gemm=generated fuse-epilogues=false" | FileCheck %s --check-prefix=UNFUSED

// y = relu(x·Wᵀ + b) + x on the GPU: with epilogue fusion the bias, the
// projection, the activation and the residual add are one kernel (a block
// per 64 rows, the tile's projection in shared memory); without it, one
// kernel per op. (gemm=generated: the GPU default, auto, is cuBLAS.)
// FUSED: llvm.func @linear_relu_residual
// FUSED-COUNT-1: gpu.launch_func
// FUSED-NOT: gpu.launch_func
// FUSED: gpu.binary
// FUSED-SAME: bar.sync
// UNFUSED: llvm.func @linear_relu_residual
// UNFUSED-COUNT-4: gpu.launch_func
// UNFUSED-NOT: gpu.launch_func
#bias = affine_map<(d0, d1, d2) -> (d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#x = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#y = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
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
