func.func @tile_gqa_causal(%q: tensor<2x8x16x32xf32>, %k: tensor<2x4x16x32xf32>,
                           %v: tensor<2x4x16x32xf32>, %o: tensor<2x8x16x32xf32>)
    -> tensor<2x8x16x32xf32> {
  %r = dat.attention ins(%q, %k, %v : tensor<2x8x16x32xf32>, tensor<2x4x16x32xf32>,
                         tensor<2x4x16x32xf32>)
                     outs(%o : tensor<2x8x16x32xf32>) scale = 0.125 causal
                     -> tensor<2x8x16x32xf32>
  return %r : tensor<2x8x16x32xf32>
}
