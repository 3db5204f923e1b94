//===- FakeCudaDriver.cpp - a CUDA driver over host memory, for tests -----===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The driver entry points the CUDA runtime resolves, answering as the real
// driver would for memory and streams (no kernels run). "Device" memory is
// malloc'ed 64 bytes past the block's start, so that std::free on it — a
// device pointer taken for a host one — is an invalid free. Test controls
// (fake_cuda_*) inject errors and report which stream a copy used and how
// many copies, managed and page-locked allocations and synchronizations
// there were.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>

namespace {
struct Block {
  void *base;
  bool managed;
  size_t bytes;
};
std::map<uint64_t, Block> &blocks() {
  static std::map<uint64_t, Block> b;
  return b;
}
// Page-locked host memory (cuMemAllocHost) by address, its bytes.
std::map<uint64_t, size_t> &pinned() {
  static std::map<uint64_t, size_t> p;
  return p;
}
int refusePinned = 0;
int syncError = 0, pointerError = 0;
void *lastCopyStream = nullptr;
int copies = 0, managedAllocations = 0, syncs = 0;
int stream = 0;
// Device memory the fake card has (cuMemAlloc fails past it): unlimited
// unless a test sets it.
size_t memoryLimit = SIZE_MAX;
size_t deviceBytes() {
  size_t total = 0;
  for (auto &[p, b] : blocks())
    total += b.managed ? 0 : b.bytes;
  return total;
}
} // namespace

extern "C" {
void fake_cuda_set_sync_error(int e) { syncError = e; }
void fake_cuda_set_pointer_error(int e) { pointerError = e; }
void *fake_cuda_last_copy_stream() { return lastCopyStream; }
int fake_cuda_copies() { return copies; }
int fake_cuda_managed_allocations() { return managedAllocations; }
int fake_cuda_syncs() { return syncs; }
int fake_cuda_live_blocks() { return static_cast<int>(blocks().size()); }
void fake_cuda_set_memory_limit(size_t bytes) { memoryLimit = bytes; }
void fake_cuda_refuse_pinned(int refuse) { refusePinned = refuse; }
int fake_cuda_live_pinned() { return static_cast<int>(pinned().size()); }

int cuInit(unsigned) { return 0; }
int cuDeviceGet(int *d, int) {
  *d = 0;
  return 0;
}
int cuDevicePrimaryCtxRetain(void **c, int) {
  *c = &stream;
  return 0;
}
int cuCtxSetCurrent(void *) { return 0; }
int cuModuleLoadData(void **m, const void *) {
  *m = &stream;
  return 0;
}
int cuModuleUnload(void *) { return 0; }
int cuModuleGetFunction(void **f, void *, const char *) {
  *f = &stream;
  return 0;
}
int cuFuncSetAttribute(void *, int, int) { return 0; }
int cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                   unsigned, unsigned, void *, void **, void **) {
  return 0;
}
int cuStreamCreate(void **s, unsigned) {
  *s = &stream;
  return 0;
}
int cuStreamSynchronize(void *) {
  ++syncs;
  return syncError;
}
int cuStreamDestroy_v2(void *) { return 0; }
int cuStreamWaitEvent(void *, void *, unsigned) { return 0; }
int cuEventCreate(void **e, unsigned) {
  *e = &stream;
  return 0;
}
int cuEventDestroy_v2(void *) { return 0; }
int cuEventRecord(void *, void *) { return 0; }
int cuEventSynchronize(void *) { return 0; }
// Every timed interval takes 1.5 ms.
int cuEventElapsedTime_v2(float *ms, void *, void *) {
  *ms = 1.5f;
  return 0;
}

static int allocate(uint64_t *p, size_t bytes, bool managed) {
  if (!managed && deviceBytes() + bytes > memoryLimit)
    return 2; // CUDA_ERROR_OUT_OF_MEMORY
  char *base = static_cast<char *>(std::malloc(bytes + 64));
  *p = reinterpret_cast<uint64_t>(base + 64);
  blocks()[*p] = {base, managed, bytes};
  return 0;
}
int cuMemAllocManaged(uint64_t *p, size_t bytes, unsigned) {
  ++managedAllocations;
  return allocate(p, bytes, true);
}
int cuMemAlloc_v2(uint64_t *p, size_t bytes) {
  return allocate(p, bytes, false);
}
int cuMemFree_v2(uint64_t p) {
  auto it = blocks().find(p);
  if (it == blocks().end())
    return 1; // CUDA_ERROR_INVALID_VALUE
  std::free(it->second.base);
  blocks().erase(it);
  return 0;
}
int cuMemAllocHost_v2(void **p, size_t bytes) {
  if (refusePinned)
    return 2; // CUDA_ERROR_OUT_OF_MEMORY
  *p = std::malloc(bytes);
  pinned()[reinterpret_cast<uint64_t>(*p)] = bytes;
  return 0;
}
int cuMemFreeHost(void *p) {
  if (!pinned().erase(reinterpret_cast<uint64_t>(p)))
    return 1; // CUDA_ERROR_INVALID_VALUE
  std::free(p);
  return 0;
}
int cuMemcpy(uint64_t dst, uint64_t src, size_t bytes) {
  std::memcpy(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src),
              bytes);
  return 0;
}
int cuMemcpyAsync(uint64_t dst, uint64_t src, size_t bytes, void *s) {
  lastCopyStream = s;
  ++copies;
  return cuMemcpy(dst, src, bytes);
}
int cuMemsetD32Async(uint64_t dst, unsigned value, size_t count, void *s) {
  lastCopyStream = s;
  auto *words = reinterpret_cast<uint32_t *>(dst);
  for (size_t i = 0; i < count; ++i)
    words[i] = value;
  return 0;
}
// Like the driver: memory that is not its own gets the attributes' null
// values (memory type 0) and success.
int cuPointerGetAttributes(unsigned n, int *attributes, void **data,
                           uint64_t p) {
  if (pointerError)
    return pointerError;
  auto it = blocks().find(p);
  bool hostPinned = pinned().count(p);
  for (unsigned i = 0; i < n; ++i) {
    unsigned value = 0;
    if (hostPinned && attributes[i] == 2 /*MEMORY_TYPE*/)
      value = 1; // HOST
    else if (hostPinned && attributes[i] != 8 /*IS_MANAGED*/)
      return 1;
    if (it != blocks().end() && attributes[i] == 2 /*MEMORY_TYPE*/)
      value = it->second.managed ? 4 /*UNIFIED*/ : 2 /*DEVICE*/;
    else if (it != blocks().end() && attributes[i] == 8 /*IS_MANAGED*/)
      value = it->second.managed;
    else if (it != blocks().end())
      return 1; // CUDA_ERROR_INVALID_VALUE: an attribute the fake lacks
    *static_cast<unsigned *>(data[i]) = value;
  }
  return 0;
}
int cuGetErrorName(int e, const char **name) {
  *name = e == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS"
          : e == 2 ? "CUDA_ERROR_OUT_OF_MEMORY"
                   : "CUDA_ERROR_UNKNOWN";
  return 0;
}
int cuGetErrorString(int e, const char **text) {
  *text = e == 700 ? "an illegal memory access was encountered"
          : e == 2 ? "out of memory"
                   : "unknown";
  return 0;
}
}
