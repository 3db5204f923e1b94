//===- RegisterTiles.cpp - the dat-register-tiles pass --------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//
//
// The CPU's vector layer for contractions (QKᵀ, PV and the other products of
// the attention tiles, the projections): every static f32 contraction is
// tiled to a register tile of R rows × 2 vectors, vectorized, and its
// `vector.contract` lowered to FMA outer products, so the accumulators stay
// in registers over the reduction loop. The operand read along the vector
// dimension is packed (transposed once, where it is made) when that
// dimension is not its innermost one.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::dat {
#define GEN_PASS_DEF_DATREGISTERTILES
#include "dat/Dialect/Dat/Transforms/Passes.h.inc"

namespace {

/// How one contraction is register-tiled.
struct RegisterTile {
  /// Per loop: the tile size (0: not tiled).
  SmallVector<int64_t> sizes;
  /// The loops' order: parallel dimensions outside, the reduction inside.
  SmallVector<int64_t> interchange;
  /// The input read along the vector dimension, and that dimension.
  unsigned vectorOperand;
  unsigned vectorDim;
};

/// The largest divisor of `extent` not above `limit`.
int64_t largestDivisor(int64_t extent, int64_t limit) {
  for (int64_t d = std::min(extent, limit); d > 1; --d)
    if (extent % d == 0)
      return d;
  return 1;
}

/// The register tile of `op`, or failure where the vector layer does not
/// apply (not a static f32 contraction, or a vector dimension that is too
/// short or not a multiple of the vector width).
FailureOr<RegisterTile> planRegisterTile(linalg::GenericOp op,
                                         int64_t vectorWidth, int64_t rows) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op) ||
      op.hasIndexSemantics())
    return failure();
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
      return failure();
  }
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  AffineMap outMap = maps[2];
  if (outMap.getNumResults() == 0)
    return failure();

  // The vector dimension: the innermost output dimension that only one
  // input has (a batch dimension, in both, has no outer product along it),
  // in whole vectors of a multiple of 4 lanes.
  RegisterTile tile;
  std::optional<unsigned> vectorDim;
  int64_t vectorTile = 0;
  for (AffineExpr e : llvm::reverse(outMap.getResults())) {
    unsigned d = cast<AffineDimExpr>(e).getPosition();
    if (maps[0].isFunctionOfDim(d) == maps[1].isFunctionOfDim(d))
      continue;
    if (extents[d] < 4)
      break;
    for (int64_t t = 2 * vectorWidth; t >= 4; t -= 4)
      if (extents[d] % t == 0) {
        vectorTile = t;
        break;
      }
    // No divisor of a few lanes (17 tokens): partial tiles, whose vectors
    // are masked.
    if (vectorTile < std::min<int64_t>(vectorWidth / 2, extents[d]))
      vectorTile =
          std::min<int64_t>(2 * vectorWidth, llvm::alignTo(extents[d], 4));
    vectorDim = d;
    break;
  }
  if (!vectorDim)
    return failure();
  tile.vectorDim = *vectorDim;
  tile.vectorOperand = maps[0].isFunctionOfDim(tile.vectorDim) ? 0 : 1;

  // The broadcast dimension: the innermost output dimension of the other
  // input only.
  std::optional<unsigned> rowDim;
  for (AffineExpr e : llvm::reverse(outMap.getResults())) {
    unsigned d = cast<AffineDimExpr>(e).getPosition();
    if (!maps[tile.vectorOperand].isFunctionOfDim(d) &&
        maps[1 - tile.vectorOperand].isFunctionOfDim(d) && extents[d] > 1) {
      rowDim = d;
      break;
    }
  }

  unsigned numLoops = op.getNumLoops();
  tile.sizes.assign(numLoops, 1);
  for (unsigned d = 0; d < numLoops; ++d)
    if (extents[d] == 1)
      tile.sizes[d] = 0;
  tile.sizes[tile.vectorDim] = vectorTile;
  // About 16 accumulator registers: `rows` rows of two vectors, more rows
  // of a shorter vector.
  int64_t registersPerRow = llvm::divideCeil(vectorTile, vectorWidth);
  if (rowDim) {
    // Rows that divide the extent, unless only a few do (17 tokens): then
    // the last tile is partial and masked.
    int64_t budget = std::max<int64_t>(1, 2 * rows / registersPerRow);
    int64_t divisor = largestDivisor(extents[*rowDim], budget);
    tile.sizes[*rowDim] =
        2 * divisor >= budget ? divisor : std::min(budget, extents[*rowDim]);
  }

  // The innermost reduction unrolled by up to 4 (outer products per step).
  if (!dims->k.empty())
    tile.sizes[dims->k.back()] = largestDivisor(extents[dims->k.back()], 4);

  // Parallel loops in their order, then the reductions.
  for (unsigned d = 0; d < numLoops; ++d)
    if (!llvm::is_contained(dims->k, d))
      tile.interchange.push_back(d);
  for (unsigned d = 0; d < numLoops; ++d)
    if (llvm::is_contained(dims->k, d))
      tile.interchange.push_back(d);
  return tile;
}

/// Sets the insertion point right after `value` is made.
void setInsertionPointAfterValue(RewriterBase &rewriter, Value value) {
  if (Operation *def = value.getDefiningOp())
    rewriter.setInsertionPointAfter(def);
  else
    rewriter.setInsertionPointToStart(cast<BlockArgument>(value).getOwner());
}

/// Whether `value` is made outside every loop around `op`.
bool isDefinedOutsideLoops(Value value, Operation *op) {
  Operation *outermost = nullptr;
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (isa<LoopLikeOpInterface>(p))
      outermost = p;
  return outermost &&
         !outermost->isAncestor(value.getParentBlock()->getParentOp());
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
  auto type = cast<RankedTensorType>(value.getType());
  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  Value source = value;
  SmallVector<int64_t> sourcePerm = perm;
  if (auto producer = value.getDefiningOp<linalg::TransposeOp>()) {
    // transpose(transpose(x, p), q) = transpose(x, p∘q).
    ArrayRef<int64_t> p = producer.getPermutation();
    for (unsigned i = 0; i < rank; ++i)
      sourcePerm[i] = p[perm[i]];
    source = producer.getInput();
    rewriter.setInsertionPoint(producer);
  } else {
    setInsertionPointAfterValue(rewriter, value);
  }
  SmallVector<int64_t> shape;
  for (int64_t i : perm)
    shape.push_back(type.getDimSize(i));
  Value packed;
  if (auto slice = source.getDefiningOp<tensor::ExtractSliceOp>();
      slice && slice.getSourceType().hasStaticShape() &&
      slice.getSourceType().getRank() == rank &&
      isDefinedOutsideLoops(slice.getSource(), op)) {
    // A slice of a tensor made outside the tile loops (a key or value tile
    // of a head, a weight's rows): the whole tensor is packed once, and the
    // tile loops slice the packed one.
    Value whole = slice.getSource();
    setInsertionPointAfterValue(rewriter, whole);
    SmallVector<int64_t> wholeShape;
    for (int64_t i : sourcePerm)
      wholeShape.push_back(slice.getSourceType().getDimSize(i));
    Value wholeInit = tensor::EmptyOp::create(rewriter, loc, wholeShape,
                                              type.getElementType());
    Value wholePacked =
        linalg::TransposeOp::create(rewriter, loc, whole, wholeInit, sourcePerm)
            ->getResult(0);
    auto permute = [&](ArrayRef<OpFoldResult> values) {
      SmallVector<OpFoldResult> out;
      for (int64_t i : sourcePerm)
        out.push_back(values[i]);
      return out;
    };
    rewriter.setInsertionPoint(op);
    packed = tensor::ExtractSliceOp::create(
        rewriter, loc, wholePacked, permute(slice.getMixedOffsets()),
        permute(slice.getMixedSizes()), permute(slice.getMixedStrides()));
  } else {
    Value init =
        tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
    packed =
        linalg::TransposeOp::create(rewriter, loc, source, init, sourcePerm)
            ->getResult(0);
  }

  SmallVector<AffineExpr> results;
  for (int64_t i : perm)
    results.push_back(map.getResult(i));
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps[operand] =
      AffineMap::get(map.getNumDims(), 0, results, rewriter.getContext());
  rewriter.modifyOpInPlace(op, [&] {
    op->setOperand(operand, packed);
    op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
  // The unpacked tile, now dead (so that the tensor it sliced has one use).
  if (Operation *producer = value.getDefiningOp();
      producer && isa<linalg::TransposeOp>(producer) && value.use_empty()) {
    Operation *slice = source.getDefiningOp();
    rewriter.eraseOp(producer);
    if (slice && isa<tensor::ExtractSliceOp>(slice) && slice->use_empty())
      rewriter.eraseOp(slice);
  }
  return success();
}

/// Rewrites a register tile (a static contraction on tensor slices) as one
/// `vector.contract` over its non-unit loops (and the innermost reduction),
/// between transfers of its operands.
LogicalResult vectorizeRegisterTile(RewriterBase &rewriter,
                                    linalg::GenericOp op,
                                    ArrayRef<int64_t> extents) {
  // A partial tile's dimensions are dynamic: its vectors keep the full
  // tile's extents and mask what lies outside.
  SmallVector<int64_t> actual = op.getStaticLoopRanges();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned numLoops = op.getNumLoops();
  std::optional<unsigned> innerReduction;
  for (unsigned d = 0; d < numLoops; ++d)
    if (iterators[d] == utils::IteratorType::reduction)
      innerReduction = d;
  if (!innerReduction)
    return op.emitError("dat-register-tiles: a contraction without a "
                        "reduction");

  // The loops the vector contraction keeps, renumbered.
  SmallVector<int64_t> newDim(numLoops, -1);
  SmallVector<vector::IteratorType> newIterators;
  for (unsigned d = 0; d < numLoops; ++d) {
    if (extents[d] == 1 && d != *innerReduction)
      continue;
    newDim[d] = newIterators.size();
    newIterators.push_back(iterators[d] == utils::IteratorType::reduction
                               ? vector::IteratorType::reduction
                               : vector::IteratorType::parallel);
  }

  MLIRContext *ctx = rewriter.getContext();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value padding =
      arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0));
  SmallVector<Value> vectors;
  SmallVector<bool> writeInBounds; // the last operand's: the output's
  SmallVector<AffineMap> contractMaps;
  SmallVector<AffineMap> transferMaps;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = maps[operand.getOperandNumber()];
    auto type = cast<RankedTensorType>(operand.get().getType());
    SmallVector<int64_t> shape;
    SmallVector<bool> inBounds;
    SmallVector<AffineExpr> transferResults, contractResults;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      if (newDim[d] < 0)
        continue;
      shape.push_back(extents[d]);
      inBounds.push_back(actual[d] == extents[d]);
      transferResults.push_back(rewriter.getAffineDimExpr(i));
      contractResults.push_back(rewriter.getAffineDimExpr(newDim[d]));
    }
    AffineMap transferMap =
        AffineMap::get(type.getRank(), 0, transferResults, ctx);
    transferMaps.push_back(transferMap);
    contractMaps.push_back(
        AffineMap::get(newIterators.size(), 0, contractResults, ctx));
    auto vectorType = VectorType::get(shape, type.getElementType());
    SmallVector<Value> indices(type.getRank(), zero);
    writeInBounds = inBounds;
    vectors.push_back(vector::TransferReadOp::create(
        rewriter, loc, vectorType, operand.get(), indices, padding, transferMap,
        inBounds));
  }
  SmallVector<Attribute> iteratorAttrs;
  for (vector::IteratorType t : newIterators)
    iteratorAttrs.push_back(vector::IteratorTypeAttr::get(ctx, t));
  Value result = vector::ContractionOp::create(
      rewriter, loc, vectors[0], vectors[1], vectors[2],
      rewriter.getAffineMapArrayAttr(contractMaps),
      rewriter.getArrayAttr(iteratorAttrs));
  Value init = op.getDpsInits()[0];
  SmallVector<Value> indices(cast<RankedTensorType>(init.getType()).getRank(),
                             zero);
  Value written =
      vector::TransferWriteOp::create(rewriter, loc, result, init, indices,
                                      transferMaps[2], writeInBounds)
          ->getResult(0);
  rewriter.replaceOp(op, written);
  return success();
}

/// `op` tiled by `sizes` (0: not tiled) with sequential loops in the order
/// `interchange` (default: the op's).
FailureOr<scf::SCFTilingResult>
tileWithLoops(RewriterBase &rewriter, linalg::GenericOp op,
              ArrayRef<int64_t> sizes, ArrayRef<int64_t> interchange = {}) {
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  options.setInterchange(interchange);
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
  rewriter.setInsertionPoint(op);
  return scf::tileUsingSCF(rewriter, cast<TilingInterface>(op.getOperation()),
                           options);
}

/// Tiles `op` as `tile` says and rewrites each register tile as a vector
/// contraction.
LogicalResult tileContraction(RewriterBase &rewriter, linalg::GenericOp op,
                              const RegisterTile &tile) {
  MLIRContext *ctx = rewriter.getContext();
  if (failed(
          packVectorOperand(rewriter, op, tile.vectorOperand, tile.vectorDim)))
    return success();
  // Multiply-adds may fuse into FMAs (each sum keeps its order).
  op.getBody()->walk([&](arith::ArithFastMathInterface arith) {
    if (isa<arith::AddFOp, arith::MulFOp>(arith))
      arith->setAttr(
          arith.getFastMathAttrName(),
          arith::FastMathFlagsAttr::get(ctx, arith::FastMathFlags::contract));
  });
  FailureOr<scf::SCFTilingResult> tiled =
      tileWithLoops(rewriter, op, tile.sizes, tile.interchange);
  if (failed(tiled))
    return op.emitError("dat-register-tiles: cannot tile the contraction");
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  for (auto [d, size] : llvm::enumerate(tile.sizes))
    if (size)
      extents[d] = size;
  rewriter.replaceOp(op, tiled->replacements);
  for (Operation *t : tiled->tiledOps)
    if (failed(vectorizeRegisterTile(rewriter, cast<linalg::GenericOp>(t),
                                     extents)))
      return failure();
  return success();
}

/// The other static f32 ops of the tile bodies (the online softmax's scale,
/// row maxima, exponentials, row sums and rescaling): tiled to rows along
/// the innermost dimension of their largest operand, and each row
/// vectorized (`linalg::vectorize`), so that no reduction or exponential is
/// left to scalar loops.
LogicalResult vectorizeRows(RewriterBase &rewriter, linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() ||
      !op->getParentOfType<LoopLikeOpInterface>() ||
      linalg::isaContractionOpInterface(op))
    return success();
  Value largest;
  int64_t largestSize = 0;
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
      return success();
    if (type.getNumElements() > largestSize) {
      largestSize = type.getNumElements();
      largest = v;
    }
  }
  OpOperand *operand = llvm::find_if(
      op->getOpOperands(), [&](OpOperand &o) { return o.get() == largest; });
  AffineMap map = op.getMatchingIndexingMap(operand);
  if (map.getNumResults() == 0)
    return success();
  auto inner = dyn_cast<AffineDimExpr>(map.getResults().back());
  if (!inner)
    return success();
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  unsigned vectorDim = inner.getPosition();
  // Rows of at most 256 lanes (a few registers); longer ones in pieces.
  constexpr int64_t kMaxRow = 256;
  int64_t row = extents[vectorDim];
  if (row > kMaxRow) {
    row = largestDivisor(row, kMaxRow);
    if (row < 16)
      return success();
  }
  SmallVector<int64_t> sizes(op.getNumLoops(), 1);
  for (unsigned d = 0; d < sizes.size(); ++d)
    if (extents[d] == 1)
      sizes[d] = 0;
  sizes[vectorDim] = row == extents[vectorDim] ? 0 : row;

  SmallVector<Operation *> rows = {op};
  if (llvm::any_of(sizes, [](int64_t s) { return s != 0; })) {
    FailureOr<scf::SCFTilingResult> tiled = tileWithLoops(rewriter, op, sizes);
    if (failed(tiled))
      return op.emitError("dat-register-tiles: cannot tile to rows");
    rewriter.replaceOp(op, tiled->replacements);
    rows = tiled->tiledOps;
  }
  for (Operation *t : rows) {
    rewriter.setInsertionPoint(t);
    FailureOr<linalg::VectorizationResult> vectorized =
        linalg::vectorize(rewriter, t);
    if (failed(vectorized))
      continue; // left to the loop vectorizer
    rewriter.replaceOp(t, vectorized->replacements);
  }
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
  SmallVector<OpFoldResult> permOffsets, permSizes;
  SmallVector<int64_t> permTile;
  for (int64_t d : perm) {
    permOffsets.push_back(offsets[d]);
    permSizes.push_back(sizes[d]);
    permTile.push_back(tileType.getDimSize(d));
  }

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
  Value tileInit = tensor::EmptyOp::create(rewriter, loc, permTile,
                                           tileType.getElementType());
  tile = linalg::TransposeOp::create(rewriter, loc, tile, tileInit, perm)
             ->getResult(0);
  rewriter.setInsertionPoint(insert);
  SmallVector<OpFoldResult> strides(permOffsets.size(),
                                    rewriter.getIndexAttr(1));
  rewriter.replaceOpWithNewOp<tensor::ParallelInsertSliceOp>(
      insert, tile, out, permOffsets, permSizes, strides);
  rewriter.replaceOp(transpose, forall->getResult(0));
  if (expand)
    rewriter.eraseOp(expand);
  return success();
}

struct RegisterTilesPass final : impl::DatRegisterTilesBase<RegisterTilesPass> {
  using Base::Base;
  void runOnOperation() override {
    if (vectorWidth <= 0)
      return;
    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics) {
      bool inLoop = op->getParentOfType<LoopLikeOpInterface>() != nullptr;
      FailureOr<RegisterTile> tile = planRegisterTile(op, vectorWidth, rows);
      if (succeeded(tile) && (inLoop || outsideLoops)) {
        if (failed(tileContraction(rewriter, op, *tile)))
          return signalPassFailure();
        continue;
      }
      if (failed(vectorizeRows(rewriter, op)))
        return signalPassFailure();
    }

    // Transposes of tile loops' results (the packed key heads made above
    // included) into the loops.
    SmallVector<linalg::TransposeOp> transposes;
    getOperation()->walk(
        [&](linalg::TransposeOp op) { transposes.push_back(op); });
    for (linalg::TransposeOp op : transposes)
      (void)sinkTransposeIntoForall(rewriter, op);

    // The tiles' multiply-reductions as contractions, lowered to outer
    // products (one FMA per accumulator vector and reduction step).
    RewritePatternSet patterns(ctx);
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateVectorTransferDropUnitDimsPatterns(patterns);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerReduction);
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();

    // The accumulators out of the reduction loops (into iter_args).
    // (Partial tiles' sizes first, so that their slices are invariant.)
    getOperation()->walk([&](LoopLikeOpInterface loop) {
      moveLoopInvariantCode(loop);
      hoistLoopInvariantSubsets(rewriter, loop);
    });
  }
};
} // namespace
} // namespace mlir::dat
