//===- OrthogonalMapOp.cpp - dat.orthogonal_map verifier and tiling -------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Every token's map is independent, so the op tiles over (b, h, l); a tile
// keeps the whole feature axis (the map contracts over it) and reads the
// matching maps, whose batch and head axes may broadcast.
//
//===----------------------------------------------------------------------===//

#include "RowTiling.h"

#include "dat/Dialect/Dat/IR/DatOps.h"

namespace mlir::dat {

LogicalResult OrthogonalMapOp::verify() {
  auto x = cast<RankedTensorType>(getInput().getType());
  auto m = cast<RankedTensorType>(getMaps().getType());
  if (x.getRank() != 4)
    return emitOpError("expected input to have rank 4 [B,H,L,d], got rank ")
           << x.getRank();
  if (m.getRank() != 5)
    return emitOpError(
               "expected maps to have rank 5 [1|B,L,1|H,d,d], got rank ")
           << m.getRank();
  if (!isa<FloatType>(x.getElementType()) ||
      m.getElementType() != x.getElementType())
    return emitOpError("expected float input and maps of one element type");
  if (getInit().getType() != x)
    return emitOpError("expected init to have the input type");
  if (getResult().getType() != x)
    return emitOpError("expected the result type to be the input type");
  struct Check {
    unsigned dim;
    const char *name;
    int64_t expected;
    bool mayBroadcast;
  } checks[] = {{0, "batch", x.getDimSize(0), true},
                {1, "length", x.getDimSize(2), false},
                {2, "heads", x.getDimSize(1), true},
                {3, "rows", x.getDimSize(3), false},
                {4, "columns", x.getDimSize(3), false}};
  for (const Check &c : checks) {
    int64_t actual = m.getDimSize(c.dim);
    if (ShapedType::isDynamic(actual) || ShapedType::isDynamic(c.expected) ||
        actual == c.expected || (c.mayBroadcast && actual == 1))
      continue;
    return emitOpError("expected maps dim ")
           << c.dim << " (" << c.name << ") to be "
           << (c.mayBroadcast ? "1 or " : "") << c.expected << ", got "
           << actual;
  }
  return success();
}

SmallVector<utils::IteratorType> OrthogonalMapOp::getLoopIteratorTypes() {
  return SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel);
}

SmallVector<Range> OrthogonalMapOp::getIterationDomain(OpBuilder &b) {
  return leadingDimsDomain(b, getLoc(), getInit());
}

FailureOr<TilingResult>
OrthogonalMapOp::getTiledImplementation(OpBuilder &b,
                                        ArrayRef<OpFoldResult> offsets,
                                        ArrayRef<OpFoldResult> sizes) {
  Location loc = getLoc();
  OpFoldResult zero = b.getIndexAttr(0);
  OpFoldResult d = tensor::getMixedSize(b, loc, getInput(), 3);
  TileSlices slice{b, loc, {}};
  Value input = slice.rows(getInput(), offsets, sizes);
  Value init = slice.rows(getInit(), offsets, sizes);
  // A broadcast (size-1) batch or head axis of the maps stays whole.
  auto mt = cast<RankedTensorType>(getMaps().getType());
  auto [bOff, bSize] =
      unlessBroadcast(b, mt.getDimSize(0), offsets[0], sizes[0]);
  auto [hOff, hSize] =
      unlessBroadcast(b, mt.getDimSize(2), offsets[1], sizes[1]);
  Value maps = slice(getMaps(), {bOff, offsets[2], hOff, zero, zero},
                     {bSize, sizes[2], hSize, d, d});
  auto tiled =
      OrthogonalMapOp::create(b, loc, init.getType(), input, maps, init);
  return TilingResult{{tiled}, {tiled.getResult()}, slice.ops};
}

LogicalResult OrthogonalMapOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  leadingDimsResultTile(b, offsets, sizes,
                        tensor::getMixedSize(b, getLoc(), getInit(), 3),
                        resultOffsets, resultSizes);
  return success();
}

FailureOr<TilingResult>
OrthogonalMapOp::generateResultTileValue(OpBuilder &b, unsigned resultNumber,
                                         ArrayRef<OpFoldResult> offsets,
                                         ArrayRef<OpFoldResult> sizes) {
  return tileOfWholeRows(*this, b, offsets, sizes,
                         tensor::getMixedSize(b, getLoc(), getInit(), 3));
}

} // namespace mlir::dat
