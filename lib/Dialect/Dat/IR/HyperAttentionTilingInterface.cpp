//===- HyperAttentionTilingInterface.cpp - tiling HYLA attention ----------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// dat.hyper_attention tiles over (b, i): a tile keeps every head (rms_head
// normalizes across heads, the generated value network mixes them) and
// every key (the softmax and value reductions). A causal tile shifts the
// query offset by its first row.
//
//===----------------------------------------------------------------------===//

#include "RowTiling.h"

#include "dat/Dialect/Dat/IR/DatOps.h"

namespace mlir::dat {

SmallVector<utils::IteratorType> HyperAttentionOp::getLoopIteratorTypes() {
  return SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel);
}

SmallVector<Range> HyperAttentionOp::getIterationDomain(OpBuilder &b) {
  return batchRowDomain(b, getLoc(), getInit());
}

FailureOr<TilingResult>
HyperAttentionOp::getTiledImplementation(OpBuilder &b,
                                         ArrayRef<OpFoldResult> offsets,
                                         ArrayRef<OpFoldResult> sizes) {
  Location loc = getLoc();
  SmallVector<Operation *> slices;
  auto slice = [&](Value v, std::optional<unsigned> batchDim,
                   std::optional<unsigned> rowDim) -> Value {
    return v ? sliceBatchRows(b, loc, v, batchDim, rowDim, offsets, sizes,
                              slices)
             : Value();
  };
  // (Named, so that the slices are created in a fixed order.)
  Value query = slice(getQuery(), 0, 2);
  Value key = slice(getKey(), 0, std::nullopt);
  Value value = slice(getValue(), 0, std::nullopt);
  Value bias = slice(getBias(), 0, 2);
  Value mask = slice(getMask(), std::nullopt, 0);
  Value init = slice(getInit(), 0, 2);
  Value queryOffset =
      getCausal() ? shiftedQueryOffset(b, loc, getQueryOffset(), offsets[1])
                  : Value();
  auto tiled = HyperAttentionOp::create(
      b, loc, init.getType(), query, key, value, bias, mask, queryOffset, init,
      getScaleAttr(), getNormalizationAttr(), getNetworkAttr(), getCausal());
  return TilingResult{{tiled}, {tiled.getResult()}, slices};
}

LogicalResult HyperAttentionOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  batchRowResultTile(b, getLoc(), getInit(), offsets, sizes, resultOffsets,
                     resultSizes);
  return success();
}

} // namespace mlir::dat
