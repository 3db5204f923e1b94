//===- RowTiling.cpp - pieces shared by the attention ops' tilings --------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "RowTiling.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::dat {

SmallVector<Range> batchRowDomain(OpBuilder &b, Location loc, Value init) {
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  return {{zero, tensor::getMixedSize(b, loc, init, 0), one},
          {zero, tensor::getMixedSize(b, loc, init, 2), one}};
}

void batchRowResultTile(OpBuilder &b, Location loc, Value init,
                        ArrayRef<OpFoldResult> offsets,
                        ArrayRef<OpFoldResult> sizes,
                        SmallVector<OpFoldResult> &resultOffsets,
                        SmallVector<OpFoldResult> &resultSizes) {
  OpFoldResult zero = b.getIndexAttr(0);
  resultOffsets = {offsets[0], zero, offsets[1], zero};
  resultSizes = {sizes[0], tensor::getMixedSize(b, loc, init, 1), sizes[1],
                 tensor::getMixedSize(b, loc, init, 3)};
}

Value sliceBatchRows(OpBuilder &b, Location loc, Value v,
                     std::optional<unsigned> batchDim,
                     std::optional<unsigned> rowDim,
                     ArrayRef<OpFoldResult> offsets,
                     ArrayRef<OpFoldResult> sizes,
                     SmallVector<Operation *> &slices) {
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> offs, szs, shape = tensor::getMixedSizes(b, loc, v);
  for (unsigned d = 0; d < shape.size(); ++d) {
    if (batchDim && d == *batchDim && type.getDimSize(d) != 1) {
      offs.push_back(offsets[0]);
      szs.push_back(sizes[0]);
    } else if (rowDim && d == *rowDim) {
      offs.push_back(offsets[1]);
      szs.push_back(sizes[1]);
    } else {
      offs.push_back(zero);
      szs.push_back(shape[d]);
    }
  }
  auto s = tensor::ExtractSliceOp::create(
      b, loc, v, offs, szs, SmallVector<OpFoldResult>(offs.size(), one));
  slices.push_back(s);
  return s.getResult();
}

Value shiftedQueryOffset(OpBuilder &b, Location loc, Value base,
                         OpFoldResult firstRow) {
  AffineExpr d0 = b.getAffineDimExpr(0), d1 = b.getAffineDimExpr(1);
  OpFoldResult from =
      base ? OpFoldResult(base) : OpFoldResult(b.getIndexAttr(0));
  return getValueOrCreateConstantIndexOp(
      b, loc,
      affine::makeComposedFoldedAffineApply(b, loc, d0 + d1, {from, firstRow}));
}

SmallVector<Range> leadingDimsDomain(OpBuilder &b, Location loc, Value v) {
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  SmallVector<Range> domain;
  for (unsigned d = 0; d < 3; ++d)
    domain.push_back({zero, tensor::getMixedSize(b, loc, v, d), one});
  return domain;
}

Value TileSlices::operator()(Value v, ArrayRef<OpFoldResult> offsets,
                             ArrayRef<OpFoldResult> sizes) {
  auto s = tensor::ExtractSliceOp::create(
      b, loc, v, offsets, sizes,
      SmallVector<OpFoldResult>(offsets.size(), b.getIndexAttr(1)));
  ops.push_back(s);
  return s.getResult();
}

Value TileSlices::rows(Value v, ArrayRef<OpFoldResult> offsets,
                       ArrayRef<OpFoldResult> sizes) {
  return (*this)(
      v, {offsets[0], offsets[1], offsets[2], b.getIndexAttr(0)},
      {sizes[0], sizes[1], sizes[2], tensor::getMixedSize(b, loc, v, 3)});
}

std::pair<OpFoldResult, OpFoldResult> unlessBroadcast(OpBuilder &b,
                                                      int64_t extent,
                                                      OpFoldResult offset,
                                                      OpFoldResult size) {
  if (extent == 1)
    return {b.getIndexAttr(0), b.getIndexAttr(1)};
  return {offset, size};
}

void leadingDimsResultTile(OpBuilder &b, ArrayRef<OpFoldResult> offsets,
                           ArrayRef<OpFoldResult> sizes, OpFoldResult last,
                           SmallVector<OpFoldResult> &resultOffsets,
                           SmallVector<OpFoldResult> &resultSizes) {
  resultOffsets = {offsets[0], offsets[1], offsets[2], b.getIndexAttr(0)};
  resultSizes = {sizes[0], sizes[1], sizes[2], last};
}

FailureOr<TilingResult> tileOfWholeRows(TilingInterface op, OpBuilder &b,
                                        ArrayRef<OpFoldResult> offsets,
                                        ArrayRef<OpFoldResult> sizes,
                                        OpFoldResult last) {
  if (!isZeroInteger(offsets[3]) || !isEqualConstantIntOrValue(sizes[3], last))
    return failure();
  return op.getTiledImplementation(b, offsets.take_front(3),
                                   sizes.take_front(3));
}

} // namespace mlir::dat
