//===- Gemm.cpp - the runtime GEMM on the CPU -----------------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// y += x · wᵀ by rows of y, the reduction innermost and in order (the same
// order as the generated loops). Its job is to check the calls that
// dat-gemm-library-calls makes, on any machine; the GPU runtime's cuBLAS
// is the fast one.
//
//===----------------------------------------------------------------------===//

#include "../Program/GemmABI.h"

#include "dat/Support/BFloat16.h"

namespace {
template <typename T, typename Widen>
void gemm(const datrt::Matrix<T> &x, const datrt::Matrix<T> &w,
          datrt::Matrix<float> &y, Widen widen) {
  int64_t m = y.sizes[0], n = y.sizes[1], k = x.sizes[1];
  const T *xd = x.data(), *wd = w.data();
  float *yd = y.data();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = yd[i * y.strides[0] + j * y.strides[1]];
      for (int64_t p = 0; p < k; ++p)
        acc += widen(xd[i * x.strides[0] + p * x.strides[1]]) *
               widen(wd[j * w.strides[0] + p * w.strides[1]]);
      yd[i * y.strides[0] + j * y.strides[1]] = acc;
    }
}
} // namespace

extern "C" {
void _mlir_ciface_dat_gemm_f32(datrt::Matrix<float> *x, datrt::Matrix<float> *w,
                               datrt::Matrix<float> *y) {
  gemm(*x, *w, *y, [](float v) { return v; });
}

void _mlir_ciface_dat_gemm_bf16(datrt::Matrix<uint16_t> *x,
                                datrt::Matrix<uint16_t> *w,
                                datrt::Matrix<float> *y) {
  gemm(*x, *w, *y, [](uint16_t v) { return dat::bf16ToFloat(v); });
}
}
