//===- DeviceMemory.cpp - arguments in managed memory ---------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// GPU programs read every argument from managed memory: a weight is copied
// there once per binding, inputs on each run; buffers the program itself
// returned (decode caches) are already there.
//
//===----------------------------------------------------------------------===//

#include "../Program/MemoryStats.h"
#include "../Program/Program.h"
#include "../Program/ProgramMemory.h"
#include "CudaDriver.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

extern "C" void mgpuMemFree(void *ptr, void *stream);

namespace datrt {

using cuda::CUdeviceptr;

static bool isManaged(const void *p) {
  unsigned managed = 0;
  const int kIsManaged = 8; // CU_POINTER_ATTRIBUTE_IS_MANAGED
  cuda::CUresult r = cuda::driver().cuPointerGetAttribute(
      &managed, kIsManaged, reinterpret_cast<CUdeviceptr>(p));
  // Only CUDA_ERROR_INVALID_VALUE means "not the driver's" (plain host
  // memory); any other error (a sticky one from an earlier kernel) stops
  // the program rather than let a device pointer pass for a host one.
  if (r == 1 /*CUDA_ERROR_INVALID_VALUE*/)
    return false;
  cuda::check(r, "cuPointerGetAttribute", "classifying a buffer");
  return managed != 0;
}

const void *visibleToProgram(const void *host, size_t bytes) {
  if (isManaged(host))
    return host;
  struct Copy {
    CUdeviceptr ptr;
    size_t bytes;
  };
  static std::map<const void *, Copy> copies;
  Copy &c = copies[host];
  if (c.bytes < bytes) {
    memoryStats().arguments += bytes - c.bytes;
    if (c.ptr)
      cuda::check(cuda::driver().cuMemFree(c.ptr), "cuMemFree");
    cuda::check(cuda::driver().cuMemAllocManaged(&c.ptr, bytes ? bytes : 1,
                                                 /*CU_MEM_ATTACH_GLOBAL=*/1),
                "cuMemAllocManaged", "an argument of the program");
    c.bytes = bytes;
  }
  // Every kernel has finished (launches synchronize): the host may write.
  std::memcpy(reinterpret_cast<void *>(c.ptr), host, bytes);
  return reinterpret_cast<const void *>(c.ptr);
}

bool argumentsOnDevice() { return true; }

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

const void *hostView(const void *allocated, const void *buffer, size_t bytes) {
  if (!cuda::isDeviceBlock(allocated))
    return buffer; // managed or host memory: the host reads it directly
  // Device memory: a host copy, one per buffer, refreshed on every view.
  static std::map<const void *, std::vector<uint8_t>> copies;
  std::vector<uint8_t> &copy = copies[buffer];
  copy.resize(bytes);
  cuda::check(
      cuda::driver().cuMemcpy(reinterpret_cast<CUdeviceptr>(copy.data()),
                              reinterpret_cast<CUdeviceptr>(buffer), bytes),
      "cuMemcpy", "reading a result from the GPU");
  return copy.data();
}

} // namespace datrt
