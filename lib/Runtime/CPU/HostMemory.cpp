//===- HostMemory.cpp - CPU programs use the runtime's buffers directly ---===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The compiled code allocates through MLIR's generic allocation functions
// (finalize-memref-to-llvm use-generic-functions), defined here over
// malloc/aligned_alloc, so that the model's peak memory is known
// (MemoryStats.h). With OpenMP tiles the peak counts the buffers of the
// tiles that run at once (blocks under 64 KiB counted per thread, in
// batches: within 64 KiB per thread).
//
// Each block carries its size and alignment in a header just before the
// pointer returned (the header's rounded size to the alignment away from
// the underlying allocation), so the books
// need no lock (tiles allocate on several threads at once). Blocks of 64 KiB
// and more are kept when freed and reused by the next allocation of the
// same size: a program's shapes are fixed, so its calls ask for the same
// sizes again, and fresh pages from the system cost a page fault each
// (glibc returns large blocks to the system; 1,400 faults per call of
// standard attention at N = 1024).
//
//===----------------------------------------------------------------------===//

#include "../Program/MemoryStats.h"
#include "../Program/ProgramMemory.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace {
/// The header before each block.
struct BlockHeader {
  size_t bytes;
  size_t alignment;
};

size_t roundUp(size_t n, size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

/// From the underlying allocation to the block: the header, rounded up to
/// the block's alignment.
size_t headerSpace(size_t alignment) {
  return roundUp(sizeof(BlockHeader), alignment);
}

/// Blocks from this size on are cached when freed.
constexpr size_t kCachedBytes = 64 << 10;

/// Freed large blocks by (bytes, alignment): their underlying allocations.
struct BlockCache {
  std::mutex lock;
  std::map<std::pair<size_t, size_t>, std::vector<char *>> free;
};

BlockCache &blockCache() {
  static BlockCache *cache = new BlockCache; // outlives static destructors
  return *cache;
}

char *takeCached(size_t bytes, size_t alignment) {
  BlockCache &cache = blockCache();
  std::lock_guard<std::mutex> guard(cache.lock);
  auto it = cache.free.find({bytes, alignment});
  if (it == cache.free.end() || it->second.empty())
    return nullptr;
  char *base = it->second.back();
  it->second.pop_back();
  return base;
}

/// A block of `bytes` whose pointer is a multiple of `alignment` (a power of
/// two, at least 16), with its header in the bytes before it.
void *allocateBlock(size_t alignment, size_t bytes) {
  size_t offset = headerSpace(alignment);
  char *base = bytes >= kCachedBytes ? takeCached(bytes, alignment) : nullptr;
  if (!base) {
    size_t total = offset + bytes;
    base = alignment <= alignof(std::max_align_t)
               ? static_cast<char *>(std::malloc(total))
               // aligned_alloc wants a multiple of the alignment.
               : static_cast<char *>(
                     std::aligned_alloc(alignment, roundUp(total, alignment)));
    if (!base)
      return nullptr;
  }
  char *block = base + offset;
  BlockHeader header{bytes, alignment};
  std::memcpy(block - sizeof(BlockHeader), &header, sizeof(BlockHeader));
  datrt::noteHostAllocated(bytes);
  return block;
}
} // namespace

extern "C" {
void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  return allocateBlock(alignof(std::max_align_t), bytes);
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes) {
  return allocateBlock(alignment < alignof(std::max_align_t)
                           ? alignof(std::max_align_t)
                           : alignment,
                       bytes);
}

void _mlir_memref_to_llvm_free(void *p) {
  if (!p)
    return;
  char *block = static_cast<char *>(p);
  BlockHeader header;
  std::memcpy(&header, block - sizeof(BlockHeader), sizeof(BlockHeader));
  datrt::noteHostFreed(header.bytes);
  char *base = block - headerSpace(header.alignment);
  if (header.bytes < kCachedBytes) {
    std::free(base);
    return;
  }
  BlockCache &cache = blockCache();
  std::lock_guard<std::mutex> guard(cache.lock);
  cache.free[{header.bytes, header.alignment}].push_back(base);
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

void releaseCachedBuffers() {
  BlockCache &cache = blockCache();
  std::lock_guard<std::mutex> guard(cache.lock);
  for (auto &[key, bases] : cache.free)
    for (char *base : bases)
      std::free(base);
  cache.free.clear();
}

const void *hostView(const void *, const void *buffer, size_t) {
  return buffer;
}

} // namespace datrt
