// RUN: dat-opt %s --dat-register-tiles="outside-loops=false" --canonicalize | FileCheck %s

// With library GEMMs (`--gemm library`), a projection in the form
// dat-gemm-library-calls takes (torch's [out, in] weight) is left whole for
// it; a contraction the library does not take (HYLA's Flax [in, out]
// kernel) is still register-tiled, not left to scalar loops.
// CHECK-LABEL: func.func @projections
// CHECK: %[[LIB:.+]] = linalg.generic
// CHECK-SAME: ins(%arg0, %arg1 : tensor<1x16x64xf32>, tensor<32x64xf32>)
// CHECK: scf.for
// CHECK: vector.fma {{.+}} : vector<32xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[LIB]], %{{.+}}
func.func @projections(%x: tensor<1x16x64xf32>, %w: tensor<32x64xf32>, %k: tensor<64x32xf32>) -> (tensor<1x16x32xf32>, tensor<1x16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  %y = linalg.generic {
      indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                       affine_map<(b, m, n, k) -> (n, k)>,
                       affine_map<(b, m, n, k) -> (b, m, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x16x64xf32>, tensor<32x64xf32>)
      outs(%init : tensor<1x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x16x32xf32>
  %z = linalg.generic {
      indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                       affine_map<(b, m, n, k) -> (k, n)>,
                       affine_map<(b, m, n, k) -> (b, m, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %k : tensor<1x16x64xf32>, tensor<64x32xf32>)
      outs(%init : tensor<1x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x16x32xf32>
  return %y, %z : tensor<1x16x32xf32>, tensor<1x16x32xf32>
}
