// Stand-alone AVX-512 register-tile kernels, one core, to separate what the
// generated code's shape costs from what its memory layout costs
// (BENCHMARKS.md, "weights in register panels"):
//
//   clang++ -O3 -march=native bench/cpu/register_tiles.cpp -o /tmp/rt
//   /tmp/rt > result.json
//
// - "projection": C[960, 512] = A[960, 512] · B, B's 32-lane panels either
//   rows of a [K][N] matrix (2 KiB apart, the transposed weight) or blocked
//   [N/32][K][32] (contiguous), with 8 or 12 rows × 2 vectors; the strided
//   layout also with huge pages (madvise), to rule out TLB misses.
// - "tile": a flash tile's product, 64 × 64 × 64 in L1 (blocked panels),
//   for register tiles of 8 × 2, 12 × 2, 6 × 4 and 4 × 4 vectors.
// Variants alternate, 15 rounds, best kept; GFLOP/s, and this core's FMA
// peak measured the same way.
#include <immintrin.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace {
template <int MR, int NV>
void kernel(const float *a, long lda, const float *b, long ldb, float *c,
            long ldc, int k) {
  __m512 acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j)
      acc[i][j] = _mm512_setzero_ps();
  for (int p = 0; p < k; ++p) {
    __m512 panel[NV];
#pragma unroll
    for (int j = 0; j < NV; ++j)
      panel[j] = _mm512_loadu_ps(b + p * ldb + 16 * j);
#pragma unroll
    for (int i = 0; i < MR; ++i) {
      __m512 x = _mm512_set1_ps(a[i * lda + p]);
#pragma unroll
      for (int j = 0; j < NV; ++j)
        acc[i][j] = _mm512_fmadd_ps(x, panel[j], acc[i][j]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j)
      _mm512_storeu_ps(c + i * ldc + 16 * j, acc[i][j]);
}

float *alloc(size_t n, bool huge) {
  size_t bytes = (n * sizeof(float) + (2 << 20) - 1) / (2 << 20) * (2 << 20);
  auto *p = static_cast<float *>(aligned_alloc(2 << 20, bytes));
  if (huge)
    madvise(p, bytes, MADV_HUGEPAGE);
  for (size_t i = 0; i < n; ++i)
    p[i] = 1.0f / float(1 + i % 7);
  return p;
}

double seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// C[M, N] = A[M, K] · B with B's panels strided (ldb = N) or blocked.
template <int MR>
double projection(const float *a, const float *b, float *c, bool blocked) {
  constexpr int M = 960, N = 512, K = 512;
  auto start = std::chrono::steady_clock::now();
  for (int m = 0; m + MR <= M; m += MR)
    for (int n = 0; n < N; n += 32)
      kernel<MR, 2>(a + long(m) * K, K, blocked ? b + long(n) * K : b + n,
                    blocked ? 32 : N, c + long(m) * N + n, N, K);
  asm volatile("" : : "r"(c) : "memory");
  return 2.0 * (M / MR * MR) * N * K / seconds(start) / 1e9;
}

// A 64 × 64 × 64 tile product, repeated, in L1.
template <int MR, int NV>
double tile(const float *a, const float *b, float *c) {
  constexpr int T = 64, Reps = 2000;
  auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < Reps; ++r) {
    for (int m = 0; m + MR <= T; m += MR)
      for (int n = 0; n < T; n += 16 * NV)
        kernel<MR, NV>(a + m * T, T, b + long(n) * T, 16 * NV, c + m * T + n, T,
                       T);
    asm volatile("" : : "r"(c) : "memory");
  }
  return 2.0 * Reps * (T / MR * MR) * T * T / seconds(start) / 1e9;
}

double peak() {
  __m512 acc[16];
  for (int i = 0; i < 16; ++i)
    acc[i] = _mm512_set1_ps(float(i));
  __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  constexpr long Iterations = 20000000;
  auto start = std::chrono::steady_clock::now();
  for (long it = 0; it < Iterations; ++it)
#pragma unroll
    for (int i = 0; i < 16; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], x, y);
  double t = seconds(start);
  float sink = 0;
  for (int i = 0; i < 16; ++i)
    sink += _mm512_reduce_add_ps(acc[i]);
  asm volatile("" : : "x"(sink));
  return Iterations * 16 * 32 / t / 1e9;
}
} // namespace

int main() {
  float *a[2], *strided[2], *blocked, *c;
  for (int h = 0; h < 2; ++h) {
    a[h] = alloc(960 * 512, h);
    strided[h] = alloc(512 * 512, h);
  }
  blocked = alloc(512 * 512, false);
  c = alloc(960 * 512, false);
  std::map<std::string, double> best;
  auto keep = [&](const std::string &key, double gflops) {
    if (gflops > best[key])
      best[key] = gflops;
  };
  for (int round = 0; round < 15; ++round) {
    keep("peak", peak());
    keep("projection 8x2 strided", projection<8>(a[0], strided[0], c, false));
    keep("projection 8x2 strided huge-pages",
         projection<8>(a[1], strided[1], c, false));
    keep("projection 8x2 blocked", projection<8>(a[0], blocked, c, true));
    keep("projection 12x2 strided", projection<12>(a[0], strided[0], c, false));
    keep("projection 12x2 blocked", projection<12>(a[0], blocked, c, true));
    keep("tile 8x2", tile<8, 2>(a[0], blocked, c));
    keep("tile 12x2", tile<12, 2>(a[0], blocked, c));
    keep("tile 6x4", tile<6, 4>(a[0], blocked, c));
    keep("tile 4x4", tile<4, 4>(a[0], blocked, c));
  }
  std::printf("{\n  \"unit\": \"GFLOP/s, one core, best of 15 rounds\"");
  for (auto &[key, gflops] : best)
    std::printf(",\n  \"%s\": %.1f", key.c_str(), gflops);
  std::printf("\n}\n");
}
