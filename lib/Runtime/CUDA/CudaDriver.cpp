//===- CudaDriver.cpp - loading the CUDA driver at run time ---------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <functional>
#include <string>

namespace datrt::cuda {

void die(const std::string &message) {
  // _Exit skips the stdio flushes of exit: flush what the program printed
  // before saying why it stops (the output of a partial run matters).
  std::fflush(nullptr);
  std::fprintf(stderr, "dat: %s\n", message.c_str());
  std::fflush(nullptr);
  std::_Exit(1);
}

void *librarySymbol(void *lib, const char *name, const char *library) {
  void *symbol = dlsym(lib, name);
  if (!symbol)
    die(std::string(library) + " has no '" + name +
        "': it is older than this program needs");
  return symbol;
}

template <typename Fn>
static void resolve(void *lib, Fn &fn, const char *name) {
  resolve(lib, fn, name, "the CUDA driver (libcuda.so.1)");
}

static std::string cannotLoad(const char *why) {
  return std::string("this program runs on an NVIDIA GPU, but the CUDA "
                     "driver library libcuda.so.1 cannot be loaded") +
         (why ? std::string(" (") + why + ")" : std::string()) +
         "; is this a machine with an NVIDIA GPU and its driver installed?";
}

static const char *kNoDevice = "this program runs on an NVIDIA GPU, but the "
                               "CUDA driver finds none (CUDA_ERROR_NO_DEVICE)";

std::string unusableDriver() {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return cannotLoad(dlerror());
  auto init = reinterpret_cast<CUresult (*)(unsigned)>(dlsym(lib, "cuInit"));
  if (!init)
    return "the CUDA driver (libcuda.so.1) has no 'cuInit'";
  CUresult r = init(0);
  if (r == 100 /*CUDA_ERROR_NO_DEVICE*/)
    return kNoDevice;
  if (r != 0)
    return "this program runs on an NVIDIA GPU, but cuInit failed (CUDA "
           "error " +
           std::to_string(r) + ")";
  return "";
}

static Driver load() {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    die(cannotLoad(dlerror()));
  Driver d;
  resolve(lib, d.cuInit, "cuInit");
  resolve(lib, d.cuDeviceGet, "cuDeviceGet");
  resolve(lib, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  resolve(lib, d.cuCtxSetCurrent, "cuCtxSetCurrent");
  resolve(lib, d.cuModuleLoadData, "cuModuleLoadData");
  resolve(lib, d.cuModuleUnload, "cuModuleUnload");
  resolve(lib, d.cuModuleGetFunction, "cuModuleGetFunction");
  resolve(lib, d.cuFuncSetAttribute, "cuFuncSetAttribute");
  resolve(lib, d.cuLaunchKernel, "cuLaunchKernel");
  resolve(lib, d.cuStreamCreate, "cuStreamCreate");
  resolve(lib, d.cuStreamSynchronize, "cuStreamSynchronize");
  resolve(lib, d.cuStreamDestroy, "cuStreamDestroy_v2");
  resolve(lib, d.cuStreamWaitEvent, "cuStreamWaitEvent");
  resolve(lib, d.cuEventCreate, "cuEventCreate");
  resolve(lib, d.cuEventDestroy, "cuEventDestroy_v2");
  resolve(lib, d.cuEventRecord, "cuEventRecord");
  resolve(lib, d.cuEventSynchronize, "cuEventSynchronize");
  resolve(lib, d.cuEventElapsedTime, "cuEventElapsedTime_v2");
  resolve(lib, d.cuMemAllocManaged, "cuMemAllocManaged");
  resolve(lib, d.cuMemAlloc, "cuMemAlloc_v2");
  resolve(lib, d.cuMemFree, "cuMemFree_v2");
  resolve(lib, d.cuMemAllocHost, "cuMemAllocHost_v2");
  resolve(lib, d.cuMemFreeHost, "cuMemFreeHost");
  resolve(lib, d.cuMemcpy, "cuMemcpy");
  resolve(lib, d.cuMemcpyAsync, "cuMemcpyAsync");
  resolve(lib, d.cuMemsetD32Async, "cuMemsetD32Async");
  resolve(lib, d.cuPointerGetAttributes, "cuPointerGetAttributes");
  resolve(lib, d.cuGetErrorName, "cuGetErrorName");
  resolve(lib, d.cuGetErrorString, "cuGetErrorString");
  return d;
}

static const Driver &loaded() {
  static const Driver d = load();
  return d;
}

void check(CUresult result, const char *call, const char *what) {
  if (result == 0)
    return;
  const char *name = nullptr, *text = nullptr;
  loaded().cuGetErrorName(result, &name);
  loaded().cuGetErrorString(result, &text);
  die(std::string("CUDA error in ") + call +
      (what ? std::string(" (") + what + ")" : std::string()) + ": " +
      (name ? name : "unknown error " + std::to_string(result)) +
      (text ? std::string(": ") + text : std::string()));
}

const Driver &driver() {
  static const Driver &d = [] {
    const Driver &drv = loaded();
    CUresult init = drv.cuInit(0);
    if (init == 100 /*CUDA_ERROR_NO_DEVICE*/)
      die(kNoDevice);
    check(init, "cuInit");
    int device = 0;
    check(drv.cuDeviceGet(&device, 0), "cuDeviceGet", "device 0");
    Handle context = nullptr;
    check(drv.cuDevicePrimaryCtxRetain(&context, device),
          "cuDevicePrimaryCtxRetain");
    check(drv.cuCtxSetCurrent(context), "cuCtxSetCurrent");
    return std::cref(drv);
  }();
  return d;
}

} // namespace datrt::cuda
