//===- HostMemory.cpp - CPU programs use the runtime's buffers directly ---===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The compiled code allocates through MLIR's generic allocation functions
// (finalize-memref-to-llvm use-generic-functions), defined here over
// malloc/aligned_alloc with every live buffer's size kept, so that the
// model's peak memory is known (MemoryStats.h). With OpenMP tiles the peak
// counts the buffers of the tiles that run at once.
//
//===----------------------------------------------------------------------===//

#include "../Program/MemoryStats.h"
#include "../Program/ProgramMemory.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace {
// Tiles allocate from OpenMP threads: the books are shared.
std::mutex &booksLock() {
  static std::mutex lock;
  return lock;
}
std::unordered_map<void *, size_t> &liveSizes() {
  static std::unordered_map<void *, size_t> sizes;
  return sizes;
}

void *noted(void *p, size_t bytes) {
  if (p) {
    std::lock_guard<std::mutex> guard(booksLock());
    liveSizes()[p] = bytes;
    datrt::noteAllocated(bytes);
  }
  return p;
}
} // namespace

extern "C" {
void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  return noted(std::malloc(bytes), bytes);
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes) {
  // aligned_alloc wants a multiple of the alignment.
  size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  return noted(std::aligned_alloc(alignment, rounded), bytes);
}

void _mlir_memref_to_llvm_free(void *p) {
  {
    std::lock_guard<std::mutex> guard(booksLock());
    auto it = liveSizes().find(p);
    if (it != liveSizes().end()) {
      datrt::noteFreed(it->second);
      liveSizes().erase(it);
    }
  }
  std::free(p);
}
}

namespace datrt {

/// DAT_COPY_ARGUMENTS=1 (a test mode): arguments are copied at binding, one
/// copy per host address, as the GPU runtime does into device memory, so
/// that the CPU's tests catch a host buffer changed after it was bound
/// without binding it again (the decode loop of --generate once did).
static bool copyArguments() {
  static const bool copy = [] {
    const char *v = std::getenv("DAT_COPY_ARGUMENTS");
    return v && *v && *v != '0';
  }();
  return copy;
}

ArgumentCopies::~ArgumentCopies() {
  for (auto &[key, copy] : byKey)
    std::free(copy.data);
}

const void *visibleToProgram(const void *host, size_t bytes,
                             ArgumentCopies &copies, const void *key,
                             bool constant) {
  if (!copyArguments())
    return host;
  ArgumentCopies::Copy &copy = copies.byKey[key];
  if (copy.bytes != bytes || !copy.data) {
    std::free(copy.data);
    copy.data = std::malloc(bytes ? bytes : 1);
    copy.bytes = bytes;
  } else if (constant) {
    return copy.data;
  }
  std::memcpy(copy.data, host, bytes);
  return copy.data;
}

bool argumentsOnDevice() { return false; }

void finishCall() {}

void checkDevice() {}

void freeProgramBuffer(void *buffer) { _mlir_memref_to_llvm_free(buffer); }

const void *hostView(const void *, const void *buffer, size_t) {
  return buffer;
}

} // namespace datrt
