/* A variant of strided_prefetch.c (session 51, the Zen 5 host): inside a
   query row's 64-key block, chunks of C keys outermost and the 8 strips of
   32 features inside them, so that the block is read in memory order a
   chunk at a time; the row's 8 heads x 256 accumulators wait in an L1
   buffer between chunks. pf=0 no software prefetch, 1 to L2 (T1), 2 to L1
   (T0), `dist` bytes ahead of the chunk in memory order, spread over the
   chunk's steps. Prints the read bandwidth of s.
   cc -O3 -march=native -fopenmp strided_prefetch_chunks.c && OMP_NUM_THREADS=2 ./a.out
 */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#define N 512
#define D 256
#include "relpos_replica.h"
static double run(const float *s, const float *p, float *out, int C, int pf, int dist) {
  double best = 1e9;
  for (int rep = 0; rep < 4; ++rep) {
    double t0 = omp_get_wtime();
#pragma omp parallel
    {
    float *accbuf = aligned_alloc(64, 4 * 8 * D);
#pragma omp for schedule(static)
    for (int qt = 0; qt < N / 64; ++qt)
      for (int kb = 0; kb < N / 64; ++kb)
        for (int i = qt * 64; i < qt * 64 + 64; ++i) {
          const float *row = s + ((long)i * N + kb * 64) * D;
          for (int a = 0; a < 8 * D; a += 16) _mm512_store_ps(accbuf + a, _mm512_setzero_ps());
          for (int c0 = 0; c0 < 64; c0 += C) {
            /* prefetch target: dist bytes ahead in memory order of this chunk */
            const char *ahead = (const char *)(row + (long)c0 * D) + dist;
            int lines = C * D * 4 / 64, steps = 8 * C, per = (lines + steps - 1) / steps;
            int step = 0;
            for (int et = 0; et < D / 32; ++et) {
              __m512 acc[16];
              for (int h = 0; h < 8; ++h) {
                acc[2*h] = _mm512_load_ps(accbuf + h * D + et * 32);
                acc[2*h+1] = _mm512_load_ps(accbuf + h * D + et * 32 + 16);
              }
              for (int j = c0; j < c0 + C; ++j, ++step) {
                if (pf) for (int k = 0; k < per; ++k) { int l = step * per + k; if (l < lines) { if (pf == 1) _mm_prefetch(ahead + l * 64, _MM_HINT_T1); else _mm_prefetch(ahead + l * 64, _MM_HINT_T0); } }
                __m512 b0 = _mm512_loadu_ps(row + (long)j * D + et * 32);
                __m512 b1 = _mm512_loadu_ps(row + (long)j * D + et * 32 + 16);
                for (int h = 0; h < 8; ++h) {
                  __m512 x = _mm512_set1_ps(p[(long)h * (N * 64 + 64) + i * 64 + j]);
                  acc[2 * h] = _mm512_fmadd_ps(x, b0, acc[2 * h]);
                  acc[2 * h + 1] = _mm512_fmadd_ps(x, b1, acc[2 * h + 1]);
                }
              }
              for (int h = 0; h < 8; ++h) {
                _mm512_store_ps(accbuf + h * D + et * 32, acc[2*h]);
                _mm512_store_ps(accbuf + h * D + et * 32 + 16, acc[2*h+1]);
              }
            }
          }
          for (int h = 0; h < 8; ++h)
            for (int e = 0; e < D; e += 16) {
              float *o = out + ((long)h * N + i) * D + e;
              _mm512_storeu_ps(o, _mm512_add_ps(_mm512_loadu_ps(o), _mm512_load_ps(accbuf + h * D + e)));
            }
        }
    free(accbuf);
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
  int Cs[] = {4, 8, 16, 32, 64};
  for (int ci = 0; ci < 5; ++ci)
    for (int pf = 0; pf < 3; ++pf)
      for (int dist = 4096; dist <= 65536; dist *= 4) {
        if (!pf && dist > 4096) continue;
        double t = run(s, p, out, Cs[ci], pf, dist);
        printf("C=%d pf=%d dist=%d: %.2f ms, %.1f GB/s\n", Cs[ci], pf, dist, t * 1e3, 4.0 * N * N * D / t / 1e9);
      }
  return 0;
}
