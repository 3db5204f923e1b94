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
#include "dat/Dialect/Dat/Transforms/Patterns.h"
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

/// `op`'s query rows (their extent) and the tiles of each block of rows
/// (batch, head groups) in tiles of `rows` (queryTileSizes) over its
/// iteration domain `domain`; nullopt where that is not static.
struct TileCounts {
  int64_t extent, others;
};
std::optional<TileCounts> tileCounts(TilingInterface op, ArrayRef<Range> domain,
                                     int64_t rows, OpBuilder &b) {
  // The rows' position in the domain: (b, h, i, e) for attention, (b, i)
  // for the ops whose tiles keep every head.
  unsigned rowDim = isa<AttentionOp>(op.getOperation()) ? 2 : 1;
  TileCounts counts{0, 1};
  SmallVector<OpFoldResult> sizes = queryTileSizes(op, rows, b);
  for (auto [d, range, size] : llvm::enumerate(domain, sizes)) {
    std::optional<int64_t> extent = getConstantIntValue(range.size);
    std::optional<int64_t> tile = getConstantIntValue(size);
    if (!extent || !tile)
      return std::nullopt;
    if (d == rowDim)
      counts.extent = *extent;
    else if (*tile > 0)
      counts.others *= llvm::divideCeil(*extent, *tile);
  }
  return counts;
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
    std::optional<TileCounts> counts = tileCounts(op, domain, rows, b);
    if (!counts)
      return 64;
    if (counts->others * llvm::divideCeil(counts->extent, rows) >= minTiles)
      return rows;
  }
  return 16;
}

/// Rows of the longest thread's share of a tile loop over `extent` query
/// rows in tiles of `rows`, `others` tiles per row block (batch, head
/// groups), on `threads` threads with a static schedule, as
/// dat-peel-tile-loops leaves it: the full tiles in rounds, then the
/// partial ones — or, where a partial tile would run alone after full tiles
/// the threads do not share evenly, one more full tile overlapping the one
/// before it.
int64_t longestShare(int64_t extent, int64_t rows, int64_t others,
                     int64_t threads) {
  int64_t full = extent / rows, rest = extent % rows;
  if (rest == 0)
    return llvm::divideCeil(others * full, threads) * rows;
  if (overlapsLastTile(full, others, threads))
    return llvm::divideCeil(full + 1, threads) * rows;
  return llvm::divideCeil(others * full, threads) * rows +
         llvm::divideCeil(others, threads) * rest;
}

/// A smaller tile's longest share must beat a larger one's by more than
/// this fraction: each tile streams every key block, whatever its rows.
constexpr double kBalanceGain = 0.05;
/// Query elements of a tile (32 KiB in f32) below which it is not split
/// further: small tiles of a narrow model (d_model 64) are dominated by that
/// per-tile cost (the small DAT LM took 1.25× longer in 32-row tiles).
constexpr int64_t kMinQueryTileElements = 8 * 1024;

/// The CPU's query tile for `op` when none is given: of 64, 32 and 16 rows,
/// the largest whose longest thread share (`longestShare`) is within
/// kBalanceGain of the smallest, among the tiles of at least
/// kMinQueryTileElements queries' elements (64 rows always qualify). 1000
/// queries are 16 tiles of 64 either way; 700 at batch 1 are 10 full tiles and
/// 60 rows alone on 2 threads (380 rows on the longest thread), or 22 tiles of
/// 32 (352). Shapes not known statically get 64.
int64_t balancedQueryTile(TilingInterface op, int64_t threads, OpBuilder &b) {
  auto queryType = cast<RankedTensorType>(op->getOperand(0).getType());
  if (!queryType.hasStaticShape())
    return 64;
  SmallVector<Range> domain = op.getIterationDomain(b);
  int64_t best = 0;
  SmallVector<std::pair<int64_t, int64_t>> shares;
  for (int64_t rows : {64, 32, 16}) {
    std::optional<TileCounts> counts = tileCounts(op, domain, rows, b);
    if (!counts)
      return 64;
    // The query elements of one row of a tile (every head it holds).
    int64_t rowElements = queryType.getNumElements() /
                          std::max<int64_t>(1, counts->others * counts->extent);
    if (rows < 64 && rows * rowElements < kMinQueryTileElements)
      continue;
    int64_t share = longestShare(counts->extent, rows, counts->others, threads);
    shares.push_back({rows, share});
    best = best ? std::min(best, share) : share;
  }
  for (auto [rows, share] : shares)
    if (share <= best * (1 + kBalanceGain))
      return rows;
  return 64;
}

/// The smallest key block a relational attention tile is fitted with
/// (dat-decompose-flash halves its key blocks down to 16).
constexpr int64_t kMinFittedKeys = 16;

/// `rows` halved (down to 1) until a bf16 relational attention tile of that
/// many rows and a block of kMinFittedKeys keys fits in `blockBytes`
/// (relationalTileBytes; the table of position-relative symbols counted as
/// gathered, not as the product with its window; symbols per pair left out,
/// which the tile reads in place where they do not fit). Other ops, and ops
/// whose shapes are not static, keep `rows`.
int64_t fittedQueryTile(TilingInterface op, int64_t rows, int64_t blockBytes) {
  auto relational = dyn_cast<RelationalAttentionOp>(op.getOperation());
  if (!relational || !blockBytes)
    return rows;
  while (rows > 1) {
    std::optional<RelationalTileBytes> bytes =
        relationalTileBytes(relational, rows,
                            /*relativeSymbolsAsProduct=*/false);
    if (!bytes)
      break;
    int64_t perKey =
        bytes->perKey +
        (relational.getSymbolsPerPair() ? 0 : bytes->perKeySymbols);
    if (bytes->fixed + kMinFittedKeys * perKey <= blockBytes)
      break;
    rows /= 2;
  }
  return rows;
}

} // namespace

namespace {

struct TileAttentionPass final : impl::DatTileAttentionBase<TileAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(checkOptionRange(
            getOperation(), getArgument(), "query-tile", queryTile, 0,
            std::numeric_limits<int64_t>::max(), " (per op)")) ||
        failed(checkOptionRange(getOperation(), getArgument(),
                                "balance-threads", balanceThreads, 0)) ||
        failed(checkOptionRange(getOperation(), getArgument(), "block-bytes",
                                blockBytes, 0)))
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
          queryTile ? queryTile
                    : fittedQueryTile(
                          op,
                          balanceThreads
                              ? balancedQueryTile(op, balanceThreads, rewriter)
                              : autoQueryTile(op, minTiles, rewriter),
                          blockBytes);
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
