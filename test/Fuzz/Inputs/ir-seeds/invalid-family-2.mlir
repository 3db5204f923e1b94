func.func @f(%x: tensor<2x16x4x8xf32>, %c: tensor<12x4xf32>) -> tensor<2x16x4x8xf32> {
  %r = dat.rope %x, %c, %c : tensor<2x16x4x8xf32>, tensor<12x4xf32> -> tensor<2x16x4x8xf32>
  return %r : tensor<2x16x4x8xf32>
}
