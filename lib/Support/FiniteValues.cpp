//===- FiniteValues.cpp - NaN and infinities in float buffers -------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Support/FiniteValues.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

namespace dat {

int64_t firstNonFinite(DType dtype, const void *data, int64_t n) {
  const uint8_t *bytes = static_cast<const uint8_t *>(data);
  constexpr int64_t kBlock = 1024;
  // Non-finite: all exponent bits set, i.e. |bits| (the sign cleared) at
  // least the exponent's; a block's largest |bits| tells (a max reduction,
  // which vectorizes where a test and branch per element would not).
  auto scan = [&](auto exponent, auto magnitude) -> int64_t {
    using Word = decltype(exponent);
    auto word = [&](int64_t i) {
      Word w;
      std::memcpy(&w, bytes + sizeof(Word) * i, sizeof(Word));
      return w;
    };
    for (int64_t start = 0; start < n; start += kBlock) {
      int64_t end = std::min(n, start + kBlock);
      Word largest = 0;
      for (int64_t i = start; i < end; ++i)
        largest = std::max<Word>(largest, word(i) & magnitude);
      if (largest < exponent)
        continue;
      for (int64_t i = start; i < end; ++i)
        if ((word(i) & exponent) == exponent)
          return i;
    }
    return -1;
  };
  if (dtype == DType::F32)
    return scan(uint32_t{0x7f800000u}, uint32_t{0x7fffffffu});
  if (dtype == DType::BF16)
    return scan(uint16_t{0x7f80u}, uint16_t{0x7fffu});
  return -1;
}

int64_t firstNonFiniteOnThreads(DType dtype, const void *data, int64_t n,
                                unsigned threads) {
  constexpr int64_t kMinPart = int64_t(16) << 20;
  if (!threads)
    threads = std::max(1u, std::thread::hardware_concurrency());
  int64_t parts = std::min<int64_t>(threads, n / kMinPart);
  if (parts < 2)
    return firstNonFinite(dtype, data, n);
  size_t elementBytes = dtypeSize(dtype);
  int64_t partSize = (n + parts - 1) / parts;
  std::vector<int64_t> first(parts, -1);
  auto scanPart = [&](int64_t part) {
    int64_t start = part * partSize, count = std::min(partSize, n - start);
    int64_t k = firstNonFinite(
        dtype, static_cast<const uint8_t *>(data) + start * elementBytes,
        count);
    first[part] = k < 0 ? -1 : start + k;
  };
  std::vector<std::thread> helpers;
  for (int64_t part = 1; part < parts; ++part)
    helpers.emplace_back(scanPart, part);
  scanPart(0);
  for (std::thread &helper : helpers)
    helper.join();
  for (int64_t k : first)
    if (k >= 0)
      return k;
  return -1;
}

} // namespace dat
