//===- Gemm.cpp - the runtime GEMM on the CPU: OpenBLAS -------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// y = x · wᵀ + beta · y (GemmABI.h) with OpenBLAS's sgemm: row-major, w
// transposed; beta 1 where y holds the broadcast bias, 0 where it held
// zeros. bf16 operands are widened to f32 first (the products and sums are
// f32 either way); a bf16 y is accumulated in f32 and rounded at the end.
// Operands whose rows are not contiguous (dat-gemm-library-calls does not make
// such calls) take the reference loop nest, which DAT_GEMM=reference also
// selects to check the library against it.
//
//===----------------------------------------------------------------------===//

#include "../Program/GemmABI.h"

#include "dat/Support/BFloat16.h"

#include <cblas.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
bool useReference() {
  static const bool reference = [] {
    const char *v = std::getenv("DAT_GEMM");
    return v && std::strcmp(v, "reference") == 0;
  }();
  return reference;
}

/// The reference: by rows of y, the reduction innermost and in order.
template <typename T, typename Widen>
void referenceGemm(const datrt::Matrix<T> &x, const datrt::Matrix<T> &w,
                   datrt::Matrix<float> &y, float beta, Widen widen) {
  int64_t m = y.sizes[0], n = y.sizes[1], k = x.sizes[1];
  const T *xd = x.data(), *wd = w.data();
  float *yd = y.data();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float &out = yd[i * y.strides[0] + j * y.strides[1]];
      float acc = beta == 0 ? 0.0f : beta * out;
      for (int64_t p = 0; p < k; ++p)
        acc += widen(xd[i * x.strides[0] + p * x.strides[1]]) *
               widen(wd[j * w.strides[0] + p * w.strides[1]]);
      out = acc;
    }
}

template <typename T> bool rowsContiguous(const datrt::Matrix<T> &a) {
  return a.strides[1] == 1 && a.strides[0] >= a.sizes[1];
}

void sgemm(const float *x, int64_t ldx, const float *w, int64_t ldw, float *y,
           int64_t ldy, int64_t m, int64_t n, int64_t k, float beta) {
  if (m == 0 || n == 0)
    return;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x, ldx, w,
              ldw, beta, y, ldy);
}

/// A bf16 matrix widened to a dense f32 one.
std::vector<float> widened(const datrt::Matrix<uint16_t> &a) {
  std::vector<float> out(a.sizes[0] * a.sizes[1]);
  for (int64_t i = 0; i < a.sizes[0]; ++i)
    for (int64_t j = 0; j < a.sizes[1]; ++j)
      out[i * a.sizes[1] + j] =
          dat::bf16ToFloat(a.data()[i * a.strides[0] + j]);
  return out;
}
} // namespace

extern "C" {
void _mlir_ciface_dat_gemm_f32(datrt::Matrix<float> *x, datrt::Matrix<float> *w,
                               datrt::Matrix<float> *y, float beta) {
  if (useReference() || !rowsContiguous(*x) || !rowsContiguous(*w) ||
      !rowsContiguous(*y))
    return referenceGemm(*x, *w, *y, beta, [](float v) { return v; });
  sgemm(x->data(), x->strides[0], w->data(), w->strides[0], y->data(),
        y->strides[0], y->sizes[0], y->sizes[1], x->sizes[1], beta);
}

void _mlir_ciface_dat_gemm_bf16(datrt::Matrix<uint16_t> *x,
                                datrt::Matrix<uint16_t> *w,
                                datrt::Matrix<float> *y, float beta) {
  if (useReference() || !rowsContiguous(*x) || !rowsContiguous(*w) ||
      !rowsContiguous(*y))
    return referenceGemm(*x, *w, *y, beta,
                         [](uint16_t v) { return dat::bf16ToFloat(v); });
  std::vector<float> xf = widened(*x), wf = widened(*w);
  sgemm(xf.data(), x->sizes[1], wf.data(), w->sizes[1], y->data(),
        y->strides[0], y->sizes[0], y->sizes[1], x->sizes[1], beta);
}

void _mlir_ciface_dat_gemm_bf16_to_bf16(datrt::Matrix<uint16_t> *x,
                                        datrt::Matrix<uint16_t> *w,
                                        datrt::Matrix<uint16_t> *y,
                                        float beta) {
  int64_t m = y->sizes[0], n = y->sizes[1];
  std::vector<float> acc =
      beta == 0 ? std::vector<float>(m * n, 0.0f) : widened(*y);
  datrt::Matrix<float> wide{acc.data(), acc.data(), 0, {m, n}, {n, 1}};
  _mlir_ciface_dat_gemm_bf16(x, w, &wide, beta);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      y->data()[i * y->strides[0] + j * y->strides[1]] =
          dat::floatToBF16(acc[i * n + j]);
}
}
