//===- RelationalAttentionTilingInterface.cpp - tiling relational attention
//===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// dat.relational_attention tiles over (b, i): a tile keeps every head (they
// share the tile's relations) and every key (the softmax reduction).
//
//===----------------------------------------------------------------------===//

#include "RowTiling.h"

#include "dat/Dialect/Dat/IR/DatOps.h"

namespace mlir::dat {

SmallVector<utils::IteratorType> RelationalAttentionOp::getLoopIteratorTypes() {
  return SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel);
}

SmallVector<Range> RelationalAttentionOp::getIterationDomain(OpBuilder &b) {
  return batchRowDomain(b, getLoc(), getInit());
}

FailureOr<TilingResult>
RelationalAttentionOp::getTiledImplementation(OpBuilder &b,
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
  // (Named, so that the slices are created in a fixed order.) Per-pair
  // symbols [Lq, Lk, ...] follow the query rows, per-position ones the batch.
  Value query = slice(getQuery(), 0, 2);
  Value key = slice(getKey(), 0, std::nullopt);
  Value relQuery = slice(getRelQuery(), 0, 2);
  Value relKey = slice(getRelKey(), 0, std::nullopt);
  // A relative table is indexed by position difference: whole, with the
  // tile's first row in the query offset.
  Value symbols = getRelativeSymbols()  ? getSymbols()
                  : getSymbolsPerPair() ? slice(getSymbols(), std::nullopt, 0)
                                        : slice(getSymbols(), 0, std::nullopt);
  Value init = slice(getInit(), 0, 2);
  Value mask = slice(getMask(), std::nullopt, 0);
  Value queryOffset =
      getCausal() || getRelativeSymbols()
          ? shiftedQueryOffset(b, loc, getQueryOffset(), offsets[1])
          : Value();
  auto tiled = RelationalAttentionOp::create(
      b, loc, init.getType(), query, key, relQuery, relKey, symbols, getWr(),
      getSymbolProj(), mask, queryOffset, init, getScaleAttr(),
      getRelScaleAttr(), getActivationAttr(), getCausal(), getSymbolsPerPair(),
      getRelativeSymbols());
  return TilingResult{{tiled}, {tiled.getResult()}, slices};
}

LogicalResult RelationalAttentionOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  batchRowResultTile(b, getLoc(), getInit(), offsets, sizes, resultOffsets,
                     resultSizes);
  return success();
}

} // namespace mlir::dat
