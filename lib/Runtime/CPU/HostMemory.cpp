//===- HostMemory.cpp - CPU programs use the runtime's buffers directly ---===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The compiled code allocates through MLIR's generic allocation functions
// (finalize-memref-to-llvm use-generic-functions), defined here over
// malloc/aligned_alloc with every live buffer's size kept, so that the
// model's peak memory is known (MemoryStats.h).
//
//===----------------------------------------------------------------------===//

#include "../Program/MemoryStats.h"
#include "../Program/ProgramMemory.h"

#include <cstdint>
#include <cstdlib>
#include <unordered_map>

namespace {
std::unordered_map<void *, size_t> &liveSizes() {
  static std::unordered_map<void *, size_t> sizes;
  return sizes;
}

void *noted(void *p, size_t bytes) {
  if (p) {
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
  auto it = liveSizes().find(p);
  if (it != liveSizes().end()) {
    datrt::noteFreed(it->second);
    liveSizes().erase(it);
  }
  std::free(p);
}
}

namespace datrt {

const void *visibleToProgram(const void *host, size_t) { return host; }

void freeProgramBuffer(void *buffer) { _mlir_memref_to_llvm_free(buffer); }

} // namespace datrt
