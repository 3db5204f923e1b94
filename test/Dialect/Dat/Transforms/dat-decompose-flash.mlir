// RUN: dat-opt %s --dat-tile-attention="query-tile=64" --dat-decompose-flash="key-tile=32" \
// RUN:   --canonicalize --split-input-file | FileCheck %s
// After tiling, the key loops and the reference decomposition of what is
// left, no tensor with both a query and a key axis of the full length 256
// exists — neither the N×N scores, nor the N×N×R relations, nor HYLA's
// N×N×d value network:
// RUN: dat-opt %s --dat-tile-attention="query-tile=64" --dat-decompose-flash="key-tile=32" \
// RUN:   --dat-decompose-to-linalg --canonicalize --split-input-file \
// RUN: | FileCheck %s --check-prefix=NONN --implicit-check-not=256x256
// Bad tile sizes are an error, not a crash:
// RUN: not dat-opt %s --dat-decompose-flash="key-tile=0" --split-input-file 2>&1 \
// RUN: | FileCheck %s --check-prefix=BAD
// BAD: error: dat-decompose-flash: key-tile must be positive, got 0

// Query tiles are an scf.forall over (batch, head group, query block): a
// tile holds the 4 query heads that share one key/value head (8 over 2);
// the keys a causal tile can see, min(256, rows + offset), bound the loop
// over key blocks, which carries the row max, the row sum and the
// accumulator.
// CHECK-LABEL: func.func @attention_causal_gqa
// CHECK: scf.forall (%[[B:[a-z0-9]+]], %[[H:[a-z0-9]+]], %[[I:[a-z0-9]+]]) = (0, 0, 0) to (2, 8, 256) step (1, 4, 64)
// CHECK:   %[[BOUND:.+]] = affine.min
// CHECK:   scf.for %[[J:.+]] = %{{.+}} to %[[BOUND]] step %{{.+}} iter_args(%[[M:.+]] = %{{.+}}, %[[L:.+]] = %{{.+}}, %[[ACC:.+]] = %{{.+}}) -> (tensor<1x4x64xf32>, tensor<1x4x64xf32>, tensor<1x4x64x16xf32>)
// CHECK:     tensor.extract_slice %{{.+}}[%[[B]], %{{.+}}, %[[J]], 0] [1, 1, %{{.+}}, 32]
// CHECK:     arith.maximumf
// CHECK:     math.exp
// CHECK:     scf.yield
// CHECK:   tensor.parallel_insert_slice
// NONN-LABEL: func.func @attention_causal_gqa
// NONN: tensor<1x4x64x?xf32>
func.func @attention_causal_gqa(%q: tensor<2x8x256x32xf32>, %k: tensor<2x2x256x32xf32>,
                                %v: tensor<2x2x256x16xf32>, %o: tensor<2x8x256x16xf32>)
    -> tensor<2x8x256x16xf32> {
  %r = dat.attention ins(%q, %k, %v : tensor<2x8x256x32xf32>, tensor<2x2x256x32xf32>, tensor<2x2x256x16xf32>)
         outs(%o : tensor<2x8x256x16xf32>) scale = 0.17677669 causal -> tensor<2x8x256x16xf32>
  return %r : tensor<2x8x256x16xf32>
}

// -----

// The relation tile [1,R,64,Bk] (relation-major: each relation's rows run
// along the keys) is built once per block and shared by all four heads;
// two accumulators (symbols, relations) ride the loop and wr is applied
// once, after it. Σ_j p·r has the keys innermost in its loops.
// CHECK-LABEL: func.func @relational
// CHECK: scf.forall
// CHECK:   scf.for {{.*}} -> (tensor<1x4x64xf32>, tensor<1x4x64xf32>, tensor<1x4x64x8xf32>, tensor<1x4x64x3xf32>)
// CHECK:     linalg.fill {{.*}} -> tensor<1x3x64x?xf32>
// The sigmoid relation activation, in the block:
// CHECK:     math.exp
// CHECK:     linalg.generic {indexing_maps = [#[[P:.+]], #[[R:.+]], #[[ACC:.+]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}}, %{{.+}} : tensor<1x4x64x?xf32>, tensor<1x3x64x?xf32>) outs(%{{.+}} : tensor<1x4x64x3xf32>)
// CHECK:   scf.yield
// CHECK:   linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<1x4x64x3xf32>, tensor<4x8x3xf32>) outs(%{{.+}} : tensor<1x4x64x8xf32>)
// NONN-LABEL: func.func @relational
// NONN: tensor<1x3x64x?xf32>
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

// Relations under softmax are normalized over every key: built once per
// query tile as [1,R,64,256] (not N×N×R) and sliced per key block.
// NONN-LABEL: func.func @relational_softmax
// NONN: tensor<1x3x64x256xf32>
func.func @relational_softmax(%q: tensor<1x4x256x8xf32>, %qr: tensor<1x3x256x4xf32>,
                              %s: tensor<1x4x256x8xf32>, %wr: tensor<4x8x3xf32>) -> tensor<1x4x256x8xf32> {
  %o = tensor.empty() : tensor<1x4x256x8xf32>
  %r = dat.relational_attention ins(%q, %q, %qr, %qr, %s, %wr : tensor<1x4x256x8xf32>, tensor<1x4x256x8xf32>,
             tensor<1x3x256x4xf32>, tensor<1x3x256x4xf32>, tensor<1x4x256x8xf32>, tensor<4x8x3xf32>)
         outs(%o : tensor<1x4x256x8xf32>) scale = 0.353553385 rel_scale = 0.5 activation = "softmax" causal
         -> tensor<1x4x256x8xf32>
  return %r : tensor<1x4x256x8xf32>
}

// -----

// HYLA rms_head: no row statistics; each key block adds its share, with all
// heads of the block together (the normalization runs across them) and the
// generated value network z only as a [1,64,Bk,d] tile. The normalization's
// rsqrt is taken once per (query, key) pair, [1,64,Bk], and the scores of
// every head multiplied by it.
// CHECK-LABEL: func.func @hyla_rms_mlp
// CHECK: scf.forall
// CHECK:   scf.for {{.*}} -> (tensor<1x8x64x4xf32>)
// CHECK:     math.rsqrt
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: } -> tensor<1x64x?xf32>
// CHECK:     arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: } -> tensor<1x8x64x?xf32>
// CHECK:     arith.maximumf
// NONN-LABEL: func.func @hyla_rms_mlp
// NONN: tensor<1x64x?x4xf32>
func.func @hyla_rms_mlp(%q: tensor<2x8x256x4xf32>, %v: tensor<2x8x256x4xf32>)
    -> tensor<2x8x256x4xf32> {
  %o = tensor.empty() : tensor<2x8x256x4xf32>
  %r = dat.hyper_attention ins(%q, %q, %v : tensor<2x8x256x4xf32>, tensor<2x8x256x4xf32>, tensor<2x8x256x4xf32>)
         outs(%o : tensor<2x8x256x4xf32>)
         scale = 0.5 normalization = "rms_head" network = "mlp_relu" causal -> tensor<2x8x256x4xf32>
  return %r : tensor<2x8x256x4xf32>
}

// -----

// HYLA softmax with the value network: a first key loop for the row
// statistics, a second for the exactly normalized blocks.
// CHECK-LABEL: func.func @hyla_softmax_mlp
// CHECK: scf.forall
// CHECK:   %[[STATS:.+]]:2 = scf.for {{.*}} -> (tensor<1x8x64xf32>, tensor<1x8x64xf32>)
// CHECK:   scf.for {{.*}} -> (tensor<1x8x64x4xf32>)
// CHECK:     linalg.generic {{.*}} ins(%{{.+}}, %[[STATS]]#0
// NONN-LABEL: func.func @hyla_softmax_mlp
func.func @hyla_softmax_mlp(%q: tensor<2x8x256x4xf32>, %v: tensor<2x8x256x4xf32>)
    -> tensor<2x8x256x4xf32> {
  %o = tensor.empty() : tensor<2x8x256x4xf32>
  %r = dat.hyper_attention ins(%q, %q, %v : tensor<2x8x256x4xf32>, tensor<2x8x256x4xf32>, tensor<2x8x256x4xf32>)
         outs(%o : tensor<2x8x256x4xf32>)
         scale = 0.5 normalization = "softmax" network = "mlp_linear" -> tensor<2x8x256x4xf32>
  return %r : tensor<2x8x256x4xf32>
}

// -----

// HYLA softmax with the plain value sum is standard flash attention per head.
// CHECK-LABEL: func.func @hyla_softmax_default
// CHECK: scf.forall
// CHECK:   scf.for {{.*}} -> (tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64x4xf32>)
// CHECK-NOT: scf.for %
// NONN-LABEL: func.func @hyla_softmax_default
func.func @hyla_softmax_default(%q: tensor<2x8x256x4xf32>, %v: tensor<2x8x256x4xf32>)
    -> tensor<2x8x256x4xf32> {
  %o = tensor.empty() : tensor<2x8x256x4xf32>
  %r = dat.hyper_attention ins(%q, %q, %v : tensor<2x8x256x4xf32>, tensor<2x8x256x4xf32>, tensor<2x8x256x4xf32>)
         outs(%o : tensor<2x8x256x4xf32>)
         scale = 0.5 normalization = "softmax" network = "default" -> tensor<2x8x256x4xf32>
  return %r : tensor<2x8x256x4xf32>
}

// -----

// Position-relative symbols as a table [2M+1,Hkv,hd]: each key block gathers
// the band of rows its pairs use, offset by the block's first key; no
// [N,N,·] symbol tensor exists.
// CHECK-LABEL: func.func @relational_relative
// CHECK: scf.forall
// CHECK:   scf.for %[[J:[^ ]+]] = {{.*}} -> (tensor<1x4x64xf32>, tensor<1x4x64xf32>, tensor<1x4x64x8xf32>, tensor<1x4x64x3xf32>)
// CHECK:     %[[OFF:.+]] = arith.subi %{{.+}}, %[[J]]
// CHECK:     linalg.generic {{.*}} ins(%{{.+}} : tensor<1x4x64x?xf32>) outs(%{{.+}} : tensor<1x4x64x8xf32>)
// CHECK:       arith.subi
// CHECK:       arith.maxsi
// CHECK:       arith.minsi
// CHECK:       tensor.extract %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : tensor<33x2x8xf32>
// NONN-LABEL: func.func @relational_relative
func.func @relational_relative(%q: tensor<1x4x256x8xf32>, %k: tensor<1x2x256x8xf32>, %qr: tensor<1x3x256x4xf32>,
                               %s: tensor<33x2x8xf32>, %wr: tensor<4x8x3xf32>) -> tensor<1x4x256x8xf32> {
  %o = tensor.empty() : tensor<1x4x256x8xf32>
  %r = dat.relational_attention ins(%q, %k, %qr, %qr, %s, %wr : tensor<1x4x256x8xf32>, tensor<1x2x256x8xf32>,
             tensor<1x3x256x4xf32>, tensor<1x3x256x4xf32>, tensor<33x2x8xf32>, tensor<4x8x3xf32>)
         outs(%o : tensor<1x4x256x8xf32>) scale = 0.353553385 rel_scale = 0.5 activation = "identity"
         causal relative_symbols -> tensor<1x4x256x8xf32>
  return %r : tensor<1x4x256x8xf32>
}

// -----

// Per-pair symbols 20 wide, shared by the heads, with symbol_proj: the
// symbol accumulator rides the key loop at the symbols' width
// ([1,4,64,20]) and is projected to the head dim once, after the loop
// (P [4,8,20]), before wr adds the relations. (128 keys: the [Lq,Lk]
// input is the one N×N tensor here, and the NONN run bans 256x256.)
// CHECK-LABEL: func.func @relational_symbol_proj
// CHECK: scf.forall
// CHECK:   scf.for {{.*}} -> (tensor<1x4x64xf32>, tensor<1x4x64xf32>, tensor<1x4x64x20xf32>, tensor<1x4x64x3xf32>)
// CHECK:     linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<1x4x64x?xf32>, tensor<64x?x20xf32>) outs(%{{.+}} : tensor<1x4x64x20xf32>)
// CHECK:   scf.yield
// CHECK:   linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<1x4x64x20xf32>, tensor<4x8x20xf32>) outs(%{{.+}} : tensor<1x4x64x8xf32>)
// CHECK:   linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<1x4x64x3xf32>, tensor<4x8x3xf32>) outs(%{{.+}} : tensor<1x4x64x8xf32>)
// NONN-LABEL: func.func @relational_symbol_proj
func.func @relational_symbol_proj(%q: tensor<1x4x128x8xf32>, %qr: tensor<1x3x128x4xf32>,
                                  %s: tensor<128x128x1x20xf32>, %wr: tensor<4x8x3xf32>,
                                  %p: tensor<4x8x20xf32>) -> tensor<1x4x128x8xf32> {
  %o = tensor.empty() : tensor<1x4x128x8xf32>
  %r = dat.relational_attention ins(%q, %q, %qr, %qr, %s, %wr : tensor<1x4x128x8xf32>, tensor<1x4x128x8xf32>,
             tensor<1x3x128x4xf32>, tensor<1x3x128x4xf32>, tensor<128x128x1x20xf32>, tensor<4x8x3xf32>)
         symbol_proj(%p : tensor<4x8x20xf32>)
         outs(%o : tensor<1x4x128x8xf32>) scale = 0.353553385 rel_scale = 0.5 activation = "identity"
         symbols_per_pair -> tensor<1x4x128x8xf32>
  return %r : tensor<1x4x128x8xf32>
}

// -----

// Prologue fusion: RoPE and the transpose to [B,H,L,K] run per query tile
// (64 rows of a 4-head group) and per key block (32 keys of its kv head),
// not on the whole [2,256,·,32] tensors, which no longer exist.
// CHECK-LABEL: func.func @rope_prologue
// CHECK-NOT: dat.rope {{.*}} -> tensor<2x256
// CHECK: scf.forall
// CHECK:   dat.rope {{.*}} : tensor<1x64x4x32xf32>, tensor<64x16xf32>
// CHECK:   linalg.transpose ins(%{{.+}} : tensor<1x64x4x32xf32>)
// CHECK:   scf.for
// CHECK:     dat.rope {{.*}} : tensor<1x?x1x32xf32>, tensor<?x16xf32>
// CHECK:     linalg.transpose ins(%{{.+}} : tensor<1x?x1x32xf32>)
// CHECK-NOT: dat.rope
// NONN-LABEL: func.func @rope_prologue
func.func @rope_prologue(%q: tensor<2x256x8x32xf32>, %k: tensor<2x256x2x32xf32>, %v: tensor<2x2x256x16xf32>,
                         %cos: tensor<256x16xf32>, %sin: tensor<256x16xf32>) -> tensor<2x8x256x16xf32> {
  %qr = dat.rope %q, %cos, %sin : tensor<2x256x8x32xf32>, tensor<256x16xf32> -> tensor<2x256x8x32xf32>
  %kr = dat.rope %k, %cos, %sin : tensor<2x256x2x32xf32>, tensor<256x16xf32> -> tensor<2x256x2x32xf32>
  %eq = tensor.empty() : tensor<2x8x256x32xf32>
  %qt = linalg.transpose ins(%qr : tensor<2x256x8x32xf32>) outs(%eq : tensor<2x8x256x32xf32>) permutation = [0, 2, 1, 3]
  %ek = tensor.empty() : tensor<2x2x256x32xf32>
  %kt = linalg.transpose ins(%kr : tensor<2x256x2x32xf32>) outs(%ek : tensor<2x2x256x32xf32>) permutation = [0, 2, 1, 3]
  %o = tensor.empty() : tensor<2x8x256x16xf32>
  %r = dat.attention ins(%qt, %kt, %v : tensor<2x8x256x32xf32>, tensor<2x2x256x32xf32>, tensor<2x2x256x16xf32>)
         outs(%o : tensor<2x8x256x16xf32>) scale = 0.17677669 causal -> tensor<2x8x256x16xf32>
  return %r : tensor<2x8x256x16xf32>
}

// -----

// Per-token rotary tables (APE's maps in rotary form) follow their tiles:
// the query tile's rows and the key block's rows, the tile's head, batch 1
// kept.
// CHECK-LABEL: func.func @rope_per_token_prologue
// CHECK: scf.forall
// CHECK:   dat.rope {{.*}} : tensor<1x64x1x32xf32>, tensor<1x64x1x16xf32>
// CHECK:   scf.for
// CHECK:     dat.rope {{.*}} : tensor<1x?x1x32xf32>, tensor<1x?x1x16xf32>
// CHECK-NOT: dat.rope
// NONN-LABEL: func.func @rope_per_token_prologue
func.func @rope_per_token_prologue(%q: tensor<2x256x8x32xf32>, %k: tensor<2x256x8x32xf32>, %v: tensor<2x8x256x16xf32>,
                                   %cos: tensor<1x256x8x16xf32>, %sin: tensor<1x256x8x16xf32>) -> tensor<2x8x256x16xf32> {
  %qr = dat.rope %q, %cos, %sin : tensor<2x256x8x32xf32>, tensor<1x256x8x16xf32> -> tensor<2x256x8x32xf32>
  %kr = dat.rope %k, %cos, %sin : tensor<2x256x8x32xf32>, tensor<1x256x8x16xf32> -> tensor<2x256x8x32xf32>
  %eq = tensor.empty() : tensor<2x8x256x32xf32>
  %qt = linalg.transpose ins(%qr : tensor<2x256x8x32xf32>) outs(%eq : tensor<2x8x256x32xf32>) permutation = [0, 2, 1, 3]
  %kt = linalg.transpose ins(%kr : tensor<2x256x8x32xf32>) outs(%eq : tensor<2x8x256x32xf32>) permutation = [0, 2, 1, 3]
  %o = tensor.empty() : tensor<2x8x256x16xf32>
  %r = dat.attention ins(%qt, %kt, %v : tensor<2x8x256x32xf32>, tensor<2x8x256x32xf32>, tensor<2x8x256x16xf32>)
         outs(%o : tensor<2x8x256x16xf32>) scale = 0.17677669 -> tensor<2x8x256x16xf32>
  return %r : tensor<2x8x256x16xf32>
}

// -----

// Dense orthogonal maps (APE's tree maps: a d×d matrix per position) are not
// fused: in the key blocks each key's map would be applied again in every
// query tile. They run once, on the whole [B, H, N, d] tensors, before the
// tile loop; the transposes before them stay whole too.
// CHECK-LABEL: func.func @orthogonal_map_not_fused
// CHECK: dat.orthogonal_map {{.*}} -> tensor<1x4x256x32xf32>
// CHECK: dat.orthogonal_map {{.*}} -> tensor<1x4x256x32xf32>
// CHECK: scf.forall
// CHECK-NOT: dat.orthogonal_map
// CHECK: scf.for
// CHECK-NOT: dat.orthogonal_map
// CHECK: return
// NONN-LABEL: func.func @orthogonal_map_not_fused
func.func @orthogonal_map_not_fused(%q: tensor<1x256x4x32xf32>, %k: tensor<1x256x4x32xf32>, %v: tensor<1x4x256x16xf32>,
                                    %maps: tensor<1x256x1x32x32xf32>) -> tensor<1x4x256x16xf32> {
  %e = tensor.empty() : tensor<1x4x256x32xf32>
  %qt = linalg.transpose ins(%q : tensor<1x256x4x32xf32>) outs(%e : tensor<1x4x256x32xf32>) permutation = [0, 2, 1, 3]
  %kt = linalg.transpose ins(%k : tensor<1x256x4x32xf32>) outs(%e : tensor<1x4x256x32xf32>) permutation = [0, 2, 1, 3]
  %qm = dat.orthogonal_map ins(%qt, %maps : tensor<1x4x256x32xf32>, tensor<1x256x1x32x32xf32>)
          outs(%e : tensor<1x4x256x32xf32>) -> tensor<1x4x256x32xf32>
  %km = dat.orthogonal_map ins(%kt, %maps : tensor<1x4x256x32xf32>, tensor<1x256x1x32x32xf32>)
          outs(%e : tensor<1x4x256x32xf32>) -> tensor<1x4x256x32xf32>
  %o = tensor.empty() : tensor<1x4x256x16xf32>
  %r = dat.attention ins(%qm, %km, %v : tensor<1x4x256x32xf32>, tensor<1x4x256x32xf32>, tensor<1x4x256x16xf32>)
         outs(%o : tensor<1x4x256x16xf32>) scale = 0.17677669 -> tensor<1x4x256x16xf32>
  return %r : tensor<1x4x256x16xf32>
}

// -----

// A per-pair score scale made by a reduction (APE's tree path lengths: a
// sum over depths into a fill), both recomputed per tile: fused into each
// key block, the sum starting from the fill's tile — not from a slice of
// the whole sum's result, which would keep it (computed N×N) and add it in.
// CHECK-LABEL: func.func @reduction_scale_prologue
// CHECK-NOT: tensor<1x256x256xf32>
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: %[[F:.+]] = linalg.fill {{.*}} -> tensor<1x64x{{.+}}xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} outs(%[[F]] : tensor<1x64x{{.+}}xf32>)
// CHECK-NOT: tensor<1x256x256xf32>
// CHECK: return
// NONN-LABEL: func.func @reduction_scale_prologue
func.func @reduction_scale_prologue(%q: tensor<1x2x256x16xf32>, %k: tensor<1x2x256x16xf32>, %v: tensor<1x2x256x16xf32>,
                                    %a: tensor<1x256x8xf32>, %b: tensor<1x8x256xf32>) -> tensor<1x2x256x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x256x256xf32>
  %f = linalg.fill {dat.recompute_per_tile} ins(%zero : f32) outs(%e : tensor<1x256x256xf32>) -> tensor<1x256x256xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i, j, t) -> (b, i, t)>,
                                        affine_map<(b, i, j, t) -> (b, t, j)>,
                                        affine_map<(b, i, j, t) -> (b, i, j)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<1x256x8xf32>, tensor<1x8x256xf32>) outs(%f : tensor<1x256x256xf32>)
      attrs = {dat.recompute_per_tile} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x256x256xf32>
  %o = tensor.empty() : tensor<1x2x256x16xf32>
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>)
         score_scale(%s : tensor<1x256x256xf32>) outs(%o : tensor<1x2x256x16xf32>) scale = 0.25 -> tensor<1x2x256x16xf32>
  return %r : tensor<1x2x256x16xf32>
}

// -----

// The tiled form can be written by hand (or printed between the two passes
// and read back): a query tile of a causal attention, as dat-tile-attention
// makes it, becomes the key loop, bounded by the keys its rows can see
// (query_offset + 64), inside the same tile loop.
// CHECK-LABEL: func.func @written_tile
// CHECK: scf.forall (%[[I:.+]]) = (0) to (256) step (64)
// CHECK:   %[[BOUND:.+]] = affine.min #{{.+}}(%[[I]])
// CHECK:   scf.for %{{.+}} = %{{.+}} to %[[BOUND]] step %{{.+}} iter_args({{.+}}) -> (tensor<1x1x64xf32>, tensor<1x1x64xf32>, tensor<1x1x64x16xf32>)
// CHECK:     math.exp
// CHECK:   tensor.parallel_insert_slice
// CHECK: } {dat.origin = "dat.attention"}
// NONN-LABEL: func.func @written_tile
func.func @written_tile(%q: tensor<1x1x256x32xf32>, %k: tensor<1x1x256x32xf32>,
                        %v: tensor<1x1x256x16xf32>, %o: tensor<1x1x256x16xf32>) -> tensor<1x1x256x16xf32> {
  %r = scf.forall (%i) = (0) to (256) step (64) shared_outs(%out = %o) -> (tensor<1x1x256x16xf32>) {
    %qt = tensor.extract_slice %q[0, 0, %i, 0] [1, 1, 64, 32] [1, 1, 1, 1] : tensor<1x1x256x32xf32> to tensor<1x1x64x32xf32>
    %ot = tensor.extract_slice %out[0, 0, %i, 0] [1, 1, 64, 16] [1, 1, 1, 1] : tensor<1x1x256x16xf32> to tensor<1x1x64x16xf32>
    %a = dat.attention ins(%qt, %k, %v : tensor<1x1x64x32xf32>, tensor<1x1x256x32xf32>, tensor<1x1x256x16xf32>)
           query_offset(%i) outs(%ot : tensor<1x1x64x16xf32>) scale = 0.17677669 causal -> tensor<1x1x64x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %a into %out[0, 0, %i, 0] [1, 1, 64, 16] [1, 1, 1, 1] : tensor<1x1x64x16xf32> into tensor<1x1x256x16xf32>
    }
  } {dat.origin = "dat.attention"}
  return %r : tensor<1x1x256x16xf32>
}
