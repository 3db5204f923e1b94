func.func @f(%q: tensor<2x8x16x2xf32>, %k: tensor<2x8x16x2xf32>, %v: tensor<2x8x16x2xf32>, %o: tensor<2x8x16x2xf32>, %m: tensor<16x12xi1>) -> tensor<2x8x16x2xf32> {
  %r = dat.hyper_attention ins(%q, %k, %v : tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>) mask(%m : tensor<16x12xi1>) outs(%o : tensor<2x8x16x2xf32>) scale = 0.5 normalization = "softmax" network = "default" -> tensor<2x8x16x2xf32>
  return %r : tensor<2x8x16x2xf32>
}
