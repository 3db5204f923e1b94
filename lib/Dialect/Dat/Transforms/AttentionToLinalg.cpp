//===- AttentionToLinalg.cpp - reference lowering of dat.attention --------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Rewrites dat.attention into the textbook sequence of linalg ops: the full
// score tensor, the mask, a max-subtracted softmax and the weighted sum of
// values. Narrow float types are widened to f32 for every reduction.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"

namespace mlir::dat {
namespace {

using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

/// Converts a scalar between float types (a no-op when they are equal).
Value castFloat(OpBuilder &b, Location loc, Value v, Type to) {
  auto from = cast<FloatType>(v.getType());
  auto target = cast<FloatType>(to);
  if (from == target)
    return v;
  if (from.getWidth() < target.getWidth())
    return arith::ExtFOp::create(b, loc, target, v);
  return arith::TruncFOp::create(b, loc, target, v);
}

/// An empty tensor of `shape` (sizes may be dynamic) filled with `value`.
Value filledTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> shape,
                   Type elementType, TypedAttr value) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, elementType);
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
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
    Type elemTy = op.getQueryType().getElementType();
    FloatType accTy = cast<FloatType>(elemTy).getWidth() < 32
                          ? rewriter.getF32Type()
                          : cast<FloatType>(elemTy);

    auto size = [&](Value v, int64_t dim) {
      return tensor::getMixedSize(rewriter, loc, v, dim);
    };
    OpFoldResult B = size(op.getQuery(), 0), H = size(op.getQuery(), 1),
                 Nq = size(op.getQuery(), 2), Nk = size(op.getKey(), 2),
                 Dv = size(op.getValue(), 3);

    AffineExpr b, h, i, j, x;
    bindDims(ctx, b, h, i, j, x);
    AffineExpr kvHead = h.floorDiv(*group);
    auto map = [&](ArrayRef<AffineExpr> results) {
      return AffineMap::get(5, 0, results, ctx);
    };
    auto map4 = [&](ArrayRef<AffineExpr> results) {
      return AffineMap::get(4, 0, results, ctx);
    };
    AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
    AffineMap rowMap = map4({b, h, i});
    TypedAttr zeroAttr = rewriter.getFloatAttr(accTy, 0.0);
    TypedAttr negInfAttr = rewriter.getFloatAttr(
        accTy, APFloat::getInf(accTy.getFloatSemantics(), /*Negative=*/true));

    // S[b,h,i,j] = Σ_d q[b,h,i,d] · k[b,g(h),j,d]   (x = d)
    Value scores = filledTensor(rewriter, loc, {B, H, Nq, Nk}, accTy, zeroAttr);
    scores = linalg::GenericOp::create(
                 rewriter, loc, scores.getType(),
                 ValueRange{op.getQuery(), op.getKey()}, ValueRange{scores},
                 ArrayRef<AffineMap>{map({b, h, i, x}), map({b, kvHead, j, x}),
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
      maskMaps.push_back(map4({i, j}));
    }
    maskMaps.push_back(id4);
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
                allowed =
                    allowed ? arith::AndIOp::create(nb, nl, allowed, ok) : ok;
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
                   Value m =
                       arith::MaximumFOp::create(nb, nl, args[0], args[1]);
                   linalg::YieldOp::create(nb, nl, m);
                 })
                 .getResult(0);

    // P = exp(S - m); a fully masked row has m = -inf and uses 0 instead, so
    // that its weights are exp(-inf) = 0 rather than NaN.
    scores = linalg::GenericOp::create(
                 rewriter, loc, scores.getType(), ValueRange{rowMax},
                 ValueRange{scores}, ArrayRef<AffineMap>{rowMap, id4},
                 ArrayRef<IteratorType>{kPar, kPar, kPar, kPar},
                 [&](OpBuilder &nb, Location nl, ValueRange args) {
                   Value negInf = arith::ConstantOp::create(nb, nl, negInfAttr);
                   Value zero = arith::ConstantOp::create(nb, nl, zeroAttr);
                   Value isEmpty = arith::CmpFOp::create(
                       nb, nl, arith::CmpFPredicate::OEQ, args[0], negInf);
                   Value m =
                       arith::SelectOp::create(nb, nl, isEmpty, zero, args[0]);
                   Value d = arith::SubFOp::create(nb, nl, args[1], m);
                   Value e = math::ExpOp::create(nb, nl, d);
                   linalg::YieldOp::create(nb, nl, e);
                 })
                 .getResult(0);

    // l[b,h,i] = Σ_j P
    Value rowSum = filledTensor(rewriter, loc, {B, H, Nq}, accTy, zeroAttr);
    rowSum = linalg::GenericOp::create(
                 rewriter, loc, rowSum.getType(), ValueRange{scores},
                 ValueRange{rowSum}, ArrayRef<AffineMap>{id4, rowMap},
                 ArrayRef<IteratorType>{kPar, kPar, kPar, kRed},
                 [&](OpBuilder &nb, Location nl, ValueRange args) {
                   Value sum = arith::AddFOp::create(nb, nl, args[0], args[1]);
                   linalg::YieldOp::create(nb, nl, sum);
                 })
                 .getResult(0);

    // acc[b,h,i,e] = Σ_j P[b,h,i,j] · v[b,g(h),j,e]   (x = e, j reduced)
    Value acc = filledTensor(rewriter, loc, {B, H, Nq, Dv}, accTy, zeroAttr);
    acc = linalg::GenericOp::create(
              rewriter, loc, acc.getType(), ValueRange{scores, op.getValue()},
              ValueRange{acc},
              ArrayRef<AffineMap>{map({b, h, i, j}), map({b, kvHead, j, x}),
                                  map({b, h, i, x})},
              ArrayRef<IteratorType>{kPar, kPar, kPar, kRed, kPar},
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                Value vv = castFloat(nb, nl, args[1], accTy);
                Value prod = arith::MulFOp::create(nb, nl, args[0], vv);
                Value sum = arith::AddFOp::create(nb, nl, args[2], prod);
                linalg::YieldOp::create(nb, nl, sum);
              })
              .getResult(0);

    // result = acc / l (0 for fully masked rows), written into the init.
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, op.getInitType(), ValueRange{acc, rowSum},
            ValueRange{op.getInit()}, ArrayRef<AffineMap>{id4, rowMap, id4},
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

    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateDecomposeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<AttentionToLinalg>(patterns.getContext());
}

} // namespace mlir::dat
