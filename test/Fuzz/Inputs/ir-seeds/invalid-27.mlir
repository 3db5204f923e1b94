func.func @f(%q: tensor<2x4x12x8xf32>, %o: tensor<2x4x12x8xf32>, %km: tensor<2x12xf32>) -> tensor<2x4x12x8xf32> {
  %r = dat.attention ins(%q, %q, %q : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>) key_mask(%km : tensor<2x12xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}
