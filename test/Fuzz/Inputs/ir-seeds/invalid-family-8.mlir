func.func @f(%qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x8xf32>, %o: tensor<2x12x12x3xf32>) -> tensor<2x12x12x3xf32> {
  %r = dat.relations ins(%qr, %kr : tensor<2x3x12x16xf32>, tensor<2x3x12x8xf32>) outs(%o : tensor<2x12x12x3xf32>) scale = 0.25 activation = "identity" -> tensor<2x12x12x3xf32>
  return %r : tensor<2x12x12x3xf32>
}
