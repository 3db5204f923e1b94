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

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
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

/// Moves a transpose of a tile loop's result (head merges, packed key
/// heads; through an expand_shape that splits only whole-tile dimensions)
/// into the loop: each tile is transposed where it is made, in parallel and
/// in cache, and inserted into the transposed result, instead of one
/// single-threaded transpose of the whole tensor after the loop. A loop
/// split into full tiles and a partial last one (dat-peel-tile-loops) is a
/// chain of loops, each filling its tiles of the previous one's result:
/// each gets the transpose.
LogicalResult sinkTransposeIntoForall(RewriterBase &rewriter,
                                      linalg::TransposeOp transpose) {
  Value input = transpose.getInput();
  auto expand = input.getDefiningOp<tensor::ExpandShapeOp>();
  if (expand) {
    if (!expand->hasOneUse())
      return failure();
    input = expand.getSrc();
  }
  // The chain of loops, last first.
  SmallVector<scf::ForallOp> chain;
  for (Value v = input;;) {
    auto forall = v.getDefiningOp<scf::ForallOp>();
    if (!forall)
      break;
    if (!v.hasOneUse() || !tileInsert(forall) ||
        (!chain.empty() && !chain.back()->hasAttr(kRestOfSplitAttr)))
      return failure();
    chain.push_back(forall);
    v = forall.getOutputs()[0];
  }
  if (chain.empty() ||
      !chain.back().getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
    return failure();
  auto resultType = cast<RankedTensorType>(transpose.getResult()[0].getType());
  if (!resultType.hasStaticShape())
    return failure();

  // Each insert's offsets and sizes after the expand_shape.
  SmallVector<ReassociationIndices> groups;
  if (expand)
    groups = expand.getReassociationIndices();
  struct Tile {
    SmallVector<OpFoldResult> offsets, sizes;
    RankedTensorType type;
  };
  SmallVector<Tile> tiles;
  for (scf::ForallOp forall : chain) {
    tensor::ParallelInsertSliceOp insert = tileInsert(forall);
    Tile tile{insert.getMixedOffsets(), insert.getMixedSizes(),
              insert.getSourceType()};
    if (expand) {
      auto expandedType = expand.getResultType();
      Tile expanded;
      SmallVector<int64_t> tileShape;
      for (auto [src, group] : llvm::enumerate(groups)) {
        if (group.size() == 1) {
          expanded.offsets.push_back(tile.offsets[src]);
          expanded.sizes.push_back(tile.sizes[src]);
          tileShape.push_back(tile.type.getDimSize(src));
          continue;
        }
        std::optional<int64_t> offset = getConstantIntValue(tile.offsets[src]);
        if (!offset || *offset != 0 ||
            tile.type.getDimSize(src) != insert.getDestType().getDimSize(src))
          return failure();
        for (int64_t d : group) {
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

  // The loops now make the transposed tensor, first to last.
  rewriter.setInsertionPoint(chain.back());
  Value init = tensor::EmptyOp::create(rewriter, chain.back().getLoc(),
                                       resultType.getShape(),
                                       resultType.getElementType());
  for (auto [forall, tile] : llvm::reverse(llvm::zip_equal(chain, tiles))) {
    Location loc = forall.getLoc();
    tensor::ParallelInsertSliceOp insert = tileInsert(forall);
    BlockArgument out = forall.getRegionIterArgs()[0];
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
    rewriter.setInsertionPoint(forall.getTerminator());
    Value value = insert.getSource();
    if (expand)
      value = tensor::ExpandShapeOp::create(rewriter, loc, tile.type, value,
                                            groups);
    value = buildTranspose(rewriter, loc, value, perm);
    rewriter.setInsertionPoint(insert);
    SmallVector<OpFoldResult> strides(perm.size(), rewriter.getIndexAttr(1));
    rewriter.replaceOpWithNewOp<tensor::ParallelInsertSliceOp>(
        insert, value, out, applyPermutation(tile.offsets, perm),
        applyPermutation(tile.sizes, perm), strides);
    init = forall->getResult(0);
  }
  rewriter.replaceOp(transpose, chain.front()->getResult(0));
  if (expand)
    rewriter.eraseOp(expand);
  return success();
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
  SmallVector<int64_t> sizes(type.getRank(), 0);
  int64_t tiles = 1;
  for (auto [d, extent] : llvm::enumerate(type.getShape())) {
    if (tiles >= kMinTiles)
      break;
    if (extent == 1)
      continue;
    sizes[d] = 1;
    tiles *= extent;
  }
  if (tiles < kMinTiles)
    return failure();
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled) || tiled->loops.empty())
    return failure();
  // (Named in `prog --profile`.)
  setTileOrigin(tiled->loops.front(), "transpose");
  rewriter.replaceOp(op, tiled->replacements);
  return success();
}

} // namespace mlir::dat
