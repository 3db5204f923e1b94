//===- HostMemory.cpp - CPU programs use the runtime's buffers directly ---===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The compiled code allocates through MLIR's generic allocation functions
// (finalize-memref-to-llvm use-generic-functions), defined here over
// malloc/aligned_alloc, so that the model's peak memory is known
// (MemoryStats.h). With OpenMP tiles the peak counts the buffers of the
// tiles that run at once. Each block carries its size and its offset from
// the underlying allocation in a header just before the pointer returned:
// the books need no lock, which tiles allocating on several threads would
// contend for.
//
//===----------------------------------------------------------------------===//

#include "../Program/MemoryStats.h"
#include "../Program/ProgramMemory.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

namespace {
/// The header before each block: its size and where its allocation starts.
struct BlockHeader {
  size_t bytes;
  size_t offset;
};

/// A block of `bytes` whose pointer is a multiple of `alignment` (a power of
/// two), `offset` bytes into its allocation; the header fits in the offset.
void *allocateBlock(size_t alignment, size_t bytes) {
  size_t offset =
      alignment < sizeof(BlockHeader) ? sizeof(BlockHeader) : alignment;
  size_t total = offset + bytes;
  char *base =
      alignment <= alignof(std::max_align_t)
          ? static_cast<char *>(std::malloc(total))
          // aligned_alloc wants a multiple of the alignment.
          : static_cast<char *>(std::aligned_alloc(
                alignment, (total + alignment - 1) / alignment * alignment));
  if (!base)
    return nullptr;
  char *block = base + offset;
  BlockHeader header{bytes, offset};
  std::memcpy(block - sizeof(BlockHeader), &header, sizeof(BlockHeader));
  datrt::noteAllocated(bytes);
  return block;
}
} // namespace

extern "C" {
void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  return allocateBlock(alignof(std::max_align_t), bytes);
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes) {
  return allocateBlock(alignment, bytes);
}

void _mlir_memref_to_llvm_free(void *p) {
  if (!p)
    return;
  char *block = static_cast<char *>(p);
  BlockHeader header;
  std::memcpy(&header, block - sizeof(BlockHeader), sizeof(BlockHeader));
  datrt::noteFreed(header.bytes);
  std::free(block - header.offset);
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
