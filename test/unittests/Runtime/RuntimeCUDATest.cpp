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

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

extern "C" {
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool hostShared);
void mgpuMemFree(void *ptr, void *stream);
void *mgpuStreamCreate();
void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream);
void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream);
void fake_cuda_set_sync_error(int e);
void fake_cuda_set_pointer_error(int e);
void *fake_cuda_last_copy_stream();
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
  // An error the synchronization after the GEMM reports is the GEMM's, not
  // the last generated kernel's.
  EXPECT_DEATH(
      {
        fake_cuda_set_sync_error(700);
        _mlir_ciface_dat_gemm_f32(&mx, &mw, &my);
      },
      "cuStreamSynchronize \\(cuBLAS GEMM dat_gemm_f32 \\(M=2, N=3, K=4\\)\\): "
      "CUDA_ERROR_ILLEGAL_ADDRESS");
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

TEST(DeviceMemory, OnlyInvalidValueMeansHostMemory) {
  // After a sticky error every driver call fails: a buffer must not then be
  // classified as host memory.
  float host[4] = {};
  EXPECT_DEATH(
      {
        fake_cuda_set_pointer_error(700);
        datrt::visibleToProgram(host, sizeof(host));
      },
      "cuPointerGetAttribute \\(classifying a buffer\\): "
      "CUDA_ERROR_ILLEGAL_ADDRESS");
  // Plain host memory (the driver answers CUDA_ERROR_INVALID_VALUE) is
  // copied into memory the kernels can read.
  const void *visible = datrt::visibleToProgram(host, sizeof(host));
  EXPECT_NE(visible, static_cast<const void *>(host));
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
