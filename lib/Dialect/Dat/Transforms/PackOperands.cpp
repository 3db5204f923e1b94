//===- PackOperands.cpp - operand layouts for the vector layer ------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//
//
// The layout side of the CPU's vector layer: a contraction's vector-side
// input transposed once where it is made (so that register tiles load
// contiguous vectors), blocked by register panels where it is a weight or a
// key tensor sliced block by block. (Where those transposes then run:
// TileTransposes.cpp.)
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
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

/// A transpose of `value` by `perm` made before `user` (by an earlier
/// packing: each loop of a split tile loop, each key loop of a peeled one,
/// reads the same packed tensor), or null.
Value findTranspose(Value value, ArrayRef<int64_t> perm, Operation *user) {
  DominanceInfo dominance;
  for (Operation *u : value.getUsers())
    if (auto t = dyn_cast<linalg::TransposeOp>(u);
        t && t.getInput() == value && t.getPermutation() == perm &&
        dominance.properlyDominates(t.getOperation(), user))
      return t->getResult(0);
  return {};
}

/// `source` packed in blocks along its dimension `split` (`panel` wide):
/// reshaped to [..., extent / panel, panel, ...] and transposed so that
/// result dimension i (but the last two) is source dimension
/// `sourcePerm[i]`, the block index goes before result position
/// `blockPos` and the lane in the block last. Reuses such a packing made
/// earlier (for another reader of `source`, dominating `user`).
Value buildBlockedPacking(RewriterBase &rewriter, Location loc, Value source,
                          ArrayRef<int64_t> sourcePerm, unsigned blockPos,
                          int64_t panel, Operation *user) {
  auto type = cast<RankedTensorType>(source.getType());
  int64_t split = sourcePerm.back();
  SmallVector<int64_t> expandedShape;
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t at = expandedShape.size();
    if (d == split) {
      groups.push_back({at, at + 1});
      expandedShape.push_back(type.getDimSize(d) / panel);
      expandedShape.push_back(panel);
      continue;
    }
    groups.push_back({at});
    expandedShape.push_back(type.getDimSize(d));
  }
  SmallVector<int64_t> perm;
  for (unsigned i = 0; i + 1 < sourcePerm.size(); ++i) {
    if (i == blockPos)
      perm.push_back(split);
    perm.push_back(sourcePerm[i] < split ? sourcePerm[i] : sourcePerm[i] + 1);
  }
  perm.push_back(split + 1);
  auto expandedType =
      RankedTensorType::get(expandedShape, type.getElementType());
  for (Operation *u : source.getUsers())
    if (auto e = dyn_cast<tensor::ExpandShapeOp>(u);
        e && e.getResultType() == expandedType)
      if (Value t = findTranspose(e.getResult(), perm, user))
        return t;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfterValue(source);
  Value expanded = tensor::ExpandShapeOp::create(rewriter, loc, expandedType,
                                                 source, groups);
  return buildTranspose(rewriter, loc, expanded, perm);
}

/// The position, among `map`'s results but the last (the vector
/// dimension), of the first one that is a reduction loop of `op`: where a
/// blocked packing puts its block index. None where there is none or a
/// result is not a loop dimension.
std::optional<unsigned> firstReductionPosition(linalg::GenericOp op,
                                               AffineMap map) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned i = 0; i + 1 < map.getNumResults(); ++i) {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(i));
    if (!dim)
      return std::nullopt;
    if (iterators[dim.getPosition()] == utils::IteratorType::reduction)
      return i;
  }
  return std::nullopt;
}

/// Whether `offset` steps through blocks of `n`: the induction variable of
/// an `scf.for` whose lower bound and step are multiples of `n`. (Not a
/// constant: the one block of a peeled loop's rest, 40 of 1000 keys, would
/// get a blocked copy of its own beside the main loop's packing.)
bool isLoopOverBlocks(OpFoldResult offset, int64_t n) {
  auto iv = dyn_cast_if_present<BlockArgument>(dyn_cast<Value>(offset));
  auto loop =
      iv ? dyn_cast<scf::ForOp>(iv.getOwner()->getParentOp()) : scf::ForOp();
  if (!loop || loop.getInductionVar() != iv)
    return false;
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  return lb && step && *lb % n == 0 && *step % n == 0;
}

/// Where the tile loops slice a tensor made outside them in blocks of n
/// along the vector dimension (a key block of a key loop): that tensor
/// packed blocked instead — [..., N/n, <reduction dims> ..., n], each
/// block's panel contiguous (the rows of a packed key block were N apart)
/// — and the slice of one block, rank-reduced to the unblocked slice's
/// type, so that `op` reads it as before. Null where the slices do not
/// have that form (a partial last block: those keep the unblocked
/// packing).
Value sliceBlockedPacking(RewriterBase &rewriter, linalg::GenericOp op,
                          tensor::ExtractSliceOp slice,
                          ArrayRef<int64_t> sourcePerm, AffineMap packedMap) {
  unsigned rank = sourcePerm.size();
  SmallVector<OpFoldResult> offsets =
      applyPermutation(slice.getMixedOffsets(), sourcePerm);
  SmallVector<OpFoldResult> sizes =
      applyPermutation(slice.getMixedSizes(), sourcePerm);
  std::optional<int64_t> n = getConstantIntValue(sizes.back());
  Value whole = slice.getSource();
  auto wholeType = cast<RankedTensorType>(whole.getType());
  int64_t split = sourcePerm.back();
  int64_t extent = wholeType.getDimSize(split);
  if (!n || *n < 16 || extent <= *n || extent % *n != 0 ||
      !llvm::all_of(
          sizes, [](OpFoldResult v) { return getConstantIntValue(v); }) ||
      !slice.hasUnitStride() || !isLoopOverBlocks(offsets.back(), *n) ||
      !op->getParentOfType<LoopLikeOpInterface>())
    return {};
  // The block index before the first reduction dimension.
  std::optional<unsigned> firstReduction =
      firstReductionPosition(op, packedMap);
  if (!firstReduction)
    return {};

  OpBuilder::InsertionGuard guard(rewriter);
  Location loc = op.getLoc();
  Value blocked = buildBlockedPacking(rewriter, loc, whole, sourcePerm,
                                      *firstReduction, *n, op);

  // The block's slice: offsets and sizes in the blocked order.
  rewriter.setInsertionPoint(op);
  SmallVector<OpFoldResult> blockOffsets, blockSizes;
  for (unsigned i = 0; i + 1 < rank; ++i) {
    if (i == *firstReduction) {
      AffineExpr d0 = rewriter.getAffineDimExpr(0);
      blockOffsets.push_back(affine::makeComposedFoldedAffineApply(
          rewriter, loc, d0.floorDiv(*n), {offsets.back()}));
      blockSizes.push_back(rewriter.getIndexAttr(1));
    }
    blockOffsets.push_back(offsets[i]);
    blockSizes.push_back(sizes[i]);
  }
  blockOffsets.push_back(rewriter.getIndexAttr(0));
  blockSizes.push_back(sizes.back());
  SmallVector<OpFoldResult> strides(rank + 1, rewriter.getIndexAttr(1));
  SmallVector<int64_t> resultShape;
  for (OpFoldResult size : sizes)
    resultShape.push_back(*getConstantIntValue(size));
  auto resultType =
      RankedTensorType::get(resultShape, wholeType.getElementType());
  return tensor::ExtractSliceOp::create(rewriter, loc, resultType, blocked,
                                        blockOffsets, blockSizes, strides);
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
                                unsigned operand, unsigned vectorDim,
                                bool packBlocks) {
  AffineMap map = op.getIndexingMapsArray()[operand];
  unsigned rank = map.getNumResults();
  std::optional<unsigned> pos =
      map.getResultPosition(rewriter.getAffineDimExpr(vectorDim));
  if (!pos)
    return failure();
  Value value = op.getDpsInputs()[operand];
  SmallVector<int64_t> perm;
  if (*pos == rank - 1) {
    // Already innermost. A slice of a tensor made outside the tile loops
    // (a value tile of [b, n, h, d], read in place) whose reduction is not
    // next to it — its register panel's rows far apart — is packed whole
    // all the same, to [other dims, reduction dims, vector dim] ([b, h, n,
    // d]: a key block's rows contiguous); the packing then moves into the
    // loop that makes the tensor.
    auto slice = value.getDefiningOp<tensor::ExtractSliceOp>();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<int64_t> others, reductions;
    for (unsigned i = 0; i + 1 < rank; ++i) {
      auto dim = dyn_cast<AffineDimExpr>(map.getResult(i));
      if (!dim)
        return success();
      (iterators[dim.getPosition()] == utils::IteratorType::reduction
           ? reductions
           : others)
          .push_back(i);
    }
    if (!packBlocks || !slice || reductions.empty() ||
        reductions.back() == rank - 2 ||
        !op->getParentOfType<LoopLikeOpInterface>() ||
        !slice.getSourceType().hasStaticShape() ||
        slice.getSourceType().getRank() != rank ||
        !isDefinedOutsideLoops(slice.getSource(), op))
      return success();
    perm = others;
    perm.append(reductions);
    perm.push_back(rank - 1);
  } else {
    for (unsigned i = 0; i < rank; ++i)
      if (i != *pos)
        perm.push_back(i);
    perm.push_back(*pos);
  }

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
    AffineMap packedMap = AffineMap::get(
        map.getNumDims(), 0, applyPermutation(map.getResults(), perm),
        rewriter.getContext());
    if (packBlocks)
      packed = sliceBlockedPacking(rewriter, op, slice, sourcePerm, packedMap);
    Value wholePacked = packed ? Value() : findTranspose(whole, sourcePerm, op);
    if (!packed && !wholePacked) {
      rewriter.setInsertionPointAfterValue(whole);
      wholePacked = buildTranspose(rewriter, loc, whole, sourcePerm);
    }
    rewriter.setInsertionPoint(op);
    if (!packed)
      packed = tensor::ExtractSliceOp::create(
          rewriter, loc, wholePacked,
          applyPermutation(slice.getMixedOffsets(), sourcePerm),
          applyPermutation(slice.getMixedSizes(), sourcePerm),
          applyPermutation(slice.getMixedStrides(), sourcePerm));
  } else {
    packed = findTranspose(source, sourcePerm, op);
    if (!packed)
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

FailureOr<linalg::GenericOp>
blockVectorOperand(RewriterBase &rewriter, linalg::GenericOp op,
                   unsigned operand, unsigned vectorDim, int64_t panel) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap map = maps[operand];
  unsigned rank = map.getNumResults();
  Value unblocked = op.getDpsInputs()[operand];
  Value value = unblocked;
  auto type = dyn_cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (!type || !type.hasStaticShape() || rank < 2 ||
      map.getResult(rank - 1) != rewriter.getAffineDimExpr(vectorDim) ||
      extents[vectorDim] <= panel || extents[vectorDim] % panel != 0 ||
      op.getNumDpsInits() != 1)
    return failure();
  // Only a weight (a function's argument, possibly transposed), packed
  // whole: read unsliced by every tile (the parts of a split contraction
  // read it through a slice of all of it).
  if (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>();
      slice && slice.getSourceType() == slice.getResultType() &&
      llvm::all_of(slice.getMixedOffsets(),
                   [](OpFoldResult o) { return isZeroInteger(o); }))
    value = slice.getSource();
  Value source = value;
  SmallVector<int64_t> sourcePerm = llvm::to_vector(llvm::seq<int64_t>(rank));
  if (auto producer = value.getDefiningOp<linalg::TransposeOp>()) {
    source = producer.getInput();
    sourcePerm = llvm::to_vector(producer.getPermutation());
  }
  auto arg = dyn_cast<BlockArgument>(source);
  if (!arg || !isa<FunctionOpInterface>(arg.getOwner()->getParentOp()) ||
      (op->getParentOfType<LoopLikeOpInterface>() &&
       !isDefinedOutsideLoops(value, op)))
    return failure();
  // The panel index goes before the operand's first reduction dimension.
  std::optional<unsigned> firstReduction = firstReductionPosition(op, map);
  if (!firstReduction)
    return failure();
  AffineMap outMap = maps.back();
  std::optional<unsigned> outPos =
      outMap.getResultPosition(rewriter.getAffineDimExpr(vectorDim));
  if (!outPos || !outMap.isProjectedPermutation())
    return failure();

  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  // (Once per weight: the parts of a split contraction share it.)
  Value blocked = buildBlockedPacking(rewriter, loc, source, sourcePerm,
                                      *firstReduction, panel, op);

  // The contraction with one more loop (the lane in the panel, last) and
  // the vector dimension now counting panels.
  MLIRContext *ctx = rewriter.getContext();
  unsigned numLoops = op.getNumLoops();
  AffineExpr lane = getAffineDimExpr(numLoops, ctx);
  AffineExpr vec = getAffineDimExpr(vectorDim, ctx);
  SmallVector<AffineMap> newMaps;
  for (auto [i, m] : llvm::enumerate(maps)) {
    SmallVector<AffineExpr> results;
    for (auto [j, e] : llvm::enumerate(m.getResults())) {
      if (i == operand && j == *firstReduction)
        results.push_back(vec);
      if (i == operand && j + 1 == rank)
        continue;
      results.push_back(e);
      if (i + 1 == maps.size() && e == vec)
        results.push_back(lane);
    }
    if (i == operand)
      results.push_back(lane);
    newMaps.push_back(AffineMap::get(numLoops + 1, 0, results, ctx));
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.push_back(utils::IteratorType::parallel);

  // The output split the same way (a fill moves after the split, so that
  // the register tiles still start from it).
  rewriter.setInsertionPoint(op);
  Value init = op.getDpsInits()[0];
  auto initType = cast<RankedTensorType>(init.getType());
  SmallVector<int64_t> outShape;
  SmallVector<ReassociationIndices> outGroups;
  for (int64_t d = 0; d < initType.getRank(); ++d) {
    if (d == *outPos) {
      outGroups.push_back(
          {(int64_t)outShape.size(), (int64_t)outShape.size() + 1});
      outShape.push_back(initType.getDimSize(d) / panel);
      outShape.push_back(panel);
      continue;
    }
    outGroups.push_back({(int64_t)outShape.size()});
    outShape.push_back(initType.getDimSize(d));
  }
  auto outType = RankedTensorType::get(outShape, initType.getElementType());
  Value newInit;
  if (auto fill = init.getDefiningOp<linalg::FillOp>();
      fill && fill->hasOneUse()) {
    Value dest = tensor::ExpandShapeOp::create(rewriter, loc, outType,
                                               fill.getOutputs()[0], outGroups);
    newInit = linalg::FillOp::create(rewriter, fill.getLoc(),
                                     fill.getInputs()[0], dest)
                  .getResult(0);
  } else {
    newInit =
        tensor::ExpandShapeOp::create(rewriter, loc, outType, init, outGroups);
  }
  SmallVector<Value> inputs(op.getDpsInputs());
  inputs[operand] = blocked;
  auto blockedOp = linalg::GenericOp::create(
      rewriter, loc, outType, inputs, ValueRange{newInit}, newMaps, iterators);
  rewriter.inlineRegionBefore(op.getRegion(), blockedOp.getRegion(),
                              blockedOp.getRegion().begin());
  blockedOp->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  Value collapsed = tensor::CollapseShapeOp::create(
      rewriter, loc, initType, blockedOp.getResult(0), outGroups);
  Operation *oldFill = init.getDefiningOp<linalg::FillOp>();
  rewriter.replaceOp(op, collapsed);
  if (oldFill && oldFill->use_empty())
    rewriter.eraseOp(oldFill);
  // The unblocked operand, now dead (a slice of all of it, a transpose).
  if (Operation *slice = unblocked.getDefiningOp();
      slice && unblocked != value && slice->use_empty())
    rewriter.eraseOp(slice);
  if (Operation *t = value.getDefiningOp(); t && t->use_empty())
    rewriter.eraseOp(t);
  return blockedOp;
}

} // namespace mlir::dat
