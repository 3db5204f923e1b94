//===- DecomposeFlash.cpp - the dat-decompose-flash pass ------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The attention-family ops (normally dat-tile-attention's query tiles) become
// key loops with an online softmax (the flash patterns, FlashAttention.cpp);
// then the producers worth recomputing per tile — RoPE rotations, the
// transposes after them, per-pair elementwise producers — are fused into
// the query tiles and key blocks that read them.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"
#include "dat/Pass/OptionChecks.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dat {

#define GEN_PASS_DEF_DATDECOMPOSEFLASH
#include "dat/Dialect/Dat/Transforms/Passes.h.inc"

namespace {

/// Producers worth recomputing per tile: per-position rotations (RoPE: a
/// few operations an element) and the layout change between them and
/// attention. A projection (a GEMM) is not: fused into key blocks it would be
/// recomputed for every query tile. Nor is a dense orthogonal map (APE's
/// tree maps, d multiply-adds an element): fused into the key blocks it is
/// recomputed in every query tile, N/rows times its work (d/rows times the
/// scores'), and a query tile made in the tile is not one the GPU's
/// warp-row program can stage. Computed once, its result is one more
/// [B, H, N, d] tensor.
bool isPrologue(Operation *op) {
  return isa_and_nonnull<RopeOp, linalg::TransposeOp>(op) ||
         (op && op->hasAttr(kRecomputePerTileAttr));
}

/// Whether `slice` takes a key block: it is in a key loop of a tile loop.
bool inKeyLoop(tensor::ExtractSliceOp slice) {
  auto loop = slice->getParentOfType<scf::ForOp>();
  return loop && loop->getParentOfType<scf::ForallOp>();
}

} // namespace

void fuseAttentionPrologues(RewriterBase &rewriter, Operation *root,
                            bool rotateKeysOnce) {
  SmallVector<tensor::ExtractSliceOp> worklist;
  root->walk([&](tensor::ExtractSliceOp slice) {
    if (slice->getParentOfType<scf::ForallOp>() &&
        isPrologue(slice.getSource().getDefiningOp()))
      worklist.push_back(slice);
  });
  while (!worklist.empty()) {
    tensor::ExtractSliceOp slice = worklist.pop_back_val();
    if (rotateKeysOnce &&
        isa_and_nonnull<RopeOp>(slice.getSource().getDefiningOp()) &&
        inKeyLoop(slice))
      continue; // the keys rotated once, before the tiles
    rewriter.setInsertionPoint(slice);
    std::optional<scf::SCFFuseProducerOfSliceResult> fused =
        scf::tileAndFuseProducerOfSlice(rewriter, slice, {});
    if (!fused)
      continue; // e.g. a tile that splits RoPE pairs: leave it unfused
    // The tiled op writes a fresh tile: a destination sliced from the
    // producer's whole result would keep that result (and everything before
    // it) alive. Neither transposes nor rotations read their init. A
    // reduction does (APE's tree path lengths, a sum over depths): its tile
    // starts from the tile of the producer's own init (a fill, fused in
    // turn), not from the producer's result, which would add the whole
    // result, computed, into it.
    for (Operation *tiled : fused->tiledOps) {
      auto dps = dyn_cast<DestinationStyleOpInterface>(tiled);
      auto linalgOp = dyn_cast<linalg::LinalgOp>(tiled);
      if (!dps)
        continue;
      for (OpOperand &init : dps.getDpsInitsMutable()) {
        if (linalgOp && linalgOp.payloadUsesValueFromOperand(&init)) {
          OpResult result = fused->origProducer;
          auto producer =
              dyn_cast<DestinationStyleOpInterface>(result.getOwner());
          auto tile = init.get().getDefiningOp<tensor::ExtractSliceOp>();
          if (!producer || !tile || tile.getSource() != result)
            continue;
          rewriter.setInsertionPoint(tiled);
          auto start = tensor::ExtractSliceOp::create(
              rewriter, tile.getLoc(),
              producer.getDpsInitOperand(result.getResultNumber())->get(),
              tile.getMixedOffsets(), tile.getMixedSizes(),
              tile.getMixedStrides());
          rewriter.modifyOpInPlace(tiled, [&] { init.set(start); });
          if (isPrologue(start.getSource().getDefiningOp()))
            worklist.push_back(start);
          continue;
        }
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

struct DecomposeFlashPass final
    : impl::DatDecomposeFlashBase<DecomposeFlashPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(checkOptionRange(getOperation(), getArgument(), "key-tile",
                                keyTile, 1)) ||
        failed(checkOptionRange(getOperation(), getArgument(), "block-bytes",
                                blockBytes, 0)))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateFlashAttentionPatterns(patterns, keyTile, blockBytes,
                                   wholeKeyBlocks, narrowValueNetwork,
                                   relativeSymbolsAsProduct);
    // A key block's slice of the query tile's slice is one slice of the
    // original tensor, whose producer can then be fused into the key loop.
    tensor::populateMergeConsecutiveInsertExtractSlicePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (fusePrologues) {
      IRRewriter rewriter(&getContext());
      fuseAttentionPrologues(rewriter, getOperation(), rotateKeysOnce);
    }
  }
};

} // namespace
} // namespace mlir::dat
