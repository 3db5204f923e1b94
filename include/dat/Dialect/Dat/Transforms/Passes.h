//===- Passes.h - dat dialect transformation passes -------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_DIALECT_DAT_TRANSFORMS_PASSES_H
#define DAT_DIALECT_DAT_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::dat {

#define GEN_PASS_DECL
#include "dat/Dialect/Dat/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dat/Dialect/Dat/Transforms/Passes.h.inc"

} // namespace mlir::dat

#endif // DAT_DIALECT_DAT_TRANSFORMS_PASSES_H
