func.func @f(%q: tensor<1x2x4x8xi32>, %k: tensor<1x2x4x8xi32>, %v: tensor<1x2x4x8xi32>, %o: tensor<1x2x4x8xi32>) -> tensor<1x2x4x8xi32> {
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xi32>, tensor<1x2x4x8xi32>, tensor<1x2x4x8xi32>) outs(%o : tensor<1x2x4x8xi32>) scale = 0.5 -> tensor<1x2x4x8xi32>
  return %r : tensor<1x2x4x8xi32>
}
