func.func @f(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>, %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>, %s: tensor<2x2x12x8xf32>, %wr: tensor<4x8x2xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  %r = dat.relational_attention ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x12x8xf32>, tensor<4x8x2xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 rel_scale = 0.25 activation = "identity" -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}
