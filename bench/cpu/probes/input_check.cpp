// bench/cpu/probes/input_check.cpp, from the repository root:
// g++ -O3 -DNDEBUG -std=c++17 -Iinclude bench/cpu/probes/input_check.cpp
// lib/Support/FiniteValues.cpp lib/Support/SafeTensors.cpp
// lib/Support/TinyJson.cpp && ./a.out The inputs' NaN/inf check on a 268 MB f32
// input ([512, 512, 256]): the runtime's old way (floatValues copy, then
// std::isfinite) against dat::firstNonFinite on one thread and on two. g++ -O3
// (the Release build's flags).
#include "dat/Support/BFloat16.h"
#include "dat/Support/FiniteValues.h"
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
    for (int which = 0; which < 3; ++which) {
      auto t0 = std::chrono::steady_clock::now();
      int64_t k =
          which == 2
              ? dat::firstNonFiniteOnThreads(dat::DType::F32, v.data(), n, 2)
          : which == 1 ? dat::firstNonFinite(dat::DType::F32, v.data(), n)
                       : old(v.data(), n);
      double ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
      const char *names[] = {"old copy+isfinite", "firstNonFinite",
                             "firstNonFiniteOnThreads(2)"};
      printf("%s %ld %.1f ms\n", names[which], (long)k, ms);
    }
  }
}
