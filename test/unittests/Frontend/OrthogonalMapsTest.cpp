//===- OrthogonalMapsTest.cpp - tests of APE's maps tables ----------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Frontend/OrthogonalMaps.h"

#include "gtest/gtest.h"

#include <algorithm>
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

/// Q·R(p·θ)·Qᵀ from a rotary form, row-major.
static std::vector<double> rotaryPower(const RotaryForm &form, int64_t d,
                                       int64_t p) {
  std::vector<double> out(d * d, 0.0);
  for (int64_t m = 0; m < d / 2; ++m) {
    double c = std::cos(p * form.angles[m]), s = std::sin(p * form.angles[m]);
    for (int64_t i = 0; i < d; ++i) {
      double ui = form.basis[i * d + 2 * m], vi = form.basis[i * d + 2 * m + 1];
      for (int64_t j = 0; j < d; ++j) {
        double uj = form.basis[j * d + 2 * m],
               vj = form.basis[j * d + 2 * m + 1];
        // [u v]·[[c, −s], [s, c]]·[u v]ᵀ
        out[i * d + j] += c * (ui * uj + vi * vj) + s * (vi * uj - ui * vj);
      }
    }
  }
  return out;
}

/// The powers table (the reference's doubling) against the rotary form.
static void expectPowersMatch(const float *p, int64_t d, int64_t size) {
  std::optional<RotaryForm> form = rotaryForm(p, d);
  ASSERT_TRUE(form.has_value());
  ASSERT_EQ(int64_t(form->angles.size()), d / 2);
  std::vector<float> table((size + 1) * d * d);
  orthogonalPowerTable(p, 1, d, size, table.data());
  for (int64_t k = 0; k <= size; ++k) {
    std::vector<double> w = rotaryPower(*form, d, k);
    for (int64_t i = 0; i < d * d; ++i)
      ASSERT_NEAR(table[k * d * d + i], w[i], 2e-6)
          << "power " << k << ", entry " << i;
  }
}

TEST(RotaryForm, GenericGenerator) {
  const int64_t d = 8;
  float p[d * d];
  for (int64_t i = 0; i < d * d; ++i)
    p[i] = 0.2 * std::sin(3.1 * i + 0.4);
  expectPowersMatch(p, d, 20);
}

TEST(RotaryForm, WideGenerator) {
  const int64_t d = 64;
  std::vector<float> p(d * d);
  for (int64_t i = 0; i < d * d; ++i)
    p[i] = 0.1 * std::sin(1.3 * i * i + 0.1 * i);
  expectPowersMatch(p.data(), d, 9);
}

TEST(RotaryForm, IdentityMap) {
  // P symmetric: A = 0, W = I, every angle 0 (the kernel pairs up).
  const int64_t d = 6;
  float p[d * d];
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j)
      p[i * d + j] = 0.5f * (i + j);
  std::optional<RotaryForm> form = rotaryForm(p, d);
  ASSERT_TRUE(form.has_value());
  for (double theta : form->angles)
    EXPECT_NEAR(theta, 0.0, 1e-12);
  expectPowersMatch(p, d, 5);
}

TEST(RotaryForm, RepeatedAnglesAndAZeroPlane) {
  // APE's rope-like start: one frequency for two blocks (a 4-dimensional
  // eigenspace of AᵀA), a third frequency, and a plane W leaves fixed;
  // then the blocks mixed by a fixed orthogonal change of basis.
  const int64_t d = 8;
  double a[d * d] = {};
  const double theta[4] = {0.7, 0.7, 0.05, 0.0};
  for (int64_t m = 0; m < 4; ++m) {
    a[(2 * m) * d + 2 * m + 1] = -theta[m];
    a[(2 * m + 1) * d + 2 * m] = theta[m];
  }
  // Householder H = I − 2vvᵀ/‖v‖²; the primitive is H·(A/2)·Hᵀ so that
  // P − Pᵀ = H·A·Hᵀ.
  double v[d], vv = 0;
  for (int64_t i = 0; i < d; ++i) {
    v[i] = std::cos(1.0 + 2.0 * i);
    vv += v[i] * v[i];
  }
  double h[d * d];
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j)
      h[i * d + j] = (i == j) - 2 * v[i] * v[j] / vv;
  float p[d * d];
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) {
      double x = 0;
      for (int64_t k = 0; k < d; ++k)
        for (int64_t l = 0; l < d; ++l)
          x += h[i * d + k] * a[k * d + l] * h[j * d + l];
      p[i * d + j] = float(x / 2);
    }
  std::optional<RotaryForm> form = rotaryForm(p, d);
  ASSERT_TRUE(form.has_value());
  std::vector<double> angles;
  for (double t : form->angles)
    angles.push_back(std::fabs(t));
  std::sort(angles.begin(), angles.end());
  EXPECT_NEAR(angles[0], 0.0, 1e-6);
  EXPECT_NEAR(angles[1], 0.05, 1e-6);
  EXPECT_NEAR(angles[2], 0.7, 1e-6);
  EXPECT_NEAR(angles[3], 0.7, 1e-6);
  expectPowersMatch(p, d, 12);
}

TEST(RotaryForm, RefusesWhatItCannotRepresent) {
  float odd[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_FALSE(rotaryForm(odd, 3).has_value());
  float nan[4] = {0, std::nanf(""), 0, 0};
  EXPECT_FALSE(rotaryForm(nan, 2).has_value());
  std::vector<float> wide((maxRotaryDim + 2) * (maxRotaryDim + 2), 0.0f);
  EXPECT_FALSE(rotaryForm(wide.data(), maxRotaryDim + 2).has_value());
}

} // namespace
