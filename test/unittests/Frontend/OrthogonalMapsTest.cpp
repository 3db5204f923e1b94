//===- OrthogonalMapsTest.cpp - tests of APE's maps tables ----------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Frontend/OrthogonalMaps.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace dat;

namespace {

TEST(OrthogonalMaps, TwoByTwoIsARotation) {
  // P = [[0, t], [0, 0]]: A = P − Pᵀ = [[0, t], [−t, 0]] and
  // expm(A) = [[cos t, sin t], [−sin t, cos t]] in closed form.
  const float t = 2.7f;
  float p[4] = {0, t, 0, 0};
  std::vector<double> w = skewExpm(p, 2);
  EXPECT_NEAR(w[0], std::cos(double(t)), 1e-12);
  EXPECT_NEAR(w[1], std::sin(double(t)), 1e-12);
  EXPECT_NEAR(w[2], -std::sin(double(t)), 1e-12);
  EXPECT_NEAR(w[3], std::cos(double(t)), 1e-12);
}

TEST(OrthogonalMaps, PowersAreRotationsByMultiples) {
  const float t = 0.3f;
  float p[4] = {0, t, 0, 0};
  const int64_t size = 13; // not a power of two: the doubling truncates
  std::vector<float> table((size + 1) * 4);
  orthogonalPowerTable(p, 1, 2, size, table.data());
  for (int64_t k = 0; k <= size; ++k) {
    EXPECT_NEAR(table[k * 4 + 0], std::cos(k * double(t)), 1e-6)
        << "power " << k;
    EXPECT_NEAR(table[k * 4 + 1], std::sin(k * double(t)), 1e-6)
        << "power " << k;
  }
}

TEST(OrthogonalMaps, LargeGeneratorsStayOrthogonal) {
  // A 5×5 generator with a large norm exercises scaling and squaring.
  const int64_t d = 5;
  float p[d * d];
  for (int64_t i = 0; i < d * d; ++i)
    p[i] = std::sin(1.7 * i) * 4.0;
  std::vector<double> w = skewExpm(p, d);
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) {
      double dot = 0;
      for (int64_t k = 0; k < d; ++k)
        dot += w[k * d + i] * w[k * d + j];
      EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, 1e-10);
    }
}

} // namespace
