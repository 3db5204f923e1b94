/* The shape of the flash tiles' contraction loops, alone: S[rows, 64] =
   Q[rows, KR] · K[KR, 64] in 8 × 32 register tiles (16 accumulators, zeroed
   and stored once per tile), a reduction of KR steps (a head's features:
   32 in relational attention's N 1024 entry), every operand in L1 or L2 and
   read again and again. Compare with the tile loops' rate in a program
   (`perf` by loops, bench/perf_loops.py). Session 59, on the Intel host.

     cc -O3 -march=native -fopenmp short_reduction.c -o s && ./s KR [ROWS]
   Two copies at once (`./s 32 & ./s 32`) share the machine as two threads
   would. Needs AVX-512. */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "tile_8x32.h"

static int KR;

int main(int argc, char **argv) {
  if (argc < 2)
    return fprintf(stderr, "usage: %s KR [ROWS]\n", argv[0]), 2;
  KR = atoi(argv[1]);
  int rows = argc > 2 ? atoi(argv[2]) : 64; /* a multiple of 8 */
  float *q = aligned_alloc(64, 4L * rows * KR),
        *k = aligned_alloc(64, 4L * KR * 64),
        *s = aligned_alloc(64, 4L * rows * 64);
  for (int i = 0; i < rows * KR; ++i)
    q[i] = 0.001f * (i % 7);
  for (int i = 0; i < KR * 64; ++i)
    k[i] = 0.001f * (i % 5);
  long reps = 200000000L / ((long)rows * 64 * KR);
  double best = 1e9;
  for (int r = 0; r < 5; ++r) {
    double t0 = omp_get_wtime();
    for (long n = 0; n < reps; ++n)
      for (int rt = 0; rt < rows / 8; ++rt)
        for (int c = 0; c < 2; ++c)
          tile_8x32(q + rt * 8 * KR, KR, k + c * 32, 64,
                    s + rt * 8 * 64 + c * 32, 64, KR, 0);
    double t = omp_get_wtime() - t0;
    if (t < best)
      best = t;
  }
  printf("reduction %3d, %4d rows: %6.1f GFLOP/s (checksum %g)\n", KR, rows,
         2.0 * reps * rows * 64 * KR / best / 1e9, s[5]);
  return 0;
}
