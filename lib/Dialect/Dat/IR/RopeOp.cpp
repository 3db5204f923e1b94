//===- RopeOp.cpp - dat.rope verifier -------------------------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "RowTiling.h"

#include "dat/Dialect/Dat/IR/DatOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::dat {

LogicalResult RopeOp::verify() {
  auto x = cast<RankedTensorType>(getInput().getType());
  auto table = cast<RankedTensorType>(getCos().getType());
  if (x.getRank() != 4)
    return emitOpError("expected input to have rank 4 [B,L,H,K], got rank ")
           << x.getRank();
  if (!isa<FloatType>(x.getElementType()))
    return emitOpError("expected a float input, got ") << x.getElementType();
  bool perToken = table.getRank() == 4;
  if (table.getRank() != 2 && !perToken)
    return emitOpError("expected cos/sin to have rank 2 [L,K/2] or rank 4 "
                       "[1|B,L,1|H,K/2], got rank ")
           << table.getRank();
  if (table.getElementType() != x.getElementType())
    return emitOpError("expected cos/sin element type ")
           << table.getElementType() << " to match input element type "
           << x.getElementType();
  int64_t k = x.getDimSize(3);
  if (!ShapedType::isDynamic(k) && k % 2 != 0)
    return emitOpError("expected input dim 3 (K) to be even, got ") << k;
  auto known = [](int64_t a, int64_t b) {
    return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b);
  };
  // A per-token table's batch and head dims match the input's or broadcast.
  if (perToken)
    for (auto [dim, what] : {std::pair<unsigned, const char *>{0, "batch"},
                             std::pair<unsigned, const char *>{2, "heads"}}) {
      int64_t want = x.getDimSize(dim), got = table.getDimSize(dim);
      if (known(want, got) && got != want && got != 1)
        return emitOpError("expected cos/sin dim ")
               << dim << " (" << what << ") to be 1 or " << want
               << " as in input dim " << dim << ", got " << got;
    }
  unsigned rowDim = perToken ? 1 : 0, pairDim = perToken ? 3 : 1;
  int64_t len = x.getDimSize(1), rows = table.getDimSize(rowDim);
  if (known(len, rows) && len != rows)
    return emitOpError("expected cos/sin dim ")
           << rowDim << " (positions) to be " << len
           << " as in input dim 1, got " << rows;
  int64_t cols = table.getDimSize(pairDim);
  if (known(k, cols) && cols * 2 != k)
    return emitOpError("expected cos/sin dim ")
           << pairDim << " (pairs) to be " << k / 2
           << " (input dim 3 / 2), got " << cols;
  return success();
}

//===----------------------------------------------------------------------===//
// TilingInterface: (b, t, h); the pairs of the last axis stay whole, and a
// tile takes the same positions (and batch rows and heads, for per-token
// tables) of the cos/sin tables.
//===----------------------------------------------------------------------===//

SmallVector<utils::IteratorType> RopeOp::getLoopIteratorTypes() {
  return SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel);
}

SmallVector<Range> RopeOp::getIterationDomain(OpBuilder &b) {
  return leadingDimsDomain(b, getLoc(), getInput());
}

FailureOr<TilingResult>
RopeOp::getTiledImplementation(OpBuilder &b, ArrayRef<OpFoldResult> offsets,
                               ArrayRef<OpFoldResult> sizes) {
  Location loc = getLoc();
  OpFoldResult zero = b.getIndexAttr(0);
  TileSlices slice{b, loc, {}};
  Value input = slice.rows(getInput(), offsets, sizes);
  auto tableTile = [&](Value table) {
    auto ty = cast<RankedTensorType>(table.getType());
    OpFoldResult half = tensor::getMixedSize(b, loc, table, ty.getRank() - 1);
    if (ty.getRank() == 2)
      return slice(table, {offsets[1], zero}, {sizes[1], half});
    // Per token and head: a broadcast (size-1) batch or head dim stays whole.
    auto [bOff, bSize] =
        unlessBroadcast(b, ty.getDimSize(0), offsets[0], sizes[0]);
    auto [hOff, hSize] =
        unlessBroadcast(b, ty.getDimSize(2), offsets[2], sizes[2]);
    return slice(table, {bOff, offsets[1], hOff, zero},
                 {bSize, sizes[1], hSize, half});
  };
  Value cos = tableTile(getCos());
  Value sin = tableTile(getSin());
  auto tiled = RopeOp::create(b, loc, input.getType(), input, cos, sin);
  return TilingResult{{tiled}, {tiled.getResult()}, slice.ops};
}

LogicalResult RopeOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  leadingDimsResultTile(b, offsets, sizes,
                        tensor::getMixedSize(b, getLoc(), getInput(), 3),
                        resultOffsets, resultSizes);
  return success();
}

FailureOr<TilingResult>
RopeOp::generateResultTileValue(OpBuilder &b, unsigned resultNumber,
                                ArrayRef<OpFoldResult> offsets,
                                ArrayRef<OpFoldResult> sizes) {
  return tileOfWholeRows(*this, b, offsets, sizes,
                         tensor::getMixedSize(b, getLoc(), getInput(), 3));
}

} // namespace mlir::dat
