func.func @tile_mask_value_dim(%q: tensor<1x2x16x32xf32>, %k: tensor<1x2x16x32xf32>,
                               %v: tensor<1x2x16x32xf32>, %m: tensor<16x16xi1>,
                               %o: tensor<1x2x16x32xf32>) -> tensor<1x2x16x32xf32> {
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>,
                         tensor<1x2x16x32xf32>)
                     mask(%m : tensor<16x16xi1>)
                     outs(%o : tensor<1x2x16x32xf32>) scale = 0.125
                     -> tensor<1x2x16x32xf32>
  return %r : tensor<1x2x16x32xf32>
}
