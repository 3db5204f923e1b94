//===- GemmABI.h - the runtime GEMM the compiled code calls -----*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// dat-gemm-library-calls turns projections into
//   dat_gemm_f32 / dat_gemm_bf16 / dat_gemm_bf16_to_bf16(
//       x[M, K], w[N, K], y[M, N], beta):  y = x · wᵀ + beta · y
// through the C interface: each matrix is a pointer to a rank-2 memref
// descriptor. x and w are f32 or bf16 (the bits, uint16_t); y is f32, or
// bf16 for dat_gemm_bf16_to_bf16 (the products and sums in f32, then
// rounded to nearest even). beta is 0 or 1; with 0, y is not read.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_RUNTIME_PROGRAM_GEMMABI_H
#define DAT_RUNTIME_PROGRAM_GEMMABI_H

#include <cstdint>

namespace datrt {

template <typename T> struct Matrix {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
  T *data() const { return aligned + offset; }
};

} // namespace datrt

extern "C" {
void _mlir_ciface_dat_gemm_f32(datrt::Matrix<float> *x, datrt::Matrix<float> *w,
                               datrt::Matrix<float> *y, float beta);
void _mlir_ciface_dat_gemm_bf16(datrt::Matrix<uint16_t> *x,
                                datrt::Matrix<uint16_t> *w,
                                datrt::Matrix<float> *y, float beta);
void _mlir_ciface_dat_gemm_bf16_to_bf16(datrt::Matrix<uint16_t> *x,
                                        datrt::Matrix<uint16_t> *w,
                                        datrt::Matrix<uint16_t> *y, float beta);
}

#endif // DAT_RUNTIME_PROGRAM_GEMMABI_H
