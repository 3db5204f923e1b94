func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<2x4x8xf32>, %o: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<2x4x8xf32>) outs(%o : tensor<1x2x4x8xf32>) scale = 0.5 -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}
