//===- MgpuRuntime.cpp - the mgpu* functions of MLIR's GPU host code ------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// `gpu-to-llvm` and the gpu.binary translation emit calls to these
// functions (MLIR 22 signatures). Modules are loaded lazily, at their first
// kernel, so that a program starts and reports a missing driver from main
// rather than from a global constructor. Every launch is followed by a
// synchronization in the host code; its errors name the kernel.
//
//===----------------------------------------------------------------------===//

#include "../Program/MemoryStats.h"
#include "CudaDriver.h"

#include "../Program/Profile.h"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace datrt::cuda;

namespace {
struct LazyModule {
  const void *image;
  Handle module = nullptr;
  std::map<std::string, Handle> functions;
};

std::map<Handle, std::string> &kernelNames() {
  static std::map<Handle, std::string> names;
  return names;
}

/// The kernel most recently launched: errors reported by a later
/// synchronization come from it.
std::string lastKernel = "no kernel launched yet";
} // namespace

/// CUDA_ERROR_OUT_OF_MEMORY.
constexpr CUresult kOutOfMemory = 2;

// A program allocates the same buffers on every run (static shapes). Freed
// blocks are reused by the next allocation of the same kind and size: no
// driver call, and managed pages that already moved to the GPU stay there
// (a fresh managed allocation migrates on first touch).
namespace {
using BlockKey = std::pair<bool, size_t>; // (host shared, bytes)
std::multimap<BlockKey, void *> &freeBlocks() {
  static std::multimap<BlockKey, void *> blocks;
  return blocks;
}
std::map<void *, BlockKey> &liveBlocks() {
  static std::map<void *, BlockKey> blocks;
  return blocks;
}
bool isLive(const void *p, bool hostShared) {
  auto it = liveBlocks().find(const_cast<void *>(p));
  return it != liveBlocks().end() && it->second.first == hostShared;
}
void *takeFreeBlock(const BlockKey &key) {
  auto it = freeBlocks().find(key);
  if (it == freeBlocks().end())
    return nullptr;
  void *p = it->second;
  freeBlocks().erase(it);
  liveBlocks()[p] = key;
  return p;
}
} // namespace

// prog --profile: a pair of timing events around every launch (and cuBLAS
// GEMM) while recording; their times are read once the call is over.
namespace {
struct Timed {
  std::string name;
  Handle start, end;
};
bool recording = false;
std::vector<Timed> &timed() {
  static std::vector<Timed> t;
  return t;
}
Handle timingEvent() {
  Handle event = nullptr;
  check(driver().cuEventCreate(&event, /*CU_EVENT_DEFAULT=*/0), "cuEventCreate",
        "profiling");
  return event;
}
} // namespace

extern "C" void *mgpuStreamCreate();

namespace datrt::cuda {
void noteLaunch(std::string what) { lastKernel = std::move(what); }

void profileBeforeLaunch() {
  if (!recording)
    return;
  Handle start = timingEvent();
  check(driver().cuEventRecord(start, mgpuStreamCreate()), "cuEventRecord");
  timed().push_back({lastKernel, start, nullptr});
}

void profileAfterLaunch() {
  if (!recording || timed().empty() || timed().back().end)
    return;
  Handle end = timingEvent();
  check(driver().cuEventRecord(end, mgpuStreamCreate()), "cuEventRecord");
  timed().back().end = end;
}
bool isDeviceBlock(const void *p) { return isLive(p, /*hostShared=*/false); }
bool isRuntimeBlock(const void *p) {
  return liveBlocks().count(const_cast<void *>(p)) != 0;
}

void releaseFreeBlocks() {
  if (freeBlocks().empty())
    return;
  // A kept block may still be read by work queued before it was freed.
  check(driver().cuStreamSynchronize(mgpuStreamCreate()), "cuStreamSynchronize",
        "before freeing kept blocks");
  for (auto &[key, p] : freeBlocks())
    check(driver().cuMemFree(reinterpret_cast<CUdeviceptr>(p)), "cuMemFree");
  freeBlocks().clear();
}
} // namespace datrt::cuda

/// DAT_SYNC_LAUNCHES=1: wait after every launch, so that an error names the
/// kernel that caused it.
static bool syncLaunches() {
  static const bool sync = [] {
    const char *v = std::getenv("DAT_SYNC_LAUNCHES");
    return v && *v && *v != '0';
  }();
  return sync;
}

extern "C" void *mgpuStreamCreate();

void datrt::cuda::synchronize(const char *why) {
  check(driver().cuStreamSynchronize(mgpuStreamCreate()), "cuStreamSynchronize",
        (std::string(why) + ", after " + lastKernel).c_str());
}

extern "C" {

void *mgpuModuleLoad(void *data, int64_t /*size*/) {
  return new LazyModule{data};
}

void *mgpuModuleLoadJIT(void *data, int /*optLevel*/) {
  return new LazyModule{data};
}

void mgpuModuleUnload(void *module) {
  auto *m = static_cast<LazyModule *>(module);
  // At exit the driver may already be shutting down: ignore its answer.
  if (m->module)
    driver().cuModuleUnload(m->module);
  delete m;
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  auto *m = static_cast<LazyModule *>(module);
  auto it = m->functions.find(name);
  if (it != m->functions.end())
    return it->second;
  if (!m->module)
    check(driver().cuModuleLoadData(&m->module, m->image), "cuModuleLoadData",
          name);
  Handle fn = nullptr;
  check(driver().cuModuleGetFunction(&fn, m->module, name),
        "cuModuleGetFunction", name);
  m->functions[name] = fn;
  kernelNames()[fn] = name;
  return fn;
}

void mgpuLaunchKernel(void *fn, intptr_t gx, intptr_t gy, intptr_t gz,
                      intptr_t bx, intptr_t by, intptr_t bz, int32_t smem,
                      void *stream, void **params, void **extra,
                      size_t /*paramsCount*/) {
  // An empty iteration space launches nothing (the driver rejects a zero
  // grid).
  if (gx == 0 || gy == 0 || gz == 0)
    return;
  datrt::cuda::noteLaunch("kernel " + kernelNames()[fn]);
  // Beyond 48 KiB, dynamic shared memory must be asked for per function
  // (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
  if (smem > 48 * 1024)
    check(driver().cuFuncSetAttribute(fn, 8, smem), "cuFuncSetAttribute",
          lastKernel.c_str());
  datrt::cuda::profileBeforeLaunch();
  check(driver().cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, smem, stream,
                                params, extra),
        "cuLaunchKernel", lastKernel.c_str());
  datrt::cuda::profileAfterLaunch();
}

void *mgpuStreamCreate() {
  // One stream for the whole program: its work runs in the order queued.
  static Handle stream = [] {
    Handle s = nullptr;
    check(driver().cuStreamCreate(&s, /*CU_STREAM_NON_BLOCKING=*/1),
          "cuStreamCreate");
    return s;
  }();
  return stream;
}

void mgpuStreamDestroy(void *) {}

void mgpuStreamSynchronize(void *) {
  // The generated code waits after every launch, allocation and copy; all
  // of them are on the program's one stream, in order, and the host reads
  // nothing between them (dat-gpu-check-host-access): the one wait is at the
  // end of the call (finishCall), or where a copy reaches host memory.
  if (syncLaunches())
    datrt::cuda::synchronize("a launch (DAT_SYNC_LAUNCHES)");
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  check(driver().cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent");
}

void *mgpuEventCreate() {
  Handle event = nullptr;
  check(driver().cuEventCreate(&event, /*CU_EVENT_DISABLE_TIMING=*/2),
        "cuEventCreate");
  return event;
}

void mgpuEventDestroy(void *event) {
  check(driver().cuEventDestroy(event), "cuEventDestroy");
}

void mgpuEventSynchronize(void *event) {
  check(driver().cuEventSynchronize(event), "cuEventSynchronize",
        lastKernel.c_str());
}

void mgpuEventRecord(void *event, void *stream) {
  check(driver().cuEventRecord(event, stream), "cuEventRecord");
}

void *mgpuMemAlloc(uint64_t bytes, void * /*stream*/, bool hostShared) {
  size_t n = bytes ? bytes : 1; // the driver rejects empty allocations
  BlockKey key{hostShared, n};
  datrt::noteAllocated(n);
  if (void *reused = takeFreeBlock(key))
    return reused;
  CUdeviceptr p = 0;
  auto allocate = [&] {
    return hostShared ? driver().cuMemAllocManaged(&p, n,
                                                   /*CU_MEM_ATTACH_GLOBAL=*/1)
                      : driver().cuMemAlloc(&p, n);
  };
  CUresult result = allocate();
  // Out of memory with blocks kept for reuse (of other sizes): they go back
  // to the driver, and the allocation is tried once more.
  if (result == kOutOfMemory && !freeBlocks().empty()) {
    datrt::cuda::releaseFreeBlocks();
    result = allocate();
  }
  if (result != 0) {
    // What the model held when it ran out (its own buffers include this
    // one, already counted).
    const datrt::MemoryStats &stats = datrt::memoryStats();
    std::string what =
        std::to_string(bytes) + " bytes, with " +
        std::to_string(stats.live.load() - static_cast<std::ptrdiff_t>(n)) +
        " bytes of the model's buffers and " + std::to_string(stats.arguments) +
        " bytes of its weights and inputs already allocated";
    check(result, hostShared ? "cuMemAllocManaged" : "cuMemAlloc",
          what.c_str());
  }
  liveBlocks()[reinterpret_cast<void *>(p)] = key;
  return reinterpret_cast<void *>(p);
}

void mgpuMemFree(void *ptr, void * /*stream*/) {
  // Kept for the next allocation of the same kind and size: work that
  // still uses it was queued before, on the one stream, and runs first.
  auto it = liveBlocks().find(ptr);
  if (it == liveBlocks().end()) {
    check(driver().cuMemFree(reinterpret_cast<CUdeviceptr>(ptr)), "cuMemFree");
    return;
  }
  datrt::noteFreed(it->second.second);
  freeBlocks().emplace(it->second, ptr);
  liveBlocks().erase(it);
}

// Copies and fills go on the stream the kernels run on (the program's one
// stream when the generated code passes none), ordered with them: on the
// legacy default stream they would race with a non-blocking one.
void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  check(driver().cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                               reinterpret_cast<CUdeviceptr>(src), bytes,
                               stream ? stream : mgpuStreamCreate()),
        "cuMemcpyAsync", (std::to_string(bytes) + " bytes").c_str());
  // The host reads what it copies to host memory (a position, a result).
  if (datrt::cuda::isHostMemory(dst))
    datrt::cuda::synchronize("a copy to host memory");
}

void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream) {
  check(driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                  count, stream ? stream : mgpuStreamCreate()),
        "cuMemsetD32Async", (std::to_string(count) + " words").c_str());
}

// Arguments live in managed memory already (DeviceMemory.cpp).
void mgpuMemHostRegisterMemRef(int64_t, void *, int64_t) {}
void mgpuMemHostUnregisterMemRef(int64_t, void *, int64_t) {}

} // extern "C"

namespace datrt {

void profileStart() {
  timed().clear();
  recording = true;
}

std::vector<ProfileEntry> profileStop() {
  recording = false;
  std::map<std::string, ProfileEntry> byName;
  for (const Timed &t : timed()) {
    if (!t.end)
      continue;
    cuda::check(cuda::driver().cuEventSynchronize(t.end), "cuEventSynchronize",
                t.name.c_str());
    float ms = 0;
    cuda::check(cuda::driver().cuEventElapsedTime(&ms, t.start, t.end),
                "cuEventElapsedTime", t.name.c_str());
    ProfileEntry &e = byName[t.name];
    e.name = t.name;
    e.ms += ms;
    ++e.count;
    cuda::driver().cuEventDestroy(t.start);
    cuda::driver().cuEventDestroy(t.end);
  }
  timed().clear();
  std::vector<ProfileEntry> out;
  for (auto &[name, e] : byName)
    out.push_back(e);
  return out;
}

} // namespace datrt
