//===- OrthogonalMapToLinalg.cpp - reference lowering of orthogonal maps --===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "LinalgBuilders.h"
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
    bool broadcast =
        cast<RankedTensorType>(op.getMaps().getType()).getDimSize(0) == 1;
    // loops (b, h, l, a, c): result[b,h,l,a] += maps[b',l,h,a,c] · x[b,h,l,c]
    AffineExpr b, h, l, a, c;
    bindDims(ctx, b, h, l, a, c);
    auto map5 = [&](ArrayRef<AffineExpr> r) {
      return AffineMap::get(5, 0, r, ctx);
    };
    AffineExpr mb = broadcast ? getAffineConstantExpr(0, ctx) : b;
    SmallVector<OpFoldResult> shape =
        tensor::getMixedSizes(rw, loc, op.getInput());
    Value acc =
        filledTensor(rw, loc, shape, accTy, rw.getFloatAttr(accTy, 0.0));
    acc = buildMulAcc(
        rw, loc, op.getMaps(), op.getInput(), acc,
        {map5({mb, l, h, a, c}), map5({b, h, l, c}), map5({b, h, l, a})},
        {kPar, kPar, kPar, kPar, kRed});
    if (accTy != xt.getElementType()) {
      AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
      acc = linalg::GenericOp::create(
                rw, loc, xt, ValueRange{acc},
                ValueRange{tensor::EmptyOp::create(rw, loc, shape,
                                                   xt.getElementType())},
                ArrayRef<AffineMap>{id, id}, SmallVector<IteratorType>(4, kPar),
                [&](OpBuilder &nb, Location nl, ValueRange args) {
                  linalg::YieldOp::create(
                      nb, nl, castFloat(nb, nl, args[0], xt.getElementType()));
                })
                .getResult(0);
    }
    rw.replaceOp(op, acc);
    return success();
  }
};

} // namespace

void populateOrthogonalMapToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<OrthogonalMapToLinalg>(patterns.getContext());
}

} // namespace mlir::dat
