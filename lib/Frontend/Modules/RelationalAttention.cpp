//===- RelationalAttention.cpp - frontend of RelationalAttention ----------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "Modules.h"

#include "dat/Dialect/Dat/IR/DatOps.h"

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
          ? st.getRank() == 3 && st.getDimSize(0) == L &&
                st.getDimSize(1) == keys && st.getDimSize(2) == a.dModel
          : st.getRank() == 3 && st.getDimSize(0) == xt.getDimSize(0) &&
                st.getDimSize(1) == L && st.getDimSize(2) == a.dModel;
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

  float scale = 1.0f / std::sqrt(static_cast<float>(a.headDim));
  float relScale = 1.0f / std::sqrt(static_cast<float>(p.relProjDim));
  int64_t B = xt.getDimSize(0);
  auto ra = mlir::dat::RelationalAttentionOp::create(
      mb.b, mb.loc, mb.emptyLike({B, a.nHeads, L, a.headDim}).getType(), q, k,
      qr, kr, sv, wr, /*mask=*/Value(), mb.decodePosition(),
      mb.emptyLike({B, a.nHeads, L, a.headDim}), mb.b.getF32FloatAttr(scale),
      mb.b.getF32FloatAttr(relScale), mb.b.getStringAttr(p.activation), causal,
      /*symbolsPerPair=*/p.relativeSymbols && !table,
      /*relativeSymbols=*/table);
  RelationalAttentionResult r;
  r.out =
      mb.linear(mb.mergeHeads(ra), name("wo"), a.nHeads * a.headDim, a.biasOut);
  if (wantWeights) {
    Value init = mb.emptyLike({B, a.nHeads, L, L});
    r.weights = mlir::dat::AttentionWeightsOp::create(
        mb.b, mb.loc, init.getType(), q, k, Value(), Value(), Value(), Value(),
        init, mb.b.getF32FloatAttr(scale), FloatAttr(), causal,
        /*logits=*/false);
  }
  if (wantRelations) {
    Value init = mb.emptyLike({B, L, L, p.relations});
    r.relations = mlir::dat::RelationsOp::create(
        mb.b, mb.loc, init.getType(), qr, kr, init,
        mb.b.getF32FloatAttr(relScale), mb.b.getStringAttr(p.activation));
  }
  return r;
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
