//===- AttentionToLinalg.cpp - reference lowering of dat.attention --------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Rewrites dat.attention into the textbook sequence of linalg ops: the full
// score tensor, the mask, a max-subtracted softmax and the weighted sum of
// values. Narrow float types are widened to f32 for every reduction.
//
//===----------------------------------------------------------------------===//

#include "AttentionBuilders.h"
#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"

namespace mlir::dat {
namespace {

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
    acc = buildMulAcc(rewriter, loc, parts.exps, op.getValue(), acc,
                      {map({b, h, i, j}), map({b, h.floorDiv(*group), j, x}),
                       map({b, h, i, x})},
                      {kPar, kPar, kPar, kRed, kPar});

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
    if (op.getLogits()) {
      // The scaled, masked scores themselves.
      rewriter.replaceOp(
          op, convertInto(rewriter, op.getLoc(), parts.logits, op.getInit()));
      return success();
    }
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
