//===- MemoryStats.h - what a program's model allocates ---------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The model's own buffers (memref.alloc on the CPU, mgpuMemAlloc on the
// GPU) and the device copies of its arguments are counted as they come and
// go, so that `--repeat` can report the peak next to a baseline's
// torch.cuda.max_memory_allocated.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_RUNTIME_PROGRAM_MEMORYSTATS_H
#define DAT_RUNTIME_PROGRAM_MEMORYSTATS_H

#include <atomic>
#include <cstddef>

namespace datrt {

struct MemoryStats {
  // Atomic: a CPU program's tiles allocate from several OpenMP threads.
  std::atomic<size_t> live{0}, peak{0}; // bytes the model has allocated
  size_t arguments = 0; // bytes of arguments copied to the device
};

MemoryStats &memoryStats();

inline void noteAllocated(size_t bytes) {
  MemoryStats &s = memoryStats();
  size_t live = s.live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  size_t peak = s.peak.load(std::memory_order_relaxed);
  while (live > peak &&
         !s.peak.compare_exchange_weak(peak, live, std::memory_order_relaxed))
    ;
}

inline void noteFreed(size_t bytes) {
  memoryStats().live.fetch_sub(bytes, std::memory_order_relaxed);
}

} // namespace datrt

#endif // DAT_RUNTIME_PROGRAM_MEMORYSTATS_H
