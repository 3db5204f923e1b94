//===- PrefetchBlocks.cpp - the next block of a strided operand, in order -===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//
//
// Position-relative symbols are an [N, N, d] input read in place: for each
// query row, the register tiles of Σ_j p[h,i,j] · s[i,j,:] walk the keys of
// a block 1 KiB apart, reading a 128-byte strip of each (8 heads × 32
// features), eight times over the row's 64 KiB block. The first of those
// passes finds nothing in cache, and a strip 1 KiB from the last is not a
// stream the hardware prefetchers follow: 9.8 GB/s of the 33 GB/s this
// machine streams. Prefetching the next row's block line by line, in
// memory order, while this row is computed, lets the memory stream it (a C
// replica of the loop, bench/cpu/probes/strided_prefetch.c: 11 → 19 GB/s).
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::dat {

/// Bytes of the next block below which its lines are left to the caches.
static constexpr int64_t kMinBlockBytes = 16 * 1024;
/// The cache line the prefetches step by.
static constexpr int64_t kLineBytes = 64;

LogicalResult prefetchNextStridedBlock(
    RewriterBase &rewriter, linalg::GenericOp op, unsigned vectorOperand,
    int64_t vectorTile, ArrayRef<int64_t> tileSizes,
    ArrayRef<int64_t> interchange, ArrayRef<LoopLikeOpInterface> loops) {
  // In a key loop, the operand a slice of an input read in place (packed
  // operands are contiguous panels already).
  if (!op->getParentOfType<scf::ForOp>())
    return failure();
  Value operand = op.getDpsInputs()[vectorOperand];
  // Views of a function argument: slices and reshapes, whose innermost
  // dimension stays whole (rows contiguous).
  Value root = operand;
  while (Operation *def = root.getDefiningOp()) {
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
      if (!slice.hasUnitStride())
        return failure();
      root = slice.getSource();
    } else if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def)) {
      root = def->getOperand(0);
    } else {
      return failure();
    }
  }
  auto source = dyn_cast<BlockArgument>(root);
  if (!source || !isa<FunctionOpInterface>(source.getOwner()->getParentOp()))
    return failure();
  auto type = cast<RankedTensorType>(operand.getType());
  auto sourceType = cast<RankedTensorType>(source.getType());
  int64_t rank = type.getRank();
  if (!type.hasStaticShape() || !sourceType.hasStaticShape() ||
      !type.getElementType().isF32() ||
      type.getDimSize(rank - 1) !=
          sourceType.getDimSize(sourceType.getRank() - 1))
    return failure();

  // A dimension the loops step through one index at a time that both
  // inputs read (a batch: the query row), and the reduction's step in the
  // operand far apart (a strip of each row, not whole rows).
  AffineMap map =
      op.getMatchingIndexingMap(op.getDpsInputOperand(vectorOperand));
  AffineMap other =
      op.getMatchingIndexingMap(op.getDpsInputOperand(1 - vectorOperand));
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  std::optional<unsigned> dim, position;
  for (auto [p, e] : llvm::enumerate(map.getResults())) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return failure();
    unsigned loop = d.getPosition();
    if (iterators[loop] == utils::IteratorType::parallel &&
        tileSizes[loop] == 1 && extents[loop] > 1 &&
        other.isFunctionOfDim(loop) && !dim) {
      dim = loop;
      position = p;
    }
  }
  if (!dim)
    return failure();
  std::optional<unsigned> reduction;
  for (auto [p, e] : llvm::enumerate(map.getResults()))
    if (iterators[cast<AffineDimExpr>(e).getPosition()] ==
        utils::IteratorType::reduction)
      reduction = p;
  if (!reduction)
    return failure();
  // (The operand's inner sizes: a lower bound of the step in its source.)
  int64_t stride = 1;
  for (int64_t d = *reduction + 1; d < rank; ++d)
    stride *= type.getDimSize(d);
  int64_t blockBytes = 4;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *position)
      blockBytes *= type.getDimSize(d);
  if (stride < 4 * vectorTile || blockBytes < kMinBlockBytes)
    return failure();
  // The loop over `dim`: the loops are the tiled dimensions in order.
  SmallVector<int64_t> tiled;
  for (int64_t d : interchange)
    if (tileSizes[d] != 0)
      tiled.push_back(d);
  auto it = llvm::find(tiled, *dim);
  if (it == tiled.end() || size_t(it - tiled.begin()) >= loops.size())
    return failure();
  auto loop = dyn_cast<scf::ForOp>(*loops[it - tiled.begin()]);
  if (!loop)
    return failure();

  // At each step: every line of the next index's block, in memory order.
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(loop.getBody());
  Value next = affine::AffineMinOp::create(
      rewriter, loc,
      AffineMap::get(
          1, 0,
          {getAffineDimExpr(0, ctx) + 1,
           getAffineConstantExpr(type.getDimSize(*position) - 1, ctx)},
          ctx),
      ValueRange{loop.getInductionVar()});
  auto bufferType = MemRefType::get(
      type.getShape(), type.getElementType(),
      StridedLayoutAttr::get(ctx, ShapedType::kDynamic,
                             SmallVector<int64_t>(rank, ShapedType::kDynamic)));
  Value buffer = bufferization::ToBufferOp::create(rewriter, loc, bufferType,
                                                   operand, /*read_only=*/true);
  SmallVector<Value> indices(rank);
  indices[*position] = next;
  std::function<void(int64_t)> nest = [&](int64_t d) {
    if (d == rank) {
      memref::PrefetchOp::create(rewriter, loc, buffer, indices,
                                 /*isWrite=*/false, /*localityHint=*/2,
                                 /*isDataCache=*/true);
      return;
    }
    if (d == *position)
      return nest(d + 1);
    int64_t step = d == rank - 1 ? kLineBytes / 4 : 1;
    Value lb = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value ub =
        arith::ConstantIndexOp::create(rewriter, loc, type.getDimSize(d));
    Value st = arith::ConstantIndexOp::create(rewriter, loc, step);
    auto inner = scf::ForOp::create(rewriter, loc, lb, ub, st);
    OpBuilder::InsertionGuard innerGuard(rewriter);
    rewriter.setInsertionPointToStart(inner.getBody());
    indices[d] = inner.getInductionVar();
    nest(d + 1);
  };
  nest(0);
  return success();
}

} // namespace mlir::dat
