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
  // Bytes the model has allocated: live (signed: a thread's batch of
  // frees, below, may be published before another's of the allocations)
  // and the peak of live.
  std::atomic<std::ptrdiff_t> live{0};
  std::atomic<size_t> peak{0};
  size_t arguments = 0; // bytes of arguments copied to the device
};

MemoryStats &memoryStats();

inline void noteAllocated(size_t bytes) {
  MemoryStats &s = memoryStats();
  std::ptrdiff_t live = s.live.fetch_add(static_cast<std::ptrdiff_t>(bytes),
                                         std::memory_order_relaxed) +
                        static_cast<std::ptrdiff_t>(bytes);
  if (live <= 0)
    return;
  size_t peak = s.peak.load(std::memory_order_relaxed);
  while (static_cast<size_t>(live) > peak &&
         !s.peak.compare_exchange_weak(peak, static_cast<size_t>(live),
                                       std::memory_order_relaxed))
    ;
}

inline void noteFreed(size_t bytes) {
  memoryStats().live.fetch_sub(static_cast<std::ptrdiff_t>(bytes),
                               std::memory_order_relaxed);
}

/// The CPU's host blocks under this size are counted per thread and
/// published in batches of at least this many bytes (noteHostAllocated):
/// a flash tile allocates and frees its small scratch buffers on its own
/// thread, and updating the shared counters for each moved their cache
/// line between the cores (16% of the small Vision DAT's time on two
/// threads). So the peak is exact for larger blocks and within this many
/// bytes per thread for the small ones.
constexpr std::ptrdiff_t kCountedInBatches = 64 << 10;

/// This thread's small blocks' bytes not yet published (negative: more
/// freed than allocated here), published when the thread ends.
struct PendingBytes {
  std::ptrdiff_t bytes = 0;
  void publish() {
    if (bytes > 0)
      noteAllocated(static_cast<size_t>(bytes));
    else if (bytes < 0)
      noteFreed(static_cast<size_t>(-bytes));
    bytes = 0;
  }
  ~PendingBytes() { publish(); }
};

inline PendingBytes &pendingBytes() {
  thread_local PendingBytes pending;
  return pending;
}

/// Publishes this thread's pending small blocks (tests).
inline void publishPendingBytes() { pendingBytes().publish(); }

inline void noteHostAllocated(size_t bytes) {
  if (static_cast<std::ptrdiff_t>(bytes) >= kCountedInBatches)
    return noteAllocated(bytes);
  PendingBytes &pending = pendingBytes();
  pending.bytes += static_cast<std::ptrdiff_t>(bytes);
  if (pending.bytes >= kCountedInBatches)
    pending.publish();
}

inline void noteHostFreed(size_t bytes) {
  if (static_cast<std::ptrdiff_t>(bytes) >= kCountedInBatches)
    return noteFreed(bytes);
  PendingBytes &pending = pendingBytes();
  pending.bytes -= static_cast<std::ptrdiff_t>(bytes);
  if (pending.bytes <= -kCountedInBatches)
    pending.publish();
}

} // namespace datrt

#endif // DAT_RUNTIME_PROGRAM_MEMORYSTATS_H
