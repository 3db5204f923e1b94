//===- DeviceMemory.cpp - arguments in device memory ----------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// GPU programs read every argument from device memory: a weight is
// uploaded once per program, an input copied on each bind; buffers the
// program itself returned (decode caches) are already there. Copies go on
// the program's one stream, ordered with its kernels.
//
//===----------------------------------------------------------------------===//

#include "../Program/MemoryStats.h"
#include "../Program/Program.h"
#include "../Program/ProgramMemory.h"
#include "CudaDriver.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

extern "C" void mgpuMemFree(void *ptr, void *stream);
extern "C" void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream);

namespace datrt {

using cuda::CUdeviceptr;

/// What the driver says of `p`: nothing where it is plain host memory;
/// else whether it is managed memory.
static std::optional<bool> driverMemory(const void *p) {
  // The plural query: for memory that is not the driver's it succeeds with
  // memory type 0, where the singular one fails with
  // CUDA_ERROR_INVALID_VALUE — an API error compute-sanitizer reports on
  // every host argument. Any error (a sticky one from an earlier kernel)
  // stops the program rather than let a device pointer pass for a host one.
  unsigned memoryType = 0, managed = 0;
  int attributes[] = {2 /*CU_POINTER_ATTRIBUTE_MEMORY_TYPE*/,
                      8 /*CU_POINTER_ATTRIBUTE_IS_MANAGED*/};
  void *data[] = {&memoryType, &managed};
  cuda::CUresult r = cuda::driver().cuPointerGetAttributes(
      2, attributes, data, reinterpret_cast<CUdeviceptr>(p));
  cuda::check(r, "cuPointerGetAttributes", "classifying a buffer");
  if (memoryType == 0)
    return std::nullopt;
  return managed != 0;
}

static bool isManaged(const void *p) { return driverMemory(p).value_or(false); }

namespace {
/// The host copy of a result in device memory, one per device buffer (the
/// runtime reuses those from call to call, so these are few). Page-locked
/// where the driver grants it: a copy from device memory into pageable
/// memory goes through the driver's own staging buffers, at a fraction of
/// the bus's rate; into page-locked memory it is one DMA.
/// DAT_PINNED_RESULTS=0 keeps them pageable (to measure the difference).
struct HostCopy {
  void *data = nullptr;
  size_t bytes = 0;
  bool pinned = false;
};

std::map<const void *, HostCopy> &hostCopies() {
  static std::map<const void *, HostCopy> copies;
  return copies;
}

/// Read whenever a copy is made (once per buffer), so that one process can
/// measure both (scripts/gpu-python-smoke.py).
bool pinResults() {
  const char *v = std::getenv("DAT_PINNED_RESULTS");
  return !v || std::strcmp(v, "0") != 0;
}

void freeHostCopy(HostCopy &copy) {
  if (copy.pinned)
    cuda::check(cuda::driver().cuMemFreeHost(copy.data), "cuMemFreeHost");
  else
    std::free(copy.data);
  copy = {};
}

void releaseHostCopies() {
  for (auto &[buffer, copy] : hostCopies())
    freeHostCopy(copy);
  hostCopies().clear();
}
} // namespace

ArgumentCopies::~ArgumentCopies() {
  for (auto &[key, copy] : byKey)
    if (copy.data) {
      cuda::driver().cuMemFree(reinterpret_cast<CUdeviceptr>(copy.data));
      memoryStats().arguments -= copy.bytes;
    }
}

bool cuda::isHostMemory(const void *p) {
  return !cuda::isRuntimeBlock(p) && !driverMemory(p);
}

const void *visibleToProgram(const void *host, size_t bytes,
                             ArgumentCopies &copies, const void *key,
                             bool constant) {
  // A buffer the program returned (a decode cache) is on the device
  // already; managed memory (a caller's) is readable there.
  if (cuda::isRuntimeBlock(host) || isManaged(host))
    return host;
  ArgumentCopies::Copy &copy = copies.byKey[key];
  if (copy.bytes != bytes || !copy.data) {
    if (copy.data) {
      cuda::check(
          cuda::driver().cuMemFree(reinterpret_cast<CUdeviceptr>(copy.data)),
          "cuMemFree");
      memoryStats().arguments -= copy.bytes;
    }
    CUdeviceptr p = 0;
    cuda::check(cuda::driver().cuMemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc",
                (std::to_string(bytes) + " bytes for an argument of the "
                                         "program")
                    .c_str());
    memoryStats().arguments += bytes;
    copy = {reinterpret_cast<void *>(p), bytes};
  } else if (constant) {
    return copy.data; // a weight, uploaded once
  }
  // On the program's stream, ahead of the kernels that read it (a copy
  // from pageable memory returns once the source may be reused).
  mgpuMemcpy(copy.data, const_cast<void *>(host), bytes, nullptr);
  return copy.data;
}

bool argumentsOnDevice() { return true; }

void finishCall() { cuda::synchronize("the end of a call"); }

void checkDevice() {
  std::string why = cuda::unusableDriver();
  if (!why.empty())
    throw Failure(why);
}

void freeProgramBuffer(void *buffer) {
  // A result the program allocated (device or managed) goes back to the
  // runtime's block cache (MgpuRuntime.cpp), for the next run to reuse.
  if (cuda::isRuntimeBlock(buffer) || isManaged(buffer))
    mgpuMemFree(buffer, nullptr);
  else
    std::free(buffer);
}

void releaseCachedBuffers() {
  cuda::releaseCublas();
  cuda::releaseFreeBlocks();
  releaseHostCopies();
}

const void *hostView(const void *allocated, const void *buffer, size_t bytes) {
  if (!cuda::isDeviceBlock(allocated))
    return buffer; // managed or host memory: the host reads it directly
  // Device memory: the host copy, refreshed on every view, once the
  // program's stream (its kernels and copies) has finished.
  HostCopy &copy = hostCopies()[buffer];
  if (copy.bytes < bytes || !copy.data) {
    freeHostCopy(copy);
    void *p = nullptr;
    // Refused (the system's page-locked memory is limited): pageable.
    if (pinResults() &&
        cuda::driver().cuMemAllocHost(&p, bytes ? bytes : 1) == 0)
      copy = {p, bytes, true};
    else if ((p = std::malloc(bytes ? bytes : 1)))
      copy = {p, bytes, false};
    else
      throw Failure("out of host memory for a copy of a " +
                    std::to_string(bytes) + "-byte result");
  }
  mgpuMemcpy(copy.data, const_cast<void *>(buffer), bytes, nullptr);
  // A copy into pageable memory waits for the stream (mgpuMemcpy); one into
  // page-locked memory is the driver's, so it returns at once: wait here.
  if (copy.pinned)
    cuda::synchronize("a result's copy to page-locked host memory");
  return copy.data;
}

} // namespace datrt
