//===- FakeCublas.cpp - cuBLAS's entry points on host memory, for tests ---===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// cublasGemmEx computes what cuBLAS documents (column-major C = α·op(A)·op(B)
// + β·C, C not read when β = 0) on host pointers, for f32 and bf16 matrices
// with f32 scalars and accumulation, so that the runtime's arguments are
// checked by their results; anything else fails with
// CUBLAS_STATUS_NOT_SUPPORTED.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstring>

static int liveHandles;

namespace {
constexpr int kR32F = 0, kR16BF = 14, kCompute32F = 68, kNotSupported = 15;

float load(const void *p, int type, long i) {
  if (type == kR32F)
    return static_cast<const float *>(p)[i];
  uint32_t bits = static_cast<uint32_t>(static_cast<const uint16_t *>(p)[i])
                  << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void store(void *p, int type, long i, float v) {
  if (type == kR32F) {
    static_cast<float *>(p)[i] = v;
    return;
  }
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits += 0x7fffu + ((bits >> 16) & 1); // to nearest even (no NaNs here)
  static_cast<uint16_t *>(p)[i] = static_cast<uint16_t>(bits >> 16);
}
} // namespace

extern "C" {
int cublasCreate_v2(void **handle) {
  static int h;
  *handle = &h;
  ++liveHandles;
  return 0;
}
int cublasDestroy_v2(void *) {
  --liveHandles;
  return 0;
}
/// Handles created and not destroyed (the runtime must destroy its own).
int fake_cublas_live_handles() { return liveHandles; }
int cublasSetStream_v2(void *, void *) { return 0; }
int cublasGemmEx(void *, int transa, int transb, int m, int n, int k,
                 const void *alpha, const void *a, int aType, int lda,
                 const void *b, int bType, int ldb, const void *beta, void *c,
                 int cType, int ldc, int compute, int) {
  auto typeOk = [](int t) { return t == kR32F || t == kR16BF; };
  if (!typeOk(aType) || !typeOk(bType) || !typeOk(cType) ||
      compute != kCompute32F)
    return kNotSupported;
  float al = *static_cast<const float *>(alpha),
        be = *static_cast<const float *>(beta);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      float acc = 0;
      for (int p = 0; p < k; ++p) {
        long ai = transa ? p + static_cast<long>(i) * lda
                         : i + static_cast<long>(p) * lda;
        long bi = transb ? j + static_cast<long>(p) * ldb
                         : p + static_cast<long>(j) * ldb;
        acc += load(a, aType, ai) * load(b, bType, bi);
      }
      long ci = i + static_cast<long>(j) * ldc;
      float out = al * acc;
      if (be != 0)
        out += be * load(c, cType, ci);
      store(c, cType, ci, out);
    }
  return 0;
}
}
