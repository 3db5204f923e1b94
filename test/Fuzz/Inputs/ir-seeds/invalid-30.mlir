func.func @f(%q: tensor<2x4x12x8xf32>, %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  %r = dat.attention ins(%q, %q, %q : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>) outs(%o : tensor<2x4x12x8xf32>) scale = 0.5 {mask_fill = 0x7F800000 : f32} -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}
