//===- Hyla.cpp - frontend of HYLA's MultiHeadDotProductAttention ---------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Flax parameters: DenseGeneral kernels keep input axes first
// (`query.kernel [E,H,dq]`, `out.kernel [H,dv,F]`), no transposes (spec §8.2).
//
//===----------------------------------------------------------------------===//

#include "Modules.h"

#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace llvm;
using namespace mlir;

namespace dat {

/// y[b,l,o] = Σ_e x[b,l,e] · kernel[e,o] + bias[o] for a Flax kernel whose
/// input axes come first; `kernel` is the weight value, already [in, out].
static Value denseFlax(ModelBuilder &mb, Value x, Value kernel, Value bias) {
  if (mb.failed() || !x || !kernel)
    return {};
  return mlir::dat::buildLinear(mb.b, mb.loc, x, kernel, bias,
                                mlir::dat::WeightLayout::InOut);
}

/// Collapses a [a, b, c] weight to [a, b·c] or [a·b, c].
static Value collapse(ModelBuilder &mb, Value w, bool leading) {
  if (!w)
    return {};
  auto t = cast<RankedTensorType>(w.getType());
  SmallVector<int64_t> shape =
      leading ? SmallVector<int64_t>{t.getDimSize(0) * t.getDimSize(1),
                                     t.getDimSize(2)}
              : SmallVector<int64_t>{t.getDimSize(0),
                                     t.getDimSize(1) * t.getDimSize(2)};
  SmallVector<ReassociationIndices> re =
      leading ? SmallVector<ReassociationIndices>{{0, 1}, {2}}
              : SmallVector<ReassociationIndices>{{0}, {1, 2}};
  return tensor::CollapseShapeOp::create(
      mb.b, mb.loc, RankedTensorType::get(shape, t.getElementType()), w, re);
}

/// The q/k/v projection `name` with features (H, d): [B,L,E] -> [B,H,L,d].
static Value projectHeads(ModelBuilder &mb, Value x, StringRef name, int64_t e,
                          int64_t heads, int64_t d, bool bias) {
  Value kernel =
      collapse(mb, mb.weight((name + ".kernel").str(), {e, heads, d}),
               /*leading=*/false);
  Value b;
  if (bias) {
    Value b2 = mb.weight((name + ".bias").str(), {heads, d});
    if (b2)
      b = tensor::CollapseShapeOp::create(
          mb.b, mb.loc, RankedTensorType::get({heads * d}, mb.b.getF32Type()),
          b2, ArrayRef<ReassociationIndices>{{0, 1}});
  }
  return mb.swapSeqHeads(mb.splitHeads(denseFlax(mb, x, kernel, b), heads));
}

/// Flax LayerNorm over the last axis without bias, eps 1e-6, variance as
/// max(0, E[x²] − E[x]²) (spec §10), on [B,H,L,d] with `scale [d]`.
static Value layerNormNoBias(ModelBuilder &mb, Value x, Value scale) {
  if (mb.failed() || !x || !scale)
    return {};
  MLIRContext *ctx = mb.b.getContext();
  auto t = cast<RankedTensorType>(x.getType());
  int64_t d = t.getDimSize(3);
  AffineExpr b0, b1, b2, b3;
  bindDims(ctx, b0, b1, b2, b3);
  AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
  AffineMap row = AffineMap::get(4, 0, {b0, b1, b2}, ctx);
  SmallVector<OpFoldResult> rowShape = {mb.dimOf(x, 0), mb.dimOf(x, 1),
                                        mb.dimOf(x, 2)};
  auto reduce = [&](bool squares) {
    Value zero =
        arith::ConstantOp::create(mb.b, mb.loc, mb.b.getF32FloatAttr(0));
    Value init =
        linalg::FillOp::create(mb.b, mb.loc, zero, mb.emptyLike(rowShape))
            .getResult(0);
    return linalg::GenericOp::create(
               mb.b, mb.loc, init.getType(), ValueRange{x}, ValueRange{init},
               ArrayRef<AffineMap>{id, row},
               ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                             utils::IteratorType::parallel,
                                             utils::IteratorType::parallel,
                                             utils::IteratorType::reduction},
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 Value v = squares ? Value(arith::MulFOp::create(
                                         nb, nl, args[0], args[0]))
                                   : args[0];
                 linalg::YieldOp::create(
                     nb, nl, Value(arith::AddFOp::create(nb, nl, args[1], v)));
               })
        .getResult(0);
  };
  Value sum = reduce(false), sumSq = reduce(true);
  return linalg::GenericOp::create(
             mb.b, mb.loc, t, ValueRange{x, sum, sumSq, scale},
             ValueRange{mb.emptyLike(tensor::getMixedSizes(mb.b, mb.loc, x))},
             ArrayRef<AffineMap>{id, row, row, AffineMap::get(4, 0, {b3}, ctx),
                                 id},
             SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               auto c = [&](double v) {
                 return arith::ConstantOp::create(nb, nl,
                                                  nb.getF32FloatAttr(v));
               };
               Value n = c(static_cast<double>(d));
               Value mean = arith::DivFOp::create(nb, nl, args[1], n);
               Value meanSq = arith::DivFOp::create(nb, nl, args[2], n);
               Value var = arith::MaximumFOp::create(
                   nb, nl, c(0.0),
                   arith::SubFOp::create(
                       nb, nl, meanSq,
                       arith::MulFOp::create(nb, nl, mean, mean)));
               Value inv = math::RsqrtOp::create(
                   nb, nl, arith::AddFOp::create(nb, nl, var, c(1e-6)));
               Value y = arith::MulFOp::create(
                   nb, nl, arith::SubFOp::create(nb, nl, args[0], mean), inv);
               linalg::YieldOp::create(
                   nb, nl, Value(arith::MulFOp::create(nb, nl, y, args[3])));
             })
      .getResult(0);
}

void buildHylaAttentionModule(ModelBuilder &mb) {
  int64_t heads = mb.intArg("num_heads");
  std::optional<int64_t> qkFeatures = mb.optIntArg("qk_features");
  std::optional<int64_t> vFeatures = mb.optIntArg("v_features");
  std::optional<int64_t> outFeatures = mb.optIntArg("out_features");
  bool useBias = mb.boolArg("use_bias", true);
  std::string norm = mb.stringArg("attention_norm", "softmax");
  std::string network = mb.stringArg("target_network", "default");
  bool normalizeQK = mb.boolArg("normalize_qk", false);
  mb.floatArg("dropout_rate", 0.0); // deterministic=True at inference
  bool decode = mb.boolArg("decode", false);
  bool causal = mb.boolCall("causal_mask", false);
  if (!mb.boolCall("deterministic", true))
    mb.error(mb.config.path + ": call.deterministic: only deterministic "
                              "(inference) calls can be compiled");
  Value x = mb.input("x", 3);
  if (mb.failed() || !x)
    return;
  if (decode) {
    mb.error(mb.config.path + ": kwargs.decode: the autoregressive cache mode "
                              "is not supported");
    return;
  }
  if (!vFeatures) {
    mb.error(mb.config.path + ": kwargs.v_features: required (the reference "
                              "fails without it)");
    return;
  }
  if (!llvm::is_contained({"softmax", "rms_head", "none"}, norm)) {
    mb.error(mb.config.path + ": kwargs.attention_norm: unknown '" + norm +
             "' (softmax, rms_head or none)");
    return;
  }
  if (!llvm::is_contained({"default", "mlp_relu", "mlp_linear"}, network)) {
    mb.error(mb.config.path + ": kwargs.target_network: '" + network +
             "' is not implemented by the reference (default, mlp_relu, "
             "mlp_linear)");
    return;
  }
  // (Batch and length may be dynamic: sizes are taken from x.)
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t E = xt.getDimSize(2);
  int64_t qk = qkFeatures.value_or(E), F = outFeatures.value_or(E);
  if (qk < 1 || *vFeatures < 1 || F < 1) {
    mb.error(mb.config.path + ": kwargs: qk_features, v_features and "
                              "out_features must be positive");
    return;
  }
  if (heads < 1 || qk % heads || *vFeatures % heads) {
    mb.error(mb.config.path + ": kwargs.num_heads: " + Twine(heads) +
             " must divide qk_features (" + Twine(qk) + ") and v_features (" +
             Twine(*vFeatures) + ")");
    return;
  }
  int64_t dq = qk / heads, dv = *vFeatures / heads;
  Value q = projectHeads(mb, x, "query", E, heads, dq, useBias);
  Value k = projectHeads(mb, x, "key", E, heads, dq, useBias);
  Value v = projectHeads(mb, x, "value", E, heads, dv, useBias);
  if (normalizeQK) {
    q = layerNormNoBias(mb, q, mb.weight("query_ln.scale", {dq}));
    k = layerNormNoBias(mb, k, mb.weight("key_ln.scale", {dq}));
  }
  Value bias;
  if (mb.hasInput("attention_bias")) {
    bias = mb.input("attention_bias", 4);
    if (!bias)
      return;
    auto bt = cast<RankedTensorType>(bias.getType());
    if ((bt.getDimSize(0) != 1 && !mb.sameDim(bias, 0, x, 0)) ||
        bt.getDimSize(1) != heads || !mb.sameDim(bias, 2, x, 1) ||
        !mb.sameDim(bias, 3, x, 1)) {
      auto size = [&](int64_t d) { return mb.sizeText(x, d); };
      mb.error(mb.config.path + ": inputs.attention_bias: expected [1 or " +
               size(0) + ", " + Twine(heads) + ", " + size(1) + ", " + size(1) +
               "]");
      return;
    }
  }
  if (mb.failed())
    return;
  float scale = 1.0f / std::sqrt(static_cast<float>(dq));
  OpFoldResult B = mb.dimOf(x, 0), L = mb.dimOf(x, 1);
  Value init =
      mb.emptyLike({B, mb.b.getIndexAttr(heads), L, mb.b.getIndexAttr(dv)});
  Value o = mlir::dat::HyperAttentionOp::create(
      mb.b, mb.loc, init.getType(), q, k, v, bias, /*mask=*/Value(),
      /*query_offset=*/Value(), init, mb.b.getF32FloatAttr(scale),
      mb.b.getStringAttr(norm), mb.b.getStringAttr(network), causal);
  // out: Σ_{h,d} o[b,i,h,d] · Kout[h,d,:] + bout
  Value outKernel =
      collapse(mb, mb.weight("out.kernel", {heads, dv, F}), /*leading=*/true);
  Value outBias = useBias ? mb.weight("out.bias", {F}) : Value();
  mb.output("y", denseFlax(mb, mb.mergeHeads(o), outKernel, outBias));
  if (mb.wantsOutput("attn_weights")) {
    Value winit = mb.emptyLike({B, mb.b.getIndexAttr(heads), L, L});
    mb.output("attn_weights", mlir::dat::HyperAttentionWeightsOp::create(
                                  mb.b, mb.loc, winit.getType(), q, k, bias,
                                  Value(), winit, mb.b.getF32FloatAttr(scale),
                                  mb.b.getStringAttr(norm), causal));
  }
}

} // namespace dat
