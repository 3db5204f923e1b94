func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %o: tensor<1x2x4x6x1xf32>) -> tensor<1x2x4x6x1xf32> {
  %r = dat.attention_weights ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) outs(%o : tensor<1x2x4x6x1xf32>) scale = 1.0 -> tensor<1x2x4x6x1xf32>
  return %r : tensor<1x2x4x6x1xf32>
}
