/* Times dat's generated projection (projection.mlir through the CPU
   pipeline, called through its C interface): best of 40 calls. Each call
   also packs the weight into register panels, which a program does once
   at load time. See projection.sh. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[3], strides[3];
} Memref3;
typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} Memref2;
void _mlir_ciface_proj(Memref3 *result, Memref3 *x, Memref2 *w);

int main(int argc, char **argv) {
  // M K N as projection.sh compiled projection.mlir (default 1024 512 512).
  const int64_t m = argc > 3 ? atoll(argv[1]) : 1024,
                k = argc > 3 ? atoll(argv[2]) : 512,
                n = argc > 3 ? atoll(argv[3]) : 512;
  float *x = aligned_alloc(64, 4 * m * k), *w = aligned_alloc(64, 4 * k * n);
  if (!x || !w)
    return 1;
  for (int64_t i = 0; i < m * k; ++i)
    x[i] = (i % 7) * 0.1f;
  for (int64_t i = 0; i < k * n; ++i)
    w[i] = (i % 5) * 0.1f;
  Memref3 dx = {x, x, 0, {1, m, k}, {m * k, k, 1}};
  Memref2 dw = {w, w, 0, {n, k}, {k, 1}};
  double best = 1e9;
  for (int rep = 0; rep < 40; ++rep) {
    Memref3 y;
    double t0 = omp_get_wtime();
    _mlir_ciface_proj(&y, &dx, &dw);
    double t = omp_get_wtime() - t0;
    if (t < best)
      best = t;
    free(y.allocated);
  }
  printf("dat's generated projection: %.3f ms, %.1f GFLOP/s on %d threads "
         "(weight packing included)\n",
         best * 1e3, 2.0 * m * n * k / best / 1e9, omp_get_max_threads());
  return 0;
}
