//===- OrthogonalMapToLinalg.cpp - reference lowering of orthogonal maps --===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "AttentionBuilders.h"
#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

namespace mlir::dat {
namespace {

struct OrthogonalMapToLinalg final : OpRewritePattern<OrthogonalMapOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(OrthogonalMapOp op,
                                PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rw.getContext();
    auto xt = cast<RankedTensorType>(op.getInput().getType());
    FloatType accTy = accumulationType(xt.getElementType());
    auto mt = cast<RankedTensorType>(op.getMaps().getType());
    // loops (b, h, l, a, c): result[b,h,l,a] += maps[b',l,h',a,c] · x[b,h,l,c]
    AffineExpr b, h, l, a, c;
    bindDims(ctx, b, h, l, a, c);
    auto map5 = [&](ArrayRef<AffineExpr> r) {
      return AffineMap::get(5, 0, r, ctx);
    };
    AffineExpr zeroE = getAffineConstantExpr(0, ctx);
    AffineExpr mb = mt.getDimSize(0) == 1 ? zeroE : b;
    AffineExpr mh = mt.getDimSize(2) == 1 ? zeroE : h;
    SmallVector<OpFoldResult> shape =
        tensor::getMixedSizes(rw, loc, op.getInput());
    Value acc =
        filledTensor(rw, loc, shape, accTy, rw.getFloatAttr(accTy, 0.0));
    acc = buildMulAcc(
        rw, loc, op.getMaps(), op.getInput(), acc,
        {map5({mb, l, mh, a, c}), map5({b, h, l, c}), map5({b, h, l, a})},
        {kPar, kPar, kPar, kPar, kRed});
    if (accTy != xt.getElementType())
      acc = convertInto(rw, loc, acc, op.getInit());
    rw.replaceOp(op, acc);
    return success();
  }
};

} // namespace

void populateOrthogonalMapToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<OrthogonalMapToLinalg>(patterns.getContext());
}

} // namespace mlir::dat
