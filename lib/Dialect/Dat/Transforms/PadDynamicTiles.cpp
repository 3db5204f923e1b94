//===- PadDynamicTiles.cpp - the dat-pad-dynamic-tiles pass ---------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//
//
// The vector layer (dat-register-tiles) needs static shapes. Over a dynamic
// length, the last tile of a tile loop (peeled by dat-peel-tile-loops) and
// the last key block of a key loop have a dynamic size, bounded by the
// tile: each linalg op on them is computed on its operands padded to that
// bound (`tensor.pad`) and its results are sliced back, so the register
// tiles apply to it as to a full tile. A dimension the op reduces over is
// padded with the reduction's neutral element (0 for sums and products'
// sums, -inf for maxima), so padded elements add nothing to a result; where
// the body does not show that its reduction's input is the padded element
// itself (or a product of two), the padded op's body keeps its
// accumulators at padded positions (a select on the reduced indices).
//
// A projection's last row tile is first split into blocks of a register
// tile's rows: the full blocks are static as they are, and only the last
// one is padded (at 8 rows left, 8 rows computed rather than 64).
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dat {
#define GEN_PASS_DEF_DATPADDYNAMICTILES
#include "dat/Dialect/Dat/Transforms/Passes.h.inc"

namespace {

/// The value each input of `op` is padded with where the padded dimensions
/// include a reduction: the neutral element of the reduction, where each
/// input reaches it directly (`out ⊕ in`) or as a product (`out + a·b`).
/// Fails where that cannot be shown.
FailureOr<SmallVector<Attribute>> reductionPadding(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1)
    return failure();
  Block *body = op.getBlock();
  SmallVector<Operation *> combiners;
  Value reduced =
      matchReduction(op.getRegionOutputArgs(), /*redPos=*/0, combiners);
  if (!reduced || combiners.size() != 1)
    return failure();
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiners[0]);
  if (!neutral)
    return failure();
  auto isInput = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == body &&
           arg.getArgNumber() < op.getNumDpsInputs();
  };
  // `out ⊕ in`: the input padded with the neutral element.
  if (isInput(reduced))
    return SmallVector<Attribute>(op->getNumOperands(), *neutral);
  // `out + a·b`: both padded with zero.
  auto mul = reduced.getDefiningOp<arith::MulFOp>();
  if (mul && isa<arith::AddFOp>(combiners[0]) && isInput(mul.getLhs()) &&
      isInput(mul.getRhs()))
    return SmallVector<Attribute>(op->getNumOperands(), *neutral);
  return failure();
}

/// Whether the destination `init` is (a slice of, or an op's update of) a
/// value a loop carries: its buffer must stay the one the loop yields.
bool carriedByLoop(Value init) {
  for (int steps = 0; steps < 64; ++steps) {
    if (auto arg = dyn_cast<BlockArgument>(init))
      return isa<LoopLikeOpInterface>(arg.getOwner()->getParentOp());
    Operation *def = init.getDefiningOp();
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def))
      init = slice.getSource();
    else if (auto cast = dyn_cast<tensor::CastOp>(def))
      init = cast.getSource();
    else if (auto dps = dyn_cast<DestinationStyleOpInterface>(def))
      init = dps.getTiedOpOperand(llvm::cast<OpResult>(init))->get();
    else
      return false;
  }
  return true; // (too deep to tell: kept in place)
}

} // namespace

FailureOr<linalg::LinalgOp> padDynamicTile(RewriterBase &rewriter,
                                           linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() ||
      !op->getParentOfType<LoopLikeOpInterface>())
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> dynamicDims;
  for (auto [d, r] : llvm::enumerate(ranges))
    if (ShapedType::isDynamic(r))
      dynamicDims.push_back(d);
  if (dynamicDims.empty())
    return failure();
  // Every dynamic loop range bounded by a constant (its tile), and each
  // operand padded to the loops' sizes (projected permutations only).
  SmallVector<int64_t> sizes(ranges);
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!type || !map.isProjectedPermutation())
      return failure();
    for (int64_t k = 0; k < type.getRank(); ++k) {
      unsigned d = map.getDimPosition(k);
      if (!type.isDynamicDim(k) || !ShapedType::isDynamic(sizes[d]))
        continue;
      FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
          presburger::BoundType::UB, {operand.get(), k},
          /*stopCondition=*/nullptr, /*closedUB=*/true);
      if (failed(bound) || *bound < 1)
        return failure();
      sizes[d] = *bound;
    }
  }
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return failure();
  SmallVector<SmallVector<int64_t>> shapes;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<int64_t> shape;
    for (unsigned k = 0; k < map.getNumResults(); ++k)
      shape.push_back(sizes[map.getDimPosition(k)]);
    shapes.push_back(shape);
  }
  bool reduces = llvm::any_of(dynamicDims, [&](int64_t d) {
    return op.getIteratorTypesArray()[d] == utils::IteratorType::reduction;
  });
  // Padding values: a reduction's neutral element where the padded element
  // reaches it as itself or in a product; otherwise zeros, and the padded
  // op's body keeps its accumulators unchanged at padded positions of the
  // reduced dimensions (masked below).
  SmallVector<Attribute> padding;
  FailureOr<SmallVector<Attribute>> neutral =
      reduces ? reductionPadding(op) : FailureOr<SmallVector<Attribute>>();
  bool masked = reduces && failed(neutral);
  // Where masked, each dynamic reduced dimension's extent is an operand's.
  SmallVector<std::tuple<unsigned, OpOperand *, unsigned>> maskedDims;
  for (int64_t d : masked ? dynamicDims : SmallVector<int64_t>()) {
    if (op.getIteratorTypesArray()[d] != utils::IteratorType::reduction)
      continue;
    OpOperand *found = nullptr;
    unsigned position = 0;
    for (OpOperand &operand : op->getOpOperands()) {
      std::optional<unsigned> k =
          op.getMatchingIndexingMap(&operand).getResultPosition(
              rewriter.getAffineDimExpr(d));
      if (k && cast<ShapedType>(operand.get().getType()).isDynamicDim(*k)) {
        found = &operand;
        position = *k;
        break;
      }
    }
    if (!found)
      return failure();
    maskedDims.push_back({static_cast<unsigned>(d), found, position});
  }
  if (reduces && !masked) {
    padding = *neutral;
  } else {
    for (OpOperand &operand : op->getOpOperands())
      padding.push_back(
          rewriter.getZeroAttr(getElementTypeOrSelf(operand.get().getType())));
  }
  // The operands padded at their ends to the bounds.
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> operands;
  for (auto [operand, shape, value] :
       llvm::zip(op->getOpOperands(), shapes, padding)) {
    auto type = cast<RankedTensorType>(operand.get().getType());
    if (type.getShape() == ArrayRef<int64_t>(shape)) {
      operands.push_back(operand.get());
      continue;
    }
    Value pad =
        arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(value));
    operands.push_back(tensor::createPadHighOp(
        RankedTensorType::get(shape, type.getElementType()), operand.get(), pad,
        /*nofold=*/false, loc, rewriter));
  }
  // (The reduced dimensions' actual extents, for the mask.)
  SmallVector<std::pair<unsigned, Value>> extents;
  for (auto [d, operand, k] : maskedDims)
    extents.push_back(
        {d, tensor::DimOp::create(rewriter, loc, operand->get(), k)});
  // The op on them; its results sliced back to the unpadded sizes (and
  // copied into their destinations where a loop carries them, below).
  unsigned inits = op.getNumDpsInits();
  Operation *clone = rewriter.clone(*op.getOperation());
  rewriter.modifyOpInPlace(clone, [&] {
    clone->setOperands(operands);
    for (auto [result, init] :
         llvm::zip(clone->getResults(), ValueRange(operands).take_back(inits)))
      result.setType(init.getType());
  });
  auto padded = cast<linalg::LinalgOp>(clone);
  if (masked) {
    // yield select(every reduced index in bounds, value, accumulator).
    Block *body = padded.getBlock();
    Operation *yield = body->getTerminator();
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(yield);
    Value inBounds;
    for (auto [d, extent] : extents) {
      Value index = linalg::IndexOp::create(rewriter, loc, d);
      Value in = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                                       index, extent);
      inBounds =
          inBounds ? arith::AndIOp::create(rewriter, loc, inBounds, in) : in;
    }
    for (unsigned r = 0; r < inits; ++r) {
      Value acc = body->getArgument(op.getNumDpsInputs() + r);
      Value kept = arith::SelectOp::create(rewriter, loc, inBounds,
                                           yield->getOperand(r), acc);
      rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(r, kept); });
    }
  }
  SmallVector<Value> replacements;
  for (auto [result, init, paddedInit] :
       llvm::zip(padded->getResults(), op.getDpsInits(),
                 ValueRange(operands).take_back(inits))) {
    // (A destination of static shape was computed in place.)
    if (paddedInit == init) {
      replacements.push_back(result);
      continue;
    }
    int64_t rank = cast<RankedTensorType>(init.getType()).getRank();
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, loc, result,
        SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(0)),
        tensor::getMixedSizes(rewriter, loc, init),
        SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1)));
    // A loop's carried state is copied back into its buffer (bufferization
    // keeps a loop's yields in place); other results are read where they
    // are.
    bool carried = carriedByLoop(init);
    replacements.push_back(
        carried
            ? linalg::CopyOp::create(rewriter, loc, slice, init).getResult(0)
            : slice);
  }
  rewriter.replaceOp(op, replacements);
  return padded;
}

/// Register tiles' rows: the blocks a projection's last row tile is split
/// into.
static constexpr int64_t kRowBlock = 8;

LogicalResult splitRowBlocks(RewriterBase &rewriter, scf::ForallOp loop,
                             int64_t rows) {
  // The tile's result: one insert of a generic computed in the tile, with
  // one destination.
  auto yielding = loop.getTerminator().getYieldingOps();
  if (!llvm::hasSingleElement(yielding))
    return failure();
  auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(&*yielding.begin());
  auto consumer =
      insert ? insert.getSource().getDefiningOp<linalg::GenericOp>() : nullptr;
  if (!consumer || consumer->getBlock() != loop.getBody() ||
      consumer.getNumDpsInits() != 1 || consumer->getNumResults() != 1)
    return failure();
  // Its one dynamic loop dimension, parallel: the rows.
  SmallVector<int64_t> ranges = consumer.getStaticLoopRanges();
  std::optional<unsigned> dim;
  for (auto [d, range] : llvm::enumerate(ranges)) {
    if (!ShapedType::isDynamic(range))
      continue;
    if (dim ||
        consumer.getIteratorTypesArray()[d] != utils::IteratorType::parallel)
      return failure();
    dim = d;
  }
  if (!dim)
    return failure();

  // for j = 0 to n floordiv rows * rows step rows: the block of `rows` rows
  // at j (static), written into the destination; then the rest, n - full.
  Location loc = consumer.getLoc();
  auto tiling = cast<TilingInterface>(consumer.getOperation());
  rewriter.setInsertionPoint(consumer);
  SmallVector<Range> domain = tiling.getIterationDomain(rewriter);
  OpFoldResult n = domain[*dim].size;
  AffineExpr s0 = rewriter.getAffineSymbolExpr(0),
             s1 = rewriter.getAffineSymbolExpr(1);
  OpFoldResult full = affine::makeComposedFoldedAffineApply(
      rewriter, loc, s0.floorDiv(rows) * rows, {n});
  // The block at `offset` of `size` rows, computed on its slice of `dest`
  // (which holds the destination's values there) and inserted into it.
  auto block = [&](OpBuilder &b, OpFoldResult offset, OpFoldResult size,
                   Value dest) -> FailureOr<Value> {
    SmallVector<OpFoldResult> offsets, sizes;
    for (const Range &r : domain) {
      offsets.push_back(r.offset);
      sizes.push_back(r.size);
    }
    offsets[*dim] = offset;
    sizes[*dim] = size;
    SmallVector<OpFoldResult> at, extent;
    if (failed(tiling.getResultTilePosition(b, 0, offsets, sizes, at, extent)))
      return failure();
    SmallVector<OpFoldResult> strides(at.size(), b.getIndexAttr(1));
    Value into =
        tensor::ExtractSliceOp::create(b, loc, dest, at, extent, strides);
    FailureOr<TilingResult> tiled =
        tiling.getTiledImplementation(b, offsets, sizes);
    if (failed(tiled) || tiled->tiledOps.size() != 1)
      return failure();
    auto op = cast<DestinationStyleOpInterface>(tiled->tiledOps.front());
    op.getDpsInitsMutable()[0].assign(into);
    return tensor::InsertSliceOp::create(b, loc, op->getResult(0), dest, at,
                                         extent, strides)
        .getResult();
  };
  Value init = consumer.getDpsInits()[0];
  bool ok = true;
  auto blocks = scf::ForOp::create(
      rewriter, loc, arith::ConstantIndexOp::create(rewriter, loc, 0),
      getValueOrCreateConstantIndexOp(rewriter, loc, full),
      arith::ConstantIndexOp::create(rewriter, loc, rows), ValueRange{init},
      [&](OpBuilder &b, Location l, Value j, ValueRange acc) {
        FailureOr<Value> next = block(b, j, b.getIndexAttr(rows), acc[0]);
        ok = succeeded(next);
        scf::YieldOp::create(b, l, ok ? *next : acc[0]);
      });
  FailureOr<Value> result = failure();
  if (ok)
    result = block(rewriter, full,
                   affine::makeComposedFoldedAffineApply(rewriter, loc, s0 - s1,
                                                         {n, full}),
                   blocks.getResult(0));
  if (failed(result)) {
    // (Nothing of the original was changed: drop what was built.)
    rewriter.eraseOp(blocks);
    return failure();
  }
  rewriter.replaceOp(consumer, *result);
  return success();
}

LogicalResult padTileRows(RewriterBase &rewriter, scf::ForallOp loop) {
  Block *body = loop.getBody();
  // The one dynamic size the body's own tensors take that the body itself
  // computes (a key loop's last block has a size of its own).
  Value rows;
  WalkResult walk = loop.walk([&](tensor::EmptyOp empty) {
    for (Value size : empty.getDynamicSizes()) {
      if (size.getParentBlock() != body)
        continue;
      if (rows && size != rows)
        return WalkResult::interrupt();
      rows = size;
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted() || !rows)
    return failure();
  FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::UB, rows, /*stopCondition=*/nullptr,
      /*closedUB=*/true);
  if (failed(bound) || *bound < 1)
    return failure();
  // Its uses: the body's tensors, slices of tensors from outside (the
  // query rows, the destination), the insert.
  SmallVector<tensor::EmptyOp> empties;
  SmallVector<tensor::ExtractSliceOp> slices;
  SmallVector<tensor::ParallelInsertSliceOp> inserts;
  for (OpOperand &use : rows.getUses()) {
    Operation *user = use.getOwner();
    if (auto empty = dyn_cast<tensor::EmptyOp>(user)) {
      empties.push_back(empty);
    } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
               slice && slice->getParentOp() == loop.getOperation() &&
               !llvm::is_contained(slice.getOffsets(), rows) &&
               slice.getSourceType().getRank() ==
                   slice.getResultType().getRank()) {
      slices.push_back(slice);
    } else if (auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(user);
               insert && !llvm::is_contained(insert.getOffsets(), rows) &&
               insert.getSourceType().getRank() ==
                   insert.getDestType().getRank()) {
      inserts.push_back(insert);
    } else {
      return failure();
    }
  }
  if (inserts.empty())
    return failure();

  Location loc = loop.getLoc();
  rewriter.setInsertionPointAfterValue(rows);
  Value full = arith::ConstantIndexOp::create(rewriter, loc, *bound);
  for (tensor::EmptyOp empty : empties)
    rewriter.modifyOpInPlace(empty, [&] {
      for (OpOperand &size : empty->getOpOperands())
        if (size.get() == rows)
          size.set(full);
    });
  // Slices padded with zeros at their ends: padded query rows give finite
  // scores and are dropped at the insert.
  for (tensor::ExtractSliceOp slice : slices) {
    RankedTensorType type = slice.getResultType();
    SmallVector<int64_t> shape(type.getShape());
    for (auto [i, size] : llvm::enumerate(slice.getMixedSizes()))
      if (dyn_cast<Value>(size) == rows)
        shape[i] = *bound;
    rewriter.setInsertionPointAfter(slice);
    Value zero = arith::ConstantOp::create(
        rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
    Value padded = tensor::createPadHighOp(
        RankedTensorType::get(shape, type.getElementType()), slice, zero,
        /*nofold=*/false, loc, rewriter);
    Value cast = tensor::CastOp::create(rewriter, loc, type, padded);
    rewriter.replaceAllUsesExcept(slice, cast, padded.getDefiningOp());
  }
  // The insert takes the actual rows.
  for (tensor::ParallelInsertSliceOp insert : inserts) {
    rewriter.setInsertionPoint(loop.getTerminator());
    int64_t rank = insert.getSourceType().getRank();
    Value rowsOf = tensor::ExtractSliceOp::create(
        rewriter, loc, insert.getSource(),
        SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(0)),
        insert.getMixedSizes(),
        SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1)));
    rewriter.modifyOpInPlace(insert,
                             [&] { insert.getSourceMutable().set(rowsOf); });
  }
  return success();
}

/// Keys of the blocks a key loop's last block is split into.
static constexpr int64_t kKeyBlock = 16;

LogicalResult splitLastKeyBlock(RewriterBase &rewriter, scf::ForOp loop,
                                int64_t keys) {
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  Value iv = loop.getInductionVar(), ub = loop.getUpperBound();
  if (!step || *step <= keys || *step % keys || getConstantIntValue(ub) ||
      getConstantIntValue(loop.getLowerBound()))
    return failure();
  // Its block's size, ub - iv, the only use of ub in the body.
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx), s0 = getAffineSymbolExpr(0, ctx);
  AffineMap rest = AffineMap::get(1, 1, s0 - d0);
  SmallVector<affine::AffineApplyOp> sizes;
  for (OpOperand &use : ub.getUses()) {
    if (!loop->isProperAncestor(use.getOwner()))
      continue;
    auto apply = dyn_cast<affine::AffineApplyOp>(use.getOwner());
    if (!apply || apply.getAffineMap() != rest ||
        apply.getMapOperands()[0] != iv)
      return failure();
    sizes.push_back(apply);
  }
  if (sizes.empty())
    return failure();
  // Blocks of `keys`: min(keys, ub - iv), the full ones peeled off.
  rewriter.setInsertionPoint(loop);
  Value newStep = arith::ConstantIndexOp::create(rewriter, loop.getLoc(), keys);
  rewriter.setInsertionPointToStart(loop.getBody());
  Value size = affine::AffineMinOp::create(
      rewriter, loop.getLoc(),
      AffineMap::get(1, 1, {getAffineConstantExpr(keys, ctx), s0 - d0}, ctx),
      ValueRange{iv, ub});
  for (affine::AffineApplyOp apply : sizes)
    rewriter.replaceOp(apply, size);
  rewriter.modifyOpInPlace(loop,
                           [&] { loop.getStepMutable().assign(newStep); });
  scf::ForOp last;
  (void)scf::peelForLoopAndSimplifyBounds(rewriter, loop, last);
  return success();
}

namespace {
struct PadDynamicTilesPass final
    : impl::DatPadDynamicTilesBase<PadDynamicTilesPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    // Only functions over dynamic lengths: a static function's dynamic
    // tiles (a decode step's key loop up to its position) stay as they were.
    auto hasDynamicArgument = [](FunctionOpInterface fn) {
      return llvm::any_of(fn.getArgumentTypes(), [](Type t) {
        auto shaped = dyn_cast<ShapedType>(t);
        return shaped && !shaped.hasStaticShape();
      });
    };
    // Projections' last row tiles, flash tiles' last query tiles, key
    // loops' last blocks.
    SmallVector<scf::ForallOp> restRows, restQueries;
    SmallVector<scf::ForOp> keyLoops;
    getOperation()->walk([&](FunctionOpInterface fn) {
      if (!hasDynamicArgument(fn))
        return;
      fn.walk([&](scf::ForallOp loop) {
        auto origin = loop->getAttrOfType<StringAttr>(kOriginAttr);
        if (!origin || !loop->hasAttr(kRestOfSplitAttr))
          return;
        (origin.getValue() == "projection" ? restRows : restQueries)
            .push_back(loop);
      });
      fn.walk([&](scf::ForOp loop) { keyLoops.push_back(loop); });
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForallOp loop : restRows)
      (void)splitRowBlocks(rewriter, loop, kRowBlock);
    bool changed = false;
    for (scf::ForallOp loop : restQueries)
      changed |= succeeded(padTileRows(rewriter, loop));
    for (scf::ForOp loop : keyLoops)
      changed |= succeeded(splitLastKeyBlock(rewriter, loop, kKeyBlock));
    // The padded tiles' and the full blocks' sizes folded to constants (and
    // their types static) before the dynamic ones left are padded op by op.
    if (changed) {
      MLIRContext *ctx = &getContext();
      RewritePatternSet patterns(ctx);
      for (Dialect *dialect : ctx->getLoadedDialects())
        dialect->getCanonicalizationPatterns(patterns);
      for (RegisteredOperationName op : ctx->getRegisteredOperations())
        op.getCanonicalizationPatterns(patterns, ctx);
      (void)applyPatternsGreedily(getOperation(), std::move(patterns));
    }
    getOperation()->walk([&](FunctionOpInterface fn) {
      if (!hasDynamicArgument(fn))
        return;
      // (Generics and transposes; copies and fills stay loops.)
      fn.walk([&](linalg::LinalgOp op) {
        if (isa<linalg::GenericOp, linalg::TransposeOp>(op))
          ops.push_back(op);
      });
    });
    for (linalg::LinalgOp op : ops)
      (void)padDynamicTile(rewriter, op);
  }
};
} // namespace
} // namespace mlir::dat
