//===- RowTiling.h - pieces shared by the attention ops' tilings -*- C++
//-*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The relational and HYLA attention ops tile over (batch, query rows) of a
// [B, H, Lq, d] result; every attention op shifts a causal tile's query
// offset by the tile's first row.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_LIB_DIALECT_DAT_IR_ROWTILING_H
#define DAT_LIB_DIALECT_DAT_IR_ROWTILING_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/TilingInterface.h"

#include <optional>

namespace mlir::dat {

/// (b, i) over `init` [B, H, Lq, d]: dims 0 and 2.
SmallVector<Range> batchRowDomain(OpBuilder &b, Location loc, Value init);

/// The tile of `init` [B, H, Lq, d] for (b, i) offsets/sizes: all heads and
/// the whole last dim.
void batchRowResultTile(OpBuilder &b, Location loc, Value init,
                        ArrayRef<OpFoldResult> offsets,
                        ArrayRef<OpFoldResult> sizes,
                        SmallVector<OpFoldResult> &resultOffsets,
                        SmallVector<OpFoldResult> &resultSizes);

/// Slices `v` to the (b, i) tile: `batchDim` to the batch range (a
/// broadcast batch of 1 stays whole), `rowDim` to the query rows, the rest
/// whole. The slice op is appended to `slices`.
Value sliceBatchRows(OpBuilder &b, Location loc, Value v,
                     std::optional<unsigned> batchDim,
                     std::optional<unsigned> rowDim,
                     ArrayRef<OpFoldResult> offsets,
                     ArrayRef<OpFoldResult> sizes,
                     SmallVector<Operation *> &slices);

/// `base` (or 0) + `firstRow`: the global position of a tile's first query.
Value shiftedQueryOffset(OpBuilder &b, Location loc, Value base,
                         OpFoldResult firstRow);

/// The iteration domain over the first three dims of the rank-4 `v` (ops
/// tiled like rows that keep their last dim whole).
SmallVector<Range> leadingDimsDomain(OpBuilder &b, Location loc, Value v);

/// The extract_slices a tiled implementation reads through, recorded for its
/// TilingResult.
struct TileSlices {
  OpBuilder &b;
  Location loc;
  SmallVector<Operation *> ops;

  Value operator()(Value v, ArrayRef<OpFoldResult> offsets,
                   ArrayRef<OpFoldResult> sizes);
  /// The rank-4 `v` sliced on its first three dims like the tile, its last
  /// dim whole.
  Value rows(Value v, ArrayRef<OpFoldResult> offsets,
             ArrayRef<OpFoldResult> sizes);
};

/// A tile's (offset, size) along an operand dim of `extent`: the tile's own,
/// or the whole dim when it is a broadcast size 1.
std::pair<OpFoldResult, OpFoldResult> unlessBroadcast(OpBuilder &b,
                                                      int64_t extent,
                                                      OpFoldResult offset,
                                                      OpFoldResult size);

/// The result tile of an op tiled over its first three dims whose rank-4
/// result keeps the last dim (`last` long) whole.
void leadingDimsResultTile(OpBuilder &b, ArrayRef<OpFoldResult> offsets,
                           ArrayRef<OpFoldResult> sizes, OpFoldResult last,
                           SmallVector<OpFoldResult> &resultOffsets,
                           SmallVector<OpFoldResult> &resultSizes);

/// `op`'s tiled implementation for a rank-4 result tile that keeps the last
/// dim (`last` long) whole; failure for any other tile.
FailureOr<TilingResult> tileOfWholeRows(TilingInterface op, OpBuilder &b,
                                        ArrayRef<OpFoldResult> offsets,
                                        ArrayRef<OpFoldResult> sizes,
                                        OpFoldResult last);

} // namespace mlir::dat

#endif // DAT_LIB_DIALECT_DAT_IR_ROWTILING_H
