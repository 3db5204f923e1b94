//===- RegisterTiles.cpp - the dat-register-tiles pass --------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//
//
// The CPU's vector layer (docs/cpu-codegen.md): every static f32
// contraction (QKᵀ, PV and the other products of the attention tiles, the
// projections) is tiled to a register tile of R rows × 2 vectors, its
// vector-side operand packed (PackOperands.cpp), and the tile rewritten as
// a `vector.contract` lowered to FMA outer products, the accumulators kept
// in registers over the reduction loop; the tile bodies' other ops are
// vectorized row by row.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"
#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"
#include "dat/Pass/OptionChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
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
  /// The broadcast (row) dimension, if any, and how many rows fit the
  /// accumulator registers.
  std::optional<unsigned> rowDim;
  int64_t rowBudget = 0;
};

/// The largest divisor of `extent` not above `limit`.
int64_t largestDivisor(int64_t extent, int64_t limit) {
  for (int64_t d = std::min(extent, limit); d > 1; --d)
    if (extent % d == 0)
      return d;
  return 1;
}

/// The register tile of `op`, or failure where the vector layer does not
/// apply (not a static f32 contraction, or no output dimension of at least
/// 4 that only one input has).
FailureOr<RegisterTile> planRegisterTile(linalg::GenericOp op,
                                         int64_t vectorWidth, int64_t rows,
                                         int64_t vectorRegisters) {
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
    // Whole registers where they divide the extent (a head of 80 or 48:
    // one register, more rows), else a multiple of 4 lanes.
    for (int64_t registers = vectorRegisters; registers >= 1; --registers)
      if (int64_t t = registers * vectorWidth;
          (registers <= 2 || registers == vectorRegisters) &&
          extents[d] % t == 0) {
        vectorTile = t;
        break;
      }
    // Else a power of two lanes that divides it: vectors of other lengths
    // (20 lanes for a block of 40 keys) are split by LLVM into a register
    // and a piece, with shuffles between them.
    for (int64_t t = 2 * vectorWidth; t >= 4 && !vectorTile; t /= 2)
      if (extents[d] % t == 0)
        vectorTile = t;
    // No divisor of a few lanes (17 tokens, 40 keys): partial tiles of
    // whole registers, whose vectors are masked.
    if (vectorTile < std::min<int64_t>(vectorWidth / 2, extents[d]))
      vectorTile = std::min<int64_t>(
          2 * vectorWidth,
          std::max<int64_t>(4, llvm::PowerOf2Ceil(extents[d])));
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
    // (A one-register row: at most 16 rows, which are as many broadcasts
    // per reduction step as the loads can issue.)
    int64_t budget = registersPerRow == 1 ? std::min<int64_t>(2 * rows, 16)
                                          : 2 * rows / registersPerRow;
    budget = std::max<int64_t>(1, budget);
    int64_t divisor = largestDivisor(extents[*rowDim], budget);
    // Rows the budget does not divide are split into full tiles and a
    // static rest (tileContractionSplittingRows) where most rows are in
    // full tiles (12 of 64 queries: 5 tiles of 12 and one of 4).
    int64_t extent = extents[*rowDim];
    if (divisor == budget || extent <= budget)
      tile.sizes[*rowDim] = divisor == budget ? budget : extent;
    else if (extent >= 2 * budget || 2 * divisor < budget)
      tile.sizes[*rowDim] = budget;
    else
      tile.sizes[*rowDim] = divisor;
    tile.rowDim = *rowDim;
    tile.rowBudget = budget;
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

/// Vector registers per register-tile row for `op`: the option's inside
/// the flash tiles' key loops (QKᵀ and PV on 64 × 64 blocks), two for the
/// projections, whose weights' panels are blocked by two registers.
int64_t registersFor(Operation *op, const RegisterTiling &options) {
  return op->getParentOfType<scf::ForOp>() ? options.vectorRegisters : 2;
}

/// `op`'s register tile under `options`.
FailureOr<RegisterTile> planFor(linalg::GenericOp op,
                                const RegisterTiling &options) {
  return planRegisterTile(op, options.vectorWidth, options.rows,
                          registersFor(op, options));
}

/// The register tile of `op`, a part of a planned contraction (blocked or
/// split), which must have one: an error otherwise.
FailureOr<RegisterTile> replan(linalg::GenericOp op,
                               const RegisterTiling &options) {
  FailureOr<RegisterTile> tile = planFor(op, options);
  if (failed(tile))
    op.emitError("dat-register-tiles: cannot plan a blocked or split "
                 "contraction");
  return tile;
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
  SmallVector<bool> inBounds; // the last operand's (the output's) stays
  SmallVector<AffineMap> contractMaps;
  SmallVector<AffineMap> transferMaps;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = maps[operand.getOperandNumber()];
    auto type = cast<RankedTensorType>(operand.get().getType());
    SmallVector<int64_t> shape;
    SmallVector<AffineExpr> transferResults, contractResults;
    inBounds.clear();
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
                                      transferMaps[2], inBounds)
          ->getResult(0);
  rewriter.replaceOp(op, written);
  return success();
}

/// Loop-invariant code out of `loop`, but for the tensors a tile writes
/// (fills, empty tensors: DPS destinations): hoisted out of a tile loop, one
/// buffer would be shared by every tile, and bufferization would copy it
/// for each instead.
void moveInvariantCode(LoopLikeOpInterface loop) {
  moveLoopInvariantCode(
      loop.getLoopRegions(),
      [&](Value value, Region *) { return loop.isDefinedOutsideOfLoop(value); },
      [&](Operation *op, Region *) {
        return !isa<DestinationStyleOpInterface, tensor::EmptyOp>(op) &&
               isMemoryEffectFree(op) && isSpeculatable(op);
      },
      [&](Operation *op, Region *) { loop.moveOutOfLoop(op); });
}

/// Where a contraction's output was `fill`, read by nothing else: its
/// register tile's accumulator, hoisted out of the innermost (reduction)
/// loop `reduction`, starts as `value` in registers, and the fill goes (its
/// destination is only written: every tile is visited once). Fails,
/// changing nothing, where the accumulator does not leave the loop or the
/// loop is not the reduction.
LogicalResult startFromFill(RewriterBase &rewriter, linalg::FillOp fill,
                            Attribute value, LoopLikeOpInterface reduction) {
  // The reduction loop reads the tile's accumulator each step; hoisted, it
  // is read once before the loop (a vector iter_arg initialised by a
  // transfer_read) and written once after.
  moveInvariantCode(reduction);
  LoopLikeOpInterface loop = hoistLoopInvariantSubsets(rewriter, reduction);
  vector::TransferReadOp read;
  for (Value init : loop.getInits())
    if (auto r = init.getDefiningOp<vector::TransferReadOp>()) {
      if (read)
        return failure();
      read = r;
    }
  // Only the output's read is invariant in a contraction's reduction loop:
  // its inputs are read at the reduction index.
  if (!read || !read->hasOneUse())
    return failure();
  auto type = cast<VectorType>(read.getType());
  rewriter.setInsertionPoint(read);
  Value scalar = arith::ConstantOp::create(rewriter, read.getLoc(),
                                           cast<TypedAttr>(value));
  if (scalar.getType() != type.getElementType())
    return failure();
  rewriter.replaceOpWithNewOp<vector::BroadcastOp>(read, type, scalar);
  rewriter.replaceOp(fill, fill.getOutputs()[0]);
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
                              RegisterTile tile,
                              const RegisterTiling &options) {
  MLIRContext *ctx = rewriter.getContext();
  if (failed(packVectorOperand(rewriter, op, tile.vectorOperand, tile.vectorDim,
                               options.packBlocks)))
    return success();
  // A weight's register panels contiguous (a blocked layout).
  if (options.blockWeights) {
    FailureOr<linalg::GenericOp> blocked =
        blockVectorOperand(rewriter, op, tile.vectorOperand, tile.vectorDim,
                           tile.sizes[tile.vectorDim]);
    if (succeeded(blocked)) {
      op = *blocked;
      FailureOr<RegisterTile> blockedTile = replan(op, options);
      if (failed(blockedTile))
        return failure();
      tile = *blockedTile;
    }
  }
  // Multiply-adds may fuse into FMAs (each sum keeps its order).
  op.getBody()->walk([&](arith::ArithFastMathInterface arith) {
    if (isa<arith::AddFOp, arith::MulFOp>(arith))
      arith->setAttr(
          arith.getFastMathAttrName(),
          arith::FastMathFlagsAttr::get(ctx, arith::FastMathFlags::contract));
  });
  // An output filled with a constant, read by nothing else: each register
  // tile's accumulators start from that constant in registers.
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  Attribute fillValue;
  if (!fill || !fill->hasOneUse() || op.getNumReductionLoops() != 1 ||
      !matchPattern(fill.getInputs()[0], m_Constant(&fillValue)))
    fill = nullptr;
  // A projection's reduction in blocks (the outermost loop), the row tiles
  // innermost: each block of a weight panel is read from L1 by every row
  // tile, rather than the whole panel streamed from L2 for each.
  SmallVector<int64_t> interchange = tile.interchange;
  // (The first block, peeled, takes the fill: its accumulators start from
  // the constant in registers and the output is not filled first.)
  linalg::GenericOp firstBlock;
  if (int64_t block = options.reductionTile;
      block > 0 && !op->getParentOfType<scf::ForOp>() && tile.rowDim) {
    unsigned k = interchange.back();
    int64_t extent = op.getStaticLoopRanges()[k];
    if (extent > block && extent % block == 0 &&
        op.getNumReductionLoops() == 1) {
      SmallVector<int64_t> sizes(op.getNumLoops(), 0);
      sizes[k] = block;
      FailureOr<scf::SCFTilingResult> blocks =
          tileWithLoops(rewriter, op, sizes);
      if (failed(blocks) || blocks->tiledOps.size() != 1 ||
          blocks->loops.size() != 1)
        return op.emitError("dat-register-tiles: cannot block the reduction");
      rewriter.replaceOp(op, blocks->replacements);
      op = cast<linalg::GenericOp>(blocks->tiledOps.front());
      auto blockLoop = cast<scf::ForOp>(blocks->loops.front());
      scf::ForOp first;
      if (fill && succeeded(scf::peelForLoopFirstIteration(rewriter, blockLoop,
                                                           first))) {
        first.walk([&](linalg::GenericOp g) { firstBlock = g; });
        if (!firstBlock || failed(first.promoteIfSingleIteration(rewriter)))
          return op.emitError(
              "dat-register-tiles: cannot peel the first reduction block");
      } else {
        // The blocks accumulate into the filled output.
        fill = nullptr;
      }
    }
    auto row = llvm::find(interchange, *tile.rowDim);
    unsigned rowDim = *row;
    interchange.erase(row);
    interchange.insert(interchange.end() - op.getNumReductionLoops(), rowDim);
  }
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  for (auto [d, size] : llvm::enumerate(tile.sizes))
    if (size)
      extents[d] = size;
  // Register tiles of `g`, vectorized; `init` its output's fill, if any.
  auto registerTiles = [&](linalg::GenericOp g,
                           linalg::FillOp init) -> LogicalResult {
    FailureOr<scf::SCFTilingResult> tiled =
        tileWithLoops(rewriter, g, tile.sizes, interchange);
    if (failed(tiled))
      return g.emitError("dat-register-tiles: cannot tile the contraction");
    // (Where its vector operand is read in place in strips far apart: the
    // next block prefetched in order.)
    (void)prefetchNextStridedBlock(rewriter, g, tile.vectorOperand,
                                   tile.sizes[tile.vectorDim], tile.sizes,
                                   interchange, tiled->loops);
    rewriter.replaceOp(g, tiled->replacements);
    for (Operation *t : tiled->tiledOps)
      if (failed(vectorizeRegisterTile(rewriter, cast<linalg::GenericOp>(t),
                                       extents)))
        return failure();
    if (init && tiled->tiledOps.size() == 1 && !tiled->loops.empty())
      (void)startFromFill(rewriter, init, fillValue,
                          cast<LoopLikeOpInterface>(tiled->loops.back()));
    return success();
  };
  // (The blocks after a peeled first one accumulate into its result.)
  if (firstBlock && failed(registerTiles(firstBlock, fill)))
    return failure();
  return registerTiles(op, firstBlock ? nullptr : fill);
}

/// Tiles `op` as `tile` says; where the rows that fit the registers do not
/// divide the row extent (12 rows of 64 queries), `op` is split first into
/// the rows they divide and the rest, each part tiled by its own plan, so
/// that every register tile is static (a masked partial tile would check
/// each row's bound in every tile).
LogicalResult tileContractionSplittingRows(RewriterBase &rewriter,
                                           linalg::GenericOp op,
                                           const RegisterTile &tile,
                                           const RegisterTiling &options) {
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (!tile.rowDim || tile.sizes[*tile.rowDim] != tile.rowBudget ||
      extents[*tile.rowDim] <= tile.rowBudget ||
      extents[*tile.rowDim] % tile.rowBudget == 0)
    return tileContraction(rewriter, op, tile, options);
  // The packing first, once for both parts.
  if (failed(packVectorOperand(rewriter, op, tile.vectorOperand, tile.vectorDim,
                               options.packBlocks)))
    return success();
  int64_t full = extents[*tile.rowDim] / tile.rowBudget * tile.rowBudget;
  rewriter.setInsertionPoint(op);
  auto [head, rest] =
      linalg::splitOp(rewriter, cast<TilingInterface>(op.getOperation()),
                      *tile.rowDim, rewriter.getIndexAttr(full));
  if (!head || !rest)
    return op.emitError("dat-register-tiles: cannot split the rows");
  for (TilingInterface part : {head, rest}) {
    auto generic = cast<linalg::GenericOp>(part.getOperation());
    FailureOr<RegisterTile> partTile = replan(generic, options);
    if (failed(partTile) ||
        failed(tileContraction(rewriter, generic, *partTile, options)))
      return failure();
  }
  return success();
}

/// Whether `tile`, planned for `op`, is better computed as dot products:
/// its vector dimension fills under one register (the relational tile's
/// Σ_j p[h,i,j]·r[l,i,j], 4 relations: 4-lane FMAs, each relation's value
/// gathered across rows; 12: masked 16-lane FMAs on a transposed copy),
/// while the reduction, innermost in both inputs and in the loops, fills
/// whole registers. Returns the vector dimension, to keep in the rows'
/// vectors.
std::optional<unsigned> dotFormDim(linalg::GenericOp op,
                                   const RegisterTile &tile,
                                   int64_t vectorWidth) {
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (extents[tile.vectorDim] >= vectorWidth ||
      op.getNumReductionLoops() != 1 ||
      !op->getParentOfType<LoopLikeOpInterface>())
    return std::nullopt;
  unsigned k = op.getNumLoops() - 1;
  if (op.getIteratorTypesArray()[k] != utils::IteratorType::reduction ||
      extents[k] < vectorWidth)
    return std::nullopt;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (map.getNumResults() == 0 ||
        map.getResults().back() != getAffineDimExpr(k, op.getContext()))
      return std::nullopt;
  }
  return tile.vectorDim;
}

/// `op`'s i1 inputs (key masks) as i8, converted once before it: a memref
/// holds an i1 per byte, so a vector of i1 loaded from it would read bits
/// (and left to LLVM, each row rebuilt its mask register from bytes: a
/// third of an APE tree tile whose keys are masked). The body truncates
/// them back.
void widenBoolInputs(RewriterBase &rewriter, linalg::GenericOp op) {
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    if (!type || !type.getElementType().isInteger(1))
      continue;
    Location loc = op.getLoc();
    Type i8 = rewriter.getI8Type();
    rewriter.setInsertionPoint(op);
    Value wide = buildElementwise(
        rewriter, loc, type.clone(i8), {input->get()},
        {rewriter.getMultiDimIdentityMap(type.getRank())},
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          return arith::ExtUIOp::create(b, l, i8, args[0]);
        });
    BlockArgument arg = op.getMatchingBlockArgument(input);
    rewriter.modifyOpInPlace(op, [&] {
      input->set(wide);
      arg.setType(i8);
    });
    rewriter.setInsertionPointToStart(op.getBody());
    auto narrow =
        arith::TruncIOp::create(rewriter, loc, rewriter.getI1Type(), arg);
    rewriter.replaceAllUsesExcept(arg, narrow, narrow.getOperation());
  }
}

/// The order of the row loops of `op` tiled by `sizes` (0: not tiled): a
/// loop that the input with the largest row (the elements one iteration
/// reads) does not index goes innermost, so that the row stays in L1 while
/// the other inputs move. The relational tile's dot products
/// Σ_j p[h,i,j]·r[l,i,j] read all relations of a query row, 12 × 64 keys,
/// per (h, i): with the heads innermost each row is read from L2 once, not
/// once per head (both inputs, 12 × 64 × 64 floats, are larger than L1).
/// Empty (the loops' own order) where no loop is better. (Taken for the
/// dot products only: the other rows' inputs index every loop.)
SmallVector<int64_t> rowLoopOrder(linalg::GenericOp op,
                                  ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  OpOperand *largest = nullptr;
  int64_t largestRow = 0;
  for (OpOperand *input : op.getDpsInputOperands()) {
    int64_t row = 1;
    for (AffineExpr e : op.getMatchingIndexingMap(input).getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(e);
          dim && !sizes[dim.getPosition()])
        row *= extents[dim.getPosition()];
    if (row > largestRow) {
      largestRow = row;
      largest = input;
    }
  }
  if (!largest)
    return {};
  AffineMap map = op.getMatchingIndexingMap(largest);
  std::optional<unsigned> inner;
  for (unsigned d = 0; d < sizes.size(); ++d)
    if (sizes[d] != 0 && extents[d] > 1 && !map.isFunctionOfDim(d))
      inner = d;
  if (!inner)
    return {};
  SmallVector<int64_t> order;
  for (unsigned d = 0; d < sizes.size(); ++d)
    if (d != *inner)
      order.push_back(d);
  order.push_back(*inner);
  return order;
}

/// The other static f32 ops of the tile bodies (the online softmax's scale,
/// row maxima, exponentials, row sums and rescaling): tiled to rows along
/// the innermost dimension of their largest operand, and each row
/// vectorized (`linalg::vectorize`), so that no reduction or exponential is
/// left to scalar loops.
LogicalResult vectorizeRows(RewriterBase &rewriter, linalg::GenericOp op,
                            ArrayRef<unsigned> keep = {}) {
  if (!op.hasPureTensorSemantics() ||
      !op->getParentOfType<LoopLikeOpInterface>() ||
      (linalg::isaContractionOpInterface(op) && keep.empty()))
    return success();
  Value largest;
  int64_t largestSize = 0;
  // f32 results; the inputs may be integers too (APE's tree ancestors,
  // compared in the tiles' per-pair decay; key masks).
  for (OpOperand &o : op->getOpOperands()) {
    Value v = o.get();
    auto type = dyn_cast<RankedTensorType>(v.getType());
    Type element = type ? type.getElementType() : Type();
    if (!type || !type.hasStaticShape() ||
        !(element.isF32() ||
          (op.isDpsInput(&o) && element.isSignlessInteger())))
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
    if (extents[d] == 1 || llvm::is_contained(keep, d))
      sizes[d] = 0;
  sizes[vectorDim] = row == extents[vectorDim] ? 0 : row;

  widenBoolInputs(rewriter, op);
  SmallVector<Operation *> rows = {op};
  if (llvm::any_of(sizes, [](int64_t s) { return s != 0; })) {
    FailureOr<scf::SCFTilingResult> tiled = tileWithLoops(
        rewriter, op, sizes,
        keep.empty() ? SmallVector<int64_t>() : rowLoopOrder(op, sizes));
    if (failed(tiled))
      return op.emitError("dat-register-tiles: cannot tile to rows");
    rewriter.replaceOp(op, tiled->replacements);
    rows = tiled->tiledOps;
  }
  for (Operation *t : rows) {
    // A reduction after the row in the loops (APE's tree path lengths, a
    // sum over depths, one depth a row) is a trailing unit loop here; the
    // unit dims dropped first, so that the row is a 1-D vector (a [64, 1]
    // vector's compares and selects were scalarized). Leading unit dims
    // need nothing: the vector patterns below cast them away.
    auto generic = dyn_cast<linalg::GenericOp>(t);
    if (generic &&
        llvm::any_of(
            llvm::drop_begin(generic.getIteratorTypesArray(), vectorDim + 1),
            linalg::isReductionIterator)) {
      linalg::ControlDropUnitDims control;
      control.rankReductionStrategy = linalg::ControlDropUnitDims::
          RankReductionStrategy::ExtractInsertSlice;
      rewriter.setInsertionPoint(t);
      FailureOr<linalg::DropUnitDimsResult> dropped =
          linalg::dropUnitDims(rewriter, generic, control);
      if (succeeded(dropped)) {
        rewriter.replaceOp(t, dropped->replacements);
        t = dropped->resultOp;
      }
    }
    rewriter.setInsertionPoint(t);
    FailureOr<linalg::VectorizationResult> vectorized =
        linalg::vectorize(rewriter, t);
    if (failed(vectorized))
      continue; // left to the loop vectorizer
    rewriter.replaceOp(t, vectorized->replacements);
  }
  return success();
}

} // namespace

LogicalResult registerTileAndVectorize(Operation *root,
                                       const RegisterTiling &options) {
  MLIRContext *ctx = root->getContext();
  IRRewriter rewriter(ctx);
  SmallVector<linalg::GenericOp> generics;
  root->walk([&](linalg::GenericOp op) { generics.push_back(op); });
  for (linalg::GenericOp op : generics) {
    foldTransposedInputs(rewriter, op);
    bool inLoop = op->getParentOfType<LoopLikeOpInterface>() != nullptr;
    FailureOr<RegisterTile> tile = planFor(op, options);
    // (Without `outsideLoops`, projections are left to the library's GEMM;
    // contractions of other forms — HYLA's [in, out] kernels — are not.)
    if (succeeded(tile)) {
      if (std::optional<unsigned> keep =
              dotFormDim(op, *tile, options.vectorWidth)) {
        if (failed(vectorizeRows(rewriter, op, {*keep})))
          return failure();
        continue;
      }
    }
    if (succeeded(tile) &&
        (inLoop || options.outsideLoops || !hasProjectionGemmForm(op))) {
      if (failed(tileContractionSplittingRows(rewriter, op, *tile, options)))
        return failure();
      continue;
    }
    if (failed(vectorizeRows(rewriter, op)))
      return failure();
  }

  // Transposes of tile loops' results (the packed key heads made above
  // included) into the loops.
  SmallVector<linalg::TransposeOp> transposes;
  root->walk([&](linalg::TransposeOp op) { transposes.push_back(op); });
  for (linalg::TransposeOp op : transposes)
    if (failed(sinkTransposeIntoForall(rewriter, op)))
      (void)parallelizeTranspose(rewriter, op);
  // The transposes in tile loops in 16 × 16 blocks transposed in registers
  // (AVX-512's shuffles; scalar loops with gathers otherwise).
  if (options.vectorWidth == 16) {
    SmallVector<linalg::TransposeOp> candidates;
    root->walk([&](linalg::TransposeOp op) { candidates.push_back(op); });
    SmallVector<Operation *> blocks;
    for (linalg::TransposeOp op : candidates)
      if (vector::TransposeOp t =
              vectorizeTileTranspose(rewriter, op, options.vectorWidth))
        blocks.push_back(t);
    RewritePatternSet shuffles(ctx);
    vector::populateVectorTransposeLoweringPatterns(
        shuffles, vector::VectorTransposeLowering::Shuffle16x16);
    if (!blocks.empty() &&
        failed(applyOpPatternsGreedily(blocks, std::move(shuffles))))
      return failure();
  }

  // The tiles' multiply-reductions as contractions, lowered to outer
  // products (one FMA per accumulator vector and reduction step).
  RewritePatternSet patterns(ctx);
  vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
  vector::populateVectorTransferDropUnitDimsPatterns(patterns);
  // A reduction over unit dimensions only (HYLA's sum over heads, tiled to
  // one head at a time) is an elementwise add: upstream's lowering would
  // transpose it into one single-lane reduction per element.
  vector::MultiDimReductionOp::getCanonicalizationPatterns(patterns, ctx);
  // Several rows' reductions (the relational tile's dot products) share
  // their horizontal trees; a single row's goes upstream's way.
  // (Their maxima with the row maxima's flags below.)
  populateTransposingReductionPatterns(patterns, options.vectorWidth,
                                       arith::FastMathFlags::nnan |
                                           arith::FastMathFlags::nsz,
                                       /*benefit=*/2);
  vector::populateVectorMultiReductionLoweringPatterns(
      patterns, vector::VectorMultiReductionLowering::InnerReduction);
  vector::populateVectorContractLoweringPatterns(
      patterns, vector::VectorContractLowering::OuterProduct);
  vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
  vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
  if (failed(applyPatternsGreedily(root, std::move(patterns))))
    return failure();

  // The tiles' row maxima (the online softmax's) may ignore NaN and the
  // sign of zero: the maximum only shifts the exponentials, and a NaN score
  // makes its row NaN through them all the same. IEEE `maximum`'s NaN and
  // -0 checks would make each reduction a serial chain of scalar compares.
  root->walk([&](vector::ReductionOp reduction) {
    if (reduction.getKind() != vector::CombiningKind::MAXIMUMF ||
        !reduction->getParentOfType<LoopLikeOpInterface>())
      return;
    reduction.setFastmath(reduction.getFastmath() | arith::FastMathFlags::nnan |
                          arith::FastMathFlags::nsz);
  });

  // The accumulators out of the reduction loops (into iter_args).
  // (Partial tiles' sizes first, so that their slices are invariant.)
  root->walk([&](LoopLikeOpInterface loop) {
    moveInvariantCode(loop);
    hoistLoopInvariantSubsets(rewriter, loop);
  });

  // The ops between the tile loops on every thread too (not contractions:
  // a library GEMM takes a whole projection; their bodies are left to the
  // loop vectorizer, as before).
  SmallVector<linalg::GenericOp> glue;
  root->walk([&](linalg::GenericOp op) {
    if (!linalg::isaContractionOpInterface(op))
      glue.push_back(op);
  });
  for (linalg::GenericOp op : glue)
    (void)parallelizeGlue(rewriter, op, /*minIterations=*/1 << 16,
                          /*minTiles=*/8);
  return success();
}

namespace {
struct RegisterTilesPass final : impl::DatRegisterTilesBase<RegisterTilesPass> {
  using Base::Base;
  void runOnOperation() override {
    Operation *op = getOperation();
    StringRef pass = getArgument();
    if (failed(checkOptionRange(op, pass, "vector-width", vectorWidth, 0)) ||
        failed(checkOptionRange(op, pass, "rows", rows, 1)) ||
        failed(checkOptionRange(op, pass, "vector-registers", vectorRegisters,
                                1)) ||
        failed(checkOptionRange(op, pass, "reduction-tile", reductionTile, 0)))
      return signalPassFailure();
    if (vectorWidth > 0 &&
        failed(registerTileAndVectorize(
            getOperation(),
            RegisterTiling{vectorWidth, rows, outsideLoops, blockWeights,
                           vectorRegisters, packBlocks, reductionTile})))
      signalPassFailure();
  }
};
} // namespace
} // namespace mlir::dat
