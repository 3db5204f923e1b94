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
#include <map>

namespace datrt {

/// The copies of arguments that calls bind, where the compiled code reads
/// them (device memory on the GPU), freed with their owner: a call's
/// inputs (one per slot, refreshed on every bind) or a program's weights
/// (uploaded once, shared by its calls).
class ArgumentCopies {
public:
  ArgumentCopies() = default;
  ArgumentCopies(const ArgumentCopies &) = delete;
  ArgumentCopies &operator=(const ArgumentCopies &) = delete;
  ~ArgumentCopies();

  struct Copy {
    void *data = nullptr;
    size_t bytes = 0;
  };
  std::map<const void *, Copy> byKey;
};

/// The address at which the compiled code reads the `bytes` at `host`:
/// `host` itself on the CPU; on the GPU a copy in device memory, kept in
/// `copies` under `key` and copied from `host` on every call, or only the
/// first time with `constant` (weights). A buffer the program itself
/// allocated (a decode cache it returned) is used as it is.
const void *visibleToProgram(const void *host, size_t bytes,
                             ArgumentCopies &copies, const void *key,
                             bool constant);

/// Waits for the work a call queued (the GPU's stream), reporting its
/// errors; nothing to do on the CPU.
void finishCall();

/// Whether the compiled code reads its arguments from copies on a device
/// (the GPU runtime), as opposed to the runtime's own buffers (the CPU).
bool argumentsOnDevice();

/// Checks that the device the program runs on can be used, failing (with
/// `fail`) if not: the C API reports this instead of the process ending at
/// the first call. Nothing to check on the CPU.
void checkDevice();

/// Frees a buffer the compiled code allocated and returned.
void freeProgramBuffer(void *buffer);

/// Returns to the system the freed buffers the runtime keeps for reuse
/// (its large host blocks on the CPU, device blocks on the GPU); called when
/// a program is destroyed.
void releaseCachedBuffers();

/// The `bytes` at `buffer`, in the allocation `allocated` the compiled code
/// returned, where the host can read them: `buffer` itself on the CPU and
/// for managed memory; a host copy of device memory on the GPU, made once
/// the program's stream has finished.
const void *hostView(const void *allocated, const void *buffer, size_t bytes);

} // namespace datrt

#endif // DAT_RUNTIME_PROGRAMMEMORY_H
