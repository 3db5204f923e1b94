//===- CublasGemm.cpp - the runtime GEMM on the GPU: cuBLAS ---------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// dat_gemm_* (GemmABI.h) with cublasGemmEx: f32 accumulation, bf16 inputs
// on tensor cores, f32 or bf16 output (rounded by cuBLAS). Like the driver,
// cuBLAS is loaded at the first call ($DAT_CUBLAS, else
// libcublas.so.13/.12/.so), so that programs need it only when they use it.
// Row-major y[M,N] = x[M,K]·w[N,K]ᵀ + β·y is, in cuBLAS's column-major
// terms, yᵀ[N,M] = (wᵀ)ᵀ·xᵀ + β·yᵀ: A = w (K×N, transposed), B = x (K×M),
// C = y (N×M).
//
//===----------------------------------------------------------------------===//

#include "../Program/GemmABI.h"
#include "CudaDriver.h"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <mutex>
#include <string>

extern "C" void *mgpuStreamCreate();
extern "C" void mgpuStreamSynchronize(void *stream);

namespace {

using Status = int;               // cublasStatus_t; 0 = CUBLAS_STATUS_SUCCESS
constexpr int kOpN = 0, kOpT = 1; // cublasOperation_t
constexpr int kR32F = 0, kR16BF = 14; // cudaDataType
constexpr int kCompute32F = 68;       // cublasComputeType_t
constexpr int kGemmDefault = -1;      // cublasGemmAlgo_t

struct Cublas {
  Status (*create)(void **);
  Status (*destroy)(void *);
  Status (*setStream)(void *, void *);
  Status (*gemmEx)(void *, int, int, int, int, int, const void *, const void *,
                   int, int, const void *, int, int, const void *, void *, int,
                   int, int, int);
  void *handle = nullptr;
};

using datrt::cuda::die;

// The library, loaded once; the handle, created at the first GEMM and
// destroyed by releaseCublas (at the program's end, when its cached blocks
// go back), so that a leak checker sees cuBLAS's workspace freed.
Cublas *loaded = nullptr;
std::mutex handleMutex;

Cublas &library() {
  static Cublas c = [] {
    (void)datrt::cuda::driver(); // the context cuBLAS attaches to
    void *lib = nullptr;
    std::string tried, why;
    const char *env = std::getenv("DAT_CUBLAS");
    for (const char *name :
         {env, "libcublas.so.13", "libcublas.so.12", "libcublas.so"}) {
      if (!name || !*name)
        continue;
      tried += std::string(tried.empty() ? "" : ", ") + name;
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
      const char *e = dlerror();
      if (e && why.empty())
        why = e; // the first failure is the telling one (e.g. DAT_CUBLAS's)
    }
    if (!lib)
      die("this program computes its projections with cuBLAS (datc --gemm "
          "library), which cannot be loaded (tried " +
          tried + (why.empty() ? "" : "; " + why) +
          "; set DAT_CUBLAS to libcublas.so's path, with libcublasLt beside "
          "it on the loader's path)");
    Cublas c;
    using datrt::cuda::resolve;
    resolve(lib, c.create, "cublasCreate_v2", "cuBLAS");
    resolve(lib, c.destroy, "cublasDestroy_v2", "cuBLAS");
    resolve(lib, c.setStream, "cublasSetStream_v2", "cuBLAS");
    resolve(lib, c.gemmEx, "cublasGemmEx", "cuBLAS");
    return c;
  }();
  loaded = &c;
  return c;
}

/// The handle, created if none; the caller holds handleMutex (so that
/// releaseCublas cannot destroy it while a GEMM is being queued).
void *handle(Cublas &c) {
  if (c.handle)
    return c.handle;
  if (Status s = c.create(&c.handle))
    die("cublasCreate failed with status " + std::to_string(s));
  if (Status s = c.setStream(c.handle, mgpuStreamCreate()))
    die("cublasSetStream failed with status " + std::to_string(s));
  return c.handle;
}

int narrow(int64_t v, const char *what) {
  if (v < 0 || v > INT_MAX)
    die(std::string("dat_gemm: ") + what + " " + std::to_string(v) +
        " is out of cuBLAS's range");
  return static_cast<int>(v);
}

template <typename T, typename Out>
void gemm(const datrt::Matrix<T> &x, const datrt::Matrix<T> &w,
          datrt::Matrix<Out> &y, float beta, int type, int outType,
          const char *name) {
  if (x.strides[1] != 1 || w.strides[1] != 1 || y.strides[1] != 1)
    die("dat_gemm: the operands' rows must be contiguous");
  int m = narrow(y.sizes[0], "M"), n = narrow(y.sizes[1], "N"),
      k = narrow(x.sizes[1], "K");
  Cublas &c = library();
  // Errors a later synchronization reports are this GEMM's, unless work
  // queued after it is named instead (DAT_SYNC_LAUNCHES=1 waits here).
  std::string what = std::string("cuBLAS GEMM ") + name +
                     " (M=" + std::to_string(m) + ", N=" + std::to_string(n) +
                     ", K=" + std::to_string(k) + ")";
  datrt::cuda::noteLaunch(what);
  datrt::cuda::profileBeforeLaunch();
  float one = 1.0f;
  int ldw = narrow(w.strides[0], "ld(w)"), ldx = narrow(x.strides[0], "ld(x)"),
      ldy = narrow(y.strides[0], "ld(y)");
  Status s;
  {
    std::lock_guard<std::mutex> lock(handleMutex);
    s = c.gemmEx(handle(c), kOpT, kOpN, n, m, k, &one, w.data(), type, ldw,
                 x.data(), type, ldx, &beta, y.data(), outType, ldy,
                 kCompute32F, kGemmDefault);
  }
  if (s)
    die("cublasGemmEx failed with status " + std::to_string(s) + " in " + what);
  mgpuStreamSynchronize(mgpuStreamCreate()); // a no-op unless asked for
}

} // namespace

namespace datrt::cuda {
void releaseCublas() {
  std::lock_guard<std::mutex> lock(handleMutex);
  if (!loaded || !loaded->handle)
    return; // never used: nothing to load or free
  // The workspace may still be read by GEMMs queued on the stream.
  datrt::cuda::check(
      datrt::cuda::driver().cuStreamSynchronize(mgpuStreamCreate()),
      "cuStreamSynchronize", "before destroying the cuBLAS handle");
  if (Status s = loaded->destroy(loaded->handle))
    die("cublasDestroy failed with status " + std::to_string(s));
  loaded->handle = nullptr;
}
} // namespace datrt::cuda

extern "C" {
void _mlir_ciface_dat_gemm_f32(datrt::Matrix<float> *x, datrt::Matrix<float> *w,
                               datrt::Matrix<float> *y, float beta) {
  gemm(*x, *w, *y, beta, kR32F, kR32F, "dat_gemm_f32");
}

void _mlir_ciface_dat_gemm_bf16(datrt::Matrix<uint16_t> *x,
                                datrt::Matrix<uint16_t> *w,
                                datrt::Matrix<float> *y, float beta) {
  gemm(*x, *w, *y, beta, kR16BF, kR32F, "dat_gemm_bf16");
}

void _mlir_ciface_dat_gemm_bf16_to_bf16(datrt::Matrix<uint16_t> *x,
                                        datrt::Matrix<uint16_t> *w,
                                        datrt::Matrix<uint16_t> *y,
                                        float beta) {
  gemm(*x, *w, *y, beta, kR16BF, kR16BF, "dat_gemm_bf16_to_bf16");
}
}
