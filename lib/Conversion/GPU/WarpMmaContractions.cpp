//===- WarpMmaContractions.cpp - tile contractions as warp MMA tiles ------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// A bf16 contraction of a tile body (QKᵀ, PV, ...) as the vector program
// that warp-level tensor cores run: 16×8 output tiles over the block's
// warps, each the sum over 16-wide reduction steps of
// vector.contract(A 16×16, B 8×16 (n×k), C 16×8) in f32. The program is
// ordinary vector IR: the CPU emulation of the GPU mapping runs it as it is,
// and dat-gpu-warp-mma-to-nvvm turns it into mma.sync on the device.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/WarpMma.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallBitVector.h"

#include <algorithm>

namespace mlir::dat {

/// `v` as the block argument it is, through one arith.extf from bf16.
static BlockArgument throughExtension(Value v) {
  if (auto ext = v.getDefiningOp<arith::ExtFOp>())
    v = ext.getIn();
  return dyn_cast<BlockArgument>(v);
}

/// Whether `op`'s body is `out + a * b` (a, b its two inputs, either order,
/// each possibly widened). (linalg::detail::isContractionBody would also
/// take other unary ops on the way, a negation say, which the MMA drops.)
static bool isMultiplyAdd(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  if (yield.getNumOperands() != 1 || body->getNumArguments() != 3)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body->getArgument(2);
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  BlockArgument x = throughExtension(mul.getLhs());
  BlockArgument y = throughExtension(mul.getRhs());
  if (!x || !y || x.getOwner() != body || y.getOwner() != body)
    return false;
  return (x.getArgNumber() == 0 && y.getArgNumber() == 1) ||
         (x.getArgNumber() == 1 && y.getArgNumber() == 0);
}

/// The contraction's m, n, k and batch loops: m in A and C, n in B and C,
/// k (the one reduction) in A and B, batch loops in C and where they like.
/// C's map is a projected permutation.
/// m, n and k are plain dims of the operands that use them; batch loops may
/// also appear in expressions of batch loops only (a grouped-query head,
/// `h floordiv 2`).
std::optional<linalg::ContractionDimensions> warpMmaDims(linalg::LinalgOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto uses = [&](unsigned operand, unsigned loop) {
    return maps[operand].isFunctionOfDim(loop);
  };
  linalg::ContractionDimensions dims;
  for (auto [loop, iterator] : llvm::enumerate(op.getIteratorTypesArray())) {
    bool a = uses(0, loop), b = uses(1, loop), c = uses(2, loop);
    bool parallel = iterator == utils::IteratorType::parallel;
    if (parallel && a && c && !b)
      dims.m.push_back(loop);
    else if (parallel && b && c && !a)
      dims.n.push_back(loop);
    else if (!parallel && a && b && !c)
      dims.k.push_back(loop);
    else if (parallel && c)
      dims.batch.push_back(loop);
    else
      return std::nullopt;
  }
  if (dims.m.empty() || dims.n.empty() || dims.k.size() != 1)
    return std::nullopt;
  // Of several m (or n) loops, the innermost in C is the tile's, the others
  // are batch loops (e.g. a projection's [1, rows, in] operand).
  AffineMap out = maps[2];
  auto innermostInC = [&](SmallVector<unsigned, 2> &loops) {
    llvm::sort(loops, [&](unsigned x, unsigned y) {
      return *out.getResultPosition(getAffineDimExpr(x, op.getContext())) <
             *out.getResultPosition(getAffineDimExpr(y, op.getContext()));
    });
    dims.batch.append(loops.begin(), std::prev(loops.end()));
    loops.erase(loops.begin(), std::prev(loops.end()));
  };
  if (!out.isProjectedPermutation())
    return std::nullopt;
  innermostInC(dims.m);
  innermostInC(dims.n);
  llvm::SmallBitVector tileLoops(op.getNumLoops());
  for (unsigned loop : {dims.m[0], dims.n[0], dims.k[0]})
    tileLoops.set(loop);
  for (AffineMap map : maps)
    for (AffineExpr expr : map.getResults()) {
      if (isa<AffineDimExpr>(expr))
        continue;
      for (unsigned loop : tileLoops.set_bits())
        if (expr.isFunctionOfDim(loop))
          return std::nullopt;
    }
  return dims;
}

bool isWarpMmaContraction(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !isMultiplyAdd(op) || !warpMmaDims(op))
    return false;
  auto elementType = [](Value v) { return getElementTypeOrSelf(v.getType()); };
  Type a = elementType(op.getDpsInputs()[0]);
  Type b = elementType(op.getDpsInputs()[1]);
  // bf16 operands (an f32 one is rounded to bf16 for the product, as a
  // bf16 program's probabilities are), f32 accumulation. An all-f32
  // contraction is an fp32 program's: it stays on the CUDA cores.
  if (!(a.isBF16() || a.isF32()) || !(b.isBF16() || b.isF32()) ||
      !(a.isBF16() || b.isBF16()) || !elementType(op.getDpsInits()[0]).isF32())
    return false;
  // The output is written once per element: its map is a permutation of
  // the parallel loops.
  AffineMap out = op.getIndexingMapsArray()[2];
  if (!out.isProjectedPermutation() ||
      out.getNumResults() + 1 != op.getNumLoops())
    return false;
  return llvm::all_of(op->getOperands(),
                      [](Value v) { return isa<MemRefType>(v.getType()); });
}

namespace {

/// Where a contraction's loops are within one warp tile.
struct WarpTile {
  linalg::ContractionDimensions dims;
  SmallVector<Value> ivs; // one per loop; null where not yet placed
  /// Whether a tile never reaches past the loop's extent, per m/n/k loop.
  DenseMap<unsigned, bool> inBounds;
};

} // namespace

/// Where the tile of `operand` whose vector dims are the loops `rows` and
/// `cols` starts, and how its memref dims map to them.
static std::pair<SmallVector<Value>, AffineMap>
tileAccess(OpBuilder &b, Location loc, linalg::LinalgOp op, OpOperand &operand,
           ArrayRef<Value> ivs, unsigned rows, unsigned cols) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  MLIRContext *ctx = op.getContext();
  SmallVector<Value> indices;
  SmallVector<AffineExpr> results(2);
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim) {
      // An expression of batch loops (warpMmaDims).
      indices.push_back(affine::makeComposedAffineApply(
          b, loc, map.getSubMap({static_cast<unsigned>(i)}),
          getAsOpFoldResult(ivs)));
      continue;
    }
    unsigned loop = dim.getPosition();
    indices.push_back(ivs[loop]);
    if (loop == rows)
      results[0] = getAffineDimExpr(i, ctx);
    else if (loop == cols)
      results[1] = getAffineDimExpr(i, ctx);
  }
  return {indices, AffineMap::get(map.getNumResults(), 0, results, ctx)};
}

/// Reads `operand` of `op` as a vector of `shape` whose dims are the loops
/// `rows` and `cols`, at the tile's current loop positions.
Value readWarpMmaTile(OpBuilder &b, Location loc, linalg::LinalgOp op,
                      OpOperand &operand, ArrayRef<Value> ivs, unsigned rows,
                      unsigned cols, ArrayRef<int64_t> shape,
                      ArrayRef<bool> inBounds) {
  auto [indices, permutation] =
      tileAccess(b, loc, op, operand, ivs, rows, cols);
  Type element = getElementTypeOrSelf(operand.get().getType());
  Value pad =
      arith::ConstantOp::create(b, loc, element, b.getZeroAttr(element));
  return vector::TransferReadOp::create(
      b, loc, VectorType::get(shape, element), operand.get(), indices,
      AffineMapAttr::get(permutation), pad, /*mask=*/Value(),
      b.getBoolArrayAttr(inBounds));
}

SmallVector<Value> readWarpMmaBTiles(OpBuilder &b, Location loc,
                                     linalg::LinalgOp op, OpOperand &operand,
                                     ArrayRef<Value> ivs, unsigned rows,
                                     unsigned cols, int64_t count,
                                     ArrayRef<bool> inBounds) {
  if (count == 1)
    return {readWarpMmaTile(b, loc, op, operand, ivs, rows, cols,
                            {kWarpMmaN, kWarpMmaK}, inBounds)};
  assert(count == 2 && "one or two B tiles");
  Value pair = readWarpMmaTile(b, loc, op, operand, ivs, rows, cols,
                               {2 * kWarpMmaN, kWarpMmaK}, inBounds);
  SmallVector<Value> tiles;
  for (int64_t i = 0; i < 2; ++i)
    tiles.push_back(vector::ExtractStridedSliceOp::create(
        b, loc, pair, ArrayRef<int64_t>{i * kWarpMmaN, 0},
        ArrayRef<int64_t>{kWarpMmaN, kWarpMmaK}, ArrayRef<int64_t>{1, 1}));
  return tiles;
}

static Value readTile(OpBuilder &b, Location loc, linalg::LinalgOp op,
                      OpOperand &operand, const WarpTile &tile, unsigned rows,
                      unsigned cols, ArrayRef<int64_t> shape) {
  return readWarpMmaTile(
      b, loc, op, operand, tile.ivs, rows, cols, shape,
      {tile.inBounds.lookup(rows), tile.inBounds.lookup(cols)});
}

Value warpMmaOperand(OpBuilder &b, Location loc, Value tile) {
  auto type = cast<VectorType>(tile.getType());
  if (type.getElementType().isF32())
    tile = arith::TruncFOp::create(b, loc, type.clone(b.getBF16Type()), tile);
  return arith::ExtFOp::create(b, loc, type.clone(b.getF32Type()), tile);
}

SmallVector<AffineMap> warpMmaIndexingMaps(MLIRContext *ctx) {
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  return {AffineMap::get(3, 0, {m, k}, ctx), AffineMap::get(3, 0, {n, k}, ctx),
          AffineMap::get(3, 0, {m, n}, ctx)};
}

Value buildWarpMmaContract(OpBuilder &b, Location loc, Value a, Value bTile,
                           Value acc) {
  MLIRContext *ctx = b.getContext();
  auto iterators = b.getArrayAttr(
      {vector::IteratorTypeAttr::get(ctx, vector::IteratorType::parallel),
       vector::IteratorTypeAttr::get(ctx, vector::IteratorType::parallel),
       vector::IteratorTypeAttr::get(ctx, vector::IteratorType::reduction)});
  return vector::ContractionOp::create(
      b, loc, a, bTile, acc, b.getAffineMapArrayAttr(warpMmaIndexingMaps(ctx)),
      iterators);
}

bool hasScalarElementwiseBody(linalg::GenericOp op, bool allowIndex) {
  auto scalar = [](Type t) { return t.isIntOrIndexOrFloat(); };
  for (Operation &inner : op.getBody()->without_terminator()) {
    if (allowIndex && isa<linalg::IndexOp>(inner))
      continue;
    if (isa<arith::ConstantOp>(inner) && scalar(inner.getResult(0).getType()))
      continue;
    if (!isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()) ||
        !inner.hasTrait<OpTrait::Elementwise>() || inner.getNumRegions() ||
        inner.getNumResults() != 1 ||
        !llvm::all_of(inner.getOperandTypes(), scalar) ||
        !scalar(inner.getResult(0).getType()))
      return false;
  }
  return true;
}

bool isWarpMmaEpilogue(linalg::LinalgOp contraction,
                       linalg::GenericOp generic) {
  Value out = contraction.getDpsInits()[0];
  if (generic.getNumDpsInputs() != 0 || generic.getNumDpsInits() != 1 ||
      generic.getDpsInits()[0] != out ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !generic.getIndexingMapsArray()[0].isIdentity() ||
      getElementTypeOrSelf(out.getType()) !=
          generic.getBody()->getArgument(0).getType())
    return false;
  return hasScalarElementwiseBody(generic, /*allowIndex=*/false);
}

SmallVector<linalg::GenericOp>
collectWarpMmaEpilogue(linalg::LinalgOp contraction) {
  SmallVector<linalg::GenericOp> epilogue;
  for (auto next =
           dyn_cast_or_null<linalg::GenericOp>(contraction->getNextNode());
       next && isWarpMmaEpilogue(contraction, next);
       next = dyn_cast_or_null<linalg::GenericOp>(next->getNextNode()))
    epilogue.push_back(next);
  return epilogue;
}

bool isWarpMmaNarrowing(linalg::LinalgOp contraction,
                        linalg::GenericOp generic) {
  Value out = contraction.getDpsInits()[0];
  if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getDpsInputs()[0] != out || generic.getDpsInits()[0] == out ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }) ||
      !generic.getBody()->getArgument(1).use_empty() ||
      !isa<MemRefType>(generic.getDpsInits()[0].getType()))
    return false;
  return hasScalarElementwiseBody(generic, /*allowIndex=*/false);
}

Value vectorizeScalarOp(OpBuilder &b, Location loc, Operation &inner,
                        IRMapping &map, ArrayRef<int64_t> shape) {
  Value result;
  if (auto constant = dyn_cast<arith::ConstantOp>(inner)) {
    result = arith::ConstantOp::create(
        b, loc,
        SplatElementsAttr::get(VectorType::get(shape, constant.getType()),
                               cast<TypedAttr>(constant.getValue())));
  } else {
    OperationState state(inner.getLoc(), inner.getName());
    for (Value operand : inner.getOperands()) {
      Value mapped = map.lookupOrNull(operand);
      if (!mapped)
        // A scalar from outside the body, the same for every element.
        mapped = vector::BroadcastOp::create(
            b, loc, VectorType::get(shape, operand.getType()), operand);
      state.addOperands(mapped);
    }
    state.addAttributes(inner.getAttrs());
    state.addTypes(VectorType::get(shape, inner.getResult(0).getType()));
    result = b.create(state)->getResult(0);
  }
  map.map(inner.getResult(0), result);
  return result;
}

/// `generic`'s body (isWarpMmaEpilogue) on the tile `acc`.
static Value applyEpilogue(OpBuilder &b, Location loc,
                           linalg::GenericOp generic, Value acc) {
  IRMapping map;
  Block *body = generic.getBody();
  map.map(body->getArgument(0), acc);
  for (Operation &inner : body->without_terminator())
    vectorizeScalarOp(b, loc, inner, map,
                      cast<VectorType>(acc.getType()).getShape());
  return map.lookup(body->getTerminator()->getOperand(0));
}

LogicalResult buildWarpMmaContraction(RewriterBase &rewriter,
                                      linalg::LinalgOp op, Value warp,
                                      int64_t warps, bool wide, bool fromZeros,
                                      ArrayRef<linalg::GenericOp> epilogue,
                                      linalg::GenericOp narrowing) {
  if (!isWarpMmaContraction(op) || warps < 1)
    return failure();
  for (linalg::GenericOp generic : epilogue)
    if (!isWarpMmaEpilogue(op, generic))
      return failure();
  if (narrowing && !isWarpMmaNarrowing(op, narrowing))
    return failure();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  WarpTile tile{*warpMmaDims(op), {}, DenseMap<unsigned, bool>()};
  unsigned m = tile.dims.m.front(), n = tile.dims.n.front(),
           k = tile.dims.k.front();
  SmallVector<Range> ranges = op.createLoopRanges(rewriter, loc);
  auto extent = [&](unsigned loop) {
    return getValueOrCreateConstantIndexOp(rewriter, loc, ranges[loop].size);
  };
  // A tile dim is in bounds where the loop's extent is a known multiple of
  // it; elsewhere (the last key block, a query tile at the end, d = 8) the
  // reads pad with zeros, which add nothing to the sums, and the writes
  // leave out what lies outside.
  auto whole = [&](unsigned loop, int64_t size) {
    std::optional<int64_t> extent = getConstantIntValue(ranges[loop].size);
    return extent && *extent % size == 0;
  };
  // A warp computes a strip of up to kWarpMmaStrip 16×8 tiles side by side
  // (fewer where n is known to be narrower): each step's A fragment serves
  // them all. Where every warp still gets one, a 32×64 block of tiles:
  // each B fragment serves two A fragments as well.
  int64_t blocks = kWarpMmaStrip, rowTiles = 1;
  std::optional<int64_t> width = getConstantIntValue(ranges[n].size);
  std::optional<int64_t> height = getConstantIntValue(ranges[m].size);
  if (width)
    blocks = std::clamp<int64_t>(llvm::divideCeil(*width, kWarpMmaN), 1,
                                 kWarpMmaStrip);
  if (wide && width && height && *width % kWarpMmaWideColumns == 0 &&
      *height % kWarpMmaWideRows == 0 &&
      (*width / kWarpMmaWideColumns) * (*height / kWarpMmaWideRows) >= warps) {
    blocks = kWarpMmaWideColumns / kWarpMmaN;
    rowTiles = kWarpMmaWideRows / kWarpMmaM;
  }
  int64_t strip = blocks * kWarpMmaN, rows = rowTiles * kWarpMmaM;
  tile.inBounds = {
      {m, whole(m, rows)}, {n, whole(n, strip)}, {k, whole(k, kWarpMmaK)}};

  // for (t = warp; t < strips; t += warps): one strip of 16×8 output tiles
  // per step, batch dims outermost, n fastest.
  if (!warp) {
    // Emulation: the warps one after another.
    auto sequential =
        scf::ForOp::create(rewriter, loc, index(0), index(warps), index(1));
    rewriter.setInsertionPointToStart(sequential.getBody());
    warp = sequential.getInductionVar();
  }
  SmallVector<unsigned> outer(tile.dims.batch.begin(), tile.dims.batch.end());
  outer.push_back(m);
  outer.push_back(n);
  SmallVector<Value> counts;
  Value tiles = index(1);
  for (unsigned loop : outer) {
    Value count = extent(loop);
    if (loop == m)
      count = arith::CeilDivUIOp::create(rewriter, loc, count, index(rows));
    else if (loop == n)
      count = arith::CeilDivUIOp::create(rewriter, loc, count, index(strip));
    counts.push_back(count);
    tiles = arith::MulIOp::create(rewriter, loc, tiles, count);
  }
  auto strided = scf::ForOp::create(rewriter, loc, warp, tiles, index(warps));
  rewriter.setInsertionPointToStart(strided.getBody());
  tile.ivs.assign(op.getNumLoops(), Value());
  Value rest = strided.getInductionVar();
  for (int64_t d = outer.size() - 1; d >= 0; --d) {
    Value position =
        d == 0 ? rest : arith::RemUIOp::create(rewriter, loc, rest, counts[d]);
    if (outer[d] == m)
      position = arith::MulIOp::create(rewriter, loc, position, index(rows));
    else if (outer[d] == n)
      position = arith::MulIOp::create(rewriter, loc, position, index(strip));
    tile.ivs[outer[d]] = position;
    if (d > 0)
      rest = arith::DivUIOp::create(rewriter, loc, rest, counts[d]);
  }

  OpOperand &lhs = op->getOpOperand(0), &rhs = op->getOpOperand(1),
            &out = op->getOpOperand(2);
  Value stripStart = tile.ivs[n], rowStart = tile.ivs[m];
  auto at = [&](Value start, int64_t offset) {
    return offset == 0
               ? start
               : arith::AddIOp::create(rewriter, loc, start, index(offset))
                     .getResult();
  };
  auto atBlock = [&](int64_t j) {
    tile.ivs[n] = at(stripStart, j * kWarpMmaN);
  };
  auto atRows = [&](int64_t r) { tile.ivs[m] = at(rowStart, r * kWarpMmaM); };
  // Accumulator r * blocks + j: the 16×8 tile at rows r, columns j.
  tile.ivs[k] = index(0);
  SmallVector<Value> accs;
  auto accType = VectorType::get({kWarpMmaM, kWarpMmaN},
                                 getElementTypeOrSelf(out.get().getType()));
  for (int64_t r = 0; r < rowTiles; ++r) {
    atRows(r);
    for (int64_t j = 0; j < blocks; ++j) {
      atBlock(j);
      accs.push_back(
          fromZeros ? arith::ConstantOp::create(
                          rewriter, loc, accType,
                          SplatElementsAttr::get(
                              accType,
                              rewriter.getZeroAttr(accType.getElementType())))
                          .getResult()
                    : readTile(rewriter, loc, op, out, tile, m, n,
                               {kWarpMmaM, kWarpMmaN}));
    }
  }
  auto steps = scf::ForOp::create(rewriter, loc, index(0), extent(k),
                                  index(kWarpMmaK), accs);
  rewriter.setInsertionPointToStart(steps.getBody());
  tile.ivs[k] = steps.getInductionVar();
  SmallVector<Value> as;
  for (int64_t r = 0; r < rowTiles; ++r) {
    atRows(r);
    as.push_back(warpMmaOperand(
        rewriter, loc,
        readTile(rewriter, loc, op, lhs, tile, m, k, {kWarpMmaM, kWarpMmaK})));
  }
  SmallVector<Value> sums(accs.size());
  // (B tiles two at a time: one ldmatrix.x4 for both.)
  for (int64_t j = 0; j < blocks; j += 2) {
    atBlock(j);
    SmallVector<Value> bs =
        readWarpMmaBTiles(rewriter, loc, op, rhs, tile.ivs, n, k,
                          std::min<int64_t>(2, blocks - j),
                          {tile.inBounds.lookup(n), tile.inBounds.lookup(k)});
    for (auto [i, b] : llvm::enumerate(bs)) {
      Value operand = warpMmaOperand(rewriter, loc, b);
      for (int64_t r = 0; r < rowTiles; ++r) {
        int64_t acc = r * blocks + j + i;
        sums[acc] = buildWarpMmaContract(rewriter, loc, as[r], operand,
                                         steps.getRegionIterArgs()[acc]);
      }
    }
  }
  scf::YieldOp::create(rewriter, loc, sums);

  rewriter.setInsertionPointAfter(steps);
  tile.ivs[k] = index(0);
  for (int64_t r = 0; r < rowTiles; ++r) {
    atRows(r);
    for (int64_t j = 0; j < blocks; ++j) {
      atBlock(j);
      auto [indices, permutation] =
          tileAccess(rewriter, loc, op, out, tile.ivs, m, n);
      Value result = steps.getResult(r * blocks + j);
      for (linalg::GenericOp generic : epilogue)
        result = applyEpilogue(rewriter, loc, generic, result);
      // (The narrowed buffer has the output's shape and identity maps: the
      // same indices.)
      Value target = out.get();
      if (narrowing) {
        result = applyEpilogue(rewriter, loc, narrowing, result);
        target = narrowing.getDpsInits()[0];
      }
      vector::TransferWriteOp::create(
          rewriter, loc, result, target, indices,
          AffineMapAttr::get(permutation),
          /*mask=*/Value(),
          rewriter.getBoolArrayAttr(
              {tile.inBounds.lookup(m), tile.inBounds.lookup(n)}));
    }
  }
  rewriter.eraseOp(op);
  for (linalg::GenericOp generic : epilogue)
    rewriter.eraseOp(generic);
  if (narrowing)
    rewriter.eraseOp(narrowing);
  return success();
}

} // namespace mlir::dat
