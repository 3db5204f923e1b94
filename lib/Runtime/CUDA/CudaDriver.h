//===- CudaDriver.h - the CUDA driver API, resolved at run time -*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Programs do not link libcuda: they load libcuda.so.1 when they first need
// the GPU, so that they start (and say what is missing) on any machine. The
// few driver entry points used are declared here with plain C types.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_RUNTIME_CUDA_CUDADRIVER_H
#define DAT_RUNTIME_CUDA_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace datrt::cuda {

using CUresult = int;
using CUdeviceptr = uint64_t;
using Handle = void *; // CUcontext, CUmodule, CUfunction, CUstream, CUevent

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(int *, int);
  CUresult (*cuDevicePrimaryCtxRetain)(Handle *, int);
  CUresult (*cuCtxSetCurrent)(Handle);
  CUresult (*cuModuleLoadData)(Handle *, const void *);
  CUresult (*cuModuleUnload)(Handle);
  CUresult (*cuModuleGetFunction)(Handle *, Handle, const char *);
  CUresult (*cuFuncSetAttribute)(Handle, int, int);
  CUresult (*cuLaunchKernel)(Handle, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, Handle, void **,
                             void **);
  CUresult (*cuStreamCreate)(Handle *, unsigned);
  CUresult (*cuStreamSynchronize)(Handle);
  CUresult (*cuStreamDestroy)(Handle);
  CUresult (*cuStreamWaitEvent)(Handle, Handle, unsigned);
  CUresult (*cuEventCreate)(Handle *, unsigned);
  CUresult (*cuEventDestroy)(Handle);
  CUresult (*cuEventRecord)(Handle, Handle);
  CUresult (*cuEventSynchronize)(Handle);
  CUresult (*cuEventElapsedTime)(float *, Handle, Handle);
  CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemAllocHost)(void **, size_t);
  CUresult (*cuMemFreeHost)(void *);
  CUresult (*cuMemcpy)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, Handle);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, Handle);
  CUresult (*cuPointerGetAttributes)(unsigned, int *, void **, CUdeviceptr);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
};

/// The driver, loaded and initialized (primary context of device 0 current)
/// on first use. Without a usable driver or GPU the program exits with a
/// message saying so.
const Driver &driver();
/// Why the driver cannot be used ("" if it can): what `driver()` would die
/// of, for callers that report errors instead (the C API).
std::string unusableDriver();

/// Exits the program with "dat: <message>", after flushing everything the
/// program wrote (stdout included).
[[noreturn]] void die(const std::string &message);

/// Names the GPU work just queued (a kernel, a cuBLAS GEMM): errors that a
/// later synchronization reports are blamed on it (MgpuRuntime.cpp).
void noteLaunch(std::string what);

/// prog --profile: timing events around GPU work just queued (no-ops
/// unless recording).
void profileBeforeLaunch();
void profileAfterLaunch();

/// Whether `p` is a block the runtime allocated with cuMemAlloc (device
/// memory the host cannot read), as opposed to managed memory.
bool isDeviceBlock(const void *p);
/// Whether `p` is any block the runtime allocated (device or managed).
bool isRuntimeBlock(const void *p);

/// Frees the blocks the runtime keeps for reuse (MgpuRuntime.cpp).
void releaseFreeBlocks();

/// Destroys the cuBLAS handle, if a GEMM created one (CublasGemm.cpp); the
/// next GEMM creates another.
void releaseCublas();
/// Whether `p` is plain host memory, not the driver's (DeviceMemory.cpp).
bool isHostMemory(const void *p);

/// Waits for everything queued on the program's stream: once per call, and
/// wherever the host reads what the GPU wrote. Errors name the last work
/// queued (with DAT_SYNC_LAUNCHES=1 every launch is waited for, so that an
/// error names the kernel that caused it).
void synchronize(const char *why);

/// Symbol `name` of `lib` (loaded at run time as `library`), or exit saying
/// the library is older than the program needs.
void *librarySymbol(void *lib, const char *name, const char *library);
template <typename Fn>
void resolve(void *lib, Fn &fn, const char *name, const char *library) {
  fn = reinterpret_cast<Fn>(librarySymbol(lib, name, library));
}

/// Exits with "CUDA error in <call> (<what>): <name>: <description>" unless
/// `result` is CUDA_SUCCESS.
void check(CUresult result, const char *call, const char *what = nullptr);

} // namespace datrt::cuda

#endif // DAT_RUNTIME_CUDA_CUDADRIVER_H
