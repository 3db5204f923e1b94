//===- TileAttention.cpp - the dat-tile-attention pass --------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Query tiles come from the ops' TilingInterface (scf.forall over batch and
// query blocks, every head together); the key loop inside each tile comes
// from the flash patterns.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dat {

#define GEN_PASS_DEF_DATTILEATTENTION
#include "dat/Dialect/Dat/Transforms/Passes.h.inc"

namespace {

/// Tile sizes over the op's iteration domain: batch 1, `queryTile` rows,
/// everything else whole (0).
SmallVector<OpFoldResult> queryTileSizes(Operation *op, int64_t queryTile,
                                         Builder &b) {
  OpFoldResult one = b.getIndexAttr(1), zero = b.getIndexAttr(0),
               rows = b.getIndexAttr(queryTile);
  // (b, h, i, e): plain attention also splits over heads, one group of
  // query heads sharing a key/value head per tile — more tiles for the
  // GPU's blocks, each a head group's smaller working set.
  if (auto attention = dyn_cast<AttentionOp>(op)) {
    // A per-pair scale computed per tile (APE's decay) is the same for
    // every head: one tile for all of them computes it once.
    Value scale = attention.getScoreScale();
    Operation *producer = scale ? scale.getDefiningOp() : nullptr;
    if (producer && producer->hasAttr(kRecomputePerTileAttr))
      return {one, zero, rows, zero};
    if (std::optional<int64_t> group = attention.getGroupSize())
      return {one, b.getIndexAttr(*group), rows, zero};
  }
  if (isa<AttentionOp>(op))
    return {one, zero, rows, zero};
  // (b, i): relational attention shares relations among its heads, HYLA
  // normalizes across them, so their tiles keep every head.
  return {one, rows};
}

/// The query tile for `op` when none is given (query-tile=0): 64 rows, or
/// 32, or 16 — the largest that still makes `minTiles` tiles (enough blocks
/// for every SM of the GPU), 16 if none does. The ops that keep every head
/// in a tile (relational attention, HYLA) have few tiles at batch 4 and
/// N = 1024 (64 at 64 rows): smaller tiles are the only parallelism left.
/// Shapes not known statically get 64.
int64_t autoQueryTile(TilingInterface op, int64_t minTiles, OpBuilder &b) {
  SmallVector<Range> domain = op.getIterationDomain(b);
  for (int64_t rows : {64, 32, 16}) {
    SmallVector<OpFoldResult> sizes = queryTileSizes(op, rows, b);
    int64_t tiles = 1;
    for (auto [range, size] : llvm::zip(domain, sizes)) {
      std::optional<int64_t> extent = getConstantIntValue(range.size);
      std::optional<int64_t> tile = getConstantIntValue(size);
      if (!extent || !tile)
        return 64;
      if (*tile > 0)
        tiles *= llvm::divideCeil(*extent, *tile);
    }
    if (tiles >= minTiles)
      return rows;
  }
  return 16;
}

/// Producers worth recomputing per tile: per-position rotations (RoPE,
/// orthogonal maps) and the layout change between them and attention. A
/// projection (a GEMM) is not: fused into key blocks it would be recomputed
/// for every query tile.
bool isPrologue(Operation *op) {
  return isa_and_nonnull<RopeOp, OrthogonalMapOp, linalg::TransposeOp>(op) ||
         (op && op->hasAttr(kRecomputePerTileAttr));
}

} // namespace

void fuseAttentionPrologues(RewriterBase &rewriter, Operation *root) {
  SmallVector<tensor::ExtractSliceOp> worklist;
  root->walk([&](tensor::ExtractSliceOp slice) {
    if (slice->getParentOfType<scf::ForallOp>() &&
        isPrologue(slice.getSource().getDefiningOp()))
      worklist.push_back(slice);
  });
  while (!worklist.empty()) {
    tensor::ExtractSliceOp slice = worklist.pop_back_val();
    rewriter.setInsertionPoint(slice);
    std::optional<scf::SCFFuseProducerOfSliceResult> fused =
        scf::tileAndFuseProducerOfSlice(rewriter, slice, {});
    if (!fused)
      continue; // e.g. a tile that splits RoPE pairs: leave it unfused
    // The tiled op writes a fresh tile: a destination sliced from the
    // producer's whole result would keep that result (and everything before
    // it) alive. Neither transposes nor orthogonal maps read their init.
    for (Operation *tiled : fused->tiledOps) {
      auto dps = dyn_cast<DestinationStyleOpInterface>(tiled);
      auto linalgOp = dyn_cast<linalg::LinalgOp>(tiled);
      if (!dps)
        continue;
      for (OpOperand &init : dps.getDpsInitsMutable()) {
        if (linalgOp && linalgOp.payloadUsesValueFromOperand(&init))
          continue;
        rewriter.setInsertionPoint(tiled);
        Value fresh = tensor::EmptyOp::create(
            rewriter, tiled->getLoc(),
            tensor::getMixedSizes(rewriter, tiled->getLoc(), init.get()),
            getElementTypeOrSelf(init.get().getType()));
        rewriter.modifyOpInPlace(tiled, [&] { init.set(fresh); });
      }
    }
    // A tile of a per-pair producer is sliced again by the key loop: fuse
    // it there too, so that only [query block, key block] tiles exist.
    for (Operation *tiled : fused->tiledOps)
      if (tiled->hasAttr(kRecomputePerTileAttr))
        for (Operation *user : tiled->getUsers())
          if (auto next = dyn_cast<tensor::ExtractSliceOp>(user))
            worklist.push_back(next);
    // Follow the tiled op's inputs; its destination may be a slice of the
    // producer's own result, which must not be fused again.
    for (Operation *generated : fused->generatedSlices)
      if (auto next = dyn_cast<tensor::ExtractSliceOp>(generated);
          next && next.getSource() != fused->origProducer &&
          isPrologue(next.getSource().getDefiningOp()))
        worklist.push_back(next);
  }
}

namespace {

struct TileAttentionPass final : impl::DatTileAttentionBase<TileAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    if (queryTile < 0 || keyTile < 1) {
      getOperation()->emitError("dat-tile-attention: query-tile must be "
                                "positive or 0 (per op), key-tile positive, "
                                "got ")
          << static_cast<int64_t>(queryTile) << " and "
          << static_cast<int64_t>(keyTile);
      return signalPassFailure();
    }
    SmallVector<TilingInterface> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<AttentionOp, RelationalAttentionOp, HyperAttentionOp>(op))
        ops.push_back(cast<TilingInterface>(op));
    });
    IRRewriter rewriter(&getContext());
    for (TilingInterface op : ops) {
      rewriter.setInsertionPoint(op);
      scf::SCFTilingOptions options;
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      int64_t rows =
          queryTile ? queryTile : autoQueryTile(op, minTiles, rewriter);
      options.setTileSizes(queryTileSizes(op, rows, rewriter));
      FailureOr<scf::SCFTilingResult> tiled =
          scf::tileUsingSCF(rewriter, op, options);
      if (failed(tiled))
        return signalPassFailure();
      // Which op the tile loop computes, for what reads it later (profiles).
      for (LoopLikeOpInterface loop : tiled->loops)
        loop->setAttr("dat.origin",
                      rewriter.getStringAttr(op->getName().getStringRef()));
      rewriter.replaceOp(op, tiled->replacements);
    }

    RewritePatternSet patterns(&getContext());
    populateFlashAttentionPatterns(patterns, keyTile);
    // A key block's slice of the query tile's slice is one slice of the
    // original tensor, whose producer can then be fused into the key loop.
    tensor::populateMergeConsecutiveInsertExtractSlicePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (fusePrologues)
      fuseAttentionPrologues(rewriter, getOperation());
  }
};

} // namespace
} // namespace mlir::dat
