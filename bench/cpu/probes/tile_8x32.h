/* The 8 × 32 register tile of dat's generated contractions (16 AVX-512
   accumulators: 8 rows × 2 vectors), for the probes that time it:
   c[i][0..31] = (accumulate ? c[i][0..31] : 0) + Σ_k a[i·lda + k] · b[k·ldb +
   0..31] for i < 8, rows of c ldc apart; each step broadcasts a row's element
   against two vectors of b. */
#ifndef DAT_BENCH_PROBES_TILE_8X32_H
#define DAT_BENCH_PROBES_TILE_8X32_H

#include <immintrin.h>

static inline void tile_8x32(const float *a, long lda, const float *b, long ldb,
                             float *c, long ldc, int steps, int accumulate) {
  __m512 acc[16];
  for (int i = 0; i < 8; ++i) {
    acc[2 * i] =
        accumulate ? _mm512_loadu_ps(c + i * ldc) : _mm512_setzero_ps();
    acc[2 * i + 1] =
        accumulate ? _mm512_loadu_ps(c + i * ldc + 16) : _mm512_setzero_ps();
  }
  for (int k = 0; k < steps; ++k) {
    __m512 b0 = _mm512_loadu_ps(b + k * ldb),
           b1 = _mm512_loadu_ps(b + k * ldb + 16);
    for (int i = 0; i < 8; ++i) {
      __m512 x = _mm512_set1_ps(a[i * lda + k]);
      acc[2 * i] = _mm512_fmadd_ps(x, b0, acc[2 * i]);
      acc[2 * i + 1] = _mm512_fmadd_ps(x, b1, acc[2 * i + 1]);
    }
  }
  for (int i = 0; i < 8; ++i) {
    _mm512_storeu_ps(c + i * ldc, acc[2 * i]);
    _mm512_storeu_ps(c + i * ldc + 16, acc[2 * i + 1]);
  }
}

#endif
