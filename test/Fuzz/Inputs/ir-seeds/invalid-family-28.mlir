func.func @f(%x: tensor<2x4x12x8xf32>, %m: tensor<3x12x4x8x8xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  %r = dat.orthogonal_map ins(%x, %m : tensor<2x4x12x8xf32>, tensor<3x12x4x8x8xf32>) outs(%o : tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}
