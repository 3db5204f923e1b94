/* A replica of the position-relative symbol accumulation's memory access
   (PrefetchBlocks.cpp): s is [512, 512, 256] f32 (256 MiB); for each query
   row i of a 64-row tile and each 64-key block, 8 register tiles of
   8 heads × 32 features walk the block's keys 1 KiB apart, a 128-byte
   strip of each. Prints the read bandwidth of s without and with a
   prefetch of the next row's 64 KiB block in memory order.
   Needs AVX-512.
   cc -O3 -march=native -fopenmp strided_prefetch.c && OMP_NUM_THREADS=2 ./a.out
 */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 512
#define D 256

static double run(const float *s, const float *p, float *out, int prefetch) {
  double best = 1e9;
  for (int rep = 0; rep < 4; ++rep) {
    double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (int qt = 0; qt < N / 64; ++qt)
      for (int kb = 0; kb < N / 64; ++kb)
        for (int i = qt * 64; i < qt * 64 + 64; ++i) {
          const float *row = s + ((long)i * N + kb * 64) * D;
          if (prefetch && i + 1 < N)
            for (int l = 0; l < 64 * D * 4; l += 64)
              _mm_prefetch((const char *)(row + (long)N * D) + l, _MM_HINT_T1);
          for (int et = 0; et < D / 32; ++et) {
            __m512 acc[16];
            for (int a = 0; a < 16; ++a)
              acc[a] = _mm512_setzero_ps();
            for (int j = 0; j < 64; ++j) {
              __m512 b0 = _mm512_loadu_ps(row + (long)j * D + et * 32);
              __m512 b1 = _mm512_loadu_ps(row + (long)j * D + et * 32 + 16);
              for (int h = 0; h < 8; ++h) {
                __m512 x = _mm512_set1_ps(p[(h * N + i) * 64 + j]);
                acc[2 * h] = _mm512_fmadd_ps(x, b0, acc[2 * h]);
                acc[2 * h + 1] = _mm512_fmadd_ps(x, b1, acc[2 * h + 1]);
              }
            }
            for (int h = 0; h < 8; ++h) {
              float *o = out + ((long)h * N + i) * D + et * 32;
              _mm512_storeu_ps(o,
                               _mm512_add_ps(_mm512_loadu_ps(o), acc[2 * h]));
              _mm512_storeu_ps(o + 16, _mm512_add_ps(_mm512_loadu_ps(o + 16),
                                                     acc[2 * h + 1]));
            }
          }
        }
    double t = omp_get_wtime() - t0;
    if (t < best)
      best = t;
  }
  return best;
}

int main(void) {
  float *s = aligned_alloc(64, 4L * N * N * D);
  float *p = aligned_alloc(64, 4L * 8 * N * 64);
  float *out = aligned_alloc(64, 4L * 8 * N * D);
  if (!s || !p || !out)
    return 1;
#pragma omp parallel for
  for (long i = 0; i < (long)N * N * D; ++i)
    s[i] = (i % 13) * 1e-3f;
  for (long i = 0; i < 8L * N * 64; ++i)
    p[i] = (i % 7) * 1e-2f;
  for (long i = 0; i < 8L * N * D; ++i)
    out[i] = 0;
  for (int prefetch = 0; prefetch < 2; ++prefetch) {
    double t = run(s, p, out, prefetch);
    printf("prefetch=%d: %.2f ms, %.1f GB/s of s\n", prefetch, t * 1e3,
           4.0 * N * N * D / t / 1e9);
  }
  return 0;
}
