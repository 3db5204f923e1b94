//===- RuntimeCUDATest.cpp - the CUDA runtime's host side -----------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Against the stand-in driver (FakeCudaDriver.cpp): errors name what failed,
// device memory is never taken for host memory, copies run on the kernels'
// stream, output survives a fatal error.
//
//===----------------------------------------------------------------------===//

#include "CUDA/CudaDriver.h"
#include "Program/GemmABI.h"
#include "Program/Profile.h"
#include "Program/ProgramMemory.h"

#include "dat/Support/BFloat16.h"

#include <gtest/gtest.h>

#include <cmath>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <unistd.h>

extern "C" {
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool hostShared);
void mgpuMemFree(void *ptr, void *stream);
void *mgpuStreamCreate();
void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream);
void fake_cuda_set_sync_error(int e);
void fake_cuda_set_pointer_error(int e);
void *fake_cuda_last_copy_stream();
int fake_cuda_copies();
int fake_cuda_managed_allocations();
int fake_cuda_syncs();
int fake_cuda_live_blocks();
void fake_cuda_set_memory_limit(size_t bytes);
void fake_cuda_refuse_pinned(int refuse);
int fake_cuda_live_pinned();
void *mgpuModuleLoad(void *data, int64_t size);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *fn, intptr_t gx, intptr_t gy, intptr_t gz,
                      intptr_t bx, intptr_t by, intptr_t bz, int32_t smem,
                      void *stream, void **params, void **extra, size_t n);
}

namespace {

template <typename T>
datrt::Matrix<T> matrix(T *data, int64_t rows, int64_t cols) {
  return {data, data, 0, {rows, cols}, {cols, 1}};
}

TEST(CublasGemm, ErrorsNameTheGemmAndItsShape) {
  ::setenv("DAT_CUBLAS", DAT_FAKE_CUBLAS, 1);
  float x[2 * 4] = {}, w[3 * 4] = {}, y[2 * 3] = {};
  auto mx = matrix(x, 2, 4), mw = matrix(w, 3, 4), my = matrix(y, 2, 3);
  // An error the call's synchronization reports after the GEMM names the
  // GEMM, not the last generated kernel.
  EXPECT_DEATH(
      {
        fake_cuda_set_sync_error(700);
        _mlir_ciface_dat_gemm_f32(&mx, &mw, &my, 1.0f);
        datrt::finishCall();
      },
      "cuStreamSynchronize \\(the end of a call, after cuBLAS GEMM "
      "dat_gemm_f32 \\(M=2, N=3, K=4\\)\\): CUDA_ERROR_ILLEGAL_ADDRESS");
}

TEST(CublasGemm, HandleGoesBackWithTheCachedBuffers) {
  // The handle holds cuBLAS's workspace (64 MiB on an H100): a program that
  // kept it at its end showed up as a leak under compute-sanitizer's
  // memcheck (session 41).
  ::setenv("DAT_CUBLAS", DAT_FAKE_CUBLAS, 1);
  void *lib = dlopen(DAT_FAKE_CUBLAS, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr);
  auto live =
      reinterpret_cast<int (*)()>(dlsym(lib, "fake_cublas_live_handles"));
  ASSERT_NE(live, nullptr);
  float x[2 * 4] = {}, w[3 * 4] = {}, y[2 * 3] = {};
  auto mx = matrix(x, 2, 4), mw = matrix(w, 3, 4), my = matrix(y, 2, 3);
  // No blocks kept from earlier tests: the only synchronization the release
  // makes below is the handle's.
  datrt::releaseCachedBuffers();
  for (int run = 0; run < 2; ++run) {
    _mlir_ciface_dat_gemm_f32(&mx, &mw, &my, 1.0f);
    _mlir_ciface_dat_gemm_f32(&mx, &mw, &my, 1.0f);
    EXPECT_EQ(live(), 1) << "one handle for every GEMM, run " << run;
    int syncs = fake_cuda_syncs();
    datrt::releaseCachedBuffers();
    EXPECT_EQ(live(), 0) << "run " << run;
    // (Queued GEMMs may still read the workspace: the stream drains first.)
    EXPECT_GT(fake_cuda_syncs(), syncs) << "run " << run;
  }
  datrt::releaseCachedBuffers(); // nothing left: a no-op
  EXPECT_EQ(live(), 0);
  dlclose(lib);
}

TEST(CublasGemm, RowMajorProjectionsWithBetaAndBf16Output) {
  // The fake computes what cuBLAS documents (column-major, op(A)·op(B)):
  // the runtime's transposes, leading dims, types and β must make that
  // y[M, N] = x[M, K]·w[N, K]ᵀ + β·y, row-major, with a bf16 y rounded to
  // nearest even and not read when β = 0.
  ::setenv("DAT_CUBLAS", DAT_FAKE_CUBLAS, 1);
  constexpr int m = 2, n = 3, k = 4;
  float x[m * k], w[n * k], bias[n] = {0.5f, -1.25f, 3.0f};
  for (int i = 0; i < m * k; ++i)
    x[i] = 0.25f * static_cast<float>(i - 3);
  for (int i = 0; i < n * k; ++i)
    w[i] = 0.125f * static_cast<float>(2 * i - 7);
  double want[m * n]; // x·wᵀ, each exact in f32 (quarter and eighth steps)
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      want[i * n + j] = 0;
      for (int p = 0; p < k; ++p)
        want[i * n + j] += double(x[i * k + p]) * w[j * k + p];
    }

  float y[m * n];
  auto mx = matrix(x, m, k), mw = matrix(w, n, k), my = matrix(y, m, n);
  for (int i = 0; i < m * n; ++i)
    y[i] = bias[i % n];
  _mlir_ciface_dat_gemm_f32(&mx, &mw, &my, 1.0f);
  for (int i = 0; i < m * n; ++i)
    EXPECT_EQ(y[i], float(want[i] + bias[i % n])) << "f32, β 1, y[" << i << "]";
  for (float &v : y)
    v = std::nanf("");
  _mlir_ciface_dat_gemm_f32(&mx, &mw, &my, 0.0f);
  for (int i = 0; i < m * n; ++i)
    EXPECT_EQ(y[i], float(want[i])) << "f32, β 0, y[" << i << "]";

  uint16_t xb[m * k], wb[n * k], yb[m * n];
  for (int i = 0; i < m * k; ++i)
    xb[i] = dat::floatToBF16(x[i]);
  for (int i = 0; i < n * k; ++i)
    wb[i] = dat::floatToBF16(w[i]);
  auto mxb = matrix(xb, m, k), mwb = matrix(wb, n, k);
  auto myb = matrix(yb, m, n);
  for (int i = 0; i < m * n; ++i)
    yb[i] = dat::floatToBF16(bias[i % n]);
  _mlir_ciface_dat_gemm_bf16_to_bf16(&mxb, &mwb, &myb, 1.0f);
  for (int i = 0; i < m * n; ++i)
    EXPECT_EQ(yb[i], dat::floatToBF16(float(want[i] + bias[i % n])))
        << "bf16 to bf16, β 1, y[" << i << "]";
  for (uint16_t &v : yb)
    v = 0x7fc0; // NaN
  _mlir_ciface_dat_gemm_bf16_to_bf16(&mxb, &mwb, &myb, 0.0f);
  for (int i = 0; i < m * n; ++i)
    EXPECT_EQ(yb[i], dat::floatToBF16(float(want[i])))
        << "bf16 to bf16, β 0, y[" << i << "]";
}

TEST(MgpuRuntime, OneSynchronizationPerCall) {
  // The generated code waits after every launch and copy; those waits are
  // free (one stream, in order) but for copies to host memory, which the
  // host reads at once; the call waits once, at its end.
  static const char image[] = "image";
  void *module = mgpuModuleLoad(const_cast<char *>(image), sizeof(image));
  void *fn = mgpuModuleGetFunction(module, "forward_kernel");
  void *d = mgpuMemAlloc(16, nullptr, /*hostShared=*/false);
  float host[4] = {1, 2, 3, 4};
  int syncs = fake_cuda_syncs();
  for (int i = 0; i < 3; ++i) {
    mgpuLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, mgpuStreamCreate(), nullptr,
                     nullptr, 0);
    mgpuStreamSynchronize(mgpuStreamCreate());
  }
  mgpuMemcpy(d, host, sizeof(host), nullptr); // to the device: no wait
  EXPECT_EQ(fake_cuda_syncs(), syncs);
  mgpuMemcpy(host, d, sizeof(host), nullptr); // to the host: a wait
  EXPECT_EQ(fake_cuda_syncs(), syncs + 1);
  datrt::finishCall();
  EXPECT_EQ(fake_cuda_syncs(), syncs + 2);
  mgpuMemFree(d, nullptr);
}

TEST(CudaDriver, DieFlushesWhatTheProgramPrinted) {
  // stdout into the stderr the death test reads: buffered (not a terminal),
  // it reaches the pipe only if die flushes it before _Exit.
  EXPECT_DEATH(
      {
        ::dup2(2, 1);
        std::printf("partial output");
        datrt::cuda::die("stopping");
      },
      "partial output.*dat: stopping");
}

TEST(DeviceMemory, DeviceResultsGoBackToTheRuntime) {
  // A result in device memory (cuMemAlloc) is not managed; taking it for
  // host memory would std::free a device pointer.
  void *p = mgpuMemAlloc(256, nullptr, /*hostShared=*/false);
  datrt::freeProgramBuffer(p);
  EXPECT_EQ(mgpuMemAlloc(256, nullptr, false), p); // reused, not freed
  mgpuMemFree(p, nullptr);
}

TEST(DeviceMemory, DestroyingAProgramReleasesTheKeptBlocks) {
  // Freed blocks are kept for the next run; a destroyed program's go back
  // to the driver (dat_program_destroy calls releaseCachedBuffers).
  datrt::releaseCachedBuffers(); // what earlier tests left
  void *p = mgpuMemAlloc(512, nullptr, /*hostShared=*/false);
  int live = fake_cuda_live_blocks();
  mgpuMemFree(p, nullptr);
  EXPECT_EQ(fake_cuda_live_blocks(), live); // kept
  datrt::releaseCachedBuffers();
  EXPECT_EQ(fake_cuda_live_blocks(), live - 1);
}

TEST(DeviceMemory, OutOfMemoryReleasesKeptBlocksFirst) {
  // A 3 KiB card: a kept 2 KiB block (freed, of another size) goes back to
  // the driver before a 2.5 KiB allocation gives up.
  datrt::releaseCachedBuffers();
  fake_cuda_set_memory_limit(3 << 10);
  void *a = mgpuMemAlloc(2 << 10, nullptr, /*hostShared=*/false);
  mgpuMemFree(a, nullptr);
  void *b = mgpuMemAlloc(5 << 9, nullptr, false);
  EXPECT_NE(b, nullptr);
  mgpuMemFree(b, nullptr);
  datrt::releaseCachedBuffers();
  fake_cuda_set_memory_limit(SIZE_MAX);
}

TEST(DeviceMemory, OutOfMemoryNamesTheSizeAndWhatTheModelHolds) {
  EXPECT_DEATH(
      {
        datrt::releaseCachedBuffers();
        fake_cuda_set_memory_limit(3 << 10);
        void *a = mgpuMemAlloc(2 << 10, nullptr, /*hostShared=*/false);
        (void)a;
        mgpuMemAlloc(2 << 10, nullptr, false);
      },
      "CUDA error in cuMemAlloc \\(2048 bytes, with 2048 bytes of the "
      "model's buffers and [0-9]+ bytes of its weights and inputs already "
      "allocated\\): CUDA_ERROR_OUT_OF_MEMORY: out of memory");
}

TEST(DeviceMemory, DeviceResultsAreReadThroughACopy) {
  auto *p = static_cast<float *>(mgpuMemAlloc(4 * sizeof(float), nullptr,
                                              /*hostShared=*/false));
  mgpuMemset32(p, 0x3f800000u /*1.0f*/, 4, nullptr);
  const auto *view =
      static_cast<const float *>(datrt::hostView(p, p + 1, 3 * sizeof(float)));
  EXPECT_NE(view, p + 1);
  EXPECT_EQ(view[0], 1.0f);
  EXPECT_EQ(view[2], 1.0f);
  // Managed memory is read in place.
  void *m = mgpuMemAlloc(16, nullptr, /*hostShared=*/true);
  EXPECT_EQ(datrt::hostView(m, m, 16), m);
  mgpuMemFree(p, nullptr);
  mgpuMemFree(m, nullptr);
}

TEST(DeviceMemory, DriverErrorsAreNeverHostMemory) {
  // After a sticky error every driver call fails: a buffer must not then be
  // classified as host memory.
  float host[4] = {};
  datrt::ArgumentCopies copies;
  EXPECT_DEATH(
      {
        fake_cuda_set_pointer_error(700);
        datrt::visibleToProgram(host, sizeof(host), copies, host, false);
      },
      "cuPointerGetAttributes \\(classifying a buffer\\): "
      "CUDA_ERROR_ILLEGAL_ADDRESS");
  // Plain host memory (the driver answers memory type 0) is copied into memory
  // the kernels can read.
  const void *visible =
      datrt::visibleToProgram(host, sizeof(host), copies, host, false);
  EXPECT_NE(visible, static_cast<const void *>(host));
}

TEST(DeviceMemory, WeightsUploadOnceInputsOnEveryBind) {
  int managed = fake_cuda_managed_allocations();
  float weight[4] = {1, 2, 3, 4}, input[4] = {5, 6, 7, 8};
  datrt::ArgumentCopies weights, inputs;
  int before = fake_cuda_copies();
  const void *w = datrt::visibleToProgram(weight, sizeof(weight), weights,
                                          weight, /*constant=*/true);
  const void *x = datrt::visibleToProgram(input, sizeof(input), inputs, &inputs,
                                          /*constant=*/false);
  EXPECT_EQ(fake_cuda_copies(), before + 2);
  EXPECT_EQ(static_cast<const float *>(w)[3], 4.0f); // the fake's device
  EXPECT_EQ(static_cast<const float *>(x)[0], 5.0f); // memory is host memory
  // Bound again (the step function of the same program, the next run): the
  // weight is not copied again, the input is, into the same buffer.
  input[0] = 9;
  EXPECT_EQ(
      datrt::visibleToProgram(weight, sizeof(weight), weights, weight, true),
      w);
  EXPECT_EQ(
      datrt::visibleToProgram(input, sizeof(input), inputs, &inputs, false), x);
  EXPECT_EQ(fake_cuda_copies(), before + 3);
  EXPECT_EQ(static_cast<const float *>(x)[0], 9.0f);
  // A buffer the program returned (a decode cache) is bound as it is.
  void *cache = mgpuMemAlloc(16, nullptr, /*hostShared=*/false);
  EXPECT_EQ(datrt::visibleToProgram(cache, 16, inputs, &weights, false), cache);
  mgpuMemFree(cache, nullptr);
  // None of it is managed memory.
  EXPECT_EQ(fake_cuda_managed_allocations(), managed);
}

TEST(DeviceMemory, ResultsAreReadOnceTheStreamIsDone) {
  void *p = mgpuMemAlloc(16, nullptr, /*hostShared=*/false);
  static_cast<float *>(p)[1] = 2.5f;
  int syncs = fake_cuda_syncs();
  const auto *view = static_cast<const float *>(datrt::hostView(p, p, 16));
  EXPECT_NE(static_cast<const void *>(view), p);
  EXPECT_EQ(view[1], 2.5f);
  EXPECT_EQ(fake_cuda_last_copy_stream(), mgpuStreamCreate());
  EXPECT_EQ(fake_cuda_syncs(), syncs + 1);
  mgpuMemFree(p, nullptr);
}

TEST(DeviceMemory, ResultCopiesArePageLockedAndKept) {
  // A result's host copy is page-locked memory, made once per device
  // buffer; the copy into it returns at once on a real driver, so the view
  // waits for the stream itself.
  datrt::releaseCachedBuffers();
  auto *p = static_cast<float *>(mgpuMemAlloc(64, nullptr, false));
  p[3] = 4.5f;
  int syncs = fake_cuda_syncs();
  const void *first = datrt::hostView(p, p, 64);
  EXPECT_EQ(fake_cuda_live_pinned(), 1);
  EXPECT_EQ(fake_cuda_syncs(), syncs + 1);
  p[3] = 5.5f; // the next call's result, in the same buffer
  const auto *again = static_cast<const float *>(datrt::hostView(p, p, 64));
  EXPECT_EQ(static_cast<const void *>(again), first);
  EXPECT_EQ(again[3], 5.5f);
  EXPECT_EQ(fake_cuda_live_pinned(), 1);
  EXPECT_EQ(fake_cuda_syncs(), syncs + 2);
  // Destroying the program gives them back.
  mgpuMemFree(p, nullptr);
  datrt::releaseCachedBuffers();
  EXPECT_EQ(fake_cuda_live_pinned(), 0);
}

TEST(DeviceMemory, RefusedPageLockedMemoryFallsBackToPageable) {
  datrt::releaseCachedBuffers();
  fake_cuda_refuse_pinned(1);
  auto *p = static_cast<float *>(mgpuMemAlloc(64, nullptr, false));
  p[0] = 2.0f;
  int syncs = fake_cuda_syncs();
  const auto *view = static_cast<const float *>(datrt::hostView(p, p, 64));
  EXPECT_EQ(view[0], 2.0f);
  EXPECT_EQ(fake_cuda_live_pinned(), 0);
  EXPECT_EQ(fake_cuda_syncs(), syncs + 1); // mgpuMemcpy's, to host memory
  fake_cuda_refuse_pinned(0);
  mgpuMemFree(p, nullptr);
  datrt::releaseCachedBuffers();
}

TEST(MgpuRuntime, CopiesAndFillsRunOnTheKernelsStream) {
  float a[4] = {1, 2, 3, 4}, b[4] = {};
  mgpuMemcpy(b, a, sizeof(a), nullptr);
  EXPECT_EQ(fake_cuda_last_copy_stream(), mgpuStreamCreate());
  EXPECT_EQ(b[3], 4.0f);
  mgpuMemset32(b, 0, 4, nullptr);
  EXPECT_EQ(fake_cuda_last_copy_stream(), mgpuStreamCreate());
  EXPECT_EQ(b[0], 0.0f);
}

TEST(MgpuRuntime, ProfileTimesEachKernelByName) {
  static const char image[] = "image";
  void *module = mgpuModuleLoad(const_cast<char *>(image), sizeof(image));
  void *fn = mgpuModuleGetFunction(module, "forward_kernel_3");
  datrt::profileStart();
  for (int i = 0; i < 2; ++i)
    mgpuLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, mgpuStreamCreate(), nullptr,
                     nullptr, 0);
  std::vector<datrt::ProfileEntry> entries = datrt::profileStop();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].name, "kernel forward_kernel_3");
  EXPECT_EQ(entries[0].count, 2);
  EXPECT_FLOAT_EQ(entries[0].ms, 3.0f); // the stand-in's 1.5 ms per interval
  // Not recording: launches leave no entries.
  mgpuLaunchKernel(fn, 4, 1, 1, 256, 1, 1, 0, mgpuStreamCreate(), nullptr,
                   nullptr, 0);
  datrt::profileStart();
  EXPECT_TRUE(datrt::profileStop().empty());
}

} // namespace
