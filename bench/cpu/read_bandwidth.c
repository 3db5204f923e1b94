/* The streaming read bandwidth of this machine's memory, measured: every
   core sums its share of a 256 MiB buffer (far larger than the caches),
   with vector loads, nothing else — the roofline of a memory-bound entry
   (the position-relative relational attention reads a 256 MiB input per
   call). Built and run by run.py --device cpu in the same run as the
   benchmarks: cc -O3 -march=native -fopenmp read_bandwidth.c.
   Prints GB/s (10^9 bytes). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define WIDTH 16
typedef float vec __attribute__((vector_size(WIDTH * sizeof(float))));

int main(void) {
  const long bytes = 256L << 20, count = bytes / sizeof(vec);
  vec *data = aligned_alloc(64, bytes);
  if (!data)
    return 1;
#pragma omp parallel for
  for (long i = 0; i < count; ++i)
    for (int l = 0; l < WIDTH; ++l)
      data[i][l] = (float)(i & 1023) * 1e-6f;
  double best = 0;
  float sink = 0;
  for (int trial = 0; trial < 5; ++trial) {
    double start = omp_get_wtime();
    vec total = {0};
#pragma omp parallel
    {
      vec acc[4] = {{0}, {0}, {0}, {0}};
#pragma omp for
      for (long i = 0; i < count; i += 4)
        for (int c = 0; c < 4; ++c)
          acc[c] += data[i + c];
#pragma omp critical
      total += acc[0] + acc[1] + acc[2] + acc[3];
    }
    double seconds = omp_get_wtime() - start;
    if (bytes / seconds > best)
      best = bytes / seconds;
    for (int l = 0; l < WIDTH; ++l)
      sink += total[l];
  }
  if (sink == 12345.0f)
    printf("(unlikely)\n");
  printf("%.1f GB/s on %d threads\n", best / 1e9, omp_get_max_threads());
  free(data);
  return 0;
}
