//===- DualAttention.cpp - frontend of DualAttention ----------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// concat(SelfAttention, RelationalAttention) with head_dim fixed by the total
// head count and no joint output projection (spec §5).
//
//===----------------------------------------------------------------------===//

#include "Modules.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace llvm;
using namespace mlir;

namespace dat {

Value concatLast(ModelBuilder &mb, Value a, Value b) {
  if (mb.failed() || !a || !b)
    return {};
  auto at = cast<RankedTensorType>(a.getType());
  auto bt = cast<RankedTensorType>(b.getType());
  // (Leading dimensions may be dynamic: a's own sizes.)
  SmallVector<OpFoldResult> sizesA = tensor::getMixedSizes(mb.b, mb.loc, a);
  SmallVector<OpFoldResult> sizesB = tensor::getMixedSizes(mb.b, mb.loc, b);
  SmallVector<OpFoldResult> shape = sizesA;
  shape.back() = mb.b.getIndexAttr(at.getShape().back() + bt.getShape().back());
  Value out = mb.emptyLike(shape);
  int64_t rank = at.getRank();
  SmallVector<OpFoldResult> zeros(rank, mb.b.getIndexAttr(0));
  SmallVector<OpFoldResult> ones(rank, mb.b.getIndexAttr(1));
  out =
      tensor::InsertSliceOp::create(mb.b, mb.loc, a, out, zeros, sizesA, ones);
  SmallVector<OpFoldResult> offsets = zeros;
  offsets.back() = mb.b.getIndexAttr(at.getShape().back());
  return tensor::InsertSliceOp::create(mb.b, mb.loc, b, out, offsets, sizesB,
                                       ones);
}

DualAttentionResult emitDualAttention(ModelBuilder &mb, StringRef prefix,
                                      Value x, Value symbols, Value cos,
                                      Value sin, bool causal, bool wantWeights,
                                      StringRef dropoutKey) {
  if (mb.failed() || !x)
    return {};
  // The model width is the stream's (the enclosing module reads d_model).
  int64_t dModel = cast<RankedTensorType>(x.getType()).getShape().back();
  int64_t nSA = mb.intArg("n_heads_sa");
  int64_t nRA = mb.intArg("n_heads_ra");
  mb.floatArg(dropoutKey, 0.0); // the identity at inference
  bool share = mb.boolArg("share_attn_params", false);
  std::string raType = mb.stringArg("ra_type", "relational_attention");
  int64_t total = nSA + nRA;
  AttentionParams sa;
  RelationalAttentionParams ra;
  mb.withKwargs("sa_kwargs", "Attention", [&] {
    if (nSA > 0)
      sa = makeAttentionParams(mb, dModel, nSA, total);
  });
  mb.withKwargs("ra_kwargs", "RelationalAttention", [&] {
    if (nRA > 0)
      ra = makeRelationalAttentionParams(mb, dModel, nRA, total);
  });
  if (mb.failed())
    return {};
  if (total == 0) {
    mb.error(mb.config.path + ": kwargs.n_heads_sa: n_heads_sa + n_heads_ra "
                              "must be positive");
    return {};
  }
  if (raType == "rca" || raType == "disrca") {
    mb.error(mb.config.path + ": kwargs.ra_type: '" + raType +
             "' cannot be constructed by the reference (NameError in its "
             "module); only 'relational_attention' is supported");
    return {};
  }
  if (raType != "relational_attention") {
    mb.error(mb.config.path + ": kwargs.ra_type: unknown '" + raType + "'");
    return {};
  }
  std::string saPrefix = (prefix + "self_attention.").str();
  std::string raPrefix = (prefix + "relational_attention.").str();
  if (share) {
    if (nSA != nRA) {
      mb.error(mb.config.path + ": kwargs.share_attn_params: needs n_heads_sa "
                                "== n_heads_ra");
      return {};
    }
    // SA's wq/wk are RA's wq_attn/wk_attn modules (aliased keys).
    sa.queryWeights = raPrefix + "wq_attn";
    sa.keyWeights = raPrefix + "wk_attn";
    sa.sharedKeyBias = ra.attn.biasKV;
    mb.aliasWeight(saPrefix + "wq.weight", raPrefix + "wq_attn.weight");
    mb.aliasWeight(saPrefix + "wk.weight", raPrefix + "wk_attn.weight");
    if (ra.attn.biasKV)
      mb.aliasWeight(saPrefix + "wk.bias", raPrefix + "wk_attn.bias");
  }

  DualAttentionResult r;
  AttentionResult saOut;
  RelationalAttentionResult raOut;
  if (nSA > 0)
    saOut =
        emitAttention(mb, sa, saPrefix, x, x, x, cos, sin, causal, wantWeights);
  if (nRA > 0)
    raOut = emitRelationalAttention(mb, ra, raPrefix, x, symbols, cos, sin,
                                    causal, wantWeights, wantWeights);
  r.out = nSA == 0   ? raOut.out
          : nRA == 0 ? saOut.out
                     : concatLast(mb, saOut.out, raOut.out);
  r.saWeights = saOut.weights;
  r.raWeights = raOut.weights;
  r.raRelations = raOut.relations;
  return r;
}

void buildDualAttentionModule(ModelBuilder &mb) {
  int64_t dModel = mb.intArg("d_model");
  bool causal = mb.boolCall("is_causal", false);
  mb.boolCall("need_weights", false);
  Value x = mb.input("x", 3), symbols = mb.input("symbols", 3);
  if (mb.failed() || !x)
    return;
  if (cast<RankedTensorType>(x.getType()).getShape().back() != dModel) {
    mb.error(mb.config.path +
             ": inputs.x: the last dimension must be "
             "kwargs.d_model " +
             Twine(dModel));
    return;
  }
  auto [cos, sin] = ropeInputs(mb);
  bool want = mb.wantsOutput("sa_attn_scores") ||
              mb.wantsOutput("ra_attn_scores") ||
              mb.wantsOutput("ra_relations");
  DualAttentionResult r =
      emitDualAttention(mb, "", x, symbols, cos, sin, causal, want, "dropout");
  mb.output("y", r.out);
  mb.output("sa_attn_scores", r.saWeights);
  mb.output("ra_attn_scores", r.raWeights);
  mb.output("ra_relations", r.raRelations);
}

} // namespace dat
