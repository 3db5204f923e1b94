//===- ProgramMemory.h - buffers shared with the compiled code --*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The CPU and CUDA runtimes differ only here: where the compiled code reads
// the arguments the runtime binds, and how its returned buffers are freed.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_RUNTIME_PROGRAMMEMORY_H
#define DAT_RUNTIME_PROGRAMMEMORY_H

#include <cstddef>

namespace datrt {

/// The address at which the compiled code reads the `bytes` at `host`, as
/// they are now: `host` itself on the CPU; on the GPU a buffer in managed
/// memory, one per host address, refreshed from `host` on every call (a
/// buffer the program itself allocated is returned as is).
const void *visibleToProgram(const void *host, size_t bytes);

/// Whether the compiled code reads its arguments from copies on a device
/// (the GPU runtime), as opposed to the runtime's own buffers (the CPU).
bool argumentsOnDevice();

/// Checks that the device the program runs on can be used, failing (with
/// `fail`) if not: the C API reports this instead of the process ending at
/// the first call. Nothing to check on the CPU.
void checkDevice();

/// Frees a buffer the compiled code allocated and returned.
void freeProgramBuffer(void *buffer);

/// The `bytes` at `buffer`, in the allocation `allocated` the compiled code
/// returned, where the host can read them: `buffer` itself on the CPU and
/// for managed memory; a host copy of device memory on the GPU.
const void *hostView(const void *allocated, const void *buffer, size_t bytes);

} // namespace datrt

#endif // DAT_RUNTIME_PROGRAMMEMORY_H
