//===- DatDialect.h - dat dialect -------------------------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_DIALECT_DAT_IR_DATDIALECT_H
#define DAT_DIALECT_DAT_IR_DATDIALECT_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "dat/Dialect/Dat/IR/DatDialect.h.inc"

namespace mlir::dat {
// The discardable attributes the dialect declares (DatBase.td says what
// each means) and DatDialect::verifyOperationAttribute checks.

/// `dat.origin` on a tile loop: the op it computes.
inline constexpr llvm::StringLiteral kOriginAttr =
    DatDialect::OriginAttrHelper::getNameStr();
/// `dat.recompute_per_tile` on a per-pair elementwise producer.
inline constexpr llvm::StringLiteral kRecomputePerTileAttr =
    DatDialect::RecomputePerTileAttrHelper::getNameStr();
/// `dat.rest_of_split` on the partial-tile loop split off a tile loop.
inline constexpr llvm::StringLiteral kRestOfSplitAttr =
    DatDialect::RestOfSplitAttrHelper::getNameStr();
/// `dat.overlapped_last_tile` on a tile loop whose last tile overlaps the
/// one before it.
inline constexpr llvm::StringLiteral kOverlappedLastTileAttr =
    DatDialect::OverlappedLastTileAttrHelper::getNameStr();
/// `dat.host_memory` on a host allocation only the host uses.
inline constexpr llvm::StringLiteral kHostMemoryAttr =
    DatDialect::HostMemoryAttrHelper::getNameStr();
/// `dat.swizzle_outer_dims` on a block-wide tile's shared-memory view.
inline constexpr llvm::StringLiteral kSwizzleOuterDimsAttr =
    DatDialect::SwizzleOuterDimsAttrHelper::getNameStr();

/// Whether `op` is a tile loop made by a dat tiling pass (it carries
/// `dat.origin`).
inline bool isTileLoop(Operation *op) { return op && op->hasAttr(kOriginAttr); }

/// Whether `loop` is the tile loop of an attention-family op (attention,
/// relational attention, HYLA), whose query rows are independent: a tile
/// may start anywhere, and its scratch buffers are per-head planes.
inline bool isAttentionTileLoop(Operation *loop) {
  auto origin = loop ? loop->getAttrOfType<StringAttr>(kOriginAttr) : nullptr;
  return origin &&
         llvm::is_contained({"dat.attention", "dat.relational_attention",
                             "dat.hyper_attention"},
                            origin.getValue());
}

/// Marks `loop` as the tile loop of `origin` (an op name, or what the tiles
/// compute: "projection + epilogue").
inline void setTileOrigin(Operation *loop, StringRef origin) {
  loop->setAttr(kOriginAttr, StringAttr::get(loop->getContext(), origin));
}
} // namespace mlir::dat

#endif // DAT_DIALECT_DAT_IR_DATDIALECT_H
