//===- RelationalAttentionTilingInterface.cpp - tiling relational attention
//===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// dat.relational_attention tiles over (b, i): a tile keeps every head (they
// share the tile's relations) and every key (the softmax reduction).
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"

namespace mlir::dat {

SmallVector<utils::IteratorType> RelationalAttentionOp::getLoopIteratorTypes() {
  return SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel);
}

SmallVector<Range> RelationalAttentionOp::getIterationDomain(OpBuilder &b) {
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  return {{zero, tensor::getMixedSize(b, getLoc(), getInit(), 0), one},
          {zero, tensor::getMixedSize(b, getLoc(), getInit(), 2), one}};
}

FailureOr<TilingResult>
RelationalAttentionOp::getTiledImplementation(OpBuilder &b,
                                              ArrayRef<OpFoldResult> offsets,
                                              ArrayRef<OpFoldResult> sizes) {
  Location loc = getLoc();
  OpFoldResult zero = b.getIndexAttr(0);
  SmallVector<Operation *> slices;
  // Slices `v` at [b-range or all, ..., i-range at `rowDim`, ...].
  auto slice = [&](Value v, std::optional<unsigned> batchDim,
                   std::optional<unsigned> rowDim) {
    SmallVector<OpFoldResult> offs, szs, strides;
    auto shape = tensor::getMixedSizes(b, loc, v);
    for (unsigned d = 0; d < shape.size(); ++d) {
      strides.push_back(b.getIndexAttr(1));
      if (batchDim && d == *batchDim) {
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
    auto s = tensor::ExtractSliceOp::create(b, loc, v, offs, szs, strides);
    slices.push_back(s);
    return s.getResult();
  };
  Value query = slice(getQuery(), 0, 2);
  Value key = slice(getKey(), 0, std::nullopt);
  Value relQuery = slice(getRelQuery(), 0, 2);
  Value relKey = slice(getRelKey(), 0, std::nullopt);
  Value symbols = getSymbolsPerPair() ? slice(getSymbols(), std::nullopt, 0)
                                      : slice(getSymbols(), 0, std::nullopt);
  Value init = slice(getInit(), 0, 2);
  Value mask = getMask() ? slice(getMask(), std::nullopt, 0) : Value();
  Value queryOffset;
  if (getCausal()) {
    AffineExpr d0 = b.getAffineDimExpr(0), d1 = b.getAffineDimExpr(1);
    OpFoldResult base = getQueryOffset() ? OpFoldResult(getQueryOffset())
                                         : OpFoldResult(b.getIndexAttr(0));
    queryOffset = getValueOrCreateConstantIndexOp(
        b, loc,
        affine::makeComposedFoldedAffineApply(b, loc, d0 + d1,
                                              {base, offsets[1]}));
  }
  auto tiled = RelationalAttentionOp::create(
      b, loc, init.getType(), query, key, relQuery, relKey, symbols, getWr(),
      mask, queryOffset, init, getScaleAttr(), getRelScaleAttr(),
      getActivationAttr(), getCausal(), getSymbolsPerPair());
  return TilingResult{{tiled}, {tiled.getResult()}, slices};
}

LogicalResult RelationalAttentionOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  OpFoldResult zero = b.getIndexAttr(0);
  resultOffsets = {offsets[0], zero, offsets[1], zero};
  resultSizes = {sizes[0], tensor::getMixedSize(b, getLoc(), getInit(), 1),
                 sizes[1], tensor::getMixedSize(b, getLoc(), getInit(), 3)};
  return success();
}

} // namespace mlir::dat
