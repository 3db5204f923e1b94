//===- TileAttention.cpp - the dat-tile-attention pass --------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Query tiles come from the ops' TilingInterface: an scf.forall over batch
// and query blocks, marked dat.origin, holding the op on slices. The key
// loop inside each tile is dat-decompose-flash's (DecomposeFlash.cpp).
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Pass/OptionChecks.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"

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
/// Relational attention's tile takes at most 8·16 / H rows (H heads, up to
/// 8): the GPU's warp-row program gives each head a warp per 16 rows, 8
/// warps at most. Shapes not known statically get 64.
int64_t autoQueryTile(TilingInterface op, int64_t minTiles, OpBuilder &b) {
  int64_t maxRows = 64;
  if (auto relational = dyn_cast<RelationalAttentionOp>(op.getOperation())) {
    int64_t heads = relational.getQueryType().getDimSize(1);
    if (!ShapedType::isDynamic(heads) && heads <= 8)
      maxRows = 16 * (8 / heads);
  }
  SmallVector<Range> domain = op.getIterationDomain(b);
  for (int64_t rows : {64, 32, 16}) {
    if (rows > maxRows)
      continue;
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

} // namespace

namespace {

struct TileAttentionPass final : impl::DatTileAttentionBase<TileAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(checkOptionRange(
            getOperation(), getArgument(), "query-tile", queryTile, 0,
            std::numeric_limits<int64_t>::max(), " (per op)")))
      return signalPassFailure();
    SmallVector<TilingInterface> ops;
    getOperation()->walk([&](Operation *op) {
      // (An op already in a tile loop is tiled: the pass is idempotent.)
      if (isa<AttentionOp, RelationalAttentionOp, HyperAttentionOp>(op) &&
          !isTileLoop(op->getParentOfType<scf::ForallOp>()))
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
      // The tile loop says which op it computes: the GPU mapping takes such
      // loops, profiles name them.
      for (LoopLikeOpInterface loop : tiled->loops)
        setTileOrigin(loop, op->getName().getStringRef());
      rewriter.replaceOp(op, tiled->replacements);
    }
  }
};

} // namespace
} // namespace mlir::dat
