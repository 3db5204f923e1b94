//===- TileTransposes.cpp - where the vector layer's transposes run ------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//
//
// The packings of the CPU's vector layer are transposes of whole tensors.
// Where such a tensor is a tile loop's result, its transpose moves into the
// loop (each tile transposed in cache, in parallel); a large one left outside
// becomes a tile loop of its own, so that it runs on every thread.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace mlir::dat {

/// The single insert of `forall`'s tile into its only output, where every
/// other use of that output is a slice (a tile op's outs: an undefined tile,
/// since the tiles are disjoint and the chain starts from an empty tensor).
static tensor::ParallelInsertSliceOp tileInsert(scf::ForallOp forall) {
  if (forall->getNumResults() != 1)
    return {};
  SmallVector<Operation *> yields;
  for (Operation &op : forall.getTerminator().getYieldingOps())
    yields.push_back(&op);
  auto insert = yields.size() == 1
                    ? dyn_cast<tensor::ParallelInsertSliceOp>(yields[0])
                    : tensor::ParallelInsertSliceOp();
  BlockArgument out = forall.getRegionIterArgs()[0];
  if (!insert || insert.getDest() != out || !insert.hasUnitStride() ||
      insert.getSourceType().getRank() != insert.getDestType().getRank() ||
      !insert.getSourceType().hasStaticShape())
    return {};
  for (OpOperand &use : out.getUses())
    if (use.getOwner() != insert &&
        !isa<tensor::ExtractSliceOp>(use.getOwner()))
      return {};
  return insert;
}

/// Whether an insert at `offsets` (of a tile no larger than `forall`'s) lies
/// past every tile `forall` writes along some dimension:
/// there the tile's insert is at an induction variable with constant bounds
/// and a static size (a split loop's full tiles end where its partial last
/// tile starts).
static bool pastLoopTiles(scf::ForallOp forall,
                          ArrayRef<OpFoldResult> offsets) {
  tensor::ParallelInsertSliceOp tile = tileInsert(forall);
  std::optional<ConstantBounds> bounds = constantBounds(forall);
  if (!tile || !bounds)
    return false;
  for (auto [d, offset] : llvm::enumerate(tile.getMixedOffsets())) {
    auto iv = dyn_cast_if_present<BlockArgument>(dyn_cast<Value>(offset));
    std::optional<int64_t> start = getConstantIntValue(offsets[d]);
    if (!iv || iv.getOwner() != forall.getBody() ||
        iv.getArgNumber() >= forall.getRank() || !start)
      continue;
    unsigned i = iv.getArgNumber();
    int64_t lb = bounds->lbs[i], ub = bounds->ubs[i], step = bounds->steps[i];
    if (step <= 0 || ub <= lb)
      continue;
    int64_t lastStart = lb + (ub - lb - 1) / step * step;
    if (*start >= lastStart + tile.getSourceType().getDimSize(d))
      return true;
  }
  return false;
}

/// The insert of a partial last tile whose one-iteration loop was folded
/// away (dat-peel-tile-loops, then canonicalization): straight-line code
/// inserting into the full tiles' loop result, past every tile of that loop
/// (so that, the loop starting from an empty tensor, its place there is
/// undefined), where every other use of that result is a slice at the same
/// place (the partial tile's outs).
static tensor::InsertSliceOp foldedRestInsert(Value v) {
  auto insert = v.getDefiningOp<tensor::InsertSliceOp>();
  if (!insert || !insert.hasUnitStride() ||
      insert.getSourceType().getRank() != insert.getDestType().getRank() ||
      !insert.getSourceType().hasStaticShape())
    return {};
  auto forall = insert.getDest().getDefiningOp<scf::ForallOp>();
  if (!forall || !pastLoopTiles(forall, insert.getMixedOffsets()))
    return {};
  for (OpOperand &use : insert.getDest().getUses()) {
    if (use.getOwner() == insert)
      continue;
    auto slice = dyn_cast<tensor::ExtractSliceOp>(use.getOwner());
    if (!slice || slice.getMixedOffsets() != insert.getMixedOffsets() ||
        slice.getMixedSizes() != insert.getMixedSizes() ||
        !slice.hasUnitStride())
      return {};
  }
  return insert;
}

/// Replaces `slice` (a tile's outs whose contents are undefined) by an empty
/// tensor of its type.
static void replaceWithEmpty(RewriterBase &rewriter,
                             tensor::ExtractSliceOp slice) {
  rewriter.setInsertionPoint(slice);
  rewriter.replaceOpWithNewOp<tensor::EmptyOp>(
      slice, slice.getResultType().getShape(),
      slice.getResultType().getElementType());
}

/// Whether transposing a `shape` by `perm` moves only unit dimensions (a
/// head of one merged back: [1, 1, n, d] → [1, n, 1, d]): then the tile
/// goes in as it is, a rank-reduced insert, without a copy to transpose it.
static bool movesOnlyUnitDims(ArrayRef<int64_t> shape, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> nonUnit;
  for (int64_t d : perm)
    if (shape[d] != 1)
      nonUnit.push_back(d);
  return llvm::is_sorted(nonUnit) && !ShapedType::isDynamicShape(shape);
}

/// `type` without its unit dimensions.
static RankedTensorType squeezedType(RankedTensorType type) {
  SmallVector<int64_t> squeezed;
  llvm::copy_if(type.getShape(), std::back_inserter(squeezed),
                [](int64_t extent) { return extent != 1; });
  return RankedTensorType::get(squeezed, type.getElementType());
}

/// The groups that collapse the static `type` into squeezedType(type).
static SmallVector<ReassociationIndices> unitDimGroups(RankedTensorType type) {
  RankedTensorType squeezed = squeezedType(type);
  if (squeezed.getRank() == 0) // a single element: no groups
    return {};
  return *getReassociationIndicesForCollapse(type.getShape(),
                                             squeezed.getShape());
}

/// `value` without its unit dimensions.
static Value squeezeUnitDims(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  RankedTensorType squeezed = squeezedType(type);
  if (squeezed == type)
    return value;
  return tensor::CollapseShapeOp::create(b, loc, squeezed, value,
                                         unitDimGroups(type));
}

/// The other readers of `transpose`'s input where all are slices after it
/// (of its rank, unit strides): a tile loop's partial key block, which the
/// vector layer leaves unpacked, or a causal key loop's peeled block. They
/// can read the transposed tensor instead (transposed back, a small tile),
/// so that the transpose can move into the loop that makes its input.
/// Empty where any other reader is not such a slice.
static SmallVector<tensor::ExtractSliceOp>
slicesAfter(linalg::TransposeOp transpose) {
  DominanceInfo dominance;
  SmallVector<tensor::ExtractSliceOp> slices;
  for (OpOperand &use : transpose.getInput().getUses()) {
    if (use.getOwner() == transpose)
      continue;
    auto slice = dyn_cast<tensor::ExtractSliceOp>(use.getOwner());
    if (!slice || !slice.hasUnitStride() ||
        slice.getResultType().getRank() != slice.getSourceType().getRank() ||
        !dominance.properlyDominates(transpose.getOperation(), slice))
      return {};
    slices.push_back(slice);
  }
  return slices;
}

/// `slice` of `transpose`'s input read from its result instead: the
/// transposed slice, transposed back.
static void readThroughTranspose(RewriterBase &rewriter,
                                 tensor::ExtractSliceOp slice,
                                 linalg::TransposeOp transpose) {
  ArrayRef<int64_t> perm = transpose.getPermutation();
  Location loc = slice.getLoc();
  rewriter.setInsertionPoint(slice);
  Value part = tensor::ExtractSliceOp::create(
      rewriter, loc, transpose.getResult()[0],
      applyPermutation(slice.getMixedOffsets(), perm),
      applyPermutation(slice.getMixedSizes(), perm),
      applyPermutation(slice.getMixedStrides(), perm));
  Value init = tensor::EmptyOp::create(rewriter, loc, slice.getMixedSizes(),
                                       slice.getResultType().getElementType());
  rewriter.replaceOp(slice,
                     linalg::TransposeOp::create(rewriter, loc, part, init,
                                                 invertPermutationVector(perm))
                         ->getResult(0));
}

/// Moves a transpose of a tile loop's result (head merges, packed key
/// heads; through expand_shapes that split a tile's dimensions whole, or
/// split a tiled dimension into blocks of the tile: keys in blocks of 64)
/// into the loop: each tile is transposed where it is made, in parallel and
/// in cache, and inserted into the transposed result, instead of one
/// single-threaded transpose of the whole tensor after the loop. A loop
/// split into full tiles and a partial last one (dat-peel-tile-loops) is a
/// chain of loops, each filling its tiles of the previous one's result:
/// each gets the transpose; so does a partial last tile whose loop of one
/// iteration was folded away. Where the transpose of a tile is a reshape,
/// the tile is made in its place in the transposed result.
LogicalResult sinkTransposeIntoForall(RewriterBase &rewriter,
                                      linalg::TransposeOp transpose) {
  Value input = transpose.getInput();
  // Its input's other readers, if all are slices the transposed tensor can
  // serve: they do not keep it from moving.
  SmallVector<tensor::ExtractSliceOp> otherReaders = slicesAfter(transpose);
  auto onlyUse = [&](Value v) {
    return v == transpose.getInput()
               ? llvm::range_size(v.getUses()) == otherReaders.size() + 1
               : v.hasOneUse();
  };
  // A chain of expand_shapes (the heads split, then the keys in blocks for
  // the blocked packing), composed.
  SmallVector<tensor::ExpandShapeOp> expands;
  for (auto e = input.getDefiningOp<tensor::ExpandShapeOp>(); e;
       e = e.getSrc().getDefiningOp<tensor::ExpandShapeOp>()) {
    if (!onlyUse(e.getResult()))
      return failure();
    expands.push_back(e);
  }
  bool expand = !expands.empty();
  RankedTensorType expandedType;
  SmallVector<ReassociationIndices> groups;
  if (expand) {
    expandedType = expands.front().getResultType();
    input = expands.back().getSrc();
    // Source dimension → the outermost expand's dimensions, inner first.
    groups = expands.back().getReassociationIndices();
    for (tensor::ExpandShapeOp e : llvm::drop_begin(llvm::reverse(expands))) {
      SmallVector<ReassociationIndices> inner = e.getReassociationIndices();
      for (ReassociationIndices &group : groups) {
        ReassociationIndices composed;
        for (int64_t d : group)
          llvm::append_range(composed, inner[d]);
        group = std::move(composed);
      }
    }
  }
  // The chain of tiles' makers, last first: tile loops, the last of which
  // may be a folded partial tile's insert.
  SmallVector<Operation *> chain;
  Value v = input;
  if (tensor::InsertSliceOp rest = foldedRestInsert(v)) {
    if (!onlyUse(v))
      return failure();
    chain.push_back(rest);
    v = rest.getDest();
  }
  while (auto forall = v.getDefiningOp<scf::ForallOp>()) {
    // (The loop a folded partial tile inserts into has that tile's slices
    // as other uses, checked by foldedRestInsert.)
    bool beforeFoldedRest =
        chain.size() == 1 && isa<tensor::InsertSliceOp>(chain[0]);
    if (!tileInsert(forall) || (!beforeFoldedRest && !onlyUse(v)) ||
        (!chain.empty() && !beforeFoldedRest &&
         !chain.back()->hasAttr(kRestOfSplitAttr)))
      return failure();
    chain.push_back(forall);
    v = forall.getOutputs()[0];
  }
  auto first =
      chain.empty() ? scf::ForallOp() : dyn_cast<scf::ForallOp>(chain.back());
  if (!first || !first.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
    return failure();
  auto resultType = cast<RankedTensorType>(transpose.getResult()[0].getType());
  if (!resultType.hasStaticShape())
    return failure();

  // Each insert's offsets and sizes after the expand_shapes.
  struct Tile {
    SmallVector<OpFoldResult> offsets, sizes;
    RankedTensorType type;
    // Expanded offsets still to divide: (position, divisor) of a loop's
    // induction variable, a block of a split dimension.
    SmallVector<std::pair<unsigned, int64_t>> divided;
  };
  SmallVector<Tile> tiles;
  for (Operation *link : chain) {
    OffsetSizeAndStrideOpInterface insert;
    RankedTensorType sourceType, destType;
    if (auto forall = dyn_cast<scf::ForallOp>(link)) {
      tensor::ParallelInsertSliceOp p = tileInsert(forall);
      insert = p;
      sourceType = p.getSourceType();
      destType = p.getDestType();
    } else {
      auto rest = cast<tensor::InsertSliceOp>(link);
      insert = rest;
      sourceType = rest.getSourceType();
      destType = rest.getDestType();
    }
    Tile tile{insert.getMixedOffsets(), insert.getMixedSizes(), sourceType, {}};
    if (expand) {
      Tile expanded;
      SmallVector<int64_t> tileShape;
      for (auto [src, group] : llvm::enumerate(groups)) {
        if (group.size() == 1) {
          expanded.offsets.push_back(tile.offsets[src]);
          expanded.sizes.push_back(tile.sizes[src]);
          tileShape.push_back(tile.type.getDimSize(src));
          continue;
        }
        // The whole dimension: each of the group's dimensions whole. A
        // block of its inner dimensions (K's keys split into blocks of 64,
        // a tile of 64 rows): one index of the outer one, the rest whole.
        int64_t size = tile.type.getDimSize(src), inner = 1;
        for (int64_t d : ArrayRef<int64_t>(group).drop_front())
          inner *= expandedType.getDimSize(d);
        std::optional<int64_t> offset = getConstantIntValue(tile.offsets[src]);
        bool whole = offset && *offset == 0 && size == destType.getDimSize(src);
        if (!whole && size != inner)
          return failure();
        if (whole) {
          expanded.offsets.push_back(rewriter.getIndexAttr(0));
          expanded.sizes.push_back(
              rewriter.getIndexAttr(expandedType.getDimSize(group[0])));
        } else if (offset) {
          if (*offset % inner != 0)
            return failure();
          expanded.offsets.push_back(rewriter.getIndexAttr(*offset / inner));
          expanded.sizes.push_back(rewriter.getIndexAttr(1));
        } else {
          // An induction variable whose values all divide by the block.
          auto forall = dyn_cast<scf::ForallOp>(link);
          auto iv = dyn_cast<BlockArgument>(cast<Value>(tile.offsets[src]));
          if (!forall || !iv || iv.getOwner() != forall.getBody() ||
              iv.getArgNumber() >= forall.getRank())
            return failure();
          std::optional<ConstantBounds> bounds = constantBounds(forall);
          unsigned i = iv.getArgNumber();
          if (!bounds || bounds->lbs[i] % inner != 0 ||
              bounds->steps[i] % inner != 0)
            return failure();
          expanded.divided.emplace_back(expanded.offsets.size(), inner);
          expanded.offsets.push_back(iv);
          expanded.sizes.push_back(rewriter.getIndexAttr(1));
        }
        tileShape.push_back(whole ? expandedType.getDimSize(group[0]) : 1);
        for (int64_t d : ArrayRef<int64_t>(group).drop_front()) {
          expanded.offsets.push_back(rewriter.getIndexAttr(0));
          expanded.sizes.push_back(
              rewriter.getIndexAttr(expandedType.getDimSize(d)));
          tileShape.push_back(expandedType.getDimSize(d));
        }
      }
      expanded.type =
          RankedTensorType::get(tileShape, tile.type.getElementType());
      tile = std::move(expanded);
    }
    tiles.push_back(std::move(tile));
  }
  ArrayRef<int64_t> perm = transpose.getPermutation();

  for (tensor::ExtractSliceOp slice : otherReaders)
    readThroughTranspose(rewriter, slice, transpose);

  // A folded partial tile's outs: undefined, as a loop's.
  if (auto rest = dyn_cast<tensor::InsertSliceOp>(chain.front())) {
    for (OpOperand &use : llvm::make_early_inc_range(rest.getDest().getUses()))
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(use.getOwner()))
        replaceWithEmpty(rewriter, slice);
  }

  // What a link inserts: its tile (`source`) expanded and transposed, a
  // reshape where only unit dimensions move, else transposed into its place
  // in `result` (no copy after).
  auto transposedTile = [&](Location loc, Value source, const Tile &tile,
                            Value result, ArrayRef<OpFoldResult> offsets,
                            ArrayRef<OpFoldResult> sizes,
                            ArrayRef<OpFoldResult> strides) -> Value {
    if (expand)
      source = tensor::ExpandShapeOp::create(rewriter, loc, tile.type, source,
                                             groups);
    if (movesOnlyUnitDims(tile.type.getShape(), perm))
      return squeezeUnitDims(rewriter, loc, source);
    Value place = tensor::ExtractSliceOp::create(rewriter, loc, result, offsets,
                                                 sizes, strides);
    return linalg::TransposeOp::create(rewriter, loc, source, place, perm)
        ->getResult(0);
  };

  // The loops now make the transposed tensor, first to last.
  rewriter.setInsertionPoint(first);
  Value init =
      tensor::EmptyOp::create(rewriter, first.getLoc(), resultType.getShape(),
                              resultType.getElementType());
  for (auto [link, tile] : llvm::reverse(llvm::zip_equal(chain, tiles))) {
    Location loc = link->getLoc();
    if (!tile.divided.empty()) {
      auto forall = cast<scf::ForallOp>(link);
      rewriter.setInsertionPointToStart(forall.getBody());
      for (auto [position, divisor] : tile.divided)
        tile.offsets[position] =
            affine::AffineApplyOp::create(
                rewriter, loc,
                AffineMap::get(1, 0,
                               getAffineDimExpr(0, rewriter.getContext())
                                   .floorDiv(divisor)),
                cast<Value>(tile.offsets[position]))
                .getResult();
    }
    SmallVector<OpFoldResult> offsets = applyPermutation(tile.offsets, perm),
                              sizes = applyPermutation(tile.sizes, perm),
                              strides(perm.size(), rewriter.getIndexAttr(1));
    if (auto rest = dyn_cast<tensor::InsertSliceOp>(link)) {
      rewriter.setInsertionPoint(rest);
      Value value = transposedTile(loc, rest.getSource(), tile, init, offsets,
                                   sizes, strides);
      init = rewriter
                 .replaceOpWithNewOp<tensor::InsertSliceOp>(
                     rest, value, init, offsets, sizes, strides)
                 .getResult();
      continue;
    }
    auto forall = cast<scf::ForallOp>(link);
    tensor::ParallelInsertSliceOp insert = tileInsert(forall);
    BlockArgument out = forall.getRegionIterArgs()[0];
    rewriter.modifyOpInPlace(forall, [&] {
      forall.getOutputsMutable()[0].assign(init);
      out.setType(resultType);
      forall->getResult(0).setType(resultType);
    });
    // The tile's outs: where its transpose is a reshape, its place in the
    // transposed result (made there, inserted without a copy); otherwise
    // undefined.
    bool reshape = movesOnlyUnitDims(tile.type.getShape(), perm);
    for (OpOperand &use : llvm::make_early_inc_range(out.getUses())) {
      if (use.getOwner() == insert)
        continue;
      auto slice = cast<tensor::ExtractSliceOp>(use.getOwner());
      if (reshape && !expand && slice.getMixedOffsets() == tile.offsets &&
          slice.getMixedSizes() == tile.sizes &&
          slice.getResultType() == tile.type) {
        rewriter.setInsertionPoint(slice);
        RankedTensorType placeType = squeezedType(tile.type);
        Value place = tensor::ExtractSliceOp::create(
            rewriter, loc, placeType, out, offsets, sizes, strides);
        if (placeType != tile.type)
          place = tensor::ExpandShapeOp::create(rewriter, loc, tile.type, place,
                                                unitDimGroups(tile.type));
        rewriter.replaceOp(slice, place);
        continue;
      }
      replaceWithEmpty(rewriter, slice);
    }
    rewriter.setInsertionPoint(forall.getTerminator());
    Value value = transposedTile(loc, insert.getSource(), tile, out, offsets,
                                 sizes, strides);
    rewriter.setInsertionPoint(insert);
    rewriter.replaceOpWithNewOp<tensor::ParallelInsertSliceOp>(
        insert, value, out, offsets, sizes, strides);
    init = forall->getResult(0);
  }
  rewriter.replaceOp(transpose, init);
  for (tensor::ExpandShapeOp e : expands)
    rewriter.eraseOp(e);
  return success();
}

/// `op` tiled by `sizes` (0: not tiled) with loops of `loopType`.
static FailureOr<scf::SCFTilingResult>
tileTranspose(RewriterBase &rewriter, linalg::TransposeOp op,
              ArrayRef<int64_t> sizes,
              scf::SCFTilingOptions::LoopType loopType) {
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  options.setLoopType(loopType);
  rewriter.setInsertionPoint(op);
  return scf::tileUsingSCF(rewriter, cast<TilingInterface>(op.getOperation()),
                           options);
}

/// Where `transpose` (in a tile loop: a tile transposed where it is made)
/// swaps its input's innermost dimension with another, both multiples of
/// `width`: loops over width × width blocks, each read as `width` rows of
/// the input, transposed in registers (vector.transpose) and written as
/// `width` rows of the output, instead of a scalar loop with gathers.
/// Returns the block's transpose (null where it does not apply).
vector::TransposeOp vectorizeTileTranspose(RewriterBase &rewriter,
                                           linalg::TransposeOp transpose,
                                           int64_t width) {
  auto inType = cast<RankedTensorType>(transpose.getInput().getType());
  ArrayRef<int64_t> perm = transpose.getPermutation();
  int64_t rank = inType.getRank();
  if (!transpose->getParentOfType<scf::ForallOp>() ||
      !inType.hasStaticShape() || rank < 2 || width < 2 ||
      !inType.getElementType().isF32())
    return nullptr;
  // a: the input dimension that becomes the output's innermost; b: the
  // input's innermost, at output position outB.
  int64_t a = perm[rank - 1], b = rank - 1;
  if (a == b || inType.getDimSize(a) % width != 0 ||
      inType.getDimSize(b) % width != 0)
    return nullptr;
  int64_t outB = llvm::find(perm, b) - perm.begin();
  SmallVector<int64_t> sizes(rank, 1);
  sizes[rank - 1] = width;
  sizes[outB] = width;
  FailureOr<scf::SCFTilingResult> tiled = tileTranspose(
      rewriter, transpose, sizes, scf::SCFTilingOptions::LoopType::ForOp);
  if (failed(tiled) || tiled->tiledOps.size() != 1)
    return nullptr;
  rewriter.replaceOp(transpose, tiled->replacements);
  auto block = cast<linalg::TransposeOp>(tiled->tiledOps.front());
  Location loc = block.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  rewriter.setInsertionPoint(block);
  auto vectorType = VectorType::get({width, width}, inType.getElementType());
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value pad =
      arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0));
  SmallVector<Value> indices(rank, zero);
  // Rows along b at successive a; written as rows along a at successive b.
  Value rows = vector::TransferReadOp::create(
      rewriter, loc, vectorType, block.getInput(), indices, pad,
      AffineMap::get(rank, 0,
                     {getAffineDimExpr(a, ctx), getAffineDimExpr(b, ctx)}, ctx),
      ArrayRef<bool>{true, true});
  auto swapped =
      vector::TransposeOp::create(rewriter, loc, rows, ArrayRef<int64_t>{1, 0});
  Value written = vector::TransferWriteOp::create(
                      rewriter, loc, swapped, block.getInit(), indices,
                      AffineMap::get(rank, 0,
                                     {getAffineDimExpr(outB, ctx),
                                      getAffineDimExpr(rank - 1, ctx)},
                                     ctx),
                      ArrayRef<bool>{true, true})
                      .getResult();
  rewriter.replaceOp(block, written);
  return swapped;
}

/// A large transpose left outside the tile loops (a packed key tensor whose
/// producer could not take it; not a weight's): a tile loop over its
/// outermost dimensions that are not 1, so that it runs on every thread.
LogicalResult parallelizeTranspose(RewriterBase &rewriter,
                                   linalg::TransposeOp op) {
  auto type = cast<RankedTensorType>(op.getResult()[0].getType());
  constexpr int64_t kMinElements = 1 << 16, kMinTiles = 8;
  // (A transpose of a function argument, or of its blocked reshape, is a
  // weight's packing, which dat-pack-weights moves out of the call.)
  Value input = op.getInput();
  if (auto expand = input.getDefiningOp<tensor::ExpandShapeOp>())
    input = expand.getSrc();
  if (op->getParentOfType<LoopLikeOpInterface>() || !type.hasStaticShape() ||
      type.getNumElements() < kMinElements || isa<BlockArgument>(input))
    return failure();
  return tileOuterIndices(rewriter, cast<TilingInterface>(op.getOperation()),
                          type.getShape(), type.getRank(), kMinTiles,
                          "transpose");
}

} // namespace mlir::dat
