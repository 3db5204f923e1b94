/* Hand-written AVX-512 projection kernels at any shape, to decide what
   dat's generated projections (dat-register-tiles) should become before
   the compiler is changed: y[M, N] = x[M, K] · W, W packed in panels
   [N/32][K][32] as dat-pack-weights lays it out; 64-row tiles over the
   threads (the last partial one included), the reduction in blocks of 128.

     dat      dat's loop order: weight panels outside 8 × 32 row tiles,
              broadcasts read from x's rows (K apart)
     packA    the same, each 8-row × 128 block of x first copied k-major
              ([128][8]), so the broadcasts of a step are one cache line
     datcols  dat's order, the threads splitting the panels (columns)
              instead of the rows (only with ROWS_PER_TILE)
     packA12  packA with 12 × 32 register tiles, thread tiles of 72 or 96
              rows; timing only: the partial last tile's rows past its
              last whole 12 are skipped and its output is not checked
   (packA's output is checked bitwise against dat's.)

   cc -O3 -march=native -fopenmp gemm_variants.c -o g && \
     OMP_NUM_THREADS=2 ./g 1000 640 640 [ROWS_PER_TILE]
   Needs AVX-512; M a multiple of 8, K of 128, N of 32.

   Conditions, from the environment (session 59: why a program's
   projections run slower than this kernel alone):
     GEMM_COLD_MB=N     N MB written before each call (the caches cold, as
                        after a program's other ops)
     GEMM_W_OFFSET=F    the weight F floats past a cache line
     GEMM_HUGEPAGES=1   madvise(MADV_HUGEPAGE) on x, W and y
     GEMM_PREFETCH=1|2  dat's order prefetches the next reduction block of
                        its 8 rows during the first panel (1) or every one */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define KB 128

static int M, K, N;

/* R rows × 32 lanes; a[i * lda + k] (lda = K) or packed a[k * R + i];
   STEP runs at each step k, before its loads. */
#define DEFINE_TILE(NAME, R, AIDX, STEP)                                       \
  static void NAME(const float *a, const float *b, float *c, int kb,           \
                   int first) {                                                \
    __m512 acc[2 * R];                                                         \
    for (int i = 0; i < R; ++i) {                                              \
      acc[2 * i] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + i * N);   \
      acc[2 * i + 1] =                                                         \
          first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + i * N + 16);       \
    }                                                                          \
    for (int k = 0; k < kb; ++k) {                                             \
      STEP;                                                                    \
      __m512 b0 = _mm512_loadu_ps(b + k * 32),                                 \
             b1 = _mm512_loadu_ps(b + k * 32 + 16);                            \
      for (int i = 0; i < R; ++i) {                                            \
        __m512 x = _mm512_set1_ps(a[AIDX]);                                    \
        acc[2 * i] = _mm512_fmadd_ps(x, b0, acc[2 * i]);                       \
        acc[2 * i + 1] = _mm512_fmadd_ps(x, b1, acc[2 * i + 1]);               \
      }                                                                        \
    }                                                                          \
    for (int i = 0; i < R; ++i) {                                              \
      _mm512_storeu_ps(c + i * N, acc[2 * i]);                                 \
      _mm512_storeu_ps(c + i * N + 16, acc[2 * i + 1]);                        \
    }                                                                          \
  }

DEFINE_TILE(tile_rows, 8, i *K + k, (void)0)
DEFINE_TILE(tile_packed8, 8, k * 8 + i, (void)0)
DEFINE_TILE(tile_packed12, 12, k * 12 + i, (void)0)

static int Prefetch;

/* tile_rows with the next reduction block of its 8 rows prefetched: one
   line every other step (8 rows × 8 lines over 128 steps). */
DEFINE_TILE(tile_rows_prefetch, 8, i *K + k,
            if ((k & 1) == 0)
                _mm_prefetch((const char *)(a + (k >> 4) * K + KB +
                                            ((k >> 1) & 7) * 16),
                             _MM_HINT_T0))

static const float *X, *W;
static float *Y;

static void run_dat(int r0, int rows, float *scratch) {
  (void)scratch;
  for (int k0 = 0; k0 < K; k0 += KB)
    for (int p = 0; p < N / 32; ++p)
      for (int rt = 0; rt < rows / 8; ++rt)
        (Prefetch && (p == 0 || Prefetch == 2) && k0 + KB < K
             ? tile_rows_prefetch
             : tile_rows)(X + (long)(r0 + rt * 8) * K + k0,
                          W + ((long)p * K + k0) * 32,
                          Y + (long)(r0 + rt * 8) * N + p * 32, KB, k0 == 0);
}

/* dat's order over panels [p0, p1) only: the threads split the columns,
   so that each keeps its share of W in its L2 (datcols). */
static void run_dat_panels(int r0, int rows, int p0, int p1) {
  for (int k0 = 0; k0 < K; k0 += KB)
    for (int p = p0; p < p1; ++p)
      for (int rt = 0; rt < rows / 8; ++rt)
        tile_rows(X + (long)(r0 + rt * 8) * K + k0, W + ((long)p * K + k0) * 32,
                  Y + (long)(r0 + rt * 8) * N + p * 32, KB, k0 == 0);
}

static void pack(int r0, int rows, int k0, int R, float *scratch) {
  for (int rt = 0; rt < rows / R; ++rt)
    for (int k = 0; k < KB; ++k)
      for (int i = 0; i < R; ++i)
        scratch[(rt * KB + k) * R + i] =
            X[(long)(r0 + rt * R + i) * K + k0 + k];
}

static void run_packed(int r0, int rows, float *scratch, int R) {
  for (int k0 = 0; k0 < K; k0 += KB) {
    pack(r0, rows, k0, R, scratch);
    for (int p = 0; p < N / 32; ++p)
      for (int rt = 0; rt < rows / R; ++rt) {
        const float *a = scratch + rt * KB * R;
        const float *b = W + ((long)p * K + k0) * 32;
        float *c = Y + (long)(r0 + rt * R) * N + p * 32;
        if (R == 8)
          tile_packed8(a, b, c, KB, k0 == 0);
        else
          tile_packed12(a, b, c, KB, k0 == 0);
      }
  }
}
static void run_packA(int r0, int rows, float *s) {
  run_packed(r0, rows, s, 8);
}
static void run_packA12(int r0, int rows, float *s) {
  run_packed(r0, rows, s, 12);
}

/* GEMM_COLD_MB: that many MB written before each call. */
static void junkCaches(int rep) {
  static char *junk;
  static long junkBytes = -1;
  if (junkBytes < 0) {
    junkBytes = getenv("GEMM_COLD_MB") ? atol(getenv("GEMM_COLD_MB")) << 20 : 0;
    junk = junkBytes ? malloc(junkBytes) : NULL;
  }
  for (long i = 0; i < junkBytes; i += 64)
    junk[i] = (char)rep;
}

static double bench(void (*fn)(int, int, float *), int rt, const char *name) {
  double best = 1e9;
  for (int rep = 0; rep < 30; ++rep) {
    junkCaches(rep);
    double t0 = omp_get_wtime();
    int tiles = M / rt, rest = M % rt;
#pragma omp parallel
    {
      /* packA copies a tile's rows of each reduction block */
      float *scratch = aligned_alloc(64, 4L * (rt > 128 ? rt : 128) * KB);
#pragma omp for schedule(static)
      for (int t = 0; t < tiles; ++t)
        fn(t * rt, rt, scratch);
#pragma omp single
      if (rest)
        fn(tiles * rt, rest, scratch);
      free(scratch);
    }
    double t = omp_get_wtime() - t0;
    if (t < best)
      best = t;
  }
  printf("%-8s rows/tile %3d: %7.3f ms, %6.1f GFLOP/s on %d threads\n", name,
         rt, best * 1e3, 2.0 * M * N * K / best / 1e9, omp_get_max_threads());
  return best;
}

static void junkCaches(int rep);

/* datcols: each thread all rows, in tiles of rt, over its half of the
   panels. */
static double benchColumns(int rt) {
  double best = 1e9;
  for (int rep = 0; rep < 30; ++rep) {
    junkCaches(rep);
    double t0 = omp_get_wtime();
#pragma omp parallel
    {
      int t = omp_get_thread_num(), threads = omp_get_num_threads();
      int panels = N / 32, p0 = panels * t / threads,
          p1 = panels * (t + 1) / threads;
      for (int r0 = 0; r0 < M; r0 += rt)
        run_dat_panels(r0, r0 + rt <= M ? rt : M - r0, p0, p1);
    }
    double t = omp_get_wtime() - t0;
    if (t < best)
      best = t;
  }
  printf("%-8s rows/tile %3d: %7.3f ms, %6.1f GFLOP/s on %d threads\n",
         "datcols", rt, best * 1e3, 2.0 * M * N * K / best / 1e9,
         omp_get_max_threads());
  return best;
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5)
    return fprintf(stderr, "usage: %s M K N [ROWS_PER_TILE]\n", argv[0]), 2;
  M = atoi(argv[1]), K = atoi(argv[2]), N = atoi(argv[3]);
  if (M % 8 || K % KB || N % 32)
    return fprintf(stderr, "M %% 8, K %% 128, N %% 32 must be 0\n"), 2;
  /* 2 MiB-aligned blocks, whole huge pages where GEMM_HUGEPAGES asks. */
  const long page = 2L << 20;
  long offset = getenv("GEMM_W_OFFSET") ? atol(getenv("GEMM_W_OFFSET")) : 0;
  size_t bx = (4L * M * K + page - 1) / page * page,
         bw = (4L * (K * N + offset) + page - 1) / page * page,
         by = (4L * M * N + page - 1) / page * page;
  float *x = aligned_alloc(page, bx), *w0 = aligned_alloc(page, bw),
        *y = aligned_alloc(page, by), *ref = malloc(4L * M * N);
  float *w = w0 + offset;
  if (getenv("GEMM_HUGEPAGES")) {
    madvise(x, bx, MADV_HUGEPAGE);
    madvise(w0, bw, MADV_HUGEPAGE);
    madvise(y, by, MADV_HUGEPAGE);
  }
  Prefetch = getenv("GEMM_PREFETCH") ? atoi(getenv("GEMM_PREFETCH")) : 0;
  for (long i = 0; i < (long)M * K; ++i)
    x[i] = (i % 7) * 0.1f - 0.3f;
  for (long i = 0; i < (long)K * N; ++i)
    w[i] = (i % 5) * 0.1f - 0.2f;
  X = x, W = w, Y = y;
  bench(run_dat, 80, "dat");
  memcpy(ref, y, 4L * M * N);
  bench(run_dat, 64, "dat");
  bench(run_packA, 80, "packA");
  if (memcmp(ref, y, 4L * M * N))
    printf("packA differs from dat\n");
  bench(run_packA, 64, "packA");
  bench(run_packA12, 72, "packA12");
  bench(run_packA12, 96, "packA12");
  if (argc ==
      5) { /* the row tile dat's rule picks for this M (a multiple of 8) */
    int rt = atoi(argv[4]);
    bench(run_dat, rt, "dat");
    bench(run_packA, rt, "packA");
    if (memcmp(ref, y, 4L * M * N))
      printf("packA differs from dat\n");
    benchColumns(rt);
    if (memcmp(ref, y, 4L * M * N))
      printf("datcols differs from dat\n");
  }
  return 0;
}
