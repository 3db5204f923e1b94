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
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
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
  if (isa<AttentionOp>(op)) // (b, h, i, e)
    return {one, zero, rows, zero};
  return {one, rows}; // (b, i)
}

struct TileAttentionPass final : impl::DatTileAttentionBase<TileAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    if (queryTile < 1 || keyTile < 1) {
      getOperation()->emitError("dat-tile-attention: query-tile and key-tile "
                                "must be positive, got ")
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
      options.setTileSizes(queryTileSizes(op, queryTile, rewriter));
      FailureOr<scf::SCFTilingResult> tiled =
          scf::tileUsingSCF(rewriter, op, options);
      if (failed(tiled))
        return signalPassFailure();
      rewriter.replaceOp(op, tiled->replacements);
    }

    RewritePatternSet patterns(&getContext());
    populateFlashAttentionPatterns(patterns, keyTile);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::dat
