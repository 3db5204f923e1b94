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
  if (table.getRank() != 2)
    return emitOpError("expected cos/sin to have rank 2 [L,K/2], got rank ")
           << table.getRank();
  if (table.getElementType() != x.getElementType())
    return emitOpError("expected cos/sin element type ")
           << table.getElementType() << " to match input element type "
           << x.getElementType();
  int64_t k = x.getDimSize(3);
  if (!ShapedType::isDynamic(k) && k % 2 != 0)
    return emitOpError("expected input dim 3 (K) to be even, got ") << k;
  int64_t len = x.getDimSize(1), rows = table.getDimSize(0);
  if (!ShapedType::isDynamic(len) && !ShapedType::isDynamic(rows) &&
      len != rows)
    return emitOpError("expected cos/sin dim 0 (positions) to be ")
           << len << " as in input dim 1, got " << rows;
  int64_t cols = table.getDimSize(1);
  if (!ShapedType::isDynamic(k) && !ShapedType::isDynamic(cols) &&
      cols * 2 != k)
    return emitOpError("expected cos/sin dim 1 (pairs) to be ")
           << k / 2 << " (input dim 3 / 2), got " << cols;
  return success();
}

//===----------------------------------------------------------------------===//
// TilingInterface: (b, t, h); the pairs of the last axis stay whole, and a
// tile of positions takes the same rows of the cos/sin tables.
//===----------------------------------------------------------------------===//

SmallVector<utils::IteratorType> RopeOp::getLoopIteratorTypes() {
  return SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel);
}

SmallVector<Range> RopeOp::getIterationDomain(OpBuilder &b) {
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  SmallVector<Range> domain;
  for (unsigned d = 0; d < 3; ++d)
    domain.push_back(
        {zero, tensor::getMixedSize(b, getLoc(), getInput(), d), one});
  return domain;
}

FailureOr<TilingResult>
RopeOp::getTiledImplementation(OpBuilder &b, ArrayRef<OpFoldResult> offsets,
                               ArrayRef<OpFoldResult> sizes) {
  Location loc = getLoc();
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  SmallVector<Operation *> slices;
  auto slice = [&](Value v, ArrayRef<OpFoldResult> offs,
                   ArrayRef<OpFoldResult> szs) {
    auto s = tensor::ExtractSliceOp::create(
        b, loc, v, offs, szs, SmallVector<OpFoldResult>(offs.size(), one));
    slices.push_back(s);
    return s.getResult();
  };
  OpFoldResult k = tensor::getMixedSize(b, loc, getInput(), 3);
  OpFoldResult half = tensor::getMixedSize(b, loc, getCos(), 1);
  Value input = slice(getInput(), {offsets[0], offsets[1], offsets[2], zero},
                      {sizes[0], sizes[1], sizes[2], k});
  Value cos = slice(getCos(), {offsets[1], zero}, {sizes[1], half});
  Value sin = slice(getSin(), {offsets[1], zero}, {sizes[1], half});
  auto tiled = RopeOp::create(b, loc, input.getType(), input, cos, sin);
  return TilingResult{{tiled}, {tiled.getResult()}, slices};
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
