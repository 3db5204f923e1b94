func.func @f(%q: tensor<2x4x12x8xf32>, %o: tensor<2x4x12x8xf32>, %m: tensor<3x12x12xf32>) -> tensor<2x4x12x8xf32> {
  %r = dat.attention ins(%q, %q, %q : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>) score_scale(%m : tensor<3x12x12xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}
