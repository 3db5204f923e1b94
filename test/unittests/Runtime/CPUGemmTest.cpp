//===- CPUGemmTest.cpp - the CPU runtime's GEMM ---------------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// dat_gemm_* on the CPU (OpenBLAS, and the reference loop nest for operands
// whose rows are not contiguous): y = x·wᵀ + β·y, row-major, y not read when
// β = 0, a bf16 y rounded to nearest even once, from the f32 sum.
//
//===----------------------------------------------------------------------===//

#include "Program/GemmABI.h"
#include "dat/Support/BFloat16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

template <typename T>
datrt::Matrix<T> matrix(T *data, int64_t rows, int64_t cols, int64_t ld) {
  return {data, data, 0, {rows, cols}, {ld, 1}};
}

struct Case {
  static constexpr int m = 3, n = 5, k = 7;
  float x[m * k], w[n * k], bias[n];
  double want[m * n]; // x·wᵀ, exact in f32 (small multiples of 1/32)
  Case() {
    for (int i = 0; i < m * k; ++i)
      x[i] = 0.25f * static_cast<float>(i % 9 - 4);
    for (int i = 0; i < n * k; ++i)
      w[i] = 0.125f * static_cast<float>(i % 11 - 5);
    for (int j = 0; j < n; ++j)
      bias[j] = 0.5f * static_cast<float>(j - 2);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        want[i * n + j] = 0;
        for (int p = 0; p < k; ++p)
          want[i * n + j] += double(x[i * k + p]) * w[j * k + p];
      }
  }
};

TEST(CPUGemm, F32WithAndWithoutBeta) {
  Case c;
  // ld 8 for y: rows not packed, still OpenBLAS's; ld 4 < n would not be.
  for (int64_t ldy : {int64_t(Case::n), int64_t(8)}) {
    std::vector<float> y(Case::m * ldy);
    auto mx = matrix(c.x, Case::m, Case::k, Case::k);
    auto mw = matrix(c.w, Case::n, Case::k, Case::k);
    auto my = matrix(y.data(), Case::m, Case::n, ldy);
    for (int i = 0; i < Case::m; ++i)
      for (int j = 0; j < Case::n; ++j)
        y[i * ldy + j] = c.bias[j];
    _mlir_ciface_dat_gemm_f32(&mx, &mw, &my, 1.0f);
    for (int i = 0; i < Case::m; ++i)
      for (int j = 0; j < Case::n; ++j)
        EXPECT_EQ(y[i * ldy + j], float(c.want[i * Case::n + j] + c.bias[j]))
            << "β 1, ld " << ldy << ", y[" << i << ", " << j << "]";
    for (float &v : y)
      v = std::nanf("");
    _mlir_ciface_dat_gemm_f32(&mx, &mw, &my, 0.0f);
    for (int i = 0; i < Case::m; ++i)
      for (int j = 0; j < Case::n; ++j)
        EXPECT_EQ(y[i * ldy + j], float(c.want[i * Case::n + j]))
            << "β 0, ld " << ldy << ", y[" << i << ", " << j << "]";
  }
}

TEST(CPUGemm, Bf16OperandsToF32AndBf16) {
  Case c;
  std::vector<uint16_t> xb, wb;
  for (float v : c.x)
    xb.push_back(dat::floatToBF16(v));
  for (float v : c.w)
    wb.push_back(dat::floatToBF16(v));
  auto mx = matrix(xb.data(), Case::m, Case::k, Case::k);
  auto mw = matrix(wb.data(), Case::n, Case::k, Case::k);

  std::vector<float> y(Case::m * Case::n, std::nanf(""));
  auto my = matrix(y.data(), Case::m, Case::n, Case::n);
  _mlir_ciface_dat_gemm_bf16(&mx, &mw, &my, 0.0f);
  for (int i = 0; i < Case::m * Case::n; ++i)
    EXPECT_EQ(y[i], float(c.want[i])) << "to f32, y[" << i << "]";

  std::vector<uint16_t> yb(Case::m * Case::n);
  auto myb = matrix(yb.data(), Case::m, Case::n, Case::n);
  for (int i = 0; i < Case::m * Case::n; ++i)
    yb[i] = dat::floatToBF16(c.bias[i % Case::n]);
  _mlir_ciface_dat_gemm_bf16_to_bf16(&mx, &mw, &myb, 1.0f);
  for (int i = 0; i < Case::m * Case::n; ++i)
    EXPECT_EQ(yb[i], dat::floatToBF16(float(c.want[i] + c.bias[i % Case::n])))
        << "to bf16, β 1, y[" << i << "]";
  for (uint16_t &v : yb)
    v = 0x7fc0; // NaN
  _mlir_ciface_dat_gemm_bf16_to_bf16(&mx, &mw, &myb, 0.0f);
  for (int i = 0; i < Case::m * Case::n; ++i)
    EXPECT_EQ(yb[i], dat::floatToBF16(float(c.want[i])))
        << "to bf16, β 0, y[" << i << "]";
}

TEST(CPUGemm, ReferenceLoopsForStridedColumns) {
  // Columns with a stride (no call makes these; the runtime must still be
  // right): the reference loop nest, with β.
  Case c;
  std::vector<float> y(Case::m * Case::n * 2, std::nanf(""));
  datrt::Matrix<float> my{
      y.data(), y.data(), 0, {Case::m, Case::n}, {2 * Case::n, 2}};
  auto mx = matrix(c.x, Case::m, Case::k, Case::k);
  auto mw = matrix(c.w, Case::n, Case::k, Case::k);
  _mlir_ciface_dat_gemm_f32(&mx, &mw, &my, 0.0f);
  for (int i = 0; i < Case::m; ++i)
    for (int j = 0; j < Case::n; ++j)
      EXPECT_EQ(y[i * 2 * Case::n + 2 * j], float(c.want[i * Case::n + j]));
}

} // namespace
