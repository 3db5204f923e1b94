/* A hand-written AVX-512 projection kernel with the register tile and loop
   order of dat's generated one (dat-register-tiles): y[1024, 512] =
   x[1024, 512] · W, W packed in panels [16][512][32]; 64-row tiles over
   the threads, the reduction in blocks of 128, weight panels outside the
   8 × 32 row tiles. The yardstick for bench/cpu/probes/projection.sh.
   Needs AVX-512.
   cc -O3 -march=native -fopenmp gemm_8x32.c && OMP_NUM_THREADS=2 ./a.out */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tile_8x32.h"

#define M 1024
#define K 512
#define N 512
#define KB 128
#define RT 64

int main(void) {
  float *x = aligned_alloc(64, 4L * M * K), *w = aligned_alloc(64, 4L * K * N),
        *y = aligned_alloc(64, 4L * M * N);
  if (!x || !w || !y)
    return 1;
  for (long i = 0; i < (long)M * K; ++i)
    x[i] = (i % 7) * 0.1f;
  for (long i = 0; i < (long)K * N; ++i)
    w[i] = (i % 5) * 0.1f;
  double best = 1e9;
  for (int rep = 0; rep < 40; ++rep) {
    double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (int r0 = 0; r0 < M; r0 += RT) {
      memset(y + (long)r0 * N, 0, 4L * RT * N);
      for (int k0 = 0; k0 < K; k0 += KB)
        for (int p = 0; p < N / 32; ++p)
          for (int rt = 0; rt < RT / 8; ++rt)
            tile_8x32(x + (long)(r0 + rt * 8) * K + k0, K,
                      w + ((long)p * K + k0) * 32, 32,
                      y + (long)(r0 + rt * 8) * N + p * 32, N, KB, 1);
    }
    double t = omp_get_wtime() - t0;
    if (t < best)
      best = t;
  }
  printf("hand-written 8x32 kernel: %.3f ms, %.1f GFLOP/s on %d threads\n",
         best * 1e3, 2.0 * M * N * K / best / 1e9, omp_get_max_threads());
  return 0;
}
