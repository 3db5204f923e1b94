func.func @gqa_causal_f16(%q: tensor<1x8x4x16xf16>, %k: tensor<1x2x32x16xf16>,
                          %v: tensor<1x2x32x24xf16>, %o: tensor<1x8x4x24xf16>,
                          %pos: index) -> tensor<1x8x4x24xf16> {
  %r = dat.attention ins(%q, %k, %v : tensor<1x8x4x16xf16>, tensor<1x2x32x16xf16>,
                         tensor<1x2x32x24xf16>)
                     query_offset(%pos)
                     outs(%o : tensor<1x8x4x24xf16>) scale = 0.25 causal
                     -> tensor<1x8x4x24xf16>
  return %r : tensor<1x8x4x24xf16>
}
