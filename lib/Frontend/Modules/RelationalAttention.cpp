//===- RelationalAttention.cpp - frontend of RelationalAttention ----------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "Modules.h"

#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"

#include <cmath>

using namespace llvm;
using namespace mlir;

namespace dat {

RelationalAttentionParams makeRelationalAttentionParams(ModelBuilder &mb,
                                                        int64_t dModel,
                                                        int64_t nHeads,
                                                        int64_t totalHeads) {
  RelationalAttentionParams p;
  p.attn = makeAttentionParams(mb, dModel, nHeads, totalHeads);
  p.relations = mb.intArg("n_relations", p.attn.nHeads);
  p.activation = mb.stringArg("rel_activation", "identity");
  p.symmetric = mb.boolArg("symmetric_rels", false);
  p.relativeSymbols = mb.boolArg("use_relative_positional_symbols", false);
  std::optional<int64_t> relProj = mb.optIntArg("rel_proj_dim");
  if (mb.failed())
    return p;
  if (!llvm::is_contained(
          {"identity", "relu", "sigmoid", "tanh", "silu", "gelu", "softmax"},
          p.activation))
    mb.error(mb.config.path + ": kwargs.rel_activation: unknown activation '" +
             p.activation +
             "' (identity, relu, sigmoid, tanh, silu, gelu, softmax)");
  int64_t width = p.attn.headDim * p.attn.nHeads;
  if (p.relations == 0) {
    mb.error(mb.config.path + ": kwargs.n_relations: must be positive");
    return p;
  }
  p.relProjDim = relProj.value_or(width / p.relations);
  // The reference asserts this even when rel_proj_dim is given.
  if (p.relProjDim * p.relations != width)
    mb.error(mb.config.path +
             ": kwargs.rel_proj_dim: rel_proj_dim × "
             "n_relations (" +
             Twine(p.relProjDim) + " × " + Twine(p.relations) +
             ") must equal head_dim × n_heads (" + Twine(width) + ")");
  return p;
}

RelationalAttentionResult
emitRelationalAttention(ModelBuilder &mb, const RelationalAttentionParams &p,
                        StringRef prefix, Value x, Value symbols, Value cos,
                        Value sin, bool causal, bool wantWeights,
                        bool wantRelations) {
  if (mb.failed())
    return {};
  const AttentionParams &a = p.attn;
  auto name = [&](StringRef n) { return (prefix + n).str(); };
  Value q = mb.swapSeqHeads(applyRope(
      mb,
      mb.splitHeads(mb.linear(x, name("wq_attn"), a.nHeads * a.keyDim, false),
                    a.nHeads),
      cos, sin, a));
  Value k = mb.swapSeqHeads(
      applyRope(mb,
                mb.splitHeads(mb.linear(x, name("wk_attn"),
                                        a.kvHeads * a.keyDim, a.biasKV),
                              a.kvHeads),
                cos, sin, a));
  int64_t relWidth = p.relations * p.relProjDim;
  Value qr = mb.swapSeqHeads(mb.splitHeads(
      mb.linear(x, name("wq_rel"), relWidth, false), p.relations));
  Value kr = qr;
  if (p.symmetric)
    mb.aliasWeight(name("wk_rel.weight"), name("wq_rel.weight"));
  else
    kr = mb.swapSeqHeads(mb.splitHeads(
        mb.linear(x, name("wk_rel"), relWidth, false), p.relations));

  // A decode step attends to every cached key (masked past its position).
  k = mb.cached((prefix + "k").str(), k, 2);
  kr = mb.cached((prefix + "k_rel").str(), kr, 2);

  if (mb.failed() || !symbols)
    return {};
  auto st = cast<RankedTensorType>(symbols.getType());
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t L = xt.getDimSize(1);
  int64_t keys = mb.decoding() ? mb.decodeLength() : L;
  // Position-relative symbols come either as the table of the models'
  // retriever, [2M+1, d_model] (kept a table: the op gathers its band), or,
  // for this module on its own, as the reference's [L, L, d_model] input.
  bool table = p.relativeSymbols && st.getRank() == 2;
  bool shapeOk =
      table ? st.getDimSize(1) == a.dModel && st.getDimSize(0) % 2 == 1
      : p.relativeSymbols
          ? st.getRank() == 3 && mb.sameDim(symbols, 0, x, 1) &&
                (mb.decoding() ? st.getDimSize(1) == keys
                               : mb.sameDim(symbols, 1, x, 1)) &&
                st.getDimSize(2) == a.dModel
          : st.getRank() == 3 && mb.sameDim(symbols, 0, x, 0) &&
                mb.sameDim(symbols, 1, x, 1) && st.getDimSize(2) == a.dModel;
  if (!shapeOk) {
    mb.error(mb.config.path + ": inputs.symbols: expected shape " +
             (table               ? "[2*max_rel_pos+1, d_model]"
              : p.relativeSymbols ? "[L, L, d_model]"
                                  : "[B, L, d_model]") +
             " for " +
             (p.relativeSymbols ? "relative positional" : "per-position") +
             " symbols");
    return {};
  }
  float scale = 1.0f / std::sqrt(static_cast<float>(a.headDim));
  float relScale = 1.0f / std::sqrt(static_cast<float>(p.relProjDim));
  // (Batch and length may be dynamic: the input's own sizes.)
  OpFoldResult batch = mb.dimOf(x, 0), len = mb.dimOf(x, 1),
               nHeads = mb.b.getIndexAttr(a.nHeads);
  auto relationalAttention = [&](Value symbolValues, Value wr, bool perPair,
                                 bool relative, Value symbolProj = Value()) {
    Value init =
        mb.emptyLike({batch, nHeads, len, mb.b.getIndexAttr(a.headDim)});
    return mlir::dat::RelationalAttentionOp::create(
        mb.b, mb.loc, init.getType(), q, k, qr, kr, symbolValues, wr,
        symbolProj, /*mask=*/Value(), mb.decodePosition(), init,
        mb.b.getF32FloatAttr(scale), mb.b.getF32FloatAttr(relScale),
        mb.b.getStringAttr(p.activation), causal, perPair, relative);
  };

  // The module's outputs from the heads' output [B,H,L,hd].
  auto results = [&](Value heads) {
    RelationalAttentionResult r;
    r.out = mb.linear(mb.mergeHeads(heads), name("wo"), a.nHeads * a.headDim,
                      a.biasOut);
    if (wantWeights) {
      Value init = mb.emptyLike({batch, nHeads, len, len});
      r.weights = mlir::dat::AttentionWeightsOp::create(
          mb.b, mb.loc, init.getType(), q, k, Value(), Value(), Value(),
          Value(), init, mb.b.getF32FloatAttr(scale), FloatAttr(), causal,
          /*logits=*/false);
    }
    if (wantRelations) {
      Value init =
          mb.emptyLike({batch, len, len, mb.b.getIndexAttr(p.relations)});
      r.relations = mlir::dat::RelationsOp::create(
          mb.b, mb.loc, init.getType(), qr, kr, init,
          mb.b.getF32FloatAttr(relScale), mb.b.getStringAttr(p.activation));
    }
    return r;
  };

  // Symbols given whole, [L, L, D]: wv is linear, so
  //   Σ_j α_ij · wv_h(s_ij) = wv_h(Σ_j α_ij · s_ij),
  // the α-weighted sum of the raw symbols (H·L²·D multiply-adds) projected
  // per head in the op's epilogue (symbol_proj; H·L·D·hd) instead of L²
  // projected symbols (L²·D·H·hd): 32× fewer at d = 256, H = 8. Worth it
  // where heads are fewer than half the head width; not with grouped kv
  // heads.
  if (p.relativeSymbols && !table && a.kvHeads == a.nHeads &&
      2 * a.nHeads <= a.headDim) {
    int64_t D = a.dModel, H = a.nHeads, hd = a.headDim;
    Value w = mb.weight(name("wv.weight"), {H * hd, D});
    Value bias = a.biasKV ? mb.weight(name("wv.bias"), {H * hd}) : Value();
    Value wr = mb.weight(name("wr"), {H, hd, p.relations});
    if (mb.failed())
      return {};
    auto size = [&](int64_t v) -> OpFoldResult { return mb.b.getIndexAttr(v); };
    Value raw = tensor::ExpandShapeOp::create(
        mb.b, mb.loc,
        RankedTensorType::get({st.getDimSize(0), st.getDimSize(1), 1, D},
                              st.getElementType()),
        symbols, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}},
        ArrayRef<OpFoldResult>{mb.dimOf(symbols, 0), mb.dimOf(symbols, 1),
                               size(1), size(D)});
    Value w3 = tensor::ExpandShapeOp::create(
        mb.b, mb.loc, RankedTensorType::get({H, hd, D}, mb.b.getF32Type()), w,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}});
    Value out = relationalAttention(raw, wr, /*perPair=*/true,
                                    /*relative=*/false, w3);
    if (bias) {
      // out[b,h,i,e] += bias[h·hd+e]: the softmax's weights sum to 1, so
      // the bias passes through the weighted sum unchanged.
      MLIRContext *ctx = mb.b.getContext();
      Value b2 = tensor::ExpandShapeOp::create(
          mb.b, mb.loc, RankedTensorType::get({H, hd}, mb.b.getF32Type()), bias,
          ArrayRef<ReassociationIndices>{{0, 1}});
      AffineExpr db, dh, di, de;
      bindDims(ctx, db, dh, di, de);
      out = linalg::GenericOp::create(
                mb.b, mb.loc, out.getType(), ValueRange{b2}, ValueRange{out},
                ArrayRef<AffineMap>{AffineMap::get(4, 0, {dh, de}, ctx),
                                    AffineMap::getMultiDimIdentityMap(4, ctx)},
                SmallVector<utils::IteratorType>(4,
                                                 utils::IteratorType::parallel),
                [](OpBuilder &nb, Location nl, ValueRange args) {
                  linalg::YieldOp::create(
                      nb, nl,
                      arith::AddFOp::create(nb, nl, args[1], args[0])
                          .getResult());
                })
                .getResult(0);
    }
    return results(out);
  }

  // wv projects symbols: [B,L,D] -> [B,Hkv,L,hd], [L,L,D] -> [L,L,Hkv,hd],
  // or a table [T,D] (as [1,T,D]) -> [T,Hkv,hd]: projecting the table rows
  // equals projecting the rows gathered from it.
  Value in = symbols;
  if (table)
    in = tensor::ExpandShapeOp::create(
        mb.b, mb.loc,
        RankedTensorType::get({1, st.getDimSize(0), st.getDimSize(1)},
                              st.getElementType()),
        symbols, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  Value sv = mb.splitHeads(
      mb.linear(in, name("wv"), a.kvHeads * a.headDim, a.biasKV), a.kvHeads);
  if (mb.failed())
    return {};
  if (table)
    sv = tensor::CollapseShapeOp::create(
        mb.b, mb.loc, sv, ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
  else if (!p.relativeSymbols)
    sv = mb.cached((prefix + "symbol_values").str(), mb.swapSeqHeads(sv), 2);
  Value wr = mb.weight(name("wr"), {a.nHeads, a.headDim, p.relations});
  if (mb.failed())
    return {};

  return results(relationalAttention(sv, wr,
                                     /*perPair=*/p.relativeSymbols && !table,
                                     /*relative=*/table));
}

void buildRelationalAttentionModule(ModelBuilder &mb) {
  int64_t dModel = mb.intArg("d_model");
  int64_t nHeads = mb.intArg("n_heads");
  mb.floatArg("dropout", 0.0); // the identity at inference
  int64_t total = mb.intArg("total_n_heads", nHeads);
  RelationalAttentionParams p =
      makeRelationalAttentionParams(mb, dModel, nHeads, total);
  bool causal = mb.boolCall("is_causal", false);
  Value x = mb.input("x", 3), symbols = mb.input("symbols", 3);
  auto [cos, sin] = ropeInputs(mb);
  RelationalAttentionResult r = emitRelationalAttention(
      mb, p, "", x, symbols, cos, sin, causal, mb.wantsOutput("attn_scores"),
      mb.wantsOutput("relations"));
  mb.output("y", r.out);
  mb.output("attn_scores", r.weights);
  mb.output("relations", r.relations);
}

} // namespace dat
