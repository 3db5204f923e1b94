// RUN: dat-opt %s --dat-tile-attention="query-tile=16" \
// RUN:   --dat-decompose-flash="key-tile=64 block-bytes=232432" --canonicalize \
// RUN:   --split-input-file | FileCheck %s
// Without a bound, the key tile as given:
// RUN: dat-opt %s --dat-tile-attention="query-tile=16" \
// RUN:   --dat-decompose-flash="key-tile=64" --canonicalize --split-input-file \
// RUN: | FileCheck %s --check-prefix=NOBOUND
// With the value network narrowed to bf16 (as the GPU writes it):
// RUN: dat-opt %s --dat-tile-attention="query-tile=16" \
// RUN:   --dat-decompose-flash="key-tile=64 block-bytes=232432 narrow-value-network=true" \
// RUN:   --canonicalize --split-input-file | FileCheck %s --check-prefix=NARROW
// Position-relative symbols as a product:
// RUN: dat-opt %s --dat-tile-attention="query-tile=16" \
// RUN:   --dat-decompose-flash="key-tile=64 block-bytes=232432 relative-symbols-as-product=true" \
// RUN:   --canonicalize --split-input-file | FileCheck %s --check-prefix=PRODUCT
// RUN: not dat-opt %s --dat-decompose-flash="block-bytes=-1" --split-input-file 2>&1 \
// RUN: | FileCheck %s --check-prefix=BAD
// BAD: error: dat-decompose-flash: block-bytes must be positive or 0, got -1

// A bf16 relational attention tile of 16 rows, 8 heads and 8 relations of
// 64 (d_model 512): its query tiles take 32 KiB, and each key 3 KiB of
// keys, relation keys and symbols and 512 bytes of f32 relations. 64 keys
// (256 KiB) do not fit 227 KiB: 32 (144 KiB).
// CHECK-LABEL: func.func @relational_bf16
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c32
// NOBOUND-LABEL: func.func @relational_bf16
// NOBOUND: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c64
func.func @relational_bf16(%q: tensor<1x8x1024x64xbf16>, %qr: tensor<1x8x1024x64xbf16>,
                           %wr: tensor<8x64x8xbf16>) -> tensor<1x8x1024x64xbf16> {
  %o = tensor.empty() : tensor<1x8x1024x64xbf16>
  %r = dat.relational_attention ins(%q, %q, %qr, %qr, %q, %wr : tensor<1x8x1024x64xbf16>, tensor<1x8x1024x64xbf16>,
             tensor<1x8x1024x64xbf16>, tensor<1x8x1024x64xbf16>, tensor<1x8x1024x64xbf16>, tensor<8x64x8xbf16>)
         outs(%o : tensor<1x8x1024x64xbf16>) scale = 0.125 rel_scale = 0.125 activation = "identity"
         -> tensor<1x8x1024x64xbf16>
  return %r : tensor<1x8x1024x64xbf16>
}

// -----

// Half the model (d_model 256) fits with 64 keys (16 KiB + 64 × 2 KiB).
// CHECK-LABEL: func.func @relational_bf16_fits
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c64
func.func @relational_bf16_fits(%q: tensor<1x8x1024x32xbf16>, %qr: tensor<1x8x1024x32xbf16>,
                                %wr: tensor<8x32x8xbf16>) -> tensor<1x8x1024x32xbf16> {
  %o = tensor.empty() : tensor<1x8x1024x32xbf16>
  %r = dat.relational_attention ins(%q, %q, %qr, %qr, %q, %wr : tensor<1x8x1024x32xbf16>, tensor<1x8x1024x32xbf16>,
             tensor<1x8x1024x32xbf16>, tensor<1x8x1024x32xbf16>, tensor<1x8x1024x32xbf16>, tensor<8x32x8xbf16>)
         outs(%o : tensor<1x8x1024x32xbf16>) scale = 0.125 rel_scale = 0.125 activation = "identity"
         -> tensor<1x8x1024x32xbf16>
  return %r : tensor<1x8x1024x32xbf16>
}

// -----

// f32 (no tensor cores, no warp-row program): the key tile as given.
// CHECK-LABEL: func.func @relational_f32
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c64
func.func @relational_f32(%q: tensor<1x8x1024x64xf32>, %qr: tensor<1x8x1024x64xf32>,
                          %wr: tensor<8x64x8xf32>) -> tensor<1x8x1024x64xf32> {
  %o = tensor.empty() : tensor<1x8x1024x64xf32>
  %r = dat.relational_attention ins(%q, %q, %qr, %qr, %q, %wr : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>,
             tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<8x64x8xf32>)
         outs(%o : tensor<1x8x1024x64xf32>) scale = 0.125 rel_scale = 0.125 activation = "identity"
         -> tensor<1x8x1024x64xf32>
  return %r : tensor<1x8x1024x64xf32>
}

// -----

// A bf16 HYLA tile of 16 rows, 16 heads of 64 with the generated value
// network: its query tile and f32 accumulator take 96 KiB, and each key
// 4 KiB of keys and values, 1,088 bytes of f32 weights and pair statistics
// and 4 KiB of f32 value network. 8 keys (168.5 KiB) fit in 227 KiB, 16
// (241 KiB) do not. Narrowed, the value network takes 2 KiB a key (the GPU
// writes only its bf16 copy): 16 keys (209 KiB) fit.
// CHECK-LABEL: func.func @hyla_bf16
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c8
// NARROW-LABEL: func.func @hyla_bf16
// NARROW: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c16
// NOBOUND-LABEL: func.func @hyla_bf16
// NOBOUND: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c64
func.func @hyla_bf16(%q: tensor<1x16x1024x64xbf16>) -> tensor<1x16x1024x64xbf16> {
  %o = tensor.empty() : tensor<1x16x1024x64xbf16>
  %r = dat.hyper_attention ins(%q, %q, %q : tensor<1x16x1024x64xbf16>, tensor<1x16x1024x64xbf16>, tensor<1x16x1024x64xbf16>)
         outs(%o : tensor<1x16x1024x64xbf16>)
         scale = 0.125 normalization = "rms_head" network = "mlp_relu" -> tensor<1x16x1024x64xbf16>
  return %r : tensor<1x16x1024x64xbf16>
}

// -----

// 8 heads of 16: 12 KiB, and 2,624 bytes a key: 64 keys fit.
// CHECK-LABEL: func.func @hyla_bf16_fits
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c64
func.func @hyla_bf16_fits(%q: tensor<1x8x1024x16xbf16>) -> tensor<1x8x1024x16xbf16> {
  %o = tensor.empty() : tensor<1x8x1024x16xbf16>
  %r = dat.hyper_attention ins(%q, %q, %q : tensor<1x8x1024x16xbf16>, tensor<1x8x1024x16xbf16>, tensor<1x8x1024x16xbf16>)
         outs(%o : tensor<1x8x1024x16xbf16>)
         scale = 0.25 normalization = "rms_head" network = "mlp_relu" -> tensor<1x8x1024x16xbf16>
  return %r : tensor<1x8x1024x16xbf16>
}

// -----

// Position-relative symbols (a table) make a block-wide tile, every buffer of
// it in shared memory, counted whole: M2's tile (6 heads and 6 relations of
// 64, 197 tokens, so a partial last query tile whose rows are bounded by 16)
// takes 80,256 bytes for its query tiles, row state and accumulators and
// 2,304 per key: 64 keys (227,712) fit. As a product, the window and the
// skewed probabilities add 18,432 and 1,152 per key: 64 keys (319,872) do
// not fit, 32 (209,280) do.
// CHECK-LABEL: func.func @relational_relative_bf16
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c64
// PRODUCT-LABEL: func.func @relational_relative_bf16
// PRODUCT: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c32
func.func @relational_relative_bf16(%q: tensor<1x6x197x64xbf16>, %s: tensor<393x6x64xbf16>,
                                    %wr: tensor<6x64x6xbf16>) -> tensor<1x6x197x64xbf16> {
  %o = tensor.empty() : tensor<1x6x197x64xbf16>
  %r = dat.relational_attention ins(%q, %q, %q, %q, %s, %wr : tensor<1x6x197x64xbf16>, tensor<1x6x197x64xbf16>,
             tensor<1x6x197x64xbf16>, tensor<1x6x197x64xbf16>, tensor<393x6x64xbf16>, tensor<6x64x6xbf16>)
         outs(%o : tensor<1x6x197x64xbf16>) scale = 0.125 rel_scale = 0.125 activation = "identity"
         relative_symbols -> tensor<1x6x197x64xbf16>
  return %r : tensor<1x6x197x64xbf16>
}

// -----

// 16-row tiles (4 heads of 32, 4 relations) whose per-pair symbols are
// summed at d_model 192 per head (symbol_proj): the f32 accumulators and
// their normalized copies (98 KiB) are in shared memory with the rest of
// the tile's state (107 KiB in all); per key, 768 bytes of keys, relation
// keys and relations and 6 KiB of the pairs' symbols. 32 keys (323 KiB) do
// not fit 227 KiB: 16 (32 before the accumulators were counted, which
// then went to global scratch).
// CHECK-LABEL: func.func @relational_symbol_proj_bf16
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c16
// NOBOUND-LABEL: func.func @relational_symbol_proj_bf16
// NOBOUND: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c64
func.func @relational_symbol_proj_bf16(%q: tensor<1x4x64x32xbf16>, %k: tensor<1x4x1024x32xbf16>,
                                       %s: tensor<64x1024x1x192xbf16>, %wr: tensor<4x32x4xbf16>,
                                       %p: tensor<4x32x192xbf16>) -> tensor<1x4x64x32xbf16> {
  %o = tensor.empty() : tensor<1x4x64x32xbf16>
  %r = dat.relational_attention ins(%q, %k, %q, %k, %s, %wr : tensor<1x4x64x32xbf16>, tensor<1x4x1024x32xbf16>,
             tensor<1x4x64x32xbf16>, tensor<1x4x1024x32xbf16>, tensor<64x1024x1x192xbf16>, tensor<4x32x4xbf16>)
         symbol_proj(%p : tensor<4x32x192xbf16>)
         outs(%o : tensor<1x4x64x32xbf16>) scale = 0.125 rel_scale = 0.125 activation = "identity"
         symbols_per_pair -> tensor<1x4x64x32xbf16>
  return %r : tensor<1x4x64x32xbf16>
}
