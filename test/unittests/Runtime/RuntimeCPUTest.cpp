//===- RuntimeCPUTest.cpp - the CPU runtime's allocation functions --------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The functions a CPU program allocates through (HostMemory.cpp): aligned
// blocks, the model's live and peak bytes kept without a lock from several
// threads, large blocks reused by the next allocation of their size.
//
//===----------------------------------------------------------------------===//

#include "Program/MemoryStats.h"
#include "Program/Program.h"
#include "Program/ProgramMemory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

extern "C" {
void *_mlir_memref_to_llvm_alloc(size_t bytes);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes);
void _mlir_memref_to_llvm_free(void *p);
}

namespace {

bool alignedTo(const void *p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

TEST(HostMemory, BlocksAreAlignedAndWritable) {
  for (size_t alignment : {8, 16, 64, 128, 4096}) {
    for (size_t bytes : {1, 100, 4096, 1 << 20}) {
      auto *p = static_cast<unsigned char *>(
          _mlir_memref_to_llvm_aligned_alloc(alignment, bytes));
      ASSERT_NE(p, nullptr);
      EXPECT_TRUE(alignedTo(p, alignment)) << alignment << " " << bytes;
      p[0] = 1;
      p[bytes - 1] = 2; // the header before the block is not overwritten
      _mlir_memref_to_llvm_free(p);
    }
  }
  void *p = _mlir_memref_to_llvm_alloc(24);
  EXPECT_TRUE(alignedTo(p, alignof(std::max_align_t)));
  _mlir_memref_to_llvm_free(p);
  _mlir_memref_to_llvm_free(nullptr);
}

TEST(HostMemory, PackedWeightStorageIsOnCacheLines) {
  // The bind-time copies of weights (Program.h): a plain std::vector of a
  // megabyte or more is a glibc mmap block, 16 bytes past a page.
  for (size_t bytes : {1, 100, 4096, 1 << 20, 5 << 20}) {
    datrt::AlignedBytes copy(bytes, 7);
    EXPECT_TRUE(alignedTo(copy.data(), 64)) << bytes;
    EXPECT_EQ(copy[bytes - 1], 7);
    copy.assign(bytes + 64, 1); // reallocated: still aligned
    EXPECT_TRUE(alignedTo(copy.data(), 64)) << bytes;
  }
}

TEST(HostMemory, LiveAndPeakBytes) {
  // Blocks of 64 KiB and more are counted as they come and go.
  datrt::MemoryStats &stats = datrt::memoryStats();
  datrt::publishPendingBytes();
  std::ptrdiff_t live = stats.live;
  size_t peak = stats.peak;
  void *a = _mlir_memref_to_llvm_aligned_alloc(64, 100000);
  void *b = _mlir_memref_to_llvm_alloc(300000);
  EXPECT_EQ(stats.live, live + 400000);
  EXPECT_GE(stats.peak, static_cast<size_t>(live + 400000));
  _mlir_memref_to_llvm_free(a);
  EXPECT_EQ(stats.live, live + 300000);
  _mlir_memref_to_llvm_free(b);
  EXPECT_EQ(stats.live, live);
  EXPECT_GE(stats.peak, std::max(peak, static_cast<size_t>(live + 400000)));
  datrt::releaseCachedBuffers();
}

TEST(HostMemory, SmallBlocksAreCountedInBatches) {
  // Smaller ones per thread, published once a thread's count moves by
  // 64 KiB (or the thread ends): the books are exact to within that.
  datrt::MemoryStats &stats = datrt::memoryStats();
  datrt::publishPendingBytes();
  std::ptrdiff_t live = stats.live;
  void *a = _mlir_memref_to_llvm_aligned_alloc(64, 1000);
  void *b = _mlir_memref_to_llvm_alloc(3000);
  EXPECT_EQ(stats.live, live);
  datrt::publishPendingBytes();
  EXPECT_EQ(stats.live, live + 4000);
  EXPECT_GE(stats.peak, static_cast<size_t>(live + 4000));
  std::vector<void *> many;
  for (int i = 0; i < 20; ++i)
    many.push_back(_mlir_memref_to_llvm_alloc(4096));
  // 16 blocks of 4 KiB made a batch: published without being asked.
  EXPECT_GE(stats.live, live + 4000 + (64 << 10));
  for (void *p : many)
    _mlir_memref_to_llvm_free(p);
  _mlir_memref_to_llvm_free(a);
  _mlir_memref_to_llvm_free(b);
  datrt::publishPendingBytes();
  EXPECT_EQ(stats.live, live);
}

TEST(HostMemory, LargeBlocksAreReusedBySize) {
  // A program's calls ask for the same sizes again: a large block comes
  // back for the next allocation of its size and alignment, not for others.
  void *a = _mlir_memref_to_llvm_aligned_alloc(64, 1 << 20);
  _mlir_memref_to_llvm_free(a);
  void *other = _mlir_memref_to_llvm_aligned_alloc(64, (1 << 20) + 64);
  EXPECT_NE(other, a);
  void *b = _mlir_memref_to_llvm_aligned_alloc(64, 1 << 20);
  EXPECT_EQ(b, a);
  _mlir_memref_to_llvm_free(other);
  _mlir_memref_to_llvm_free(b);
  datrt::releaseCachedBuffers();
  // Released blocks are gone: the books still balance.
  void *c = _mlir_memref_to_llvm_aligned_alloc(64, 1 << 20);
  ASSERT_NE(c, nullptr);
  _mlir_memref_to_llvm_free(c);
  datrt::releaseCachedBuffers();
}

TEST(HostMemory, ThreadsAllocateAtOnce) {
  // OpenMP tiles allocate their scratch concurrently: the books balance.
  datrt::MemoryStats &stats = datrt::memoryStats();
  datrt::publishPendingBytes();
  std::ptrdiff_t live = stats.live;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      for (int i = 0; i < 2000; ++i) {
        size_t bytes = (i % 3 == 0 ? 128 << 10 : 4096) + 64 * t;
        void *p = _mlir_memref_to_llvm_aligned_alloc(64, bytes);
        static_cast<char *>(p)[bytes - 1] = 1;
        _mlir_memref_to_llvm_free(p);
      }
    });
  for (std::thread &t : threads)
    t.join();
  // (Each thread published its pending small blocks as it ended.)
  EXPECT_EQ(stats.live, live);
  datrt::releaseCachedBuffers();
}

} // namespace
