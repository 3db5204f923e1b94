//===- AttentionBuilders.h - softmax pieces of the reference lowerings ----===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The masked, max-subtracted softmax shared by dat.attention,
// dat.attention_weights and dat.relational_attention, and the relation
// tensor shared by dat.relations and dat.relational_attention.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_LIB_DIALECT_DAT_TRANSFORMS_ATTENTIONBUILDERS_H
#define DAT_LIB_DIALECT_DAT_TRANSFORMS_ATTENTIONBUILDERS_H

#include "LinalgBuilders.h"

#include "dat/Dialect/Dat/IR/DatOps.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dat {

/// Inside a generic over (b, h, i, j): `allowed` (or true when null) and the
/// causal condition j <= i + queryOffset (queryOffset may be null: 0).
Value andCausal(OpBuilder &nb, Location nl, Value allowed, Value queryOffset);

/// Builds the shared front half of attention: exp(S - max) with masking and
/// the row sums, in the accumulation type.
struct SoftmaxParts {
  Value logits; // [B,H,Nq,Nk]: scaled, masked scores
  Value exps;   // [B,H,Nq,Nk]: exp(S - m), 0 where masked
  Value rowSum; // [B,H,Nq]
  FloatType accTy;
};

/// The APE extras (key-padding mask, per-pair score scale, finite mask
/// fill) exist on dat.attention and dat.attention_weights only.
template <typename OpTy> struct ScoreExtras {
  static Value keyMask(OpTy op) { return op.getKeyMask(); }
  static Value scoreScale(OpTy op) { return op.getScoreScale(); }
  static FloatAttr maskFill(OpTy op) { return op.getMaskFillAttr(); }
};
template <> struct ScoreExtras<RelationalAttentionOp> {
  static Value keyMask(RelationalAttentionOp) { return {}; }
  static Value scoreScale(RelationalAttentionOp) { return {}; }
  static FloatAttr maskFill(RelationalAttentionOp) { return {}; }
};

template <typename OpTy>
inline SoftmaxParts buildSoftmaxParts(OpTy op, int64_t group,
                                      PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  FloatType accTy = accumulationType(op.getQueryType().getElementType());
  auto size = [&](Value v, int64_t dim) {
    return tensor::getMixedSize(rewriter, loc, v, dim);
  };
  OpFoldResult B = size(op.getQuery(), 0), H = size(op.getQuery(), 1),
               Nq = size(op.getQuery(), 2), Nk = size(op.getKey(), 2);

  AffineExpr b, h, i, j, x;
  bindDims(ctx, b, h, i, j, x);
  auto map = [&](ArrayRef<AffineExpr> results) {
    return AffineMap::get(5, 0, results, ctx);
  };
  AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
  AffineMap rowMap = AffineMap::get(4, 0, {b, h, i}, ctx);
  TypedAttr zeroAttr = rewriter.getFloatAttr(accTy, 0.0);
  TypedAttr negInfAttr = rewriter.getFloatAttr(
      accTy, APFloat::getInf(accTy.getFloatSemantics(), /*Negative=*/true));

  // S[b,h,i,j] = Σ_d q[b,h,i,d] · k[b,g(h),j,d]   (x = d)
  Value scores = filledTensor(rewriter, loc, {B, H, Nq, Nk}, accTy, zeroAttr);
  scores = buildMulAcc(
      rewriter, loc, op.getQuery(), op.getKey(), scores,
      {map({b, h, i, x}), map({b, h.floorDiv(group), j, x}), map({b, h, i, j})},
      {kPar, kPar, kPar, kPar, kRed});

  // Scale (and the per-pair score_scale), then the fill value (-inf unless
  // mask_fill says otherwise) where a mask or causality forbids the pair.
  SmallVector<Value> maskInputs;
  SmallVector<AffineMap> maskMaps;
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  bool hasScoreScale = ScoreExtras<OpTy>::scoreScale(op) != nullptr;
  if (hasScoreScale) {
    bool broadcast =
        cast<RankedTensorType>(ScoreExtras<OpTy>::scoreScale(op).getType())
            .getDimSize(0) == 1;
    maskInputs.push_back(ScoreExtras<OpTy>::scoreScale(op));
    maskMaps.push_back(AffineMap::get(
        4, 0, {broadcast ? getAffineConstantExpr(0, ctx) : d0, d2, d3}, ctx));
  }
  if (op.getMask()) {
    maskInputs.push_back(op.getMask());
    maskMaps.push_back(AffineMap::get(4, 0, {d2, d3}, ctx));
  }
  bool hasKeyMask = ScoreExtras<OpTy>::keyMask(op) != nullptr;
  if (hasKeyMask) {
    maskInputs.push_back(ScoreExtras<OpTy>::keyMask(op));
    maskMaps.push_back(AffineMap::get(4, 0, {d0, d3}, ctx));
  }
  maskMaps.push_back(id4);
  TypedAttr fillAttr =
      ScoreExtras<OpTy>::maskFill(op)
          ? rewriter.getFloatAttr(
                accTy, ScoreExtras<OpTy>::maskFill(op).getValueAsDouble())
          : negInfAttr;
  Value scale = arith::ConstantOp::create(
      rewriter, loc,
      rewriter.getFloatAttr(accTy, op.getScale().convertToDouble()));
  Value queryOffset = op.getQueryOffset();
  bool causal = op.getCausal();
  bool hasMask = op.getMask() != nullptr;
  scores =
      linalg::GenericOp::create(
          rewriter, loc, scores.getType(), maskInputs, ValueRange{scores},
          maskMaps, ArrayRef<IteratorType>{kPar, kPar, kPar, kPar},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value s = arith::MulFOp::create(nb, nl, args.back(), scale);
            unsigned next = 0;
            if (hasScoreScale)
              s = arith::MulFOp::create(nb, nl, s,
                                        castFloat(nb, nl, args[next++], accTy));
            Value allowed;
            if (hasMask)
              allowed = args[next++];
            if (hasKeyMask) {
              Value km = args[next++];
              allowed =
                  allowed ? arith::AndIOp::create(nb, nl, allowed, km) : km;
            }
            if (causal)
              allowed = andCausal(nb, nl, allowed, queryOffset);
            if (allowed) {
              Value fill = arith::ConstantOp::create(nb, nl, fillAttr);
              s = arith::SelectOp::create(nb, nl, allowed, s, fill);
            }
            linalg::YieldOp::create(nb, nl, s);
          })
          .getResult(0);

  // m[b,h,i] = max_j S
  Value rowMax = filledTensor(rewriter, loc, {B, H, Nq}, accTy, negInfAttr);
  rowMax = linalg::GenericOp::create(
               rewriter, loc, rowMax.getType(), ValueRange{scores},
               ValueRange{rowMax}, ArrayRef<AffineMap>{id4, rowMap},
               ArrayRef<IteratorType>{kPar, kPar, kPar, kRed},
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 Value m = arith::MaximumFOp::create(nb, nl, args[0], args[1]);
                 linalg::YieldOp::create(nb, nl, m);
               })
               .getResult(0);

  // exp(S - m); a fully masked row has m = -inf and uses 0 instead, so that
  // its weights are exp(-inf) = 0 rather than NaN.
  Value exps =
      linalg::GenericOp::create(
          rewriter, loc, scores.getType(), ValueRange{rowMax},
          ValueRange{scores}, ArrayRef<AffineMap>{rowMap, id4},
          ArrayRef<IteratorType>{kPar, kPar, kPar, kPar},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value negInf = arith::ConstantOp::create(nb, nl, negInfAttr);
            Value zero = arith::ConstantOp::create(nb, nl, zeroAttr);
            Value isEmpty = arith::CmpFOp::create(
                nb, nl, arith::CmpFPredicate::OEQ, args[0], negInf);
            Value m = arith::SelectOp::create(nb, nl, isEmpty, zero, args[0]);
            Value d = arith::SubFOp::create(nb, nl, args[1], m);
            Value e = math::ExpOp::create(nb, nl, d);
            linalg::YieldOp::create(nb, nl, e);
          })
          .getResult(0);

  // l[b,h,i] = Σ_j exp
  Value rowSum = filledTensor(rewriter, loc, {B, H, Nq}, accTy, zeroAttr);
  rowSum = linalg::GenericOp::create(
               rewriter, loc, rowSum.getType(), ValueRange{exps},
               ValueRange{rowSum}, ArrayRef<AffineMap>{id4, rowMap},
               ArrayRef<IteratorType>{kPar, kPar, kPar, kRed},
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 Value sum = arith::AddFOp::create(nb, nl, args[0], args[1]);
                 linalg::YieldOp::create(nb, nl, sum);
               })
               .getResult(0);
  return {scores, exps, rowSum, accTy};
}

/// result = x / l, or 0 where l = 0 (fully masked rows), converted to the
/// init's element type and written into `init`.
inline Value normalizeInto(OpBuilder &rewriter, Location loc, Value x,
                           Value rowSum, Value init, FloatType accTy) {
  MLIRContext *ctx = rewriter.getContext();
  AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
  AffineMap rowMap =
      AffineMap::get(4, 0,
                     {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx),
                      getAffineDimExpr(2, ctx)},
                     ctx);
  TypedAttr zeroAttr = rewriter.getFloatAttr(accTy, 0.0);
  return linalg::GenericOp::create(
             rewriter, loc, init.getType(), ValueRange{x, rowSum},
             ValueRange{init}, ArrayRef<AffineMap>{id4, rowMap, id4},
             ArrayRef<IteratorType>{kPar, kPar, kPar, kPar},
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value zero = arith::ConstantOp::create(nb, nl, zeroAttr);
               Value isEmpty = arith::CmpFOp::create(
                   nb, nl, arith::CmpFPredicate::OEQ, args[1], zero);
               Value q = arith::DivFOp::create(nb, nl, args[0], args[1]);
               Value r = arith::SelectOp::create(nb, nl, isEmpty, zero, q);
               linalg::YieldOp::create(nb, nl,
                                       castFloat(nb, nl, r, args[2].getType()));
             })
      .getResult(0);
}

/// Writes `x` (the accumulation type) into `init`, converting elements.
Value convertInto(OpBuilder &b, Location loc, Value x, Value init);

/// softmax of `x` along `axis` (max-subtracted), in x's element type.
Value softmaxAlong(OpBuilder &b, Location loc, Value x, unsigned axis);

/// act(x) for the scalar relation/FFN activations (not softmax).
Value emitActivation(OpBuilder &b, Location loc, StringRef name, Value x);

/// r[b,i,j,l] = act(scale · Σ_c qr[b,l,i,c] · kr[b,l,j,c]) in `accTy`,
/// softmax over j for "softmax".
Value buildRelations(OpBuilder &b, Location loc, Value relQuery, Value relKey,
                     double scale, StringRef activation, FloatType accTy);

} // namespace mlir::dat

#endif // DAT_LIB_DIALECT_DAT_TRANSFORMS_ATTENTIONBUILDERS_H
