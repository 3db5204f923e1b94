//===- DatOps.td - dat dialect operations ------------------*- tablegen -*-===//
//
// Operations of the dat dialect.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_DIALECT_DAT_IR_DATOPS_TD
#define DAT_DIALECT_DAT_IR_DATOPS_TD

include "Dat/IR/DatBase.td"
include "Dat/IR/DatAttrs.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/TilingInterface.td"
include "mlir/IR/OpAsmInterface.td"

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

def Dat_AttentionOp : Dat_Op<"attention", [
    Pure, AttrSizedOperandSegments,
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<TilingInterface, [
        "getIterationDomain", "getLoopIteratorTypes",
        "getTiledImplementation", "getResultTilePosition"]>]> {
  let summary = "scaled dot-product multi-head attention with grouped kv heads";
  let description = [{
    The core of standard multi-head attention (the `Attention` module of the
    spec, §2, without its projections):

    ```
    S[b,h,i,j] = scale · Σ_d query[b,h,i,d] · key[b,g(h),j,d]  (· score_scale[b,i,j])
    S[b,h,i,j] = fill   where mask[i,j] or key_mask[b,j] is false, or causal
                        and j > i + query_offset (fill = mask_fill, default -inf)
    P          = softmax_j(S)
    result[b,h,i,e] = Σ_j P[b,h,i,j] · value[b,g(h),j,e]
    ```

    The optional `key_mask [B,Nk]` (a key-padding mask), the multiplicative
    per-pair `score_scale [1|B,Nq,Nk]` (e.g. APE's distance decay, the
    "mediator") and a finite `mask_fill` (APE fills masked logits with
    -1e10, so a fully masked row becomes uniform) serve the APE models.

    with grouped-query heads `g(h) = h floordiv (H / Hkv)`: each of the `Hkv`
    key/value heads serves `H / Hkv` consecutive query heads.

    Shapes: `query [B,H,Nq,D]`, `key [B,Hkv,Nk,D]`, `value [B,Hkv,Nk,Dv]`,
    optional boolean `mask [Nq,Nk]` (true = may attend), `init [B,H,Nq,Dv]`
    (destination; its contents are not read). `causal` masks keys after the
    query's position; `query_offset` (default 0) is the global position of
    query row 0, which lets a tile of queries, or a decoding step with a key
    cache, keep the causal structure of the whole sequence. A row whose keys
    are all masked produces zeros.

    The op is destination-style and implements `TilingInterface` over the
    parallel dimensions `(b, h, i, e)`; the key dimension is a softmax
    reduction and is not tiled by this interface.

    Example:

    ```mlir
    %o = dat.attention ins(%q, %k, %v : tensor<2x4x16x8xf32>,
                           tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>)
                       outs(%init : tensor<2x4x16x8xf32>)
                       scale = 0.353553385 causal -> tensor<2x4x16x8xf32>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    Optional<AnyRankedTensor>:$mask,
    Optional<AnyRankedTensor>:$key_mask,
    Optional<AnyRankedTensor>:$score_scale,
    Optional<Index>:$query_offset,
    AnyRankedTensor:$init,
    F32Attr:$scale,
    OptionalAttr<F32Attr>:$mask_fill,
    UnitProp:$causal
  );
  let results = (outs AnyRankedTensor:$result);

  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $value `:` type($query) `,` type($key) `,`
        type($value) `)`
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`key_mask` `(` $key_mask^ `:` type($key_mask) `)`)?
    (`score_scale` `(` $score_scale^ `:` type($score_scale) `)`)?
    (`query_offset` `(` $query_offset^ `)`)?
    `outs` `(` $init `:` type($init) `)`
    `scale` `=` $scale (`causal` $causal^)?
    attr-dict `->` type($result)
  }];

  let builders = [
    OpBuilder<(ins "Value":$query, "Value":$key, "Value":$value,
                   "Value":$init, "float":$scale, "bool":$causal,
                   CArg<"Value", "{}">:$mask,
                   CArg<"Value", "{}">:$queryOffset)>
  ];

  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }

    RankedTensorType getQueryType() {
      return ::llvm::cast<RankedTensorType>(getQuery().getType());
    }
    RankedTensorType getKeyType() {
      return ::llvm::cast<RankedTensorType>(getKey().getType());
    }
    RankedTensorType getValueType() {
      return ::llvm::cast<RankedTensorType>(getValue().getType());
    }
    RankedTensorType getInitType() {
      return ::llvm::cast<RankedTensorType>(getInit().getType());
    }

    /// Number of query heads that share one key/value head (H / Hkv), or
    /// std::nullopt when a head count is dynamic.
    std::optional<int64_t> getGroupSize();
  }];

  let hasVerifier = 1;
}


//===----------------------------------------------------------------------===//
// AttentionWeightsOp
//===----------------------------------------------------------------------===//

def Dat_AttentionWeightsOp : Dat_Op<"attention_weights", [
    Pure, AttrSizedOperandSegments, DestinationStyleOpInterface]> {
  let summary = "the softmax attention weights of dat.attention";
  let description = [{
    The probabilities `P` that `dat.attention` with the same operands
    multiplies the values by (the reference modules' `need_weights=True`
    output):

    ```
    S[b,h,i,j] = scale · Σ_d query[b,h,i,d] · key[b,g(h),j,d]
    S[b,h,i,j] = -inf   where mask[i,j] is false, or causal and j > i + query_offset
    result[b,h,i,j] = softmax_j(S)          (0 on rows whose keys are all masked)
    ```

    With `logits`, the result is `S` itself after scaling and masking (the
    pre-softmax scores some references return). `key_mask`, `score_scale`
    and `mask_fill` are as in `dat.attention`.

    Shapes: `query [B,H,Nq,D]`, `key [B,Hkv,Nk,D]`, `mask [Nq,Nk]`,
    `init [B,H,Nq,Nk]`. This op materializes the N×N tensor that the fused
    kernels exist to avoid: it serves inspection and golden checks only.

    ```mlir
    %p = dat.attention_weights ins(%q, %k : tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>)
                               outs(%init : tensor<2x4x16x16xf32>)
                               scale = 0.353553385 causal -> tensor<2x4x16x16xf32>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    Optional<AnyRankedTensor>:$mask,
    Optional<AnyRankedTensor>:$key_mask,
    Optional<AnyRankedTensor>:$score_scale,
    Optional<Index>:$query_offset,
    AnyRankedTensor:$init,
    F32Attr:$scale,
    OptionalAttr<F32Attr>:$mask_fill,
    UnitProp:$causal,
    UnitProp:$logits
  );
  let results = (outs AnyRankedTensor:$result);

  let assemblyFormat = [{
    `ins` `(` $query `,` $key `:` type($query) `,` type($key) `)`
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`key_mask` `(` $key_mask^ `:` type($key_mask) `)`)?
    (`score_scale` `(` $score_scale^ `:` type($score_scale) `)`)?
    (`query_offset` `(` $query_offset^ `)`)?
    `outs` `(` $init `:` type($init) `)`
    `scale` `=` $scale (`causal` $causal^)? (`logits` $logits^)?
    attr-dict `->` type($result)
  }];

  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
    RankedTensorType getQueryType() {
      return ::llvm::cast<RankedTensorType>(getQuery().getType());
    }
    RankedTensorType getKeyType() {
      return ::llvm::cast<RankedTensorType>(getKey().getType());
    }
    RankedTensorType getInitType() {
      return ::llvm::cast<RankedTensorType>(getInit().getType());
    }
    std::optional<int64_t> getGroupSize();
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// RopeOp
//===----------------------------------------------------------------------===//

def Dat_RopeOp : Dat_Op<"rope", [Pure, AllTypesMatch<["input", "result"]>,
                                   AllTypesMatch<["cos", "sin"]>,
    DeclareOpInterfaceMethods<TilingInterface, [
        "getIterationDomain", "getLoopIteratorTypes",
        "getTiledImplementation", "getResultTilePosition",
        "generateResultTileValue"]>]> {
  let summary = "rotary position embedding on interleaved pairs";
  let description = [{
    Rotates each interleaved pair `(x[2m], x[2m+1])` of the last axis by the
    angle of position `t = index along axis 1`:

    ```
    result[b,t,h,2m]   = x[b,t,h,2m]·cos[t,m] − x[b,t,h,2m+1]·sin[t,m]
    result[b,t,h,2m+1] = x[b,t,h,2m]·sin[t,m] + x[b,t,h,2m+1]·cos[t,m]
    ```

    `input` is `[B,L,H,K]` (the projections' natural layout, heads split but
    not yet transposed). `cos`/`sin` are either `[L,K/2]` (a table sliced to
    the sequence, as the reference's `freqs_cos[:L]`: RoPE as in the spec
    §1.4) or `[1|B,L,1|H,K/2]`, per token and head (a size-1 batch or head
    dim broadcasts):

    ```
    result[b,t,h,2m] = x[b,t,h,2m]·cos[b',t,h',m] − x[b,t,h,2m+1]·sin[b',t,h',m]
    ```

    The second form carries learned angles at arbitrary positions: sequence
    and grid orthogonal maps (APE) in their rotary normal form.
    `TilingInterface` tiles `(b, t, h)` (pairs stay whole), so the flash
    tiling fuses the rotation into the query tiles and key blocks.

    ```mlir
    %r = dat.rope %x, %cos, %sin : tensor<2x16x4x8xf32>, tensor<16x4xf32> -> tensor<2x16x4x8xf32>
    ```
  }];

  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$cos,
                       AnyRankedTensor:$sin);
  let results = (outs AnyRankedTensor:$result);

  let assemblyFormat = [{
    $input `,` $cos `,` $sin attr-dict `:` type($input) `,` type($cos) `->`
    type($result)
  }];

  let hasVerifier = 1;
}


//===----------------------------------------------------------------------===//
// RelationsOp
//===----------------------------------------------------------------------===//

def Dat_RelationsOp : Dat_Op<"relations", [Pure, DestinationStyleOpInterface]> {
  let summary = "the relation tensor of relational attention";
  let description = [{
    The relations between every pair of positions (spec §3.3 step 4):

    ```
    result[b,i,j,l] = act(scale · Σ_c rel_query[b,l,i,c] · rel_key[b,l,j,c])
    ```

    `rel_query`/`rel_key` are `[B,R,L,dr]` (one projection per relation `l`),
    `init` is `[B,Lq,Lk,R]`. `activation` is one of `identity`, `relu`,
    `sigmoid`, `tanh`, `silu`, `gelu` (tanh approximation), `softmax` (over
    the key axis `j`). Like `dat.attention_weights`, this materializes an
    N×N×R tensor; it serves inspection and golden checks, while
    `dat.relational_attention` recomputes relations per tile.

    ```mlir
    %r = dat.relations ins(%qr, %kr : tensor<2x4x12x16xf32>, tensor<2x4x12x16xf32>)
                       outs(%init : tensor<2x12x12x4xf32>)
                       scale = 2.500000e-01 activation = "identity" -> tensor<2x12x12x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$rel_query, AnyRankedTensor:$rel_key,
                       AnyRankedTensor:$init, F32Attr:$scale,
                       StrAttr:$activation);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    `ins` `(` $rel_query `,` $rel_key `:` type($rel_query) `,` type($rel_key) `)`
    `outs` `(` $init `:` type($init) `)`
    `scale` `=` $scale `activation` `=` $activation
    attr-dict `->` type($result)
  }];
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// RelationalAttentionOp
//===----------------------------------------------------------------------===//

def Dat_RelationalAttentionOp : Dat_Op<"relational_attention", [
    Pure, AttrSizedOperandSegments, DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<TilingInterface, [
        "getIterationDomain", "getLoopIteratorTypes",
        "getTiledImplementation", "getResultTilePosition"]>]> {
  let summary = "relational attention: attention over relations and symbols";
  let description = [{
    Relational attention (spec §3): for receiver `i` and head `h`, with
    kv head `g(h) = h floordiv (H/Hkv)`,

    ```
    α[b,h,i,·]   = softmax_j(scale · ⟨query[b,h,i], key[b,g(h),j]⟩)   (masked → 0)
    r[b,i,j,l]   = act(rel_scale · ⟨rel_query[b,l,i], rel_key[b,l,j]⟩)
    result[b,h,i,:] = Σ_j α[b,h,i,j] · (symbols_j + wr[h] · r[b,i,j,:])
    ```

    where `symbols_j` is `symbols[b,g(h),j,:]` (`[B,Hkv,L,hd]`, one symbol
    per position) or, with `symbols_per_pair`, `symbols[i,j,g(h),:]`
    (`[Lq,Lk,Hkv,hd]`, or `[Lq,Lk,1,hd]`: one symbol per pair shared by
    every head), or, with `relative_symbols`, the row
    `symbols[clamp(j - (i + query_offset), -M, M) + M, g(h), :]` of a table
    `[2M+1,Hkv,hd]` of position-relative symbols: the tiled lowering then
    reads the band of Bq+Bk-1 rows a tile touches and never builds the
    `[Lq,Lk,·]` tensor. With `symbol_proj` `P [H,hd,ds]`, the symbols are
    `ds` wide and projected after the sum:
    `result[b,h,i,:] = P[h] · Σ_j α[b,h,i,j] · symbols_j + wr[h] · Σ_j α · r`
    (a linear symbol projection commutes with the weighted sum: per-pair
    symbols `[Lq,Lk,1,D]` then cost H·Lq·Lk·D multiply-adds instead of
    Lq·Lk·D·H·hd to project every pair). The relation vector
    is shared by all heads; `wr` is `[H,hd,R]`. Query/key are the attention
    projections `[B,H,L,dk]`/`[B,Hkv,L,dk]` (RoPE already applied), the
    relation projections are `[B,R,L,dr]`. The result `[B,H,Lq,hd]` is
    before the output projection. Masking, `causal` and `query_offset` are as
    in `dat.attention`; relations are never masked. `TilingInterface` tiles
    the batch and query dimensions `(b, i)`: every head of a query tile stays
    together, since they share the tile's relations.

    ```mlir
    %o = dat.relational_attention
           ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x16xf32>, tensor<2x4x12x16xf32>,
               tensor<2x4x12x16xf32>, tensor<2x4x12x16xf32>, tensor<2x4x12x16xf32>,
               tensor<4x16x4xf32>)
           outs(%init : tensor<2x4x12x16xf32>)
           scale = 2.500000e-01 rel_scale = 2.500000e-01 activation = "identity"
           -> tensor<2x4x12x16xf32>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$rel_query,
    AnyRankedTensor:$rel_key,
    AnyRankedTensor:$symbols,
    AnyRankedTensor:$wr,
    Optional<AnyRankedTensor>:$symbol_proj,
    Optional<AnyRankedTensor>:$mask,
    Optional<Index>:$query_offset,
    AnyRankedTensor:$init,
    F32Attr:$scale,
    F32Attr:$rel_scale,
    StrAttr:$activation,
    UnitProp:$causal,
    UnitProp:$symbols_per_pair,
    UnitProp:$relative_symbols
  );
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $rel_query `,` $rel_key `,` $symbols `,` $wr
        `:` type($query) `,` type($key) `,` type($rel_query) `,`
        type($rel_key) `,` type($symbols) `,` type($wr) `)`
    (`symbol_proj` `(` $symbol_proj^ `:` type($symbol_proj) `)`)?
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`query_offset` `(` $query_offset^ `)`)?
    `outs` `(` $init `:` type($init) `)`
    `scale` `=` $scale `rel_scale` `=` $rel_scale `activation` `=` $activation
    (`causal` $causal^)? (`symbols_per_pair` $symbols_per_pair^)?
    (`relative_symbols` $relative_symbols^)?
    attr-dict `->` type($result)
  }];
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
    RankedTensorType getQueryType() {
      return ::llvm::cast<RankedTensorType>(getQuery().getType());
    }
    RankedTensorType getKeyType() {
      return ::llvm::cast<RankedTensorType>(getKey().getType());
    }
    std::optional<int64_t> getGroupSize();
  }];
  let hasVerifier = 1;
}


//===----------------------------------------------------------------------===//
// HyperAttentionOp
//===----------------------------------------------------------------------===//

class Dat_HyperAttentionBase<string mnemonic, list<Trait> traits = []>
    : Dat_Op<mnemonic, !listconcat(traits, [Pure, AttrSizedOperandSegments,
                                            DestinationStyleOpInterface])> {
  let results = (outs AnyRankedTensor:$result);
  let hasVerifier = 1;
}

def Dat_HyperAttentionOp : Dat_HyperAttentionBase<"hyper_attention", [
    DeclareOpInterfaceMethods<TilingInterface, [
        "getIterationDomain", "getLoopIteratorTypes",
        "getTiledImplementation", "getResultTilePosition"]>]> {
  let summary = "multi-head attention normalized across heads with a "
                "generated value network (HYLA)";
  let description = [{
    The attention of `MultiHeadDotProductAttention` in the HYLA reference
    (spec §8.2). With `s[b,h,i,j] = scale · ⟨query[b,h,i], key[b,h,j]⟩ +
    bias[·,h,i,j]`:

    * `normalization = "softmax"`: masked `s` are replaced by the lowest
      float, then `a = softmax_j(s)`;
    * `"rms_head"`: masked `s` are 0, then
      `a[b,h,i,j] = s · rsqrt(mean_h' s[b,h',i,j]² + 1e-6)` — normalized
      across the **head** axis, per (query, key) pair;
    * `"none"`: masked `s` are 0, `a = s`.

    The value network (`network`):

    * `"default"`: `result[b,h,i,:] = Σ_j a[b,h,i,j] · value[b,h,j,:]`;
    * `"mlp_relu"` / `"mlp_linear"`: a per-(query, key) network generated
      from the head vector `a[b,:,i,j]`:
      `z[b,i,j,:] = φ(Σ_h a[b,h,i,j] · value[b,h,j,:])`,
      `result[b,h,i,:] = Σ_j a[b,h,i,j] · z[b,i,j,:]` (φ = relu or identity).

    Shapes: `query [B,H,Lq,dq]`, `key [B,H,Lk,dq]`, `value [B,H,Lk,dv]`,
    optional `bias [1 or B,H,Lq,Lk]`, `mask [Lq,Lk]`, `init [B,H,Lq,dv]`.
    The result is before the output projection. `causal` allows the pairs
    `j <= i + query_offset` (default offset 0): a tile of query rows, or a
    decode step, keeps the global positions.

    The op tiles (TilingInterface) over batch and query rows; a tile keeps
    every head (`rms_head` normalizes across them) and every key.

    ```mlir
    %o = dat.hyper_attention ins(%q, %k, %v : tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>,
                                 tensor<2x8x16x2xf32>)
                             bias(%b : tensor<1x8x16x16xf32>)
                             outs(%init : tensor<2x8x16x2xf32>)
                             scale = 0.707106769 normalization = "rms_head"
                             network = "mlp_relu" causal -> tensor<2x8x16x2xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key,
                       AnyRankedTensor:$value,
                       Optional<AnyRankedTensor>:$bias,
                       Optional<AnyRankedTensor>:$mask,
                       Optional<Index>:$query_offset,
                       AnyRankedTensor:$init, F32Attr:$scale,
                       StrAttr:$normalization, StrAttr:$network,
                       UnitProp:$causal);
  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $value `:` type($query) `,` type($key) `,`
        type($value) `)`
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`query_offset` `(` $query_offset^ `)`)?
    `outs` `(` $init `:` type($init) `)`
    `scale` `=` $scale `normalization` `=` $normalization
    `network` `=` $network (`causal` $causal^)?
    attr-dict `->` type($result)
  }];
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
  }];
}

def Dat_HyperAttentionWeightsOp
    : Dat_HyperAttentionBase<"hyper_attention_weights"> {
  let summary = "the normalized attention weights of dat.hyper_attention";
  let description = [{
    The weights `a[b,h,i,j]` that `dat.hyper_attention` with the same
    operands computes (the reference's returned attention weights),
    `init [B,H,Lq,Lk]`. Materializes the N×N tensor: for inspection only.

    ```mlir
    %a = dat.hyper_attention_weights ins(%q, %k : tensor<2x8x16x2xf32>, tensor<2x8x16x2xf32>)
                                     outs(%init : tensor<2x8x16x16xf32>)
                                     scale = 0.707106769 normalization = "softmax"
                                     -> tensor<2x8x16x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key,
                       Optional<AnyRankedTensor>:$bias,
                       Optional<AnyRankedTensor>:$mask,
                       AnyRankedTensor:$init, F32Attr:$scale,
                       StrAttr:$normalization, UnitProp:$causal);
  let assemblyFormat = [{
    `ins` `(` $query `,` $key `:` type($query) `,` type($key) `)`
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    `outs` `(` $init `:` type($init) `)`
    `scale` `=` $scale `normalization` `=` $normalization
    (`causal` $causal^)?
    attr-dict `->` type($result)
  }];
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
  }];
}


//===----------------------------------------------------------------------===//
// OrthogonalMapOp
//===----------------------------------------------------------------------===//

def Dat_OrthogonalMapOp : Dat_Op<"orthogonal_map", [
    Pure, DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<TilingInterface, [
        "getIterationDomain", "getLoopIteratorTypes",
        "getTiledImplementation", "getResultTilePosition",
        "generateResultTileValue"]>]> {
  let summary = "apply per-position orthogonal maps to queries or keys (APE)";
  let description = [{
    Algebraic positional encodings (spec §9) transform each query and key by
    the orthogonal matrix of its absolute position, so that
    `⟨M_i q, M_j k⟩ = qᵀ M_iᵀ M_j k` depends on the relative position only:

    ```
    result[b,h,l,a] = Σ_c maps[b',l,h',a,c] · input[b,h,l,c]
        (b' = b, or 0 when maps has batch 1; h' = h, or 0 when maps has 1 head)
    ```

    `input` and `init` are `[B,H,L,d]`, `maps` is `[1|B,L,1|H,d,d]` (the
    maps already gathered at each token's position: powers `W^p` for
    sequences, one axis of a grid, or a tree path's product, which all heads
    share). RoPE is the special case of block-diagonal 2×2 rotations
    (`dat.rope`). The op tiles over (b, h, l); a tile keeps the feature axis.

    ```mlir
    %r = dat.orthogonal_map ins(%q, %maps : tensor<2x4x12x8xf32>, tensor<2x12x4x8x8xf32>)
                            outs(%init : tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$maps,
                       AnyRankedTensor:$init);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    `ins` `(` $input `,` $maps `:` type($input) `,` type($maps) `)`
    `outs` `(` $init `:` type($init) `)` attr-dict `->` type($result)
  }];
  let extraClassDeclaration = [{
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
  }];
  let hasVerifier = 1;
}

#endif // DAT_DIALECT_DAT_IR_DATOPS_TD
