//===- HyperAttentionToLinalg.cpp - reference lowering of HYLA attention --===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Scores with the additive bias, the reference's mask fill for each
// normalization (lowest float for softmax, 0 otherwise), the normalization,
// then the value network.
//
//===----------------------------------------------------------------------===//

#include "AttentionBuilders.h"
#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"

#include <cfloat>

namespace mlir::dat {

Value buildHyperScores(OpBuilder &rw, Location loc, Value query, Value key,
                       Value bias, Value mask, bool causal, Value queryOffset,
                       double scale, StringRef normalization, FloatType accTy) {
  MLIRContext *ctx = rw.getContext();
  auto size = [&](Value v, int64_t d) {
    return tensor::getMixedSize(rw, loc, v, d);
  };
  OpFoldResult B = size(query, 0), H = size(query, 1), Lq = size(query, 2),
               Lk = size(key, 2);
  AffineExpr b, h, i, j, x;
  bindDims(ctx, b, h, i, j, x);
  auto map5 = [&](ArrayRef<AffineExpr> r) {
    return AffineMap::get(5, 0, r, ctx);
  };
  AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
  TypedAttr zero = rw.getFloatAttr(accTy, 0.0);
  Value s = filledTensor(rw, loc, {B, H, Lq, Lk}, accTy, zero);
  s = buildMulAcc(rw, loc, query, key, s,
                  {map5({b, h, i, x}), map5({b, h, j, x}), map5({b, h, i, j})},
                  {kPar, kPar, kPar, kPar, kRed});

  // scale, + bias, then the mask fill of this normalization.
  bool softmax = normalization == "softmax";
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  if (bias) {
    bool broadcast = cast<RankedTensorType>(bias.getType()).getDimSize(0) == 1;
    ins.push_back(bias);
    maps.push_back(AffineMap::get(
        4, 0, {broadcast ? getAffineConstantExpr(0, ctx) : d0, d1, d2, d3},
        ctx));
  }
  if (mask) {
    ins.push_back(mask);
    maps.push_back(AffineMap::get(4, 0, {d2, d3}, ctx));
  }
  maps.push_back(id4);
  Value scaleV =
      arith::ConstantOp::create(rw, loc, rw.getFloatAttr(accTy, scale));
  // Softmax fills with the lowest float32 (finfo.min), not -inf: a fully
  // masked row then becomes uniform, as in the reference.
  TypedAttr fill = softmax ? rw.getFloatAttr(accTy, -FLT_MAX) : zero;
  bool hasBias = bias != nullptr, hasMask = mask != nullptr;
  s = linalg::GenericOp::create(
          rw, loc, s.getType(), ins, ValueRange{s}, maps,
          ArrayRef<IteratorType>{kPar, kPar, kPar, kPar},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value v = arith::MulFOp::create(nb, nl, args.back(), scaleV);
            if (hasBias)
              v = arith::AddFOp::create(nb, nl, v,
                                        castFloat(nb, nl, args[0], accTy));
            Value allowed;
            if (hasMask)
              allowed = args[hasBias ? 1 : 0];
            if (causal)
              allowed = andCausal(nb, nl, allowed, queryOffset);
            if (allowed)
              v = arith::SelectOp::create(
                  nb, nl, allowed, v, arith::ConstantOp::create(nb, nl, fill));
            linalg::YieldOp::create(nb, nl, v);
          })
          .getResult(0);
  return s;
}

Value normalizeHyperScores(OpBuilder &rw, Location loc, Value s,
                           StringRef normalization) {
  if (normalization == "none")
    return s;
  MLIRContext *ctx = rw.getContext();
  auto accTy = cast<FloatType>(getElementTypeOrSelf(s.getType()));
  TypedAttr zero = rw.getFloatAttr(accTy, 0.0);
  OpFoldResult B = tensor::getMixedSize(rw, loc, s, 0),
               H = tensor::getMixedSize(rw, loc, s, 1),
               Lq = tensor::getMixedSize(rw, loc, s, 2),
               Lk = tensor::getMixedSize(rw, loc, s, 3);
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);

  if (normalization == "rms_head") {
    // ms[b,i,j] = mean over heads of s²; a = s · rsqrt(ms + 1e-6).
    AffineMap pairMap = AffineMap::get(4, 0, {d0, d2, d3}, ctx);
    Value ms = filledTensor(rw, loc, {B, Lq, Lk}, accTy, zero);
    ms = linalg::GenericOp::create(
             rw, loc, ms.getType(), ValueRange{s}, ValueRange{ms},
             ArrayRef<AffineMap>{id4, pairMap},
             ArrayRef<IteratorType>{kPar, kRed, kPar, kPar},
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value sq = arith::MulFOp::create(nb, nl, args[0], args[0]);
               Value sum = arith::AddFOp::create(nb, nl, args[1], sq);
               linalg::YieldOp::create(nb, nl, sum);
             })
             .getResult(0);
    // r[b,i,j] = rsqrt(ms / H + 1e-6) once per pair (not once per head:
    // the square root and the division are the costly part), then s · r.
    Value heads = getValueOrCreateConstantIndexOp(rw, loc, H);
    AffineMap id3 = AffineMap::getMultiDimIdentityMap(3, ctx);
    Value r =
        linalg::GenericOp::create(
            rw, loc, ms.getType(), ValueRange{}, ValueRange{ms},
            ArrayRef<AffineMap>{id3}, ArrayRef<IteratorType>{kPar, kPar, kPar},
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value n = arith::UIToFPOp::create(
                  nb, nl, accTy,
                  arith::IndexCastUIOp::create(nb, nl, nb.getI64Type(), heads));
              Value mean = arith::DivFOp::create(nb, nl, args[0], n);
              Value eps = arith::ConstantOp::create(
                  nb, nl, nb.getFloatAttr(accTy, 1e-6));
              linalg::YieldOp::create(
                  nb, nl,
                  Value(math::RsqrtOp::create(
                      nb, nl, arith::AddFOp::create(nb, nl, mean, eps))));
            })
            .getResult(0);
    return linalg::GenericOp::create(
               rw, loc, s.getType(), ValueRange{r}, ValueRange{s},
               ArrayRef<AffineMap>{pairMap, id4},
               ArrayRef<IteratorType>{kPar, kPar, kPar, kPar},
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 linalg::YieldOp::create(
                     nb, nl,
                     Value(arith::MulFOp::create(nb, nl, args[1], args[0])));
               })
        .getResult(0);
  }

  return softmaxAlong(rw, loc, s, 3);
}

Value accumulateHyperValues(OpBuilder &rw, Location loc, Value a, Value values,
                            StringRef network, Value acc,
                            bool narrowValueNetwork) {
  MLIRContext *ctx = rw.getContext();
  auto accTy = cast<FloatType>(getElementTypeOrSelf(acc.getType()));
  AffineExpr b, h, i, e, j;
  bindDims(ctx, b, h, i, e, j);
  auto map5 = [&](ArrayRef<AffineExpr> r) {
    return AffineMap::get(5, 0, r, ctx);
  };
  AffineMap valueMap = map5({b, h, j, e});
  if (network != "default") {
    // z[b,i,j,e] = φ(Σ_h a[b,h,i,j] · v[b,h,j,e])   (loops b, i, j, e, h)
    AffineExpr zb, zi, zj, ze, zh;
    bindDims(ctx, zb, zi, zj, ze, zh);
    SmallVector<OpFoldResult> oShape = tensor::getMixedSizes(rw, loc, acc);
    OpFoldResult Lk = tensor::getMixedSize(rw, loc, a, 3);
    Value z = filledTensor(rw, loc, {oShape[0], oShape[2], Lk, oShape[3]},
                           accTy, rw.getFloatAttr(accTy, 0.0));
    z = buildMulAcc(rw, loc, a, values, z,
                    {map5({zb, zh, zi, zj}), map5({zb, zh, zj, ze}),
                     map5({zb, zi, zj, ze})},
                    {kPar, kPar, kPar, kPar, kRed});
    if (network == "mlp_relu") {
      AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
      z = linalg::GenericOp::create(
              rw, loc, z.getType(), ValueRange{}, ValueRange{z},
              ArrayRef<AffineMap>{id4},
              ArrayRef<IteratorType>{kPar, kPar, kPar, kPar},
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                linalg::YieldOp::create(
                    nb, nl, buildActivation(nb, nl, "relu", args[0]));
              })
              .getResult(0);
    }
    // In a bf16 program the second product then has a bf16 operand, which
    // is what makes it a tensor-core contraction on the GPU (that rounds
    // its operands to bf16 in any case).
    Type valueType = getElementTypeOrSelf(values.getType());
    if (narrowValueNetwork && valueType != accTy)
      z = convertInto(rw, loc, z,
                      tensor::EmptyOp::create(rw, loc,
                                              tensor::getMixedSizes(rw, loc, z),
                                              valueType));
    values = z;
    valueMap = map5({b, i, j, e});
  }
  // result[b,h,i,e] += Σ_j a[b,h,i,j] · values   (loops b, h, i, e, j)
  return buildMulAcc(rw, loc, a, values, acc,
                     {map5({b, h, i, j}), valueMap, map5({b, h, i, e})},
                     {kPar, kPar, kPar, kPar, kRed});
}

namespace {

/// a[b,h,i,j] in `accTy` for the operands of either HYLA op.
Value buildHyperWeights(OpBuilder &rw, Location loc, Value query, Value key,
                        Value bias, Value mask, bool causal, Value queryOffset,
                        double scale, StringRef normalization,
                        FloatType accTy) {
  Value s = buildHyperScores(rw, loc, query, key, bias, mask, causal,
                             queryOffset, scale, normalization, accTy);
  return normalizeHyperScores(rw, loc, s, normalization);
}

struct HyperAttentionWeightsToLinalg final
    : OpRewritePattern<HyperAttentionWeightsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(HyperAttentionWeightsOp op,
                                PatternRewriter &rw) const override {
    FloatType accTy = accumulationType(
        cast<RankedTensorType>(op.getQuery().getType()).getElementType());
    Value a = buildHyperWeights(rw, op.getLoc(), op.getQuery(), op.getKey(),
                                op.getBias(), op.getMask(), op.getCausal(),
                                /*queryOffset=*/Value(),
                                op.getScale().convertToDouble(),
                                op.getNormalization(), accTy);
    rw.replaceOp(op, convertInto(rw, op.getLoc(), a, op.getInit()));
    return success();
  }
};

struct HyperAttentionToLinalg final : OpRewritePattern<HyperAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(HyperAttentionOp op,
                                PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    FloatType accTy = accumulationType(
        cast<RankedTensorType>(op.getQuery().getType()).getElementType());
    Value a = buildHyperWeights(
        rw, loc, op.getQuery(), op.getKey(), op.getBias(), op.getMask(),
        op.getCausal(), op.getQueryOffset(), op.getScale().convertToDouble(),
        op.getNormalization(), accTy);
    Value acc =
        filledTensor(rw, loc, tensor::getMixedSizes(rw, loc, op.getInit()),
                     accTy, rw.getFloatAttr(accTy, 0.0));
    acc =
        accumulateHyperValues(rw, loc, a, op.getValue(), op.getNetwork(), acc);
    rw.replaceOp(op, convertInto(rw, loc, acc, op.getInit()));
    return success();
  }
};

} // namespace

void populateHyperAttentionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<HyperAttentionToLinalg, HyperAttentionWeightsToLinalg>(
      patterns.getContext());
}

} // namespace mlir::dat
