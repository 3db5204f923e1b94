/* A replica of the position-relative symbol accumulation's memory access
   (PrefetchBlocks.cpp): s is [512, 512, 256] f32 (256 MiB); for each query
   row i of a 64-row tile and each 64-key block, 8 register tiles of
   8 heads × 32 features walk the block's keys 1 KiB apart, a 128-byte
   strip of each. Prints the read bandwidth of s with the next row's
   64 KiB block prefetched in memory order: prefetch=0 not at all, 1 all
   1024 lines at the row's start (PrefetchBlocks.cpp before session 45),
   2 eight lines at each step of 4 keys (since), 3 the same to L1 (T0),
   4 128 lines at the start of each 32-feature strip; pad=1 moves the
   heads' probability rows off one L1 set (dat-pad-tile-buffers).
   Needs AVX-512.
   cc -O3 -march=native -fopenmp strided_prefetch.c && OMP_NUM_THREADS=2 ./a.out
 */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 512
#define D 256

static double run(const float *s, const float *p, float *out, int prefetch, int pstride) {
  double best = 1e9;
  for (int rep = 0; rep < 4; ++rep) {
    double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (int qt = 0; qt < N / 64; ++qt)
      for (int kb = 0; kb < N / 64; ++kb)
        for (int i = qt * 64; i < qt * 64 + 64; ++i) {
          const float *row = s + ((long)i * N + kb * 64) * D;
          if (prefetch == 1 && i + 1 < N)
            for (int l = 0; l < 64 * D * 4; l += 64)
              _mm_prefetch((const char *)(row + (long)N * D) + l, _MM_HINT_T1);
          const char *next = (const char *)(row + (long)N * D);
          for (int et = 0; et < D / 32; ++et) {
            if (prefetch == 4 && i + 1 < N)
              for (int l = 0; l < 128; ++l)
                _mm_prefetch(next + ((long)et * 128 + l) * 64, _MM_HINT_T1);
            __m512 acc[16];
            for (int a = 0; a < 16; ++a)
              acc[a] = _mm512_setzero_ps();
            for (int j = 0; j < 64; ++j) {
              if (prefetch >= 2 && i + 1 < N && (j & 3) == 0) {
                long l = ((long)et * 16 + j / 4) * 8 * 64;
                for (int k = 0; k < 8; ++k)
                  { if (prefetch == 2) _mm_prefetch(next + l + k * 64, _MM_HINT_T1); else _mm_prefetch(next + l + k * 64, _MM_HINT_T0); }
              }
              __m512 b0 = _mm512_loadu_ps(row + (long)j * D + et * 32);
              __m512 b1 = _mm512_loadu_ps(row + (long)j * D + et * 32 + 16);
              for (int h = 0; h < 8; ++h) {
                __m512 x = _mm512_set1_ps(p[(long)h * pstride + i * 64 + j]);
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
  float *p = aligned_alloc(64, 4L * 8 * (N * 64 + 64));
  float *out = aligned_alloc(64, 4L * 8 * N * D);
  if (!s || !p || !out)
    return 1;
#pragma omp parallel for
  for (long i = 0; i < (long)N * N * D; ++i)
    s[i] = (i % 13) * 1e-3f;
  for (long i = 0; i < 8L * (N * 64 + 64); ++i)
    p[i] = (i % 7) * 1e-2f;
  for (long i = 0; i < 8L * N * D; ++i)
    out[i] = 0;
  for (int pad = 0; pad < 2; ++pad)
  for (int prefetch = 0; prefetch < 5; ++prefetch) {
    double t = run(s, p, out, prefetch, N * 64 + pad * 64);
    printf("pad=%d prefetch=%d: %.2f ms, %.1f GB/s of s\n", pad, prefetch, t * 1e3,
           4.0 * N * N * D / t / 1e9);
  }
  return 0;
}
