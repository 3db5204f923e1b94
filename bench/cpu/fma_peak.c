/* The fp32 FMA peak of this machine, measured: every core runs independent
   chains of vector fused multiply-adds (enough of them to cover the FMA
   latency), nothing else. Built and run by run.py --device cpu in the same
   run as the benchmarks: cc -O3 -march=native -fopenmp fma_peak.c.
   Prints GFLOP/s (2 flops per lane per FMA). */
#include <omp.h>
#include <stdio.h>

#define WIDTH                                                                  \
  16 /* floats per vector: 64-byte vectors (AVX-512; two AVX2 ops) */
#define CHAINS 16
typedef float vec __attribute__((vector_size(WIDTH * sizeof(float))));

int main(void) {
  const long iterations = 200000000L / CHAINS;
  double best = 0;
  for (int trial = 0; trial < 3; ++trial) {
    double start = omp_get_wtime();
    float sink = 0;
#pragma omp parallel reduction(+ : sink)
    {
      vec acc[CHAINS], a, b;
      for (int i = 0; i < WIDTH; ++i) {
        a[i] = 0.999999f;
        b[i] = 1e-7f;
      }
      for (int c = 0; c < CHAINS; ++c)
        acc[c] = a * (float)(c + omp_get_thread_num());
      for (long it = 0; it < iterations; ++it)
        for (int c = 0; c < CHAINS; ++c)
          acc[c] = acc[c] * a + b;
      for (int c = 0; c < CHAINS; ++c)
        for (int i = 0; i < WIDTH; ++i)
          sink += acc[c][i];
    }
    double seconds = omp_get_wtime() - start;
    double flops =
        2.0 * WIDTH * CHAINS * (double)iterations * omp_get_max_threads();
    if (flops / seconds > best)
      best = flops / seconds;
    if (sink == 12345.0f)
      printf("(unlikely)\n");
  }
  printf("%.1f GFLOP/s on %d threads\n", best / 1e9, omp_get_max_threads());
  return 0;
}
