//===- AttentionToLinalg.cpp - reference lowering of dat.attention --------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Rewrites dat.attention into the textbook sequence of linalg ops: the full
// score tensor, the mask, a max-subtracted softmax and the weighted sum of
// values. Narrow float types are widened to f32 for every reduction.
//
//===----------------------------------------------------------------------===//

#include "LinalgBuilders.h"
#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"

namespace mlir::dat {
namespace {

/// Builds the shared front half of attention: exp(S - max) with masking and
/// the row sums, in the accumulation type.
struct SoftmaxParts {
  Value exps;   // [B,H,Nq,Nk]: exp(S - m), 0 where masked
  Value rowSum; // [B,H,Nq]
  FloatType accTy;
};

template <typename OpTy>
SoftmaxParts buildSoftmaxParts(OpTy op, int64_t group,
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
  scores = linalg::GenericOp::create(
               rewriter, loc, scores.getType(),
               ValueRange{op.getQuery(), op.getKey()}, ValueRange{scores},
               ArrayRef<AffineMap>{map({b, h, i, x}),
                                   map({b, h.floorDiv(group), j, x}),
                                   map({b, h, i, j})},
               ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kRed},
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 Value qv = castFloat(nb, nl, args[0], accTy);
                 Value kv = castFloat(nb, nl, args[1], accTy);
                 Value prod = arith::MulFOp::create(nb, nl, qv, kv);
                 Value sum = arith::AddFOp::create(nb, nl, args[2], prod);
                 linalg::YieldOp::create(nb, nl, sum);
               })
               .getResult(0);

  // Scale, then -inf where the mask or causality forbids the pair.
  SmallVector<Value> maskInputs;
  SmallVector<AffineMap> maskMaps;
  if (op.getMask()) {
    maskInputs.push_back(op.getMask());
    maskMaps.push_back(AffineMap::get(4, 0, {i, j}, ctx));
  }
  maskMaps.push_back(id4);
  Value scale = arith::ConstantOp::create(
      rewriter, loc,
      rewriter.getFloatAttr(accTy, op.getScale().convertToDouble()));
  Value queryOffset = op.getQueryOffset();
  bool causal = op.getCausal();
  bool hasMask = op.getMask() != nullptr;
  scores = linalg::GenericOp::create(
               rewriter, loc, scores.getType(), maskInputs, ValueRange{scores},
               maskMaps, ArrayRef<IteratorType>{kPar, kPar, kPar, kPar},
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 Value s = arith::MulFOp::create(nb, nl, args.back(), scale);
                 Value allowed;
                 if (hasMask)
                   allowed = args.front();
                 if (causal) {
                   Value row = linalg::IndexOp::create(nb, nl, 2);
                   if (queryOffset)
                     row = arith::AddIOp::create(nb, nl, row, queryOffset);
                   Value col = linalg::IndexOp::create(nb, nl, 3);
                   Value ok = arith::CmpIOp::create(
                       nb, nl, arith::CmpIPredicate::ule, col, row);
                   allowed = allowed
                                 ? arith::AndIOp::create(nb, nl, allowed, ok)
                                 : ok;
                 }
                 if (allowed) {
                   Value negInf = arith::ConstantOp::create(nb, nl, negInfAttr);
                   s = arith::SelectOp::create(nb, nl, allowed, s, negInf);
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
  return {exps, rowSum, accTy};
}

/// result = x / l, or 0 where l = 0 (fully masked rows), converted to the
/// init's element type and written into `init`.
Value normalizeInto(OpBuilder &rewriter, Location loc, Value x, Value rowSum,
                    Value init, FloatType accTy) {
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

struct AttentionToLinalg final : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<int64_t> group = op.getGroupSize();
    if (!group)
      return rewriter.notifyMatchFailure(op, "dynamic head counts");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    SoftmaxParts parts = buildSoftmaxParts(op, *group, rewriter);

    // acc[b,h,i,e] = Σ_j exp[b,h,i,j] · v[b,g(h),j,e]   (x = e, j reduced)
    AffineExpr b, h, i, j, x;
    bindDims(ctx, b, h, i, j, x);
    auto map = [&](ArrayRef<AffineExpr> results) {
      return AffineMap::get(5, 0, results, ctx);
    };
    SmallVector<OpFoldResult> accShape =
        tensor::getMixedSizes(rewriter, loc, op.getInit());
    Value acc = filledTensor(rewriter, loc, accShape, parts.accTy,
                             rewriter.getFloatAttr(parts.accTy, 0.0));
    acc = linalg::GenericOp::create(
              rewriter, loc, acc.getType(),
              ValueRange{parts.exps, op.getValue()}, ValueRange{acc},
              ArrayRef<AffineMap>{map({b, h, i, j}),
                                  map({b, h.floorDiv(*group), j, x}),
                                  map({b, h, i, x})},
              ArrayRef<IteratorType>{kPar, kPar, kPar, kRed, kPar},
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                Value vv = castFloat(nb, nl, args[1], parts.accTy);
                Value prod = arith::MulFOp::create(nb, nl, args[0], vv);
                Value sum = arith::AddFOp::create(nb, nl, args[2], prod);
                linalg::YieldOp::create(nb, nl, sum);
              })
              .getResult(0);

    rewriter.replaceOp(op, normalizeInto(rewriter, loc, acc, parts.rowSum,
                                         op.getInit(), parts.accTy));
    return success();
  }
};

struct AttentionWeightsToLinalg final : OpRewritePattern<AttentionWeightsOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionWeightsOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<int64_t> group = op.getGroupSize();
    if (!group)
      return rewriter.notifyMatchFailure(op, "dynamic head counts");
    SoftmaxParts parts = buildSoftmaxParts(op, *group, rewriter);
    rewriter.replaceOp(op,
                       normalizeInto(rewriter, op.getLoc(), parts.exps,
                                     parts.rowSum, op.getInit(), parts.accTy));
    return success();
  }
};

} // namespace

void populateAttentionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<AttentionToLinalg, AttentionWeightsToLinalg>(
      patterns.getContext());
}

} // namespace mlir::dat
