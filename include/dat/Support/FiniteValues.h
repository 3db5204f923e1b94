//===- FiniteValues.h - NaN and infinities in float buffers -----*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Programs refuse NaN and infinite inputs where they enter (on every bind:
// `prog --input`, the C API, Python), so the scan must cost no more than a
// read of the input at memory speed.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_SUPPORT_FINITEVALUES_H
#define DAT_SUPPORT_FINITEVALUES_H

#include "dat/Support/SafeTensors.h"

#include <cstdint>

namespace dat {

/// The index of the first NaN or infinite element of `n` elements of
/// `dtype` (F32 or BF16) at `data` (any alignment), or -1 where there is
/// none (or for other dtypes). Reads the bits in place, a block at a time,
/// without the float copy floatValues would make (268 MB for the
/// position-relative symbols at N 512).
int64_t firstNonFinite(DType dtype, const void *data, int64_t n);

/// The same, split among up to `threads` threads (0: the hardware's) in
/// parts of at least 16 Mi elements: one thread reads about 13 GB/s here,
/// half the memory's rate on two cores.
int64_t firstNonFiniteOnThreads(DType dtype, const void *data, int64_t n,
                                unsigned threads = 0);

} // namespace dat

#endif // DAT_SUPPORT_FINITEVALUES_H
