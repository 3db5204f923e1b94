//===- PackOperands.cpp - operand layouts for the vector layer ------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//
//
// The layout side of the CPU's vector layer: a contraction's vector-side
// input transposed once where it is made (so that register tiles load
// contiguous vectors), and transposes of tile loops' results moved into the
// loops (so that they run per tile, in parallel).
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "LinalgBuilders.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::dat {

namespace {
/// Whether `value` is made outside every loop around `op`.
bool isDefinedOutsideLoops(Value value, Operation *op) {
  Operation *outermost = nullptr;
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (isa<LoopLikeOpInterface>(p))
      outermost = p;
  return outermost &&
         !outermost->isAncestor(value.getParentBlock()->getParentOp());
}

} // namespace

/// Lets `op` read the inputs that transposes inside its loop made (a head
/// split per key block) where they lie, through a permuted indexing map,
/// instead of copying them each iteration.
void foldTransposedInputs(RewriterBase &rewriter, linalg::GenericOp op) {
  if (!op->getParentOfType<LoopLikeOpInterface>())
    return;
  for (OpOperand *operand : op.getDpsInputOperands()) {
    auto transpose = operand->get().getDefiningOp<linalg::TransposeOp>();
    if (!transpose || transpose->getBlock() != op->getBlock())
      continue;
    // T[i] = X[j] with j[perm[k]] = i_k: reading T at M reads X at M'
    // with M'[perm[k]] = M[k].
    AffineMap map = op.getMatchingIndexingMap(operand);
    ArrayRef<int64_t> perm = transpose.getPermutation();
    SmallVector<AffineExpr> results(map.getNumResults());
    for (auto [k, p] : llvm::enumerate(perm))
      results[p] = map.getResult(k);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    maps[operand->getOperandNumber()] = AffineMap::get(
        map.getNumDims(), map.getNumSymbols(), results, op.getContext());
    Value input = transpose.getInput();
    rewriter.modifyOpInPlace(op, [&] {
      operand->set(input);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    if (transpose->use_empty())
      rewriter.eraseOp(transpose);
  }
}

/// Makes input `operand` of `op` hold the vector dimension innermost:
/// transposes it where it is made (composing with a transpose that made it),
/// so that the tile loops read packed rows.
LogicalResult packVectorOperand(RewriterBase &rewriter, linalg::GenericOp op,
                                unsigned operand, unsigned vectorDim) {
  AffineMap map = op.getIndexingMapsArray()[operand];
  unsigned rank = map.getNumResults();
  std::optional<unsigned> pos =
      map.getResultPosition(rewriter.getAffineDimExpr(vectorDim));
  if (!pos)
    return failure();
  if (*pos == rank - 1)
    return success();
  SmallVector<int64_t> perm;
  for (unsigned i = 0; i < rank; ++i)
    if (i != *pos)
      perm.push_back(i);
  perm.push_back(*pos);

  Value value = op.getDpsInputs()[operand];
  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  Value source = value;
  SmallVector<int64_t> sourcePerm = perm;
  if (auto producer = value.getDefiningOp<linalg::TransposeOp>()) {
    // transpose(transpose(x, p), q) = transpose(x, p∘q).
    sourcePerm = applyPermutation(producer.getPermutation(), perm);
    source = producer.getInput();
    rewriter.setInsertionPoint(producer);
  } else {
    rewriter.setInsertionPointAfterValue(value);
  }
  Value packed;
  if (auto slice = source.getDefiningOp<tensor::ExtractSliceOp>();
      slice && slice.getSourceType().hasStaticShape() &&
      slice.getSourceType().getRank() == rank &&
      isDefinedOutsideLoops(slice.getSource(), op)) {
    // A slice of a tensor made outside the tile loops (a key or value tile
    // of a head, a weight's rows): the whole tensor is packed once, and the
    // tile loops slice the packed one.
    Value whole = slice.getSource();
    rewriter.setInsertionPointAfterValue(whole);
    Value wholePacked = buildTranspose(rewriter, loc, whole, sourcePerm);
    rewriter.setInsertionPoint(op);
    packed = tensor::ExtractSliceOp::create(
        rewriter, loc, wholePacked,
        applyPermutation(slice.getMixedOffsets(), sourcePerm),
        applyPermutation(slice.getMixedSizes(), sourcePerm),
        applyPermutation(slice.getMixedStrides(), sourcePerm));
  } else {
    packed = buildTranspose(rewriter, loc, source, sourcePerm);
  }

  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps[operand] = AffineMap::get(map.getNumDims(), 0,
                                 applyPermutation(map.getResults(), perm),
                                 rewriter.getContext());
  rewriter.modifyOpInPlace(op, [&] {
    op->setOperand(operand, packed);
    op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
  // The unpacked tile (a transpose of a slice, or a slice), now dead: so
  // that the tensor it sliced has one use left.
  Operation *producer = value.getDefiningOp();
  if (producer && isa<linalg::TransposeOp>(producer) && value.use_empty()) {
    rewriter.eraseOp(producer);
    producer = source.getDefiningOp();
  }
  if (producer && isa<tensor::ExtractSliceOp>(producer) &&
      producer->use_empty())
    rewriter.eraseOp(producer);
  return success();
}

/// Moves a transpose of a tile loop's result (head merges, packed key
/// heads; through an expand_shape that splits only whole-tile dimensions)
/// into the loop: each tile is transposed where it is made, in parallel and
/// in cache, and inserted into the transposed result, instead of one
/// single-threaded transpose of the whole tensor after the loop.
LogicalResult sinkTransposeIntoForall(RewriterBase &rewriter,
                                      linalg::TransposeOp transpose) {
  Value input = transpose.getInput();
  auto expand = input.getDefiningOp<tensor::ExpandShapeOp>();
  if (expand) {
    if (!expand->hasOneUse())
      return failure();
    input = expand.getSrc();
  }
  auto forall = input.getDefiningOp<scf::ForallOp>();
  if (!forall || forall->getNumResults() != 1 || !input.hasOneUse() ||
      !forall.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
    return failure();
  auto resultType = cast<RankedTensorType>(transpose.getResult()[0].getType());
  if (!resultType.hasStaticShape())
    return failure();
  scf::InParallelOp terminator = forall.getTerminator();
  SmallVector<Operation *> yields;
  for (Operation &op : terminator.getYieldingOps())
    yields.push_back(&op);
  auto insert = yields.size() == 1
                    ? dyn_cast<tensor::ParallelInsertSliceOp>(yields[0])
                    : tensor::ParallelInsertSliceOp();
  BlockArgument out = forall.getRegionIterArgs()[0];
  if (!insert || insert.getDest() != out || !insert.hasUnitStride() ||
      insert.getSourceType().getRank() != insert.getDestType().getRank() ||
      !insert.getSourceType().hasStaticShape())
    return failure();
  // Every other use of the destination reads an undefined tile (the loop's
  // destination is empty): a slice for a tile op's outs.
  for (OpOperand &use : out.getUses())
    if (use.getOwner() != insert &&
        !isa<tensor::ExtractSliceOp>(use.getOwner()))
      return failure();

  // The insert's offsets and sizes after the expand_shape.
  SmallVector<OpFoldResult> offsets = insert.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = insert.getMixedSizes();
  RankedTensorType tileType = insert.getSourceType();
  SmallVector<ReassociationIndices> groups;
  if (expand) {
    groups = expand.getReassociationIndices();
    auto expandedType = expand.getResultType();
    SmallVector<OpFoldResult> newOffsets, newSizes;
    SmallVector<int64_t> tileShape;
    for (auto [src, group] : llvm::enumerate(groups)) {
      if (group.size() == 1) {
        newOffsets.push_back(offsets[src]);
        newSizes.push_back(sizes[src]);
        tileShape.push_back(tileType.getDimSize(src));
        continue;
      }
      std::optional<int64_t> offset = getConstantIntValue(offsets[src]);
      if (!offset || *offset != 0 ||
          tileType.getDimSize(src) != insert.getDestType().getDimSize(src))
        return failure();
      for (int64_t d : group) {
        newOffsets.push_back(rewriter.getIndexAttr(0));
        newSizes.push_back(rewriter.getIndexAttr(expandedType.getDimSize(d)));
        tileShape.push_back(expandedType.getDimSize(d));
      }
    }
    offsets = std::move(newOffsets);
    sizes = std::move(newSizes);
    tileType = RankedTensorType::get(tileShape, tileType.getElementType());
  }
  ArrayRef<int64_t> perm = transpose.getPermutation();

  // The loop now makes the transposed tensor.
  Location loc = forall.getLoc();
  rewriter.setInsertionPoint(forall);
  Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                       resultType.getElementType());
  for (OpOperand &use : llvm::make_early_inc_range(out.getUses())) {
    if (use.getOwner() == insert)
      continue;
    auto slice = cast<tensor::ExtractSliceOp>(use.getOwner());
    rewriter.setInsertionPoint(slice);
    rewriter.replaceOpWithNewOp<tensor::EmptyOp>(
        slice, slice.getResultType().getShape(),
        slice.getResultType().getElementType());
  }
  rewriter.modifyOpInPlace(forall, [&] {
    forall.getOutputsMutable()[0].assign(init);
    out.setType(resultType);
    forall->getResult(0).setType(resultType);
  });
  rewriter.setInsertionPoint(terminator);
  Value tile = insert.getSource();
  if (expand)
    tile = tensor::ExpandShapeOp::create(rewriter, loc, tileType, tile, groups);
  tile = buildTranspose(rewriter, loc, tile, perm);
  rewriter.setInsertionPoint(insert);
  SmallVector<OpFoldResult> strides(perm.size(), rewriter.getIndexAttr(1));
  rewriter.replaceOpWithNewOp<tensor::ParallelInsertSliceOp>(
      insert, tile, out, applyPermutation(offsets, perm),
      applyPermutation(sizes, perm), strides);
  rewriter.replaceOp(transpose, forall->getResult(0));
  if (expand)
    rewriter.eraseOp(expand);
  return success();
}

} // namespace mlir::dat
