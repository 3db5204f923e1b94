func.func @attention_plain(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>,
                           %v: tensor<2x4x16x8xf32>, %o: tensor<2x4x16x8xf32>)
    -> tensor<2x4x16x8xf32> {
  %r = dat.attention ins(%q, %k, %v : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>,
                         tensor<2x4x16x8xf32>)
                     outs(%o : tensor<2x4x16x8xf32>) scale = 0.353553385
                     -> tensor<2x4x16x8xf32>
  return %r : tensor<2x4x16x8xf32>
}

func.func @attention_gqa_causal(%q: tensor<1x8x4x16xf16>, %k: tensor<1x2x32x16xf16>,
                                %v: tensor<1x2x32x24xf16>, %o: tensor<1x8x4x24xf16>,
                                %pos: index) -> tensor<1x8x4x24xf16> {
  %r = dat.attention ins(%q, %k, %v : tensor<1x8x4x16xf16>, tensor<1x2x32x16xf16>,
                         tensor<1x2x32x24xf16>)
                     query_offset(%pos)
                     outs(%o : tensor<1x8x4x24xf16>) scale = 0.25 causal
                     -> tensor<1x8x4x24xf16>
  return %r : tensor<1x8x4x24xf16>
}

func.func @attention_mask_dynamic(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>,
                                  %v: tensor<1x2x?x8xf32>, %m: tensor<?x?xi1>,
                                  %o: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>,
                         tensor<1x2x?x8xf32>)
                     mask(%m : tensor<?x?xi1>)
                     outs(%o : tensor<1x2x?x8xf32>) scale = 1.0
                     -> tensor<1x2x?x8xf32>
  return %r : tensor<1x2x?x8xf32>
}

func.func @attention_weights(%q: tensor<2x4x16x8xf32>, %k: tensor<2x2x16x8xf32>,
                             %o: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
  %p = dat.attention_weights ins(%q, %k : tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>)
                             outs(%o : tensor<2x4x16x16xf32>) scale = 0.353553385 causal
                             -> tensor<2x4x16x16xf32>
  return %p : tensor<2x4x16x16xf32>
}

func.func @rope(%x: tensor<2x16x4x8xf32>, %c: tensor<16x4xf32>, %s: tensor<16x4xf32>)
    -> tensor<2x16x4x8xf32> {
  %r = dat.rope %x, %c, %s : tensor<2x16x4x8xf32>, tensor<16x4xf32> -> tensor<2x16x4x8xf32>
  return %r : tensor<2x16x4x8xf32>
}

func.func @relations(%qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>,
                     %o: tensor<2x12x12x3xf32>) -> tensor<2x12x12x3xf32> {
  %r = dat.relations ins(%qr, %kr : tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>)
                     outs(%o : tensor<2x12x12x3xf32>) scale = 0.25 activation = "softmax"
                     -> tensor<2x12x12x3xf32>
  return %r : tensor<2x12x12x3xf32>
}

func.func @relational_attention(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>,
                                %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>,
                                %s: tensor<2x2x12x8xf32>, %sp: tensor<12x12x2x8xf32>,
                                %wr: tensor<4x8x3xf32>, %o: tensor<2x4x12x8xf32>)
    -> (tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>) {
  %r = dat.relational_attention
         ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>,
             tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x12x8xf32>,
             tensor<4x8x3xf32>)
         outs(%o : tensor<2x4x12x8xf32>)
         scale = 0.353553385 rel_scale = 0.25 activation = "gelu" causal
         -> tensor<2x4x12x8xf32>
  %p = dat.relational_attention
         ins(%q, %k, %qr, %kr, %sp, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>,
             tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<12x12x2x8xf32>,
             tensor<4x8x3xf32>)
         outs(%o : tensor<2x4x12x8xf32>)
         scale = 0.353553385 rel_scale = 0.25 activation = "identity" symbols_per_pair
         -> tensor<2x4x12x8xf32>
  return %r, %p : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>
}

func.func @hyper_attention(%q: tensor<2x8x16x2xf32>, %k: tensor<2x8x16x2xf32>,
                           %v: tensor<2x8x16x2xf32>, %b: tensor<1x8x16x16xf32>,
                           %m: tensor<16x16xi1>, %o: tensor<2x8x16x2xf32>,
                           %w: tensor<2x8x16x16xf32>)
    -> (tensor<2x8x16x2xf32>, tensor<2x8x16x16xf32>) {
  %r = dat.hyper_attention ins(%q, %k, %v : tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>,
                               tensor<2x8x16x2xf32>)
                           bias(%b : tensor<1x8x16x16xf32>)
                           outs(%o : tensor<2x8x16x2xf32>)
                           scale = 0.707106769 normalization = "rms_head"
                           network = "mlp_relu" causal -> tensor<2x8x16x2xf32>
  %a = dat.hyper_attention_weights ins(%q, %k : tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>)
                                   mask(%m : tensor<16x16xi1>)
                                   outs(%w : tensor<2x8x16x16xf32>)
                                   scale = 0.707106769 normalization = "softmax"
                                   -> tensor<2x8x16x16xf32>
  return %r, %a : tensor<2x8x16x2xf32>, tensor<2x8x16x16xf32>
}

func.func @attention_ape_extras(%q: tensor<2x4x12x8xf32>, %km: tensor<2x12xi1>,
                                %m: tensor<1x12x12xf32>, %o: tensor<2x4x12x8xf32>,
                                %w: tensor<2x4x12x12xf32>)
    -> (tensor<2x4x12x8xf32>, tensor<2x4x12x12xf32>) {
  %r = dat.attention ins(%q, %q, %q : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>,
                         tensor<2x4x12x8xf32>)
                     key_mask(%km : tensor<2x12xi1>) score_scale(%m : tensor<1x12x12xf32>)
                     outs(%o : tensor<2x4x12x8xf32>) scale = 0.353553385
                     {mask_fill = -1.0e10 : f32} -> tensor<2x4x12x8xf32>
  %s = dat.attention_weights ins(%q, %q : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>)
                     key_mask(%km : tensor<2x12xi1>) score_scale(%m : tensor<1x12x12xf32>)
                     outs(%w : tensor<2x4x12x12xf32>) scale = 0.353553385 logits
                     {mask_fill = -1.0e10 : f32} -> tensor<2x4x12x12xf32>
  return %r, %s : tensor<2x4x12x8xf32>, tensor<2x4x12x12xf32>
}

func.func @orthogonal_map(%x: tensor<2x4x12x8xf32>, %m: tensor<1x12x4x8x8xf32>, %o: tensor<2x4x12x8xf32>)
    -> tensor<2x4x12x8xf32> {
  %r = dat.orthogonal_map ins(%x, %m : tensor<2x4x12x8xf32>, tensor<1x12x4x8x8xf32>) outs(%o : tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}
