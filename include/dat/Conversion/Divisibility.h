//===- Divisibility.h - index values known to be multiples ------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_CONVERSION_DIVISIBILITY_H
#define DAT_CONVERSION_DIVISIBILITY_H

#include "mlir/IR/Value.h"

namespace mlir::dat {

/// Whether the index `value` is a multiple of `m` by construction: a
/// constant, a sum or difference of such values, a product with one, or an
/// scf.for's induction variable whose lower bound and step are. (What the
/// GPU kernels' 16-byte accesses need to know of their offsets.)
bool isKnownMultipleOf(Value value, int64_t m);

} // namespace mlir::dat

#endif // DAT_CONVERSION_DIVISIBILITY_H
