/* Does prefetching a key block's first K query rows of position-relative
   symbols during the tile's compute-only phase (scores, softmax,
   relations) hide memory time? A replica (session 58): per (query tile,
   key block), OTHER steps of 8 FMAs on registers (50000 steps are about
   30% of the symbol sum's time, as the program's tile measured), then the
   symbol sum of strided_prefetch.c (8 heads x 32-feature strips, rows of
   64 keys, the next row prefetched spread over the steps). With K > 0,
   rows 0..K-1 of this block are prefetched (T1) spread over OTHER's steps,
   and row i prefetches row i + K.
   cc -O3 -march=native -fopenmp overlap_prefetch.c && OMP_NUM_THREADS=2 ./a.out */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#define N 512
#define D 256
#include "relpos_replica.h"
#define QT 64
static float sink[64];
static double run(const float *s, const float *p, float *out, int K, int other_iters) {
  double best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    double t0 = omp_get_wtime();
#pragma omp parallel
    {
      __m512 o[8];
      for (int a = 0; a < 8; ++a) o[a] = _mm512_set1_ps(1.0f);
      __m512 m = _mm512_set1_ps(0.999f);
#pragma omp for schedule(static)
      for (int qt = 0; qt < N / QT; ++qt)
        for (int kb = 0; kb < N / 64; ++kb) {
          const char *first = (const char *)(s + ((long)(qt * QT) * N + kb * 64) * D);
          /* OTHER: other_iters steps of 8 FMAs; K rows x 1024 lines prefetched spread */
          long lines = (long)K * 1024, per = other_iters ? (lines + other_iters - 1) / other_iters : 0;
          long l = 0; int prow = 0; long poff = 0;
          for (int t = 0; t < other_iters; ++t) {
            for (int a = 0; a < 8; ++a) { o[a] = _mm512_fmadd_ps(o[a], m, m); __asm__ volatile("" : "+v"(o[a])); }
            for (long c = 0; c < per && l < lines; ++c, ++l) {
              _mm_prefetch(first + prow * (long)N * D * 4 + poff, _MM_HINT_T1);
              poff += 64;
              if (poff == 65536) { poff = 0; ++prow; }
            }
          }
          for (int i = qt * QT; i < qt * QT + QT; ++i) {
            const float *row = s + ((long)i * N + kb * 64) * D;
            int ahead = K > 0 ? K : 1;
            int nexti = i + ahead < qt * QT + QT ? i + ahead : -1;
            const char *next = nexti >= 0 ? (const char *)(row + (long)ahead * N * D) : 0;
            int step = 0;
            for (int et = 0; et < D / 32; ++et) {
              __m512 acc[16];
              for (int a = 0; a < 16; ++a) acc[a] = _mm512_setzero_ps();
              for (int j = 0; j < 64; ++j) {
                if (next && (j & 3) == 0) {
                  long l = (long)step++ * 8 * 64;
                  for (int k = 0; k < 8; ++k) _mm_prefetch(next + l + k * 64, _MM_HINT_T1);
                }
                __m512 b0 = _mm512_loadu_ps(row + (long)j * D + et * 32);
                __m512 b1 = _mm512_loadu_ps(row + (long)j * D + et * 32 + 16);
                for (int h = 0; h < 8; ++h) {
                  __m512 x = _mm512_set1_ps(p[(long)h * (N * 64 + 64) + (i % 64) * 64 + j]);
                  acc[2 * h] = _mm512_fmadd_ps(x, b0, acc[2 * h]);
                  acc[2 * h + 1] = _mm512_fmadd_ps(x, b1, acc[2 * h + 1]);
                }
              }
              for (int h = 0; h < 8; ++h) {
                float *q = out + ((long)h * N + i) * D + et * 32;
                _mm512_storeu_ps(q, _mm512_add_ps(_mm512_loadu_ps(q), acc[2 * h]));
                _mm512_storeu_ps(q + 16, _mm512_add_ps(_mm512_loadu_ps(q + 16), acc[2 * h + 1]));
              }
            }
          }
        }
      float tmp[16];
      __m512 t = o[0];
      for (int a = 1; a < 8; ++a) t = _mm512_add_ps(t, o[a]);
      _mm512_storeu_ps(tmp, t);
      sink[omp_get_thread_num()] = tmp[0];
    }
    double t = omp_get_wtime() - t0;
    if (t < best) best = t;
  }
  return best;
}
int main(void) {
  float *s, *p, *out;
  if (!relpos_data(&s, &p, &out))
    return 1;
  int others[] = {0, 50000, 100000};
  int Ks[] = {0, 2, 4, 8};
  for (int r = 0; r < 2; ++r)
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 4; ++b) {
      double t = run(s, p, out, Ks[b], others[a]);
      printf("other=%d K=%d: %.2f ms\n", others[a], Ks[b], t * 1e3);
    }
  return 0;
}
