func.func @tile_hyla(%q: tensor<2x4x8x3xf32>, %k: tensor<2x4x8x3xf32>,
                     %v: tensor<2x4x8x3xf32>, %bias: tensor<2x4x8x8xf32>,
                     %m: tensor<8x8xi1>, %o: tensor<2x4x8x3xf32>)
    -> tensor<2x4x8x3xf32> {
  %r = dat.hyper_attention ins(%q, %k, %v : tensor<2x4x8x3xf32>, tensor<2x4x8x3xf32>,
                               tensor<2x4x8x3xf32>)
                           bias(%bias : tensor<2x4x8x8xf32>) mask(%m : tensor<8x8xi1>)
                           outs(%o : tensor<2x4x8x3xf32>)
                           scale = 0.5 normalization = "softmax" network = "default"
                           -> tensor<2x4x8x3xf32>
  return %r : tensor<2x4x8x3xf32>
}
