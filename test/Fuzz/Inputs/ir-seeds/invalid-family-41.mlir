func.func @f(%q: tensor<2x8x16x2xf32>, %k: tensor<2x8x16x4xf32>, %o: tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32> {
  %r = dat.hyper_attention_weights ins(%q, %k : tensor<2x8x16x2xf32>, tensor<2x8x16x4xf32>) outs(%o : tensor<2x8x16x16xf32>) scale = 0.5 normalization = "none" -> tensor<2x8x16x16xf32>
  return %r : tensor<2x8x16x16xf32>
}
