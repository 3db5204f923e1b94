// RUN: dat-opt %s | FileCheck %s
// RUN: dat-opt %s | dat-opt | FileCheck %s
// RUN: dat-opt %s --mlir-print-op-generic | dat-opt | FileCheck %s

// CHECK-LABEL: func.func @attention_plain
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x16x8xf32>, %[[K:.+]]: tensor<2x4x16x8xf32>, %[[V:.+]]: tensor<2x4x16x8xf32>, %[[O:.+]]: tensor<2x4x16x8xf32>)
// CHECK: dat.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) outs(%[[O]] : tensor<2x4x16x8xf32>) scale = 0.353553385 -> tensor<2x4x16x8xf32>
func.func @attention_plain(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>,
                           %v: tensor<2x4x16x8xf32>, %o: tensor<2x4x16x8xf32>)
    -> tensor<2x4x16x8xf32> {
  %r = dat.attention ins(%q, %k, %v : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>,
                         tensor<2x4x16x8xf32>)
                     outs(%o : tensor<2x4x16x8xf32>) scale = 0.353553385
                     -> tensor<2x4x16x8xf32>
  return %r : tensor<2x4x16x8xf32>
}

// Grouped-query heads (8 query heads over 2 kv heads), a value dim that
// differs from the key dim, a causal mask with a query offset.
// CHECK-LABEL: func.func @attention_gqa_causal
// CHECK: dat.attention ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<1x8x4x16xf16>, tensor<1x2x32x16xf16>, tensor<1x2x32x24xf16>) query_offset(%{{.+}}) outs(%{{.+}} : tensor<1x8x4x24xf16>) scale = 2.500000e-01 causal -> tensor<1x8x4x24xf16>
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

// A boolean mask and dynamic sequence lengths.
// CHECK-LABEL: func.func @attention_mask_dynamic
// CHECK: dat.attention ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>) mask(%{{.+}} : tensor<?x?xi1>) outs(%{{.+}} : tensor<1x2x?x8xf32>) scale = 1.000000e+00 -> tensor<1x2x?x8xf32>
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

// CHECK-LABEL: func.func @attention_weights
// CHECK: dat.attention_weights ins(%{{.+}}, %{{.+}} : tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>) outs(%{{.+}} : tensor<2x4x16x16xf32>) scale = 0.353553385 causal -> tensor<2x4x16x16xf32>
func.func @attention_weights(%q: tensor<2x4x16x8xf32>, %k: tensor<2x2x16x8xf32>,
                             %o: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
  %p = dat.attention_weights ins(%q, %k : tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>)
                             outs(%o : tensor<2x4x16x16xf32>) scale = 0.353553385 causal
                             -> tensor<2x4x16x16xf32>
  return %p : tensor<2x4x16x16xf32>
}

// CHECK-LABEL: func.func @rope
// CHECK: dat.rope %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x16x4x8xf32>, tensor<16x4xf32> -> tensor<2x16x4x8xf32>
func.func @rope(%x: tensor<2x16x4x8xf32>, %c: tensor<16x4xf32>, %s: tensor<16x4xf32>)
    -> tensor<2x16x4x8xf32> {
  %r = dat.rope %x, %c, %s : tensor<2x16x4x8xf32>, tensor<16x4xf32> -> tensor<2x16x4x8xf32>
  return %r : tensor<2x16x4x8xf32>
}

// Per token and head (learned angles at arbitrary positions); the batch of
// the tables broadcasts.
// CHECK-LABEL: func.func @rope_per_token
// CHECK: dat.rope %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x16x4x8xf32>, tensor<1x16x4x4xf32> -> tensor<2x16x4x8xf32>
func.func @rope_per_token(%x: tensor<2x16x4x8xf32>, %c: tensor<1x16x4x4xf32>, %s: tensor<1x16x4x4xf32>)
    -> tensor<2x16x4x8xf32> {
  %r = dat.rope %x, %c, %s : tensor<2x16x4x8xf32>, tensor<1x16x4x4xf32> -> tensor<2x16x4x8xf32>
  return %r : tensor<2x16x4x8xf32>
}

// CHECK-LABEL: func.func @relations
// CHECK: dat.relations ins(%{{.+}}, %{{.+}} : tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>) outs(%{{.+}} : tensor<2x12x12x3xf32>) scale = 2.500000e-01 activation = "softmax" -> tensor<2x12x12x3xf32>
func.func @relations(%qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>,
                     %o: tensor<2x12x12x3xf32>) -> tensor<2x12x12x3xf32> {
  %r = dat.relations ins(%qr, %kr : tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>)
                     outs(%o : tensor<2x12x12x3xf32>) scale = 0.25 activation = "softmax"
                     -> tensor<2x12x12x3xf32>
  return %r : tensor<2x12x12x3xf32>
}

// Per-position symbols, grouped kv heads, causal; then per-pair symbols.
// CHECK-LABEL: func.func @relational_attention
// CHECK: dat.relational_attention ins({{.*}} : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x12x8xf32>, tensor<4x8x3xf32>) outs(%{{.+}} : tensor<2x4x12x8xf32>) scale = 0.353553385 rel_scale = 2.500000e-01 activation = "gelu" causal -> tensor<2x4x12x8xf32>
// CHECK: dat.relational_attention ins({{.*}} : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<12x12x2x8xf32>, tensor<4x8x3xf32>) outs(%{{.+}} : tensor<2x4x12x8xf32>) scale = 0.353553385 rel_scale = 2.500000e-01 activation = "identity" symbols_per_pair -> tensor<2x4x12x8xf32>
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

// Per-pair symbols shared by the heads, 20 wide, projected per head.
// CHECK-LABEL: func.func @relational_attention_symbol_proj
// CHECK: dat.relational_attention ins({{.*}} : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>, tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<12x12x1x20xf32>, tensor<4x8x3xf32>) symbol_proj(%{{.+}} : tensor<4x8x20xf32>) outs(%{{.+}} : tensor<2x4x12x8xf32>) scale = 0.353553385 rel_scale = 2.500000e-01 activation = "identity" symbols_per_pair -> tensor<2x4x12x8xf32>
func.func @relational_attention_symbol_proj(
    %q: tensor<2x4x12x8xf32>, %k: tensor<2x4x12x8xf32>,
    %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>,
    %s: tensor<12x12x1x20xf32>, %wr: tensor<4x8x3xf32>, %p: tensor<4x8x20xf32>,
    %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  %r = dat.relational_attention
         ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>,
             tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<12x12x1x20xf32>,
             tensor<4x8x3xf32>)
         symbol_proj(%p : tensor<4x8x20xf32>)
         outs(%o : tensor<2x4x12x8xf32>)
         scale = 0.353553385 rel_scale = 0.25 activation = "identity" symbols_per_pair
         -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

// CHECK-LABEL: func.func @hyper_attention
// CHECK: dat.hyper_attention ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>) bias(%{{.+}} : tensor<1x8x16x16xf32>) outs(%{{.+}} : tensor<2x8x16x2xf32>) scale = 0.707106769 normalization = "rms_head" network = "mlp_relu" causal -> tensor<2x8x16x2xf32>
// CHECK: dat.hyper_attention_weights ins(%{{.+}}, %{{.+}} : tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>) mask(%{{.+}} : tensor<16x16xi1>) outs(%{{.+}} : tensor<2x8x16x16xf32>) scale = 0.707106769 normalization = "softmax" -> tensor<2x8x16x16xf32>
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

// APE's extras: key-padding mask, per-pair score scale, finite mask fill;
// and the pre-softmax logits.
// CHECK-LABEL: func.func @attention_ape_extras
// CHECK: dat.attention ins({{.*}}) key_mask(%{{.+}} : tensor<2x12xi1>) score_scale(%{{.+}} : tensor<1x12x12xf32>) outs(%{{.+}} : tensor<2x4x12x8xf32>) scale = 0.353553385 {mask_fill = -1.000000e+10 : f32} -> tensor<2x4x12x8xf32>
// CHECK: dat.attention_weights ins({{.*}}) key_mask(%{{.+}} : tensor<2x12xi1>) score_scale(%{{.+}} : tensor<1x12x12xf32>) outs(%{{.+}} : tensor<2x4x12x12xf32>) scale = 0.353553385 logits {mask_fill = -1.000000e+10 : f32} -> tensor<2x4x12x12xf32>
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

// CHECK-LABEL: func.func @orthogonal_map
// CHECK: dat.orthogonal_map ins(%{{.+}}, %{{.+}} : tensor<2x4x12x8xf32>, tensor<1x12x4x8x8xf32>) outs(%{{.+}} : tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32>
func.func @orthogonal_map(%x: tensor<2x4x12x8xf32>, %m: tensor<1x12x4x8x8xf32>, %o: tensor<2x4x12x8xf32>)
    -> tensor<2x4x12x8xf32> {
  %r = dat.orthogonal_map ins(%x, %m : tensor<2x4x12x8xf32>, tensor<1x12x4x8x8xf32>) outs(%o : tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}
