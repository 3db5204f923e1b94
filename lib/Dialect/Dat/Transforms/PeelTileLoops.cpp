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
// Where that second loop would have one iteration (an attention tile loop
// at batch 1 whose tiles keep every head: relational attention, HYLA), it
// would run on one thread while the others wait: 1000 queries are 15 full
// tiles on two threads, then 40 rows alone. Such a loop instead computes a
// full last tile ending at the last row, overlapping the tile before it,
// and inserts only the rows past that tile: one loop of full tiles, a few
// rows recomputed. That pays where the full tiles do not divide evenly
// among the threads (15 tiles on two: the 16th fills a round); where they
// do (12 tiles, 777 rows), it would add a round, and the loop is peeled.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"
#include "dat/Pass/OptionChecks.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/AffineCanonicalizationUtils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

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

using TileInserts =
    SmallVector<std::pair<tensor::ParallelInsertSliceOp, unsigned>>;

/// The inserts of `forall`'s tiles, each with the position of its offset
/// that is `iv`, where the outputs start undefined (so that a tile may
/// compute into a buffer of its own) and are only sliced or inserted into,
/// and each insert puts a whole tile at `iv`; failure otherwise.
FailureOr<TileInserts> matchFreshTiles(scf::ForallOp forall, Value iv) {
  Block *body = forall.getBody();
  scf::InParallelOp terminator = forall.getTerminator();
  for (Value out : forall.getOutputs())
    if (!out.getDefiningOp<tensor::EmptyOp>())
      return failure();
  for (BlockArgument out : forall.getRegionIterArgs())
    for (Operation *user : out.getUsers())
      if (!isa<tensor::ExtractSliceOp>(user) &&
          user->getParentOp() != terminator)
        return failure();
  auto otherInductionVar = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == body &&
           arg.getArgNumber() < forall.getRank() && v != iv;
  };
  TileInserts inserts;
  for (Operation &op : terminator.getYieldingOps()) {
    auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(&op);
    if (!insert || !insert.hasUnitStride() ||
        insert.getSourceType().getRank() != insert.getDestType().getRank())
      return failure();
    std::optional<unsigned> position;
    for (auto [p, offset] : llvm::enumerate(insert.getMixedOffsets())) {
      auto value = dyn_cast<Value>(offset);
      if (!value || forall.isDefinedOutsideOfLoop(value) ||
          otherInductionVar(value))
        continue;
      if (value != iv || position)
        return failure();
      position = p;
    }
    if (!position)
      return failure();
    inserts.emplace_back(insert, *position);
  }
  return inserts;
}

/// With the tiles computed at `start` (<= iv): each tile into a tensor of
/// its own (the output is undefined there), and the inserts take the rows
/// past the previous tile, iv - start of them skipped. Marks the loop.
void insertRowsPastPreviousTile(RewriterBase &rewriter, scf::ForallOp forall,
                                Value iv, Value start,
                                const TileInserts &inserts) {
  MLIRContext *ctx = rewriter.getContext();
  Location loc = forall.getLoc();
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx);
  for (BlockArgument out : forall.getRegionIterArgs())
    for (Operation *user : llvm::make_early_inc_range(out.getUsers())) {
      auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
      if (!slice)
        continue;
      rewriter.setInsertionPoint(slice);
      rewriter.replaceOpWithNewOp<tensor::EmptyOp>(
          slice, slice.getMixedSizes(), slice.getType().getElementType());
    }
  rewriter.setInsertionPoint(forall.getTerminator());
  Value skipped = affine::AffineApplyOp::create(
      rewriter, loc, AffineMap::get(2, 0, {d0 - d1}, ctx),
      ValueRange{iv, start});
  for (auto [insert, position] : inserts) {
    SmallVector<OpFoldResult> offsets(insert.getSourceType().getRank(),
                                      rewriter.getIndexAttr(0));
    offsets[position] = skipped;
    SmallVector<OpFoldResult> strides(offsets.size(), rewriter.getIndexAttr(1));
    Value rows = tensor::ExtractSliceOp::create(
        rewriter, loc, insert.getSourceType(), insert.getSource(), offsets,
        insert.getMixedSizes(), strides);
    rewriter.modifyOpInPlace(insert,
                             [&] { insert.getSourceMutable().assign(rows); });
  }
  rewriter.modifyOpInPlace(forall, [&] {
    forall->setAttr(kOverlappedLastTileAttr, rewriter.getUnitAttr());
  });
}

} // namespace

/// `forall`'s lower bounds and steps, where all are constants (its upper
/// bounds may be dynamic).
static std::optional<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>>
constantStarts(scf::ForallOp forall) {
  std::optional<SmallVector<int64_t>> lbs =
      getConstantIntValues(forall.getMixedLowerBound());
  std::optional<SmallVector<int64_t>> steps =
      getConstantIntValues(forall.getMixedStep());
  if (!lbs || !steps)
    return std::nullopt;
  return std::make_pair(*lbs, *steps);
}

std::optional<ConstantBounds> constantBounds(scf::ForallOp forall) {
  auto starts = constantStarts(forall);
  std::optional<SmallVector<int64_t>> ubs =
      getConstantIntValues(forall.getMixedUpperBound());
  if (!starts || !ubs)
    return std::nullopt;
  return ConstantBounds{starts->first, *ubs, starts->second};
}

bool overlapsLastTile(int64_t fullTiles, int64_t otherTiles, int64_t threads) {
  // Full tiles that the threads share evenly would take one more round with
  // the overlapped tile than with the partial one alone after them.
  return otherTiles == 1 && fullTiles > 0 &&
         (threads <= 0 || fullTiles % threads != 0);
}

// (Attention-family tile loops only: a projection's row blocks are
// independent too, but there the copy of every tile out of its own tensor,
// 64 rows of the output per 64·K·N multiply-adds, cost more than the partial
// block alone on one thread: measured on attention d=80.)
LogicalResult overlapLastTile(RewriterBase &rewriter, scf::ForallOp forall,
                              int64_t threads) {
  if (forall->hasAttr(kOverlappedLastTileAttr) || !isAttentionTileLoop(forall))
    return failure();
  std::optional<ConstantBounds> bounds = constantBounds(forall);
  if (!bounds)
    return failure();
  // One dimension with a partial last tile after full ones; every other
  // dimension one tile (else the peeled loop would have iterations enough
  // for the threads).
  std::optional<unsigned> dim;
  for (unsigned d = 0; d < forall.getRank(); ++d) {
    int64_t extent = bounds->ubs[d] - bounds->lbs[d], step = bounds->steps[d];
    if (step <= 0 || extent <= 0)
      return failure();
    if (extent > step && extent % step != 0) {
      if (dim)
        return failure();
      dim = d;
    } else if (extent > step) {
      return failure();
    }
  }
  if (!dim)
    return failure();
  int64_t lb = bounds->lbs[*dim], ub = bounds->ubs[*dim],
          step = bounds->steps[*dim];
  int64_t lastStart = ub - step;
  if (!overlapsLastTile((ub - lb) / step, /*otherTiles=*/1, threads))
    return failure();

  Block *body = forall.getBody();
  Value iv = forall.getInductionVar(*dim);
  scf::InParallelOp terminator = forall.getTerminator();
  FailureOr<TileInserts> inserts = matchFreshTiles(forall, iv);
  if (failed(inserts))
    return failure();

  // start = min(iv, ub - step): every tile is full.
  MLIRContext *ctx = rewriter.getContext();
  Location loc = forall.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(body);
  AffineExpr d0 = getAffineDimExpr(0, ctx);
  Value start = affine::AffineMinOp::create(
      rewriter, loc,
      AffineMap::get(1, 0, {d0, getAffineConstantExpr(lastStart, ctx)}, ctx),
      ValueRange{iv});
  auto inTerminator = [&](OpOperand &use) {
    return terminator->isProperAncestor(use.getOwner());
  };
  // Tile sizes (affine.min/max of the induction variable alone) where the
  // tiles use them: constants now, if they are the same at every start.
  SmallVector<int64_t> starts;
  for (int64_t i = lb; i < ub; i += step)
    starts.push_back(std::min(i, lastStart));
  SmallVector<Operation *> minMax;
  body->walk([&](Operation *op) {
    if (isa<affine::AffineMinOp, affine::AffineMaxOp>(op) &&
        op != start.getDefiningOp() &&
        llvm::all_of(op->getOperands(), [&](Value v) { return v == iv; }))
      minMax.push_back(op);
  });
  for (Operation *op : minMax) {
    AffineMap map = isa<affine::AffineMinOp>(op)
                        ? cast<affine::AffineMinOp>(op).getMap()
                        : cast<affine::AffineMaxOp>(op).getMap();
    std::optional<int64_t> same;
    bool constant = true;
    for (int64_t s : starts) {
      SmallVector<Attribute> operands(op->getNumOperands(),
                                      rewriter.getIndexAttr(s));
      SmallVector<Attribute> results;
      if (failed(map.constantFold(operands, results)) || results.empty()) {
        constant = false;
        break;
      }
      int64_t value = cast<IntegerAttr>(results[0]).getInt();
      for (Attribute r : results)
        value = isa<affine::AffineMinOp>(op)
                    ? std::min(value, cast<IntegerAttr>(r).getInt())
                    : std::max(value, cast<IntegerAttr>(r).getInt());
      if (same && *same != value)
        constant = false;
      same = value;
    }
    rewriter.setInsertionPointAfter(start.getDefiningOp());
    Value replacement;
    if (constant && same) {
      replacement = arith::ConstantIndexOp::create(rewriter, loc, *same);
    } else {
      IRMapping mapping;
      mapping.map(iv, start);
      replacement = rewriter.clone(*op, mapping)->getResult(0);
    }
    rewriter.replaceUsesWithIf(
        op->getResult(0), replacement,
        [&](OpOperand &use) { return !inTerminator(use); });
  }
  // The tiles compute at `start` (the sizes above keep the induction
  // variable for the inserts).
  rewriter.replaceUsesWithIf(iv, start, [&](OpOperand &use) {
    return use.getOwner() != start.getDefiningOp() && !inTerminator(use) &&
           !llvm::is_contained(minMax, use.getOwner());
  });
  insertRowsPastPreviousTile(rewriter, forall, iv, start, *inserts);
  return success();
}

FailureOr<int64_t> peelPartialTiles(RewriterBase &rewriter,
                                    scf::ForallOp forall) {
  std::optional<ConstantBounds> bounds = constantBounds(forall);
  if (!bounds || !forall.getDynamicLowerBound().empty() ||
      !forall.getDynamicUpperBound().empty() ||
      !forall.getDynamicStep().empty())
    return failure();

  // Each dimension with a partial last tile after a full one is split in
  // two: [lb, full) and [full, ub).
  SmallVector<scf::ForallOp> loops = {forall};
  int64_t added = 0;
  for (unsigned d = 0; d < forall.getRank(); ++d) {
    int64_t lb = bounds->lbs[d], ub = bounds->ubs[d], step = bounds->steps[d];
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

/// `loop` rebuilt with these bounds and outputs (its body, attributes and
/// mapping kept): scf.forall has no setters for dynamic bounds.
static scf::ForallOp withBounds(RewriterBase &rewriter, scf::ForallOp loop,
                                ArrayRef<OpFoldResult> lbs,
                                ArrayRef<OpFoldResult> ubs,
                                ValueRange outputs) {
  rewriter.setInsertionPoint(loop);
  auto rebuilt =
      scf::ForallOp::create(rewriter, loop.getLoc(), lbs, ubs,
                            loop.getMixedStep(), outputs, loop.getMapping());
  for (NamedAttribute attr : loop->getDiscardableAttrs())
    rebuilt->setAttr(attr.getName(), attr.getValue());
  rewriter.eraseBlock(rebuilt.getBody());
  rewriter.inlineRegionBefore(loop.getRegion(), rebuilt.getRegion(),
                              rebuilt.getRegion().end());
  rewriter.replaceOp(loop, rebuilt.getResults());
  return rebuilt;
}

FailureOr<int64_t> peelDynamicTiles(RewriterBase &rewriter,
                                    scf::ForallOp forall) {
  auto starts = constantStarts(forall);
  if (!starts)
    return failure();
  auto [lbs, steps] = *starts;
  MLIRContext *ctx = rewriter.getContext();
  Location loc = forall.getLoc();
  // (Read before the splits: each one replaces `forall`.)
  unsigned rank = forall.getRank();
  SmallVector<OpFoldResult> ubs = forall.getMixedUpperBound();
  SmallVector<scf::ForallOp> loops = {forall};
  // Per loop, the dimensions peeled and whether it holds their full tiles.
  SmallVector<SmallVector<std::pair<unsigned, bool>>> peeled = {{}};
  SmallVector<Value> ubOf(rank);
  int64_t added = 0;
  for (unsigned d = 0; d < rank; ++d) {
    auto ub = dyn_cast<Value>(ubs[d]);
    int64_t lb = lbs[d], step = steps[d];
    if (!ub || step <= 1)
      continue;
    ubOf[d] = ub;
    // full = lb + (ub - lb) floordiv step * step, before the loops.
    rewriter.setInsertionPoint(loops.front());
    AffineExpr s0 = getAffineSymbolExpr(0, ctx);
    Value full = affine::AffineApplyOp::create(
        rewriter, loc,
        AffineMap::get(0, 1, lb + (s0 - lb).floorDiv(step) * step), ub);
    SmallVector<scf::ForallOp> split;
    SmallVector<SmallVector<std::pair<unsigned, bool>>> splitPeeled;
    for (auto [original, done] : llvm::zip(loops, peeled)) {
      SmallVector<OpFoldResult> loopUbs = original.getMixedUpperBound();
      loopUbs[d] = full;
      scf::ForallOp loop =
          withBounds(rewriter, original, original.getMixedLowerBound(), loopUbs,
                     original.getOutputs());
      rewriter.setInsertionPointAfter(loop);
      auto copy = cast<scf::ForallOp>(rewriter.clone(*loop));
      SmallVector<OpFoldResult> restLbs = copy.getMixedLowerBound();
      restLbs[d] = full;
      SmallVector<OpFoldResult> restUbs = copy.getMixedUpperBound();
      restUbs[d] = ub;
      scf::ForallOp rest =
          withBounds(rewriter, copy, restLbs, restUbs, loop.getResults());
      rewriter.replaceUsesWithIf(
          loop.getResults(), rest.getResults(),
          [&](OpOperand &use) { return use.getOwner() != rest; });
      rewriter.modifyOpInPlace(rest, [&] {
        rest->setAttr(kRestOfSplitAttr, rewriter.getUnitAttr());
      });
      split.push_back(loop);
      splitPeeled.push_back(done);
      splitPeeled.back().push_back({d, true});
      split.push_back(rest);
      splitPeeled.push_back(done);
      splitPeeled.back().push_back({d, false});
      ++added;
    }
    loops = std::move(split);
    peeled = std::move(splitPeeled);
  }
  // The tile sizes: min(step, ub - iv) is the step in the full tiles and
  // ub - iv in the last.
  for (auto [loop, done] : llvm::zip(loops, peeled))
    for (auto [d, inside] : done) {
      Value iv = loop.getInductionVar(d);
      SmallVector<Operation *> minMax;
      loop.getBody()->walk([&](Operation *op) {
        if (isa<affine::AffineMinOp, affine::AffineMaxOp>(op) &&
            llvm::is_contained(op->getOperands(), iv))
          minMax.push_back(op);
      });
      if (minMax.empty())
        continue;
      rewriter.setInsertionPointToStart(loop.getBody());
      Value step = arith::ConstantIndexOp::create(rewriter, loc, steps[d]);
      for (Operation *op : minMax)
        (void)scf::rewritePeeledMinMaxOp(rewriter, op, iv, ubOf[d], step,
                                         inside);
    }
  return added;
}

LogicalResult overlapDynamicLastTile(RewriterBase &rewriter,
                                     scf::ForallOp forall) {
  if (forall->hasAttr(kOverlappedLastTileAttr) || !isAttentionTileLoop(forall))
    return failure();
  auto starts = constantStarts(forall);
  if (!starts)
    return failure();
  auto [lbs, steps] = *starts;
  // One tile dimension over a dynamic bound; the others one tile each, or
  // a dynamic batch. (Where they have several tiles, e.g. attention's
  // heads, the partial tiles run side by side anyway: measured, overlapping
  // them gained nothing.)
  std::optional<unsigned> dim;
  for (unsigned d = 0; d < forall.getRank(); ++d) {
    std::optional<int64_t> ub =
        getConstantIntValue(forall.getMixedUpperBound()[d]);
    int64_t lb = lbs[d], step = steps[d];
    if (ub && *ub - lb <= step)
      continue;
    if (!ub && step == 1)
      continue;
    if (ub || dim)
      return failure();
    dim = d;
  }
  if (!dim)
    return failure();
  Value iv = forall.getInductionVar(*dim);
  FailureOr<TileInserts> inserts = matchFreshTiles(forall, iv);
  if (failed(inserts))
    return failure();
  int64_t lb = lbs[*dim], step = steps[*dim];
  auto ub = cast<Value>(forall.getMixedUpperBound()[*dim]);

  // if (ub >= lb + step) { every tile full } else { the one partial tile }.
  MLIRContext *ctx = rewriter.getContext();
  Location loc = forall.getLoc();
  rewriter.setInsertionPoint(forall);
  Value enough = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::sge, ub,
      arith::ConstantIndexOp::create(rewriter, loc, lb + step));
  auto ifOp = scf::IfOp::create(rewriter, loc, forall.getResultTypes(), enough,
                                /*withElseRegion=*/true);
  rewriter.replaceAllUsesWith(forall.getResults(), ifOp.getResults());
  rewriter.moveOpBefore(forall, ifOp.thenBlock(), ifOp.thenBlock()->end());
  rewriter.setInsertionPointToEnd(ifOp.thenBlock());
  scf::YieldOp::create(rewriter, loc, forall.getResults());
  rewriter.setInsertionPointToEnd(ifOp.elseBlock());
  Operation *partial = rewriter.clone(*forall);
  scf::YieldOp::create(rewriter, loc, partial->getResults());

  // The full tiles start at min(iv, ub - step).
  Block *body = forall.getBody();
  scf::InParallelOp terminator = forall.getTerminator();
  rewriter.setInsertionPointToStart(body);
  AffineExpr d0 = getAffineDimExpr(0, ctx), s0 = getAffineSymbolExpr(0, ctx);
  Value start = affine::AffineMinOp::create(
      rewriter, loc, AffineMap::get(1, 1, {d0, s0 - step}, ctx),
      ValueRange{iv, ub});
  Value stepValue = arith::ConstantIndexOp::create(rewriter, loc, step);
  auto inTerminator = [&](OpOperand &use) {
    return terminator->isProperAncestor(use.getOwner());
  };
  // Tile sizes (affine.min/max of the induction variable and values from
  // outside): of a tile at `start`, so the step where they are min(step,
  // ub - iv). The inserts keep the original ones.
  SmallVector<Operation *> minMax;
  body->walk([&](Operation *op) {
    if (isa<affine::AffineMinOp, affine::AffineMaxOp>(op) &&
        op != start.getDefiningOp() &&
        llvm::is_contained(op->getOperands(), iv) &&
        llvm::all_of(op->getOperands(), [&](Value v) {
          return v == iv || forall.isDefinedOutsideOfLoop(v);
        }))
      minMax.push_back(op);
  });
  for (Operation *op : minMax) {
    rewriter.setInsertionPointAfter(stepValue.getDefiningOp());
    IRMapping mapping;
    mapping.map(iv, start);
    Operation *atStart = rewriter.clone(*op, mapping);
    rewriter.replaceUsesWithIf(
        op->getResult(0), atStart->getResult(0),
        [&](OpOperand &use) { return !inTerminator(use); });
    (void)scf::rewritePeeledMinMaxOp(rewriter, atStart, start, ub, stepValue,
                                     /*insideLoop=*/true);
  }
  rewriter.replaceUsesWithIf(iv, start, [&](OpOperand &use) {
    return use.getOwner() != start.getDefiningOp() && !inTerminator(use) &&
           !llvm::is_contained(minMax, use.getOwner());
  });
  insertRowsPastPreviousTile(rewriter, forall, iv, start, *inserts);
  return success();
}

namespace {
struct PeelTileLoopsPass final : impl::DatPeelTileLoopsBase<PeelTileLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(checkOptionRange(getOperation(), getArgument(), "threads",
                                threads, 0)))
      return signalPassFailure();
    SmallVector<scf::ForallOp> loops;
    // (Tile loops are not nested: one nested in another is split in the
    // original only.)
    getOperation()->walk<WalkOrder::PreOrder>(
        [&](scf::ForallOp op) { loops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (scf::ForallOp loop : loops) {
      if (overlap && succeeded(overlapLastTile(rewriter, loop, threads)))
        continue;
      if (succeeded(peelPartialTiles(rewriter, loop)))
        continue;
      if (overlap && succeeded(overlapDynamicLastTile(rewriter, loop)))
        continue;
      (void)peelDynamicTiles(rewriter, loop);
    }
  }
};
} // namespace
} // namespace mlir::dat
