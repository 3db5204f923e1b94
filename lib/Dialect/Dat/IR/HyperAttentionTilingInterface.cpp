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

#include "dat/Dialect/Dat/IR/DatOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"

namespace mlir::dat {

SmallVector<utils::IteratorType> HyperAttentionOp::getLoopIteratorTypes() {
  return SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel);
}

SmallVector<Range> HyperAttentionOp::getIterationDomain(OpBuilder &b) {
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  return {{zero, tensor::getMixedSize(b, getLoc(), getInit(), 0), one},
          {zero, tensor::getMixedSize(b, getLoc(), getInit(), 2), one}};
}

FailureOr<TilingResult>
HyperAttentionOp::getTiledImplementation(OpBuilder &b,
                                         ArrayRef<OpFoldResult> offsets,
                                         ArrayRef<OpFoldResult> sizes) {
  Location loc = getLoc();
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  SmallVector<Operation *> slices;
  // Slices `v` to the tile's batch range (or keeps a broadcast batch of 1)
  // and its query rows at `rowDim`.
  auto slice = [&](Value v, std::optional<unsigned> batchDim,
                   std::optional<unsigned> rowDim) {
    SmallVector<OpFoldResult> offs, szs;
    auto shape = tensor::getMixedSizes(b, loc, v);
    auto type = cast<RankedTensorType>(v.getType());
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
  };
  Value query = slice(getQuery(), 0, 2);
  Value key = slice(getKey(), 0, std::nullopt);
  Value value = slice(getValue(), 0, std::nullopt);
  Value bias = getBias() ? slice(getBias(), 0, 2) : Value();
  Value mask = getMask() ? slice(getMask(), std::nullopt, 0) : Value();
  Value init = slice(getInit(), 0, 2);
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
  auto tiled = HyperAttentionOp::create(
      b, loc, init.getType(), query, key, value, bias, mask, queryOffset, init,
      getScaleAttr(), getNormalizationAttr(), getNetworkAttr(), getCausal());
  return TilingResult{{tiled}, {tiled.getResult()}, slices};
}

LogicalResult HyperAttentionOp::getResultTilePosition(
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
