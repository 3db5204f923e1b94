// y[1,1024,512] = x[1,1024,512] · W[512,512]^T as the frontend emits a
// projection; bench/cpu/probes/projection.sh compiles it with dat-opt.
#x = affine_map<(b, i, o, k) -> (b, i, k)>
#w = affine_map<(b, i, o, k) -> (o, k)>
#y = affine_map<(b, i, o, k) -> (b, i, o)>
func.func @proj(%x: tensor<1x1024x512xf32>, %w: tensor<512x512xf32>) -> tensor<1x1024x512xf32> {
  %e = tensor.empty() : tensor<1x1024x512xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x1024x512xf32>) -> tensor<1x1024x512xf32>
  %r = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x1024x512xf32>, tensor<512x512xf32>) outs(%f : tensor<1x1024x512xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x1024x512xf32>
  return %r : tensor<1x1024x512xf32>
}
