//===- PeelTileLoops.cpp - the dat-peel-tile-loops pass -------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//
//
// The vector layer (dat-register-tiles) needs static tiles. A tile loop
// (`scf.forall`) over an extent its tile does not divide (1040 rows in
// tiles of 64) gives every tile a dynamic size (`affine.min`), and the whole
// loop would be left to scalar code. Splitting it into a loop over the full
// tiles and one over the last, partial tile makes the sizes constants in
// both (upstream's scf-for-loop-peeling does the same for `scf.for`, not
// for `scf.forall`).
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/AffineCanonicalizationUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::dat {
#define GEN_PASS_DEF_DATPEELTILELOOPS
#include "dat/Dialect/Dat/Transforms/Passes.h.inc"

namespace {

/// The bounds of `iv` where it is an induction variable of `forall`.
LogicalResult matchTileLoop(scf::ForallOp forall, Value iv, OpFoldResult &lb,
                            OpFoldResult &ub, OpFoldResult &step) {
  auto arg = dyn_cast<BlockArgument>(iv);
  if (!arg || arg.getOwner() != forall.getBody() ||
      arg.getArgNumber() >= forall.getRank())
    return failure();
  unsigned d = arg.getArgNumber();
  lb = forall.getMixedLowerBound()[d];
  ub = forall.getMixedUpperBound()[d];
  step = forall.getMixedStep()[d];
  return success();
}

/// Folds the tile sizes in `forall` — `affine.min`/`affine.max` of its
/// induction variables only — using its new bounds. (Bounds made from them,
/// e.g. a causal key loop's, are left opaque: scf-for-loop-peeling proves
/// its blocks full from that value, not from an expression of the tile.)
void simplifyTileSizes(RewriterBase &rewriter, scf::ForallOp forall) {
  SmallVector<Operation *> minMax;
  forall.getBody()->walk([&](Operation *op) {
    if (!isa<affine::AffineMinOp, affine::AffineMaxOp>(op))
      return;
    if (llvm::all_of(op->getOperands(), [&](Value v) {
          auto arg = dyn_cast<BlockArgument>(v);
          return arg && arg.getOwner() == forall.getBody();
        }))
      minMax.push_back(op);
  });
  auto matcher = [&](Value iv, OpFoldResult &lb, OpFoldResult &ub,
                     OpFoldResult &step) {
    return matchTileLoop(forall, iv, lb, ub, step);
  };
  for (Operation *op : minMax)
    (void)scf::canonicalizeMinMaxOpInLoop(rewriter, op, matcher);
}

} // namespace

FailureOr<int64_t> peelPartialTiles(RewriterBase &rewriter,
                                    scf::ForallOp forall) {
  std::optional<SmallVector<int64_t>> lbs =
      getConstantIntValues(forall.getMixedLowerBound());
  std::optional<SmallVector<int64_t>> ubs =
      getConstantIntValues(forall.getMixedUpperBound());
  std::optional<SmallVector<int64_t>> steps =
      getConstantIntValues(forall.getMixedStep());
  if (!lbs || !ubs || !steps || !forall.getDynamicLowerBound().empty() ||
      !forall.getDynamicUpperBound().empty() ||
      !forall.getDynamicStep().empty())
    return failure();

  // Each dimension with a partial last tile after a full one is split in
  // two: [lb, full) and [full, ub).
  SmallVector<scf::ForallOp> loops = {forall};
  int64_t added = 0;
  for (unsigned d = 0; d < forall.getRank(); ++d) {
    int64_t lb = (*lbs)[d], ub = (*ubs)[d], step = (*steps)[d];
    if (step <= 0 || ub <= lb)
      continue;
    int64_t full = lb + (ub - lb) / step * step;
    if (full == ub || full == lb)
      continue;
    SmallVector<scf::ForallOp> split;
    for (scf::ForallOp loop : loops) {
      rewriter.setInsertionPointAfter(loop);
      auto rest = cast<scf::ForallOp>(rewriter.clone(*loop));
      rewriter.replaceAllUsesWith(loop.getResults(), rest.getResults());
      rewriter.modifyOpInPlace(rest, [&] {
        rest.getOutputsMutable().assign(loop.getResults());
        SmallVector<int64_t> restLbs(rest.getStaticLowerBound());
        restLbs[d] = full;
        rest.setStaticLowerBound(restLbs);
        rest->setAttr(kRestOfSplitAttr, rewriter.getUnitAttr());
      });
      rewriter.modifyOpInPlace(loop, [&] {
        SmallVector<int64_t> loopUbs(loop.getStaticUpperBound());
        loopUbs[d] = full;
        loop.setStaticUpperBound(loopUbs);
      });
      split.push_back(loop);
      split.push_back(rest);
      ++added;
    }
    loops = std::move(split);
  }
  if (added)
    for (scf::ForallOp loop : loops)
      simplifyTileSizes(rewriter, loop);
  return added;
}

namespace {
struct PeelTileLoopsPass final : impl::DatPeelTileLoopsBase<PeelTileLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForallOp> loops;
    // (Tile loops are not nested: one nested in another is split in the
    // original only.)
    getOperation()->walk<WalkOrder::PreOrder>(
        [&](scf::ForallOp op) { loops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (scf::ForallOp loop : loops)
      (void)peelPartialTiles(rewriter, loop);
  }
};
} // namespace
} // namespace mlir::dat
