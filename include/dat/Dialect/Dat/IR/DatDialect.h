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
/// A unit attribute on an elementwise linalg op whose operands are small
/// (per position) and whose result is large (per pair: APE's distance
/// decay): dat-tile-attention computes it per tile where the attention
/// tiles slice it, so that the whole result never exists.
inline constexpr llvm::StringLiteral kRecomputePerTileAttr =
    "dat.recompute_per_tile";

/// A unit attribute on the `scf.forall` that dat-peel-tile-loops split off
/// a tile loop (its partial last tiles): its tiles are disjoint from those
/// of the loop whose result it continues (its output), so a tile it slices
/// from that output was never written.
inline constexpr llvm::StringLiteral kRestOfSplitAttr = "dat.rest_of_split";
} // namespace mlir::dat

#endif // DAT_DIALECT_DAT_IR_DATDIALECT_H
