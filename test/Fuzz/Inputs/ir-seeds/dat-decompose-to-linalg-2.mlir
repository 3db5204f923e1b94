func.func @rope(%x: tensor<2x16x4x8xf32>, %c: tensor<16x4xf32>, %s: tensor<16x4xf32>)
    -> tensor<2x16x4x8xf32> {
  %r = dat.rope %x, %c, %s : tensor<2x16x4x8xf32>, tensor<16x4xf32> -> tensor<2x16x4x8xf32>
  return %r : tensor<2x16x4x8xf32>
}
