func.func @f(%x: tensor<2x4x12x8xf32>, %m: tensor<2x12x4x8x8xf32>, %o: tensor<2x4x12x4xf32>) -> tensor<2x4x12x4xf32> {
  %r = dat.orthogonal_map ins(%x, %m : tensor<2x4x12x8xf32>, tensor<2x12x4x8x8xf32>) outs(%o : tensor<2x4x12x4xf32>) -> tensor<2x4x12x4xf32>
  return %r : tensor<2x4x12x4xf32>
}
