//===- OrthogonalMaps.cpp - APE's orthogonal positional maps --------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Frontend/OrthogonalMaps.h"

#include <algorithm>
#include <cmath>

namespace dat {

using Matrix = std::vector<double>;

static Matrix multiply(const Matrix &a, const Matrix &b, int64_t d) {
  Matrix c(d * d, 0.0);
  for (int64_t i = 0; i < d; ++i)
    for (int64_t k = 0; k < d; ++k)
      for (int64_t j = 0; j < d; ++j)
        c[i * d + j] += a[i * d + k] * b[k * d + j];
  return c;
}

static Matrix identity(int64_t d) {
  Matrix m(d * d, 0.0);
  for (int64_t i = 0; i < d; ++i)
    m[i * d + i] = 1.0;
  return m;
}

Matrix skewExpm(const float *p, int64_t d) {
  Matrix a(d * d);
  double norm = 0;
  for (int64_t i = 0; i < d; ++i) {
    double row = 0;
    for (int64_t j = 0; j < d; ++j) {
      a[i * d + j] = double(p[i * d + j]) - double(p[j * d + i]);
      row += std::fabs(a[i * d + j]);
    }
    norm = std::max(norm, row);
  }
  // Scale so that ‖A/2^s‖ ≤ 1/2, sum the Taylor series, square back.
  int s = norm > 0.5 ? int(std::ceil(std::log2(norm / 0.5))) : 0;
  double f = std::ldexp(1.0, -s);
  for (double &v : a)
    v *= f;
  Matrix result = identity(d), term = identity(d);
  for (int k = 1; k <= 30; ++k) {
    term = multiply(term, a, d);
    double maxAbs = 0;
    for (double &v : term) {
      v /= k;
      maxAbs = std::max(maxAbs, std::fabs(v));
    }
    for (int64_t i = 0; i < d * d; ++i)
      result[i] += term[i];
    if (maxAbs < 1e-20)
      break;
  }
  for (int i = 0; i < s; ++i)
    result = multiply(result, result, d);
  return result;
}

void orthogonalPowerTable(const float *primitives, int64_t count, int64_t d,
                          int64_t size, float *out) {
  int64_t dd = d * d;
  for (int64_t n = 0; n < count; ++n) {
    Matrix w = skewExpm(primitives + n * dd, d);
    // [W]; each round appends list[i]·list.back() for every i (W^{m+1..2m}).
    std::vector<Matrix> powers = {w};
    while (int64_t(powers.size()) < size) {
      Matrix last = powers.back();
      size_t m = powers.size();
      for (size_t i = 0; i < m; ++i)
        powers.push_back(multiply(powers[i], last, d));
    }
    powers.resize(size);
    powers.insert(powers.begin(), identity(d));
    for (int64_t p = 0; p <= size; ++p)
      for (int64_t i = 0; i < dd; ++i)
        out[(p * count + n) * dd + i] = static_cast<float>(powers[p][i]);
  }
}

void treePathTable(const float *primitives, const float *identity,
                   int64_t branching, int64_t d, int64_t size, float *out) {
  int64_t dd = d * d;
  std::vector<Matrix> stepT;
  for (int64_t b = 0; b < branching; ++b) {
    Matrix w = skewExpm(primitives + b * dd, d), t(dd);
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j)
        t[i * d + j] = w[j * d + i];
    stepT.push_back(std::move(t));
  }
  // Parents precede children in breadth-first order: one pass, in double,
  // keeping every node (a child's map is its parent's times one step).
  std::vector<Matrix> maps;
  maps.reserve(size + 1);
  maps.emplace_back(identity, identity + dd);
  for (int64_t n = 1; n <= size; ++n)
    maps.push_back(
        multiply(maps[(n - 1) / branching], stepT[(n - 1) % branching], d));
  for (int64_t n = 0; n <= size; ++n)
    for (int64_t i = 0; i < dd; ++i)
      out[n * dd + i] = static_cast<float>(maps[n][i]);
}

} // namespace dat
