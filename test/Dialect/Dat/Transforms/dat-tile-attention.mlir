// RUN: dat-opt %s --dat-tile-attention="query-tile=64" --split-input-file | FileCheck %s
// The pass is idempotent: an op already in a tile loop is not tiled again.
// RUN: dat-opt %s --dat-tile-attention="query-tile=64" --split-input-file > %t.once
// RUN: dat-opt %s --dat-tile-attention="query-tile=64" --dat-tile-attention="query-tile=32" --split-input-file > %t.twice
// RUN: diff %t.once %t.twice

// The first stage of flash tiling: query tiles, not yet key loops. Each tile
// loop is an scf.forall marked dat.origin with the op it computes, holding
// that op on the tile's slices — the query rows of the tile, every key —
// and the causal offset of its first row. dat-decompose-flash (its own
// test, dat-decompose-flash.mlir) turns the op into the key loop.

// Plain attention with grouped heads: a tile takes the 4 query heads that
// share one key/value head (8 over 2), whose K and V it slices whole.
// CHECK-LABEL: func.func @attention_causal_gqa
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[I:.+]]) = (0, 0, 0) to (2, 8, 256) step (1, 4, 64)
// CHECK:   %[[KV:.+]] = affine.apply #{{.+}}(%[[H]])
// CHECK:   %[[Q:.+]] = tensor.extract_slice %{{.+}}[%[[B]], %[[H]], %[[I]], 0] [1, 4, 64, 32]
// CHECK:   %[[K:.+]] = tensor.extract_slice %{{.+}}[%[[B]], %[[KV]], 0, 0] [1, 1, 256, 32]
// CHECK:   %[[V:.+]] = tensor.extract_slice %{{.+}}[%[[B]], %[[KV]], 0, 0] [1, 1, 256, 16]
// CHECK:   dat.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<1x4x64x32xf32>, tensor<1x1x256x32xf32>, tensor<1x1x256x16xf32>) query_offset(%[[I]]) {{.*}} causal -> tensor<1x4x64x16xf32>
// CHECK:   tensor.parallel_insert_slice
// CHECK: } {dat.origin = "dat.attention"}
// CHECK-NOT: scf.for
func.func @attention_causal_gqa(%q: tensor<2x8x256x32xf32>, %k: tensor<2x2x256x32xf32>,
                                %v: tensor<2x2x256x16xf32>, %o: tensor<2x8x256x16xf32>)
    -> tensor<2x8x256x16xf32> {
  %r = dat.attention ins(%q, %k, %v : tensor<2x8x256x32xf32>, tensor<2x2x256x32xf32>, tensor<2x2x256x16xf32>)
         outs(%o : tensor<2x8x256x16xf32>) scale = 0.17677669 causal -> tensor<2x8x256x16xf32>
  return %r : tensor<2x8x256x16xf32>
}

// -----

// Relational attention keeps every head in its tile (the relations are
// shared by the heads).
// CHECK-LABEL: func.func @relational
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (2, 256) step (1, 64)
// CHECK:   dat.relational_attention {{.*}} -> tensor<1x4x64x8xf32>
// CHECK: } {dat.origin = "dat.relational_attention"}
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

// HYLA likewise (rms_head normalizes across the heads); the RoPE producing
// its queries is not fused here: that is the decomposition's job.
// CHECK-LABEL: func.func @hyla_rope
// CHECK: dat.rope {{.*}} -> tensor<2x256x8x4xf32>
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (2, 256) step (1, 64)
// CHECK:   dat.hyper_attention {{.*}} -> tensor<1x8x64x4xf32>
// CHECK: } {dat.origin = "dat.hyper_attention"}
func.func @hyla_rope(%x: tensor<2x256x8x4xf32>, %cos: tensor<256x2xf32>, %sin: tensor<256x2xf32>,
                     %v: tensor<2x8x256x4xf32>) -> tensor<2x8x256x4xf32> {
  %xr = dat.rope %x, %cos, %sin : tensor<2x256x8x4xf32>, tensor<256x2xf32> -> tensor<2x256x8x4xf32>
  %e = tensor.empty() : tensor<2x8x256x4xf32>
  %q = linalg.transpose ins(%xr : tensor<2x256x8x4xf32>) outs(%e : tensor<2x8x256x4xf32>) permutation = [0, 2, 1, 3]
  %o = tensor.empty() : tensor<2x8x256x4xf32>
  %r = dat.hyper_attention ins(%q, %q, %v : tensor<2x8x256x4xf32>, tensor<2x8x256x4xf32>, tensor<2x8x256x4xf32>)
         outs(%o : tensor<2x8x256x4xf32>)
         scale = 0.5 normalization = "rms_head" network = "mlp_relu" -> tensor<2x8x256x4xf32>
  return %r : tensor<2x8x256x4xf32>
}
