// RUN: dat-opt %s --dat-tile-attention="query-tile=0 min-tiles=16" --split-input-file | FileCheck %s
// RUN: not dat-opt %s --dat-tile-attention="query-tile=-1" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: dat-tile-attention: query-tile must be positive or 0 (per op), got -1
// With the GPU's shared memory as the bound (227 KiB):
// RUN: dat-opt %s --dat-tile-attention="query-tile=0 min-tiles=16 block-bytes=232432" --split-input-file | FileCheck %s --check-prefix=FIT
// RUN: not dat-opt %s --dat-tile-attention="block-bytes=-1" --split-input-file 2>&1 | FileCheck %s --check-prefix=BADBYTES
// BADBYTES: dat-tile-attention: block-bytes must be positive or 0, got -1

// query-tile=0: each op's query tile is the largest of 64, 32 and 16 rows
// that still makes min-tiles tiles (here 16).

// Relational attention keeps every head in a tile: batch 2 × 256 rows make
// 8 tiles of 64 and 16 of 32 — 32 rows.
// CHECK-LABEL: func.func @relational
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (2, 256) step (1, 32)
func.func @relational(%q: tensor<2x4x256x8xf32>, %k: tensor<2x4x256x8xf32>, %qr: tensor<2x3x256x4xf32>,
                      %s: tensor<2x4x256x8xf32>, %wr: tensor<4x8x3xf32>) -> tensor<2x4x256x8xf32> {
  %o = tensor.empty() : tensor<2x4x256x8xf32>
  %r = dat.relational_attention ins(%q, %k, %qr, %qr, %s, %wr : tensor<2x4x256x8xf32>, tensor<2x4x256x8xf32>,
             tensor<2x3x256x4xf32>, tensor<2x3x256x4xf32>, tensor<2x4x256x8xf32>, tensor<4x8x3xf32>)
         outs(%o : tensor<2x4x256x8xf32>) scale = 0.353553385 rel_scale = 0.5 activation = "sigmoid"
         -> tensor<2x4x256x8xf32>
  return %r : tensor<2x4x256x8xf32>
}

// -----

// With 8 heads, 16 rows (8·16/H), though 64 would make enough tiles: the
// GPU's warp-row program takes a warp per 16 rows of each head, 8 at most.
// CHECK-LABEL: func.func @relational_eight_heads
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (4, 1024) step (1, 16)
func.func @relational_eight_heads(%q: tensor<4x8x1024x8xf32>, %qr: tensor<4x8x1024x4xf32>,
                                  %wr: tensor<8x8x8xf32>) -> tensor<4x8x1024x8xf32> {
  %o = tensor.empty() : tensor<4x8x1024x8xf32>
  %r = dat.relational_attention ins(%q, %q, %qr, %qr, %q, %wr : tensor<4x8x1024x8xf32>, tensor<4x8x1024x8xf32>,
             tensor<4x8x1024x4xf32>, tensor<4x8x1024x4xf32>, tensor<4x8x1024x8xf32>, tensor<8x8x8xf32>)
         outs(%o : tensor<4x8x1024x8xf32>) scale = 0.353553385 rel_scale = 0.5 activation = "identity"
         -> tensor<4x8x1024x8xf32>
  return %r : tensor<4x8x1024x8xf32>
}

// -----

// Plain attention also splits over heads: 2 × 4 heads × 4 tiles of 64 rows
// are already 32 tiles — 64 rows.
// CHECK-LABEL: func.func @attention
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) = (0, 0, 0) to (2, 4, 256) step (1, 1, 64)
func.func @attention(%q: tensor<2x4x256x8xf32>) -> tensor<2x4x256x8xf32> {
  %o = tensor.empty() : tensor<2x4x256x8xf32>
  %r = dat.attention ins(%q, %q, %q : tensor<2x4x256x8xf32>, tensor<2x4x256x8xf32>, tensor<2x4x256x8xf32>)
         outs(%o : tensor<2x4x256x8xf32>) scale = 0.5 -> tensor<2x4x256x8xf32>
  return %r : tensor<2x4x256x8xf32>
}

// -----

// HYLA with one sequence of 128 rows: even 16-row tiles make only 8 — 16.
// CHECK-LABEL: func.func @hyla
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (1, 128) step (1, 16)
func.func @hyla(%q: tensor<1x8x128x4xf32>) -> tensor<1x8x128x4xf32> {
  %o = tensor.empty() : tensor<1x8x128x4xf32>
  %r = dat.hyper_attention ins(%q, %q, %q : tensor<1x8x128x4xf32>, tensor<1x8x128x4xf32>, tensor<1x8x128x4xf32>)
         outs(%o : tensor<1x8x128x4xf32>)
         scale = 0.5 normalization = "rms_head" network = "mlp_relu" -> tensor<1x8x128x4xf32>
  return %r : tensor<1x8x128x4xf32>
}

// -----

// bf16 per-pair symbols summed at d_model 512 per head (symbol_proj), as
// for position-relative symbols given whole: each query row's accumulators
// take 8 heads × (512 + 8) f32, twice (they and their normalized copies),
// 32.5 KiB. 16 rows (520 KiB) would go to global scratch, read and written
// at every key block. 4 rows fit in 227 KiB: 139 KiB with their queries,
// relation queries and row state, and 34 KiB for a block of 16 keys (keys,
// relation keys and relations, 2.1 KiB each; the pairs' symbols are read in
// place). 8 rows (277 KiB before any key) do not. Without the bound: 16
// rows (8·16/H).
// CHECK-LABEL: func.func @relational_symbol_proj_bf16
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (4, 1024) step (1, 16)
// FIT-LABEL: func.func @relational_symbol_proj_bf16
// FIT: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (4, 1024) step (1, 4)
func.func @relational_symbol_proj_bf16(%q: tensor<4x8x1024x64xbf16>, %s: tensor<1024x1024x1x512xbf16>,
                                       %wr: tensor<8x64x8xbf16>, %p: tensor<8x64x512xbf16>) -> tensor<4x8x1024x64xbf16> {
  %o = tensor.empty() : tensor<4x8x1024x64xbf16>
  %r = dat.relational_attention ins(%q, %q, %q, %q, %s, %wr : tensor<4x8x1024x64xbf16>, tensor<4x8x1024x64xbf16>,
             tensor<4x8x1024x64xbf16>, tensor<4x8x1024x64xbf16>, tensor<1024x1024x1x512xbf16>, tensor<8x64x8xbf16>)
         symbol_proj(%p : tensor<8x64x512xbf16>)
         outs(%o : tensor<4x8x1024x64xbf16>) scale = 0.125 rel_scale = 0.125 activation = "identity"
         symbols_per_pair -> tensor<4x8x1024x64xbf16>
  return %r : tensor<4x8x1024x64xbf16>
}

// -----

// The same op with symbols per position (no symbol_proj): its accumulators
// are the warp-row program's registers; 16 rows fit (32 KiB of queries and
// relation queries, 16 keys of 3.5 KiB).
// FIT-LABEL: func.func @relational_bf16_fits
// FIT: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (4, 1024) step (1, 16)
func.func @relational_bf16_fits(%q: tensor<4x8x1024x64xbf16>, %wr: tensor<8x64x8xbf16>) -> tensor<4x8x1024x64xbf16> {
  %o = tensor.empty() : tensor<4x8x1024x64xbf16>
  %r = dat.relational_attention ins(%q, %q, %q, %q, %q, %wr : tensor<4x8x1024x64xbf16>, tensor<4x8x1024x64xbf16>,
             tensor<4x8x1024x64xbf16>, tensor<4x8x1024x64xbf16>, tensor<4x8x1024x64xbf16>, tensor<8x64x8xbf16>)
         outs(%o : tensor<4x8x1024x64xbf16>) scale = 0.125 rel_scale = 0.125 activation = "identity"
         -> tensor<4x8x1024x64xbf16>
  return %r : tensor<4x8x1024x64xbf16>
}
