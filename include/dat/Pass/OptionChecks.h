//===- OptionChecks.h - diagnostics for out-of-range pass options -*- C++
//-*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Every dat pass refuses an option outside the values it can use, with one
// message form: "PASS: OPTION must be positive, got V" (or "positive or 0",
// "in [MIN, MAX]", "at least MIN"), so that a pipeline string's mistake
// names the pass and the option.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_PASS_OPTIONCHECKS_H
#define DAT_PASS_OPTIONCHECKS_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <limits>

namespace mlir::dat {

/// Fails, with an error on `op` naming `pass` and `option`, unless
/// `min <= value <= max`. `note` follows the range in the message (units,
/// what 0 means).
inline LogicalResult
checkOptionRange(Operation *op, StringRef pass, StringRef option, int64_t value,
                 int64_t min, int64_t max = std::numeric_limits<int64_t>::max(),
                 StringRef note = "") {
  if (min <= value && value <= max)
    return success();
  InFlightDiagnostic diag = op->emitError()
                            << pass << ": " << option << " must be ";
  if (max != std::numeric_limits<int64_t>::max())
    diag << "in [" << min << ", " << max << "]";
  else if (min == 1)
    diag << "positive";
  else if (min == 0)
    diag << "positive or 0";
  else
    diag << "at least " << min;
  return diag << note << ", got " << value;
}

} // namespace mlir::dat

#endif // DAT_PASS_OPTIONCHECKS_H
