// bench/cpu/probes/input_check.cpp: g++ -O3 -DNDEBUG -std=c++17 -Iinclude input_check.cpp && ./a.out
// The inputs' NaN/inf check on a 268 MB f32 input ([512, 512, 256]): the
// runtime's old way (floatValues copy, then std::isfinite) against
// dat::firstNonFinite. g++ -O3 (the Release build's flags).
#include "dat/Support/BFloat16.h"
#include <chrono>
#include <cmath>
#include <cstdio>
static int64_t old(const void *data, int64_t n) {
  std::vector<float> v = dat::floatValues(dat::DType::F32, data, n);
  for (size_t k = 0; k < v.size(); ++k)
    if (!std::isfinite(v[k]))
      return k;
  return -1;
}
int main() {
  size_t n = 512ul * 512 * 256;
  std::vector<float> v(n, 1.0f);
  for (int r = 0; r < 4; ++r) {
    for (int which = 0; which < 2; ++which) {
      auto t0 = std::chrono::steady_clock::now();
      int64_t k = which ? dat::firstNonFinite(dat::DType::F32, v.data(), n) : old(v.data(), n);
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      printf("%s %ld %.1f ms\n", which ? "firstNonFinite" : "old copy+isfinite", (long)k, ms);
    }
  }
}
