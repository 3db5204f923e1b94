func.func @f(%x: tensor<2x16x4x7xf32>, %c: tensor<16x3xf32>) -> tensor<2x16x4x7xf32> {
  %r = dat.rope %x, %c, %c : tensor<2x16x4x7xf32>, tensor<16x3xf32> -> tensor<2x16x4x7xf32>
  return %r : tensor<2x16x4x7xf32>
}
