//===- FiniteValuesTest.cpp - the scan for NaN and infinities ------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Support/FiniteValues.h"
#include "dat/Support/BFloat16.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <vector>

using namespace dat;

namespace {

/// The first non-finite element by std::isfinite on the widened values:
/// the independent answer firstNonFinite must give.
int64_t reference(DType dtype, const void *data, int64_t n) {
  std::vector<float> v = floatValues(dtype, data, n);
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i]))
      return i;
  return -1;
}

TEST(FirstNonFinite, F32AtEveryKindOfPosition) {
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::quiet_NaN()};
  // Block boundaries (1024), the last element, the first; one byte off
  // alignment too (safetensors does not align tensors).
  for (int64_t n : {1, 7, 1023, 1024, 1025, 5000})
    for (int64_t at : {int64_t(0), n / 2, n - 1, int64_t(1023), int64_t(1024)})
      for (float special : specials)
        for (size_t offset : {0, 1}) {
          if (at >= n)
            continue;
          std::vector<uint8_t> storage(offset + 4 * n);
          std::vector<float> values(n);
          for (int64_t i = 0; i < n; ++i)
            values[i] = std::numeric_limits<float>::max() *
                        (i % 3 == 0 ? 1.0f : -0.5f); // finite extremes
          values[at] = special;
          std::memcpy(storage.data() + offset, values.data(), 4 * n);
          const void *data = storage.data() + offset;
          EXPECT_EQ(firstNonFinite(DType::F32, data, n), at)
              << "n " << n << " at " << at;
          EXPECT_EQ(firstNonFinite(DType::F32, data, n),
                    reference(DType::F32, data, n));
        }
}

TEST(FirstNonFinite, F32FiniteAndFirstOfSeveral) {
  std::vector<float> v(3000, 1.5f);
  v[10] = std::numeric_limits<float>::denorm_min();
  v[11] = -0.0f;
  EXPECT_EQ(firstNonFinite(DType::F32, v.data(), v.size()), -1);
  v[2500] = std::numeric_limits<float>::infinity();
  v[1500] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(firstNonFinite(DType::F32, v.data(), v.size()), 1500);
  EXPECT_EQ(firstNonFinite(DType::F32, v.data(), 0), -1);
}

TEST(FirstNonFinite, BF16) {
  std::vector<uint16_t> v(2100, floatToBF16(-3.25f));
  v[7] = floatToBF16(std::numeric_limits<float>::max()); // rounds to inf
  EXPECT_EQ(firstNonFinite(DType::BF16, v.data(), v.size()), 7);
  EXPECT_EQ(reference(DType::BF16, v.data(), v.size()), 7);
  v[7] = 0x7f7f; // the largest finite bf16
  EXPECT_EQ(firstNonFinite(DType::BF16, v.data(), v.size()), -1);
  v[2099] = 0xffc1; // a NaN
  EXPECT_EQ(firstNonFinite(DType::BF16, v.data(), v.size()), 2099);
}

TEST(FirstNonFinite, OnThreadsTheFirstOfTheParts) {
  // 48 Mi floats (192 MB), parts of at least 16 Mi: one part on one
  // thread, two on two, three on three.
  std::vector<float> v(int64_t(48) << 20, 0.5f);
  int64_t n = v.size();
  for (unsigned threads : {1u, 2u, 3u}) {
    EXPECT_EQ(firstNonFiniteOnThreads(DType::F32, v.data(), n, threads), -1);
    v[n - 1] = std::numeric_limits<float>::infinity(); // in the last part
    EXPECT_EQ(firstNonFiniteOnThreads(DType::F32, v.data(), n, threads), n - 1);
    v[5] = std::numeric_limits<float>::quiet_NaN(); // the first part's wins
    EXPECT_EQ(firstNonFiniteOnThreads(DType::F32, v.data(), n, threads), 5);
    v[5] = v[n - 1] = 0.5f;
  }
  // Small inputs stay on the calling thread, and agree.
  std::vector<float> small(100, 1.0f);
  small[42] = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(firstNonFiniteOnThreads(DType::F32, small.data(), 100), 42);
}

TEST(FirstNonFinite, OtherDTypesHaveNone) {
  std::vector<uint32_t> v(8, 0x7f800000u);
  EXPECT_EQ(firstNonFinite(DType::I64, v.data(), 4), -1);
}

} // namespace
