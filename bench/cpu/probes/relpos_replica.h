/* The data of the position-relative replicas (strided_prefetch_chunks.c,
   overlap_prefetch.c): the symbols s [512, 512, 256] f32 (256 MiB), the
   8 heads' probabilities of a 64-row tile (rows padded by 64 floats, off one
   L1 set) and the accumulators, filled with small values. */
#ifndef RELPOS_REPLICA_H
#define RELPOS_REPLICA_H
#include <stdlib.h>

static int relpos_data(float **s, float **p, float **out) {
  *s = aligned_alloc(64, 4L * N * N * D);
  *p = aligned_alloc(64, 4L * 8 * (N * 64 + 64));
  *out = aligned_alloc(64, 4L * 8 * N * D);
  if (!*s || !*p || !*out)
    return 0;
#pragma omp parallel for
  for (long i = 0; i < (long)N * N * D; ++i)
    (*s)[i] = (i % 13) * 1e-3f;
  for (long i = 0; i < 8L * (N * 64 + 64); ++i)
    (*p)[i] = (i % 7) * 1e-2f;
  for (long i = 0; i < 8L * N * D; ++i)
    (*out)[i] = 0;
  return 1;
}
#endif
