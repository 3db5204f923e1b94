//===- RelationalAttentionToLinalg.cpp - reference relational attention ---===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The evaluation order of the reference (spec §3.3 step 6): normalized
// attention weights α, then Σ_j α·symbols and Σ_j α·relations, then wr
// applied after the sum over keys.
//
//===----------------------------------------------------------------------===//

#include "AttentionBuilders.h"
#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include <cmath>

namespace mlir::dat {

Value emitActivation(OpBuilder &b, Location loc, StringRef name, Value x) {
  auto ft = cast<FloatType>(x.getType());
  auto cst = [&](double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(ft, v));
  };
  auto sigmoid = [&](Value v) {
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, v));
    return arith::DivFOp::create(b, loc, cst(1.0),
                                 arith::AddFOp::create(b, loc, cst(1.0), e));
  };
  if (name == "relu")
    return arith::MaximumFOp::create(b, loc, x, cst(0.0));
  if (name == "sigmoid")
    return sigmoid(x);
  if (name == "tanh")
    return math::TanhOp::create(b, loc, x);
  if (name == "silu")
    return arith::MulFOp::create(b, loc, x, sigmoid(x));
  if (name == "gelu") {
    // 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³))), DAT's tanh form.
    Value x3 =
        arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
    Value inner = arith::AddFOp::create(
        b, loc, x, arith::MulFOp::create(b, loc, cst(0.044715), x3));
    Value t = math::TanhOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, cst(std::sqrt(2.0 / M_PI)), inner));
    Value half = arith::MulFOp::create(b, loc, cst(0.5), x);
    return arith::MulFOp::create(b, loc, half,
                                 arith::AddFOp::create(b, loc, cst(1.0), t));
  }
  if (name == "gelu_erf") {
    // 0.5·x·(1 + erf(x/√2)), the exact form (APE).
    Value e = math::ErfOp::create(
        b, loc, arith::MulFOp::create(b, loc, x, cst(M_SQRT1_2)));
    Value half = arith::MulFOp::create(b, loc, cst(0.5), x);
    return arith::MulFOp::create(b, loc, half,
                                 arith::AddFOp::create(b, loc, cst(1.0), e));
  }
  return x; // identity
}

Value buildRelations(OpBuilder &b, Location loc, Value relQuery, Value relKey,
                     double scale, StringRef activation, FloatType accTy) {
  MLIRContext *ctx = b.getContext();
  OpFoldResult B = tensor::getMixedSize(b, loc, relQuery, 0),
               R = tensor::getMixedSize(b, loc, relQuery, 1),
               Lq = tensor::getMixedSize(b, loc, relQuery, 2),
               Lk = tensor::getMixedSize(b, loc, relKey, 2);
  AffineExpr bb, i, j, l, c;
  bindDims(ctx, bb, i, j, l, c);
  auto map5 = [&](ArrayRef<AffineExpr> r) {
    return AffineMap::get(5, 0, r, ctx);
  };
  Value init =
      filledTensor(b, loc, {B, Lq, Lk, R}, accTy, b.getFloatAttr(accTy, 0.0));
  Value logits =
      linalg::GenericOp::create(
          b, loc, init.getType(), ValueRange{relQuery, relKey},
          ValueRange{init},
          ArrayRef<AffineMap>{map5({bb, l, i, c}), map5({bb, l, j, c}),
                              map5({bb, i, j, l})},
          ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kRed},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value p =
                arith::MulFOp::create(nb, nl, castFloat(nb, nl, args[0], accTy),
                                      castFloat(nb, nl, args[1], accTy));
            Value s = arith::AddFOp::create(nb, nl, args[2], p);
            linalg::YieldOp::create(nb, nl, s);
          })
          .getResult(0);

  AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
  Value scaleV =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(accTy, scale));
  bool softmax = activation == "softmax";
  Value rel = linalg::GenericOp::create(
                  b, loc, logits.getType(), ValueRange{}, ValueRange{logits},
                  ArrayRef<AffineMap>{id4},
                  ArrayRef<IteratorType>{kPar, kPar, kPar, kPar},
                  [&](OpBuilder &nb, Location nl, ValueRange args) {
                    Value v = arith::MulFOp::create(nb, nl, args[0], scaleV);
                    if (!softmax)
                      v = emitActivation(nb, nl, activation, v);
                    linalg::YieldOp::create(nb, nl, v);
                  })
                  .getResult(0);
  if (!softmax)
    return rel;

  // softmax over the key axis j (dim 2) of [B,Lq,Lk,R].
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  AffineMap rowMap = AffineMap::get(4, 0, {d0, d1, d3}, ctx);
  TypedAttr negInf =
      b.getFloatAttr(accTy, APFloat::getInf(accTy.getFloatSemantics(), true));
  Value mx = filledTensor(b, loc, {B, Lq, R}, accTy, negInf);
  mx = linalg::GenericOp::create(
           b, loc, mx.getType(), ValueRange{rel}, ValueRange{mx},
           ArrayRef<AffineMap>{id4, rowMap},
           ArrayRef<IteratorType>{kPar, kPar, kRed, kPar},
           [&](OpBuilder &nb, Location nl, ValueRange args) {
             linalg::YieldOp::create(
                 nb, nl,
                 Value(arith::MaximumFOp::create(nb, nl, args[0], args[1])));
           })
           .getResult(0);
  Value ex = linalg::GenericOp::create(
                 b, loc, rel.getType(), ValueRange{mx}, ValueRange{rel},
                 ArrayRef<AffineMap>{rowMap, id4},
                 ArrayRef<IteratorType>{kPar, kPar, kPar, kPar},
                 [&](OpBuilder &nb, Location nl, ValueRange args) {
                   Value d = arith::SubFOp::create(nb, nl, args[1], args[0]);
                   linalg::YieldOp::create(
                       nb, nl, Value(math::ExpOp::create(nb, nl, d)));
                 })
                 .getResult(0);
  Value sum = filledTensor(b, loc, {B, Lq, R}, accTy, b.getFloatAttr(accTy, 0));
  sum =
      linalg::GenericOp::create(
          b, loc, sum.getType(), ValueRange{ex}, ValueRange{sum},
          ArrayRef<AffineMap>{id4, rowMap},
          ArrayRef<IteratorType>{kPar, kPar, kRed, kPar},
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(
                nb, nl, Value(arith::AddFOp::create(nb, nl, args[0], args[1])));
          })
          .getResult(0);
  return linalg::GenericOp::create(
             b, loc, ex.getType(), ValueRange{sum}, ValueRange{ex},
             ArrayRef<AffineMap>{rowMap, id4},
             ArrayRef<IteratorType>{kPar, kPar, kPar, kPar},
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nl,
                   Value(arith::DivFOp::create(nb, nl, args[1], args[0])));
             })
      .getResult(0);
}

namespace {

/// Copies `x` (in the accumulation type) into `init`, converting elements.
Value castInto(OpBuilder &b, Location loc, Value x, Value init) {
  auto t = cast<RankedTensorType>(init.getType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(t.getRank(), b.getContext());
  SmallVector<IteratorType> iters(t.getRank(), kPar);
  return linalg::GenericOp::create(
             b, loc, t, ValueRange{x}, ValueRange{init},
             ArrayRef<AffineMap>{id, id}, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nl, castFloat(nb, nl, args[0], t.getElementType()));
             })
      .getResult(0);
}

struct RelationsToLinalg final : OpRewritePattern<RelationsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RelationsOp op,
                                PatternRewriter &rewriter) const override {
    auto et = cast<RankedTensorType>(op.getInit().getType()).getElementType();
    Value rel = buildRelations(rewriter, op.getLoc(), op.getRelQuery(),
                               op.getRelKey(), op.getScale().convertToDouble(),
                               op.getActivation(), accumulationType(et));
    rewriter.replaceOp(op, castInto(rewriter, op.getLoc(), rel, op.getInit()));
    return success();
  }
};

struct RelationalAttentionToLinalg final
    : OpRewritePattern<RelationalAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RelationalAttentionOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<int64_t> group = op.getGroupSize();
    if (!group)
      return rewriter.notifyMatchFailure(op, "dynamic head counts");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    SoftmaxParts parts = buildSoftmaxParts(op, *group, rewriter);
    FloatType accTy = parts.accTy;

    // α = exp / l, as the reference normalizes before the value sums.
    SmallVector<OpFoldResult> pShape =
        tensor::getMixedSizes(rewriter, loc, parts.exps);
    Value alpha = normalizeInto(
        rewriter, loc, parts.exps, parts.rowSum,
        tensor::EmptyOp::create(rewriter, loc, pShape, accTy), accTy);
    Value rel = buildRelations(rewriter, loc, op.getRelQuery(), op.getRelKey(),
                               op.getRelScale().convertToDouble(),
                               op.getActivation(), accTy);

    AffineExpr b, h, i, e, j;
    bindDims(ctx, b, h, i, e, j);
    auto map5 = [&](ArrayRef<AffineExpr> r) {
      return AffineMap::get(5, 0, r, ctx);
    };
    auto mac = [&](OpBuilder &nb, Location nl, ValueRange args) {
      Value p = arith::MulFOp::create(nb, nl, castFloat(nb, nl, args[0], accTy),
                                      castFloat(nb, nl, args[1], accTy));
      Value s = arith::AddFOp::create(nb, nl, args[2], p);
      linalg::YieldOp::create(nb, nl, s);
    };
    TypedAttr zero = rewriter.getFloatAttr(accTy, 0.0);

    // Σ_j α[b,h,i,j] · symbols  (loops b, h, i, e, j)
    SmallVector<OpFoldResult> oShape =
        tensor::getMixedSizes(rewriter, loc, op.getInit());
    Value acc = filledTensor(rewriter, loc, oShape, accTy, zero);
    AffineExpr g = h.floorDiv(*group);
    AffineMap symMap =
        op.getSymbolsPerPair() ? map5({i, j, g, e}) : map5({b, g, j, e});
    acc =
        linalg::GenericOp::create(
            rewriter, loc, acc.getType(), ValueRange{alpha, op.getSymbols()},
            ValueRange{acc},
            ArrayRef<AffineMap>{map5({b, h, i, j}), symMap, map5({b, h, i, e})},
            ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kRed}, mac)
            .getResult(0);

    // Σ_j α[b,h,i,j] · r[b,i,j,l]  (loops b, h, i, l=e, j)
    SmallVector<OpFoldResult> arShape = {
        oShape[0], oShape[1], oShape[2],
        tensor::getMixedSize(rewriter, loc, op.getRelQuery(), 1)};
    Value attRel = filledTensor(rewriter, loc, arShape, accTy, zero);
    attRel = linalg::GenericOp::create(
                 rewriter, loc, attRel.getType(), ValueRange{alpha, rel},
                 ValueRange{attRel},
                 ArrayRef<AffineMap>{map5({b, h, i, j}), map5({b, i, j, e}),
                                     map5({b, h, i, e})},
                 ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kRed}, mac)
                 .getResult(0);

    // + Σ_l attended_rel[b,h,i,l] · wr[h,e,l]  (loops b, h, i, e, l=j)
    acc = linalg::GenericOp::create(
              rewriter, loc, acc.getType(), ValueRange{attRel, op.getWr()},
              ValueRange{acc},
              ArrayRef<AffineMap>{map5({b, h, i, j}), map5({h, e, j}),
                                  map5({b, h, i, e})},
              ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kRed}, mac)
              .getResult(0);
    rewriter.replaceOp(op, castInto(rewriter, loc, acc, op.getInit()));
    return success();
  }
};

} // namespace

void populateRelationalAttentionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RelationsToLinalg, RelationalAttentionToLinalg>(
      patterns.getContext());
}

} // namespace mlir::dat
