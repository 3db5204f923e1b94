func.func @f(%x: tensor<2x16x4xf32>, %c: tensor<16x2xf32>) -> tensor<2x16x4xf32> {
  %r = dat.rope %x, %c, %c : tensor<2x16x4xf32>, tensor<16x2xf32> -> tensor<2x16x4xf32>
  return %r : tensor<2x16x4xf32>
}
