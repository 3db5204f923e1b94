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

namespace {

struct RelationsToLinalg final : OpRewritePattern<RelationsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RelationsOp op,
                                PatternRewriter &rewriter) const override {
    auto et = cast<RankedTensorType>(op.getInit().getType()).getElementType();
    Value rel = buildRelations(rewriter, op.getLoc(), op.getRelQuery(),
                               op.getRelKey(), op.getScale().convertToDouble(),
                               op.getActivation(), accumulationType(et));
    rewriter.replaceOp(op,
                       convertInto(rewriter, op.getLoc(), rel, op.getInit()));
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
    TypedAttr zero = rewriter.getFloatAttr(accTy, 0.0);

    // Σ_j α[b,h,i,j] · symbols  (loops b, h, i, e, j)
    SmallVector<OpFoldResult> oShape =
        tensor::getMixedSizes(rewriter, loc, op.getInit());
    // Projected symbols are summed at their own width, then projected.
    Value proj = op.getSymbolProj();
    SmallVector<OpFoldResult> sShape = oShape;
    if (proj)
      sShape[3] = tensor::getMixedSize(rewriter, loc, proj, 2);
    Value acc = filledTensor(rewriter, loc, sShape, accTy, zero);
    AffineExpr g = h.floorDiv(*group);
    if (op.getRelativeSymbols()) {
      acc = accumulateRelativeSymbols(rewriter, loc, alpha, op.getSymbols(),
                                      op.getQueryOffset(), acc, *group);
    } else {
      Value symbols = op.getSymbols();
      AffineMap symMap = map5({b, g, j, e});
      if (op.getSymbolsPerPair()) {
        symbols = sharedPairSymbols(rewriter, loc, symbols);
        symMap =
            symbols == op.getSymbols() ? map5({i, j, g, e}) : map5({i, j, e});
      }
      acc = buildMulAcc(rewriter, loc, alpha, symbols, acc,
                        {map5({b, h, i, j}), symMap, map5({b, h, i, e})},
                        {kPar, kPar, kPar, kPar, kRed});
    }
    // P[h] · acc  (loops b, h, i, e, c=j)
    if (proj)
      acc =
          buildMulAcc(rewriter, loc, acc, proj,
                      filledTensor(rewriter, loc, oShape, accTy, zero),
                      {map5({b, h, i, j}), map5({h, e, j}), map5({b, h, i, e})},
                      {kPar, kPar, kPar, kPar, kRed});

    // Σ_j α[b,h,i,j] · r[b,i,j,l]  (loops b, h, i, l=e, j)
    SmallVector<OpFoldResult> arShape = {
        oShape[0], oShape[1], oShape[2],
        tensor::getMixedSize(rewriter, loc, op.getRelQuery(), 1)};
    Value attRel = filledTensor(rewriter, loc, arShape, accTy, zero);
    attRel = buildMulAcc(
        rewriter, loc, alpha, rel, attRel,
        {map5({b, h, i, j}), map5({b, i, j, e}), map5({b, h, i, e})},
        {kPar, kPar, kPar, kPar, kRed});

    // + Σ_l attended_rel[b,h,i,l] · wr[h,e,l]  (loops b, h, i, e, l=j)
    acc = buildMulAcc(rewriter, loc, attRel, op.getWr(), acc,
                      {map5({b, h, i, j}), map5({h, e, j}), map5({b, h, i, e})},
                      {kPar, kPar, kPar, kPar, kRed});
    rewriter.replaceOp(op, convertInto(rewriter, loc, acc, op.getInit()));
    return success();
  }
};

} // namespace

void populateRelationalAttentionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RelationsToLinalg, RelationalAttentionToLinalg>(
      patterns.getContext());
}

} // namespace mlir::dat
