//===- AttentionTilingInterface.cpp - tiling dat.attention ----------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// dat.attention tiles over its parallel dimensions (b, h, i, e). A tile keeps
// every key: the key axis is a softmax reduction, tiled flash-style by the
// dat tiling passes instead.
//
//===----------------------------------------------------------------------===//

#include "RowTiling.h"

#include "dat/Dialect/Dat/IR/DatOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::dat {

SmallVector<utils::IteratorType> AttentionOp::getLoopIteratorTypes() {
  return SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel);
}

SmallVector<Range> AttentionOp::getIterationDomain(OpBuilder &b) {
  Location loc = getLoc();
  Value init = getInit();
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  SmallVector<Range> domain;
  for (int64_t dim = 0; dim < 4; ++dim)
    domain.push_back({zero, tensor::getMixedSize(b, loc, init, dim), one});
  return domain;
}

static Value extractSlice(OpBuilder &b, Location loc, Value source,
                          ArrayRef<OpFoldResult> offsets,
                          ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, source, offsets, sizes,
                                        strides);
}

FailureOr<TilingResult>
AttentionOp::getTiledImplementation(OpBuilder &b,
                                    ArrayRef<OpFoldResult> offsets,
                                    ArrayRef<OpFoldResult> sizes) {
  Location loc = getLoc();
  std::optional<int64_t> group = getGroupSize();
  if (!group)
    return emitOpError("cannot tile with dynamic head counts");

  // A tile of query heads maps onto whole key/value heads only when it covers
  // whole groups. The offset is a multiple of the tile size when it comes
  // from a tiling loop, so a tile size that is a multiple of the group size
  // suffices.
  OpFoldResult kvHeadOffset = offsets[1], kvHeadSize = sizes[1];
  if (*group != 1) {
    std::optional<int64_t> headTile = getConstantIntValue(sizes[1]);
    std::optional<int64_t> headOffset = getConstantIntValue(offsets[1]);
    if (!headTile || *headTile % *group != 0 ||
        (headOffset && *headOffset % *group != 0))
      return emitOpError("head tile must cover whole groups of ")
             << *group << " query heads sharing a key/value head";
    AffineExpr d0 = b.getAffineDimExpr(0);
    kvHeadOffset = affine::makeComposedFoldedAffineApply(
        b, loc, d0.floorDiv(*group), {offsets[1]});
    kvHeadSize = b.getIndexAttr(*headTile / *group);
  }

  OpFoldResult zero = b.getIndexAttr(0);
  OpFoldResult headDim = tensor::getMixedSize(b, loc, getQuery(), 3);
  OpFoldResult keyLen = tensor::getMixedSize(b, loc, getKey(), 2);

  SmallVector<Operation *> slices;
  auto slice = [&](Value source, ArrayRef<OpFoldResult> offs,
                   ArrayRef<OpFoldResult> szs) {
    Value v = extractSlice(b, loc, source, offs, szs);
    slices.push_back(v.getDefiningOp());
    return v;
  };

  Value query = slice(getQuery(), {offsets[0], offsets[1], offsets[2], zero},
                      {sizes[0], sizes[1], sizes[2], headDim});
  Value key = slice(getKey(), {offsets[0], kvHeadOffset, zero, zero},
                    {sizes[0], kvHeadSize, keyLen, headDim});
  Value value = slice(getValue(), {offsets[0], kvHeadOffset, zero, offsets[3]},
                      {sizes[0], kvHeadSize, keyLen, sizes[3]});
  Value init = slice(getInit(), offsets, sizes);
  Value mask, keyMask, scoreScale;
  if (getMask())
    mask = slice(getMask(), {offsets[2], zero}, {sizes[2], keyLen});
  if (getKeyMask())
    keyMask = slice(getKeyMask(), {offsets[0], zero}, {sizes[0], keyLen});
  if (Value ss = getScoreScale()) {
    // A batch-broadcast scale keeps its single batch row.
    bool broadcast = cast<RankedTensorType>(ss.getType()).getDimSize(0) == 1;
    scoreScale = slice(ss, {broadcast ? zero : offsets[0], offsets[2], zero},
                       {broadcast ? OpFoldResult(b.getIndexAttr(1)) : sizes[0],
                        sizes[2], keyLen});
  }

  // Rows of a query tile keep their global position for the causal mask.
  Value queryOffset =
      getCausal() ? shiftedQueryOffset(b, loc, getQueryOffset(), offsets[2])
                  : Value();

  auto tiled = AttentionOp::create(
      b, loc, init.getType(), query, key, value, mask, keyMask, scoreScale,
      queryOffset, init, getScaleAttr(), getMaskFillAttr(), getCausal());
  return TilingResult{{tiled}, {tiled.getResult()}, slices};
}

LogicalResult AttentionOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  resultOffsets.assign(offsets.begin(), offsets.end());
  resultSizes.assign(sizes.begin(), sizes.end());
  return success();
}

} // namespace mlir::dat
