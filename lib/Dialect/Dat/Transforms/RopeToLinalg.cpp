//===- RopeToLinalg.cpp - reference lowering of dat.rope ------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The last axis is viewed as [K/2, 2] so that both members of a pair are
// reachable through affine maps; the rotation is computed in f32 for
// narrower inputs, as the reference does.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"
#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"

namespace mlir::dat {
namespace {

struct RopeToLinalg final : OpRewritePattern<RopeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RopeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = op.getInput();
    auto xTy = cast<RankedTensorType>(x.getType());
    Type elemTy = xTy.getElementType();
    FloatType accTy = accumulationType(elemTy);

    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, x);
    AffineExpr d0;
    bindDims(ctx, d0);
    OpFoldResult pairs = affine::makeComposedFoldedAffineApply(
        rewriter, loc, d0.floorDiv(2), {sizes[3]});
    SmallVector<OpFoldResult> pairShape = {sizes[0], sizes[1], sizes[2], pairs,
                                           rewriter.getIndexAttr(2)};
    SmallVector<int64_t> staticShape;
    for (OpFoldResult s : pairShape)
      staticShape.push_back(
          getConstantIntValue(s).value_or(ShapedType::kDynamic));
    auto pairTy = RankedTensorType::get(staticShape, elemTy);
    SmallVector<ReassociationIndices> reassoc = {{0}, {1}, {2}, {3, 4}};
    Value xPairs = tensor::ExpandShapeOp::create(rewriter, loc, pairTy, x,
                                                 reassoc, pairShape);

    AffineExpr b, t, h, m, p;
    bindDims(ctx, b, t, h, m, p);
    auto map = [&](ArrayRef<AffineExpr> results) {
      return AffineMap::get(5, 0, results, ctx);
    };
    AffineExpr c0 = getAffineConstantExpr(0, ctx);
    AffineExpr c1 = getAffineConstantExpr(1, ctx);
    // [L,K/2] tables, or [1|B,L,1|H,K/2] per token and head.
    auto tableTy = cast<RankedTensorType>(op.getCos().getType());
    AffineMap table = map({t, m});
    if (tableTy.getRank() == 4)
      table = map({tableTy.getDimSize(0) == 1 ? c0 : b, t,
                   tableTy.getDimSize(2) == 1 ? c0 : h, m});
    Value init = tensor::EmptyOp::create(rewriter, loc, pairShape, elemTy);
    Value rotated =
        linalg::GenericOp::create(
            rewriter, loc, pairTy,
            ValueRange{xPairs, xPairs, op.getCos(), op.getSin()},
            ValueRange{init},
            ArrayRef<AffineMap>{map({b, t, h, m, c0}), map({b, t, h, m, c1}),
                                table, table, map({b, t, h, m, p})},
            ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kPar},
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value x0 = castFloat(nb, nl, args[0], accTy);
              Value x1 = castFloat(nb, nl, args[1], accTy);
              Value c = castFloat(nb, nl, args[2], accTy);
              Value s = castFloat(nb, nl, args[3], accTy);
              // even lane: x0·c − x1·s; odd lane: x0·s + x1·c
              Value even = arith::SubFOp::create(
                  nb, nl, arith::MulFOp::create(nb, nl, x0, c),
                  arith::MulFOp::create(nb, nl, x1, s));
              Value odd = arith::AddFOp::create(
                  nb, nl, arith::MulFOp::create(nb, nl, x0, s),
                  arith::MulFOp::create(nb, nl, x1, c));
              Value lane = linalg::IndexOp::create(nb, nl, 4);
              Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
              Value isEven = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::eq, lane, zero);
              Value r = arith::SelectOp::create(nb, nl, isEven, even, odd);
              linalg::YieldOp::create(nb, nl, castFloat(nb, nl, r, elemTy));
            })
            .getResult(0);
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(op, xTy, rotated,
                                                         reassoc);
    return success();
  }
};

} // namespace

void populateRopeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RopeToLinalg>(patterns.getContext());
}

} // namespace mlir::dat
