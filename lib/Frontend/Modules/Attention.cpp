//===- Attention.cpp - frontend of dual_attention's Attention -------------===//
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

AttentionParams makeAttentionParams(ModelBuilder &mb, int64_t dModel,
                                    int64_t nHeads, int64_t totalHeads) {
  AttentionParams p;
  p.dModel = dModel;
  p.nHeads = nHeads;
  p.totalHeads = totalHeads;
  p.biasKV = mb.boolArg("add_bias_kv", false);
  p.biasOut = mb.boolArg("add_bias_out", false);
  std::optional<int64_t> keyDim = mb.optIntArg("key_dim");
  std::optional<int64_t> kvHeads = mb.optIntArg("n_kv_heads");
  if (mb.failed())
    return p;
  if (dModel <= 0) {
    mb.error(mb.config.path + ": kwargs.d_model: must be positive, got " +
             Twine(dModel));
    return p;
  }
  if (nHeads == 0 || totalHeads == 0 || dModel % totalHeads != 0) {
    mb.error(mb.config.path + ": kwargs.d_model: " + Twine(dModel) +
             " is not divisible by the number of heads " + Twine(totalHeads));
    return p;
  }
  p.headDim = dModel / totalHeads;
  p.keyDim = keyDim.value_or(p.headDim);
  p.kvHeads = kvHeads.value_or(nHeads);
  if (p.keyDim == 0)
    mb.error(mb.config.path + ": kwargs.key_dim: must be positive");
  if (p.kvHeads == 0 || nHeads % p.kvHeads != 0)
    mb.error(mb.config.path + ": kwargs.n_kv_heads: " + Twine(p.kvHeads) +
             " does not divide n_heads " + Twine(nHeads));
  return p;
}

AttentionParams readAttentionParams(ModelBuilder &mb) {
  int64_t dModel = mb.intArg("d_model");
  int64_t nHeads = mb.intArg("n_heads");
  mb.floatArg("dropout", 0.0); // the identity at inference
  int64_t total = mb.intArg("total_n_heads", nHeads);
  return makeAttentionParams(mb, dModel, nHeads, total);
}

Value applyRope(ModelBuilder &mb, Value x, Value cos, Value sin,
                const AttentionParams &p) {
  if (!cos || !sin || !x || mb.failed())
    return x;
  if (p.keyDim != p.headDim) {
    mb.error(mb.config.path +
             ": kwargs.key_dim: RoPE needs key_dim == "
             "head_dim (" +
             Twine(p.headDim) + "), got " + Twine(p.keyDim));
    return {};
  }
  auto xt = cast<RankedTensorType>(x.getType());
  auto ct = cast<RankedTensorType>(cos.getType());
  if (ct.getRank() != 2 || ct.getDimSize(0) != xt.getDimSize(1) ||
      ct.getDimSize(1) * 2 != xt.getDimSize(3) || ct != sin.getType()) {
    mb.error(mb.config.path + ": inputs.freqs_cos/freqs_sin: expected shape [" +
             Twine(xt.getDimSize(1)) + ", " + Twine(xt.getDimSize(3) / 2) +
             "] for both");
    return {};
  }
  return mlir::dat::RopeOp::create(mb.b, mb.loc, x.getType(), x, cos, sin);
}

AttentionResult emitAttention(ModelBuilder &mb, const AttentionParams &p,
                              StringRef prefix, Value query, Value key,
                              Value value, Value ropeCos, Value ropeSin,
                              bool causal, bool wantWeights, Value mask) {
  if (mb.failed() || !query || !key || !value)
    return {};
  auto qt0 = cast<RankedTensorType>(query.getType());
  auto kt0 = cast<RankedTensorType>(key.getType());
  if (kt0.getRank() != 3 || qt0.getRank() != 3 ||
      !mb.sameDim(key, 0, query, 0) || kt0.getDimSize(2) != qt0.getDimSize(2) ||
      key.getType() != value.getType()) {
    mb.error(mb.config.path + ": inputs: the attended sequence " +
             "(keys/values, e.g. the context) must have the queries' batch " +
             Twine(qt0.getDimSize(0)) + " and width " +
             Twine(qt0.getDimSize(2)) + " for " + prefix.str() + "*");
    return {};
  }
  auto name = [&](StringRef n) { return (prefix + n).str(); };
  std::string wq = p.queryWeights.empty() ? name("wq") : p.queryWeights;
  std::string wk = p.keyWeights.empty() ? name("wk") : p.keyWeights;
  Value q =
      mb.splitHeads(mb.linear(query, wq, p.nHeads * p.keyDim, false), p.nHeads);
  Value k = mb.splitHeads(
      mb.linear(key, wk, p.kvHeads * p.keyDim,
                p.keyWeights.empty() ? p.biasKV : p.sharedKeyBias),
      p.kvHeads);
  Value v = mb.splitHeads(
      mb.linear(value, name("wv"), p.kvHeads * p.headDim, p.biasKV), p.kvHeads);
  q = mb.swapSeqHeads(applyRope(mb, q, ropeCos, ropeSin, p));
  // A decode step attends to every cached key (masked past its position).
  k = mb.cached((prefix + "k").str(),
                mb.swapSeqHeads(applyRope(mb, k, ropeCos, ropeSin, p)), 2);
  v = mb.cached((prefix + "v").str(), mb.swapSeqHeads(v), 2);
  if (mb.failed())
    return {};

  // The reference scales by 1/sqrt(head_dim) even when key_dim differs.
  float scale = 1.0f / std::sqrt(static_cast<float>(p.headDim));
  // (Batch and lengths may be dynamic: the tensors' own sizes.)
  OpFoldResult batch = mb.dimOf(q, 0), lq = mb.dimOf(q, 2), lk = mb.dimOf(k, 2);
  OpFoldResult heads = mb.b.getIndexAttr(p.nHeads);
  Value o = mlir::dat::AttentionOp::create(
      mb.b, mb.loc, q, k, v,
      mb.emptyLike({batch, heads, lq, mb.b.getIndexAttr(p.headDim)}), scale,
      causal, mask, mb.decodePosition());
  AttentionResult r;
  r.out =
      mb.linear(mb.mergeHeads(o), name("wo"), p.nHeads * p.headDim, p.biasOut);
  if (wantWeights) {
    Value init = mb.emptyLike({batch, heads, lq, lk});
    r.weights = mlir::dat::AttentionWeightsOp::create(
        mb.b, mb.loc, init.getType(), q, k, mask,
        /*key_mask=*/Value(), /*score_scale=*/Value(),
        /*query_offset=*/Value(), init, mb.b.getF32FloatAttr(scale),
        /*mask_fill=*/FloatAttr(), causal,
        /*logits=*/false);
  }
  return r;
}

std::pair<Value, Value> ropeInputs(ModelBuilder &mb) {
  if (!mb.hasInput("freqs_cos") && !mb.hasInput("freqs_sin"))
    return {};
  return {mb.input("freqs_cos", 2), mb.input("freqs_sin", 2)};
}

void buildAttentionModule(ModelBuilder &mb) {
  AttentionParams p = readAttentionParams(mb);
  bool causal = mb.boolCall("is_causal", false);
  mb.boolCall("need_weights", false); // same math on either path
  Value x = mb.input("x", 3);
  auto [cos, sin] = ropeInputs(mb);
  // attn_mask [L, L] (nonzero = may attend), exclusive with is_causal.
  Value mask;
  if (mb.hasInput("attn_mask") && x) {
    int64_t L = cast<RankedTensorType>(x.getType()).getDimSize(1);
    if (causal) {
      mb.error(mb.config.path + ": inputs.attn_mask: the reference refuses "
                                "attn_mask together with call.is_causal");
      return;
    }
    mask = mb.boolInput("attn_mask", {L, L});
  }
  AttentionResult r = emitAttention(mb, p, "", x, x, x, cos, sin, causal,
                                    mb.wantsOutput("attn_scores"), mask);
  mb.output("y", r.out);
  mb.output("attn_scores", r.weights);
}

} // namespace dat
