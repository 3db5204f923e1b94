//===- MemoryStats.h - what a program's model allocates ---------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The model's own buffers (memref.alloc on the CPU, mgpuMemAlloc on the
// GPU) and the device copies of its arguments are counted as they come and
// go, so that `--repeat` can report the peak next to a baseline's
// torch.cuda.max_memory_allocated. Programs are single-threaded.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_RUNTIME_PROGRAM_MEMORYSTATS_H
#define DAT_RUNTIME_PROGRAM_MEMORYSTATS_H

#include <cstddef>

namespace datrt {

struct MemoryStats {
  size_t live = 0, peak = 0; // bytes the model has allocated
  size_t arguments = 0;      // bytes of arguments copied to the device
};

MemoryStats &memoryStats();

inline void noteAllocated(size_t bytes) {
  MemoryStats &s = memoryStats();
  s.live += bytes;
  if (s.live > s.peak)
    s.peak = s.live;
}

inline void noteFreed(size_t bytes) { memoryStats().live -= bytes; }

} // namespace datrt

#endif // DAT_RUNTIME_PROGRAM_MEMORYSTATS_H
