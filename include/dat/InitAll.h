//===- InitAll.h - register everything dat provides -------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_INITALL_H
#define DAT_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::dat {

/// Adds the dat dialect and its interface implementations to `registry`.
void registerAllDialects(DialectRegistry &registry);

/// Registers the dat passes and pipelines with the global pass registry.
void registerAllPasses();

} // namespace mlir::dat

#endif // DAT_INITALL_H
