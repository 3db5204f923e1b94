//===- ParallelizeGlue.cpp - the ops between the tile loops, on threads ---===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//
//
// The tile loops (projections, attention) run on every thread; what lies
// between them — layer norms, residual adds, the glue of a whole model —
// ran on one, the others waiting at the next loop (37% of the small Vision
// DAT's time at batch 16 on two threads, `prog --profile`). Each such op
// large enough becomes a tile loop over its outermost parallel dimensions.
// "Large enough" is measured: from 64K iterations the small DAT LM (4 ×
// 256 tokens) and the Vision DAT at batch 40 ran 1.06× faster; from 16K
// the Vision DAT at batch 16 and the ViT ran 0.94-0.96× (ops of a few
// microseconds, about what a parallel region costs).
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace mlir::dat {

LogicalResult tileOuterIndices(RewriterBase &rewriter, TilingInterface op,
                               ArrayRef<int64_t> extents, size_t outerLoops,
                               int64_t minTiles, StringRef origin) {
  SmallVector<int64_t> sizes(extents.size(), 0);
  int64_t tiles = 1;
  for (size_t d = 0; d < std::min(outerLoops, extents.size()); ++d) {
    if (tiles >= minTiles)
      break;
    if (extents[d] == 1)
      continue;
    sizes[d] = 1;
    tiles *= extents[d];
  }
  if (tiles < minTiles)
    return failure();
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, op, options);
  if (failed(tiled) || tiled->loops.empty())
    return failure();
  // (Named in `prog --profile`.)
  setTileOrigin(tiled->loops.front(), origin);
  rewriter.replaceOp(op, tiled->replacements);
  return success();
}

LogicalResult parallelizeGlue(RewriterBase &rewriter, linalg::GenericOp op,
                              int64_t minIterations, int64_t minTiles) {
  if (op->getParentOfType<LoopLikeOpInterface>() ||
      !op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      op.hasIndexSemantics())
    return failure();
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(extents))
    return failure();
  int64_t iterations = 1;
  for (int64_t e : extents)
    iterations *= e;
  if (iterations < minIterations)
    return failure();
  // The outermost parallel loops, up to the first reduction (a row's
  // reduction stays whole, in its order).
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  size_t outer =
      llvm::find_if(iterators, linalg::isReductionIterator) - iterators.begin();
  return tileOuterIndices(rewriter, cast<TilingInterface>(op.getOperation()),
                          extents, outer, minTiles, "glue");
}

} // namespace mlir::dat
