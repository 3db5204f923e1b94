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
// memory order, a few lines at each step of this row's register tiles,
// lets the memory stream it (a C replica of the loop,
// bench/cpu/probes/strided_prefetch.c, AMD host, 2 threads: 17 GB/s
// without, 15 with the whole block prefetched at the row's start, 26 spread
// over its steps).
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
  // The loop over `dim`, and the loops inside it: the loops are the tiled
  // dimensions in order.
  SmallVector<int64_t> tiled;
  for (int64_t d : interchange)
    if (tileSizes[d] != 0)
      tiled.push_back(d);
  auto it = llvm::find(tiled, *dim);
  if (it == tiled.end() || size_t(it - tiled.begin()) >= loops.size())
    return failure();
  auto rowLoop = dyn_cast<scf::ForOp>(*loops[it - tiled.begin()]);
  SmallVector<scf::ForOp> inner;
  for (LoopLikeOpInterface l : loops.drop_front(it - tiled.begin() + 1))
    inner.push_back(dyn_cast<scf::ForOp>(*l));
  if (!rowLoop || inner.empty() || llvm::is_contained(inner, nullptr))
    return failure();
  // Static trip counts: the steps inside a row are numbered t = 0 .. T-1.
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr step = getAffineConstantExpr(0, ctx);
  int64_t steps = 1;
  for (auto [k, loop] : llvm::enumerate(inner)) {
    std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()),
                           ub = getConstantIntValue(loop.getUpperBound()),
                           st = getConstantIntValue(loop.getStep());
    if (!lb || !ub || !st || *st <= 0 || *ub <= *lb)
      return failure();
    int64_t trips = llvm::divideCeil(*ub - *lb, *st);
    step = step * trips + (getAffineDimExpr(k, ctx) - *lb).floorDiv(*st);
    steps *= trips;
  }

  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(rowLoop.getBody());
  Value next = affine::AffineMinOp::create(
      rewriter, loc,
      AffineMap::get(
          1, 0,
          {getAffineDimExpr(0, ctx) + 1,
           getAffineConstantExpr(type.getDimSize(*position) - 1, ctx)},
          ctx),
      ValueRange{rowLoop.getInductionVar()});
  auto bufferType = MemRefType::get(
      type.getShape(), type.getElementType(),
      StridedLayoutAttr::get(ctx, ShapedType::kDynamic,
                             SmallVector<int64_t>(rank, ShapedType::kDynamic)));
  Value buffer = bufferization::ToBufferOp::create(rewriter, loc, bufferType,
                                                   operand, /*read_only=*/true);

  // At step t, lines [t·k, t·k + k) of the next index's block, in memory
  // order, k = ⌈lines / T⌉: spread over the row's steps. (All at the start
  // of the row, 1024 prefetches, measured slower than none on an AMD host:
  // bench/cpu/probes/strided_prefetch.c.)
  int64_t lines = blockBytes / kLineBytes,
          perStep = llvm::divideCeil(lines, steps);
  SmallVector<Value> ivs;
  for (scf::ForOp loop : inner)
    ivs.push_back(loop.getInductionVar());
  rewriter.setInsertionPointToStart(inner.back().getBody());
  for (int64_t c = 0; c < perStep; ++c) {
    // The line, clamped to the block where the steps take more lines than
    // it has (the last steps then prefetch its last line again).
    AffineExpr lineExpr = step * perStep + c;
    Value line =
        steps * perStep == lines
            ? affine::AffineApplyOp::create(
                  rewriter, loc, AffineMap::get(inner.size(), 0, lineExpr, ctx),
                  ivs)
                  .getResult()
            : affine::AffineMinOp::create(
                  rewriter, loc,
                  AffineMap::get(
                      inner.size(), 0,
                      {lineExpr, getAffineConstantExpr(lines - 1, ctx)}, ctx),
                  ivs)
                  .getResult();
    // Its first element's indices in the block (every dimension but `dim`'s,
    // row-major).
    SmallVector<Value> indices(rank);
    indices[*position] = next;
    int64_t inside = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (d == *position)
        continue;
      AffineExpr element = getAffineDimExpr(0, ctx) * (kLineBytes / 4);
      AffineExpr index = element.floorDiv(inside) % type.getDimSize(d);
      indices[d] = affine::AffineApplyOp::create(
          rewriter, loc, AffineMap::get(1, 0, index, ctx), ValueRange{line});
      inside *= type.getDimSize(d);
    }
    memref::PrefetchOp::create(rewriter, loc, buffer, indices,
                               /*isWrite=*/false, /*localityHint=*/2,
                               /*isDataCache=*/true);
  }
  return success();
}

} // namespace mlir::dat
