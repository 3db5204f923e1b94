//===- FuseEpilogues.cpp - projections fused with their epilogues ---------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// "x·Wᵀ + b, then an activation, then + residual" is a contraction followed
// by elementwise ops. Tiling the last elementwise op by rows and fusing its
// producers into the tile computes the whole chain per row block: the
// contraction's output (and every intermediate) exists only as a tile.
// Only producers of the root's own shape with a single use are fused, so
// nothing is computed twice.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"
#include "dat/Pass/OptionChecks.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::dat {

#define GEN_PASS_DEF_DATFUSEEPILOGUES
#include "dat/Dialect/Dat/Transforms/Passes.h.inc"

static bool isElementwise(linalg::LinalgOp op) {
  return op.getNumLoops() == op.getNumParallelLoops() &&
         op.hasPureTensorSemantics() && op->getNumResults() == 1;
}

static bool isContraction(linalg::LinalgOp op) {
  return op.getNumReductionLoops() > 0 && op.getNumParallelLoops() > 0 &&
         op.hasPureTensorSemantics() && op->getNumResults() == 1;
}

/// Whether two tensor types have one shape (element types may differ: an
/// f32 contraction feeds a bf16 epilogue under dat-narrow-storage).
static bool sameShape(Type a, Type b) {
  auto ta = dyn_cast<RankedTensorType>(a), tb = dyn_cast<RankedTensorType>(b);
  return ta && tb && ta.getShape() == tb.getShape();
}

/// A linalg producer of `value` that tiling `root` may fuse: the shape of
/// the root's result (so a tile of the root is a tile of it), one use.
static linalg::LinalgOp fusableProducer(Value value, Type rootType) {
  auto producer = value.getDefiningOp<linalg::LinalgOp>();
  if (!producer || !sameShape(value.getType(), rootType) ||
      !value.hasOneUse() ||
      (!isElementwise(producer) && !isContraction(producer)))
    return {};
  return producer;
}

/// Whether `op` reads `operand` through a projected permutation that keeps
/// every parallel dim: a row tile of `op` then needs the same rows of the
/// producer, never all of it (a broadcast would recompute it per tile).
static bool readsWithoutBroadcast(linalg::LinalgOp op, OpOperand &operand) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  if (!map.isProjectedPermutation())
    return false;
  for (auto [dim, type] : llvm::enumerate(op.getIteratorTypesArray()))
    if (type == utils::IteratorType::parallel && !map.isFunctionOfDim(dim))
      return false;
  return true;
}

/// The producers of `root` that its tiling fuses (transitively: same shape,
/// a single use, read without broadcast), or an empty set when no
/// contraction is among them.
static SmallPtrSet<Operation *, 8> fusedChain(linalg::LinalgOp root) {
  Type type = root->getResult(0).getType();
  SmallPtrSet<Operation *, 8> chain;
  bool contraction = false;
  SmallVector<linalg::LinalgOp> worklist = {root};
  while (!worklist.empty()) {
    linalg::LinalgOp op = worklist.pop_back_val();
    for (OpOperand &operand : op->getOpOperands())
      if (!readsWithoutBroadcast(op, operand))
        continue;
      else if (linalg::LinalgOp producer = fusableProducer(operand.get(), type))
        if (chain.insert(producer).second) {
          contraction |= isContraction(producer);
          worklist.push_back(producer);
        }
  }
  if (!contraction)
    chain.clear();
  return chain;
}

/// Whether `op`'s result, of rank >= `minRank` and a static last
/// dimension, ends a chain: it does not feed a longer one (an elementwise op
/// of its shape, its only use, whose own chain takes it). (Rows may be
/// dynamic: the last row tile is peeled later, dat-peel-tile-loops.)
static bool isChainEnd(linalg::LinalgOp op, int64_t minRank) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || type.getRank() < minRank ||
      type.isDynamicDim(type.getRank() - 1))
    return false;
  Value result = op->getResult(0);
  if (result.hasOneUse())
    if (auto user = dyn_cast<linalg::LinalgOp>(*result.getUsers().begin()))
      if (isElementwise(user) &&
          sameShape(user->getResult(0).getType(), result.getType()))
        return false;
  return true;
}

/// The row tile of a chain's result of `shape` for `threads` threads: the
/// full row tiles run in one parallel loop and a partial last one
/// (dat-peel-tile-loops) in another, on one thread; so 1000 rows in tiles
/// of 64 leave two threads 8 and 7 tiles, then 40 rows on one of them
/// (552 rows on the longer thread, where 500 would be even). Of the
/// multiples of 8 from `rows` to twice that, the one whose longer thread
/// has the fewest rows (the smallest on ties: 80 rows at N = 1000, 520),
/// where it has 3% fewer than with `rows`. A row count that `rows` divides
/// keeps it (K's packing in blocks of 64 keys moves into the loop only
/// where a row tile is a block), and so do fewer rows than two tiles per
/// thread and a `rows` that is not a multiple of 8 (the register tiles'
/// rows).
static int64_t balancedRows(ArrayRef<int64_t> shape, int64_t rows,
                            int64_t threads) {
  int64_t rank = shape.size();
  if (threads < 2 || rank < 2 || ShapedType::isDynamicShape(shape) ||
      rows % 8 != 0)
    return rows;
  int64_t lead = 1;
  for (int64_t d = 0; d + 2 < rank; ++d)
    lead *= shape[d];
  int64_t m = shape[rank - 2];
  if (m % rows == 0 || m < 2 * threads * rows)
    return rows;
  auto rounds = [&](int64_t tiles) { return (tiles + threads - 1) / threads; };
  auto longest = [&](int64_t tile) {
    return rounds(lead * (m / tile)) * tile +
           (m % tile ? rounds(lead) * (m % tile) : 0);
  };
  int64_t best = rows, bestRows = longest(rows);
  for (int64_t tile = rows + 8; tile <= 2 * rows; tile += 8)
    if (int64_t longer = longest(tile); longer < bestRows) {
      best = tile;
      bestRows = longer;
    }
  return bestRows * 100 < longest(rows) * 97 ? best : rows;
}

FailureOr<int64_t> fuseLinearEpilogues(RewriterBase &rewriter, Operation *root,
                                       int64_t rows, int64_t threads) {
  // Roots: elementwise ops outside loops whose result does not itself feed
  // a longer chain (fusing from the end takes the whole chain).
  SmallVector<std::pair<linalg::LinalgOp, SmallPtrSet<Operation *, 8>>> roots;
  root->walk([&](linalg::LinalgOp op) {
    if (!isElementwise(op) || op->getParentOfType<LoopLikeOpInterface>())
      return;
    if (!isChainEnd(op, /*minRank=*/2))
      return;
    SmallPtrSet<Operation *, 8> chain = fusedChain(op);
    if (!chain.empty())
      roots.emplace_back(op, std::move(chain));
  });
  // A projection with no epilogue is tiled by rows too (its init fused):
  // the tiles run in parallel, and a row block's output stays in cache.
  root->walk([&](linalg::LinalgOp op) {
    if (!isContraction(op) || op->getParentOfType<LoopLikeOpInterface>() ||
        !op.getMatchingIndexingMap(op.getDpsInitOperand(0))
             .isProjectedPermutation())
      return;
    if (!isChainEnd(op, /*minRank=*/3))
      return;
    Type type = op->getResult(0).getType();
    SmallPtrSet<Operation *, 8> chain;
    OpOperand *init = op.getDpsInitOperand(0);
    if (linalg::LinalgOp producer = fusableProducer(init->get(), type))
      if (isElementwise(producer))
        chain.insert(producer);
    chain.insert(op); // never fused into itself; marks a chain to tile
    roots.emplace_back(op, std::move(chain));
  });

  int64_t fused = 0;
  for (auto &[op, chain] : roots) {
    Type type = op->getResult(0).getType();
    auto shape = cast<RankedTensorType>(type).getShape();
    // Over the result's dims: leading ones one at a time, the row dim by
    // `rows` (or a row tile the threads share better), the last whole; the
    // loops of a contraction's reduction whole.
    SmallVector<OpFoldResult> tileSizes(op.getNumLoops(),
                                        rewriter.getIndexAttr(0));
    AffineMap resultMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    int64_t rowTile = balancedRows(shape, rows, threads);
    for (size_t d = 0; d + 1 < shape.size(); ++d)
      tileSizes[resultMap.getDimPosition(d)] =
          rewriter.getIndexAttr(d + 2 == shape.size() ? rowTile : 1);
    scf::SCFTilingOptions tiling;
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    tiling.setTileSizes(tileSizes);
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    options.setFusionControlFn(
        [&](tensor::ExtractSliceOp, OpResult producer, bool)
            -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
          if (!chain.contains(producer.getOwner()))
            return std::nullopt;
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        });
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTileAndFuseResult> result =
        scf::tileConsumerAndFuseProducersUsingSCF(
            rewriter, cast<TilingInterface>(op.getOperation()), options);
    if (failed(result))
      return failure();
    for (LoopLikeOpInterface loop : result->loops)
      setTileOrigin(loop,
                    isContraction(op) ? "projection" : "projection + epilogue");
    rewriter.replaceOp(op, result->replacements.lookup(op->getResult(0)));
    // The fused producers had no other use: the whole tensors die.
    for (Operation *producer : result->fusedProducers)
      if (producer->use_empty())
        rewriter.eraseOp(producer);
    ++fused;
  }
  return fused;
}

namespace {

struct FuseEpiloguesPass final : impl::DatFuseEpiloguesBase<FuseEpiloguesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(
            checkOptionRange(getOperation(), getArgument(), "rows", rows, 1)) ||
        failed(checkOptionRange(getOperation(), getArgument(), "threads",
                                threads, 0)))
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    if (failed(fuseLinearEpilogues(rewriter, getOperation(), rows, threads)))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::dat
