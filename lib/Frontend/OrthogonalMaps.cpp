//===- OrthogonalMaps.cpp - APE's orthogonal positional maps --------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Frontend/OrthogonalMaps.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

/// Eigenvalues of the symmetric d×d `s` by cyclic Jacobi rotations; the
/// eigenvectors are the columns of `vectors`.
static std::vector<double> symmetricEigen(Matrix s, int64_t d,
                                          Matrix &vectors) {
  vectors = identity(d);
  double previous = std::numeric_limits<double>::infinity();
  for (int sweep = 0; sweep < 32; ++sweep) {
    double off = 0, total = 0;
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j) {
        total += s[i * d + j] * s[i * d + j];
        if (i != j)
          off += s[i * d + j] * s[i * d + j];
      }
    // Converged to rounding, or rounding keeps it from shrinking further.
    if (off <= 1e-30 * total || !(off < 0.5 * previous))
      break;
    previous = off;
    double negligible = 1e-18 * std::sqrt(total);
    for (int64_t p = 0; p < d; ++p)
      for (int64_t q = p + 1; q < d; ++q) {
        double apq = s[p * d + q];
        if (std::fabs(apq) <= negligible)
          continue;
        // The rotation that zeroes s[p][q] (the smaller of the two angles).
        double theta = (s[q * d + q] - s[p * d + p]) / (2 * apq);
        double t = std::copysign(1.0, theta) /
                   (std::fabs(theta) + std::hypot(theta, 1.0));
        double c = 1 / std::sqrt(t * t + 1), sn = t * c;
        auto rotate = [&](double &x, double &y) {
          double a = x, b = y;
          x = c * a - sn * b;
          y = sn * a + c * b;
        };
        for (int64_t k = 0; k < d; ++k)
          rotate(s[k * d + p], s[k * d + q]);
        for (int64_t k = 0; k < d; ++k)
          rotate(s[p * d + k], s[q * d + k]);
        for (int64_t k = 0; k < d; ++k)
          rotate(vectors[k * d + p], vectors[k * d + q]);
      }
  }
  std::vector<double> values(d);
  for (int64_t i = 0; i < d; ++i)
    values[i] = s[i * d + i];
  return values;
}

/// An orthonormal basis (the columns of the d×d `basis`) in which the
/// skew-symmetric d×d `a` is block-diagonal, pair m being [[0, −θ_m],
/// [θ_m, 0]] in columns 2m, 2m+1; false when the construction breaks down.
///
/// AᵀA = −A² is symmetric with eigenvalues θ², each twice: an eigenvector u
/// and Au/θ span a plane A rotates by θ. Squaring halves the precision of
/// small angles, so planes with θ² below 10⁻⁴ of the largest are found again
/// in their own, rescaled, subspace.
static bool skewNormalForm(const Matrix &a, int64_t d, Matrix &basis,
                           std::vector<double> &angles) {
  double scale = 0;
  for (double x : a)
    scale = std::max(scale, std::fabs(x));
  angles.assign(d / 2, 0.0);
  if (scale == 0) {
    basis = identity(d);
    return true;
  }
  Matrix minusA2 = multiply(a, a, d), vectors;
  for (double &v : minusA2)
    v = -v;
  std::vector<double> lambda = symmetricEigen(minusA2, d, vectors);
  std::vector<int64_t> order(d);
  for (int64_t i = 0; i < d; ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return lambda[x] > lambda[y]; });
  double small = 1e-4 * lambda[order[0]];

  std::vector<std::vector<double>> chosen;
  // Removes the chosen directions from v (twice, for orthogonality to
  // rounding); true, with v normalized, if more than `least` of it is left.
  auto orthonormalize = [&](std::vector<double> &v, double least = 0.5) {
    for (int pass = 0; pass < 2; ++pass)
      for (const std::vector<double> &c : chosen) {
        double dot = 0;
        for (int64_t i = 0; i < d; ++i)
          dot += c[i] * v[i];
        for (int64_t i = 0; i < d; ++i)
          v[i] -= dot * c[i];
      }
    double norm = 0;
    for (double x : v)
      norm += x * x;
    norm = std::sqrt(norm);
    if (!(norm > least))
      return false;
    for (double &x : v)
      x /= norm;
    return true;
  };
  auto eigenvector = [&](int64_t i) {
    std::vector<double> v(d);
    for (int64_t r = 0; r < d; ++r)
      v[r] = vectors[r * d + order[i]];
    return v;
  };
  int64_t pairs = 0, next = 0;
  for (; next < d && lambda[order[next]] >= small; ++next) {
    std::vector<double> u = eigenvector(next);
    if (!orthonormalize(u))
      continue; // in a plane already chosen
    std::vector<double> v(d, 0.0);
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j)
        v[i] += a[i * d + j] * u[j];
    chosen.push_back(u);
    if (!orthonormalize(v, 0.5 * std::sqrt(lambda[order[next]])))
      return false; // ‖Au‖ = θ
    chosen.push_back(v);
    double theta = 0; // vᵀ·A·u
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j)
        theta += v[i] * a[i * d + j] * u[j];
    angles[pairs++] = theta;
  }
  // The rest: the small angles' subspace K, then A restricted to it.
  std::vector<std::vector<double>> rest;
  for (int64_t i = next; i < d && int64_t(chosen.size()) < d; ++i) {
    std::vector<double> k = eigenvector(i);
    if (orthonormalize(k)) {
      rest.push_back(k);
      chosen.push_back(k);
    }
  }
  int64_t k = rest.size();
  if (2 * pairs + k != d)
    return false;
  if (k > 0) {
    Matrix ak(k * k, 0.0), basisK;
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < k; ++c)
        for (int64_t i = 0; i < d; ++i)
          for (int64_t j = 0; j < d; ++j)
            ak[r * k + c] += rest[r][i] * a[i * d + j] * rest[c][j];
    std::vector<double> anglesK;
    if (!skewNormalForm(ak, k, basisK, anglesK))
      return false;
    chosen.resize(2 * pairs);
    for (int64_t c = 0; c < k; ++c) {
      std::vector<double> v(d, 0.0);
      for (int64_t r = 0; r < k; ++r)
        for (int64_t i = 0; i < d; ++i)
          v[i] += rest[r][i] * basisK[r * k + c];
      chosen.push_back(v);
    }
    std::copy(anglesK.begin(), anglesK.end(), angles.begin() + pairs);
  }
  basis.assign(d * d, 0.0);
  for (int64_t c = 0; c < d; ++c)
    for (int64_t i = 0; i < d; ++i)
      basis[i * d + c] = chosen[c][i];
  return true;
}

std::optional<RotaryForm> rotaryForm(const float *primitive, int64_t d,
                                     double tolerance) {
  if (d < 2 || d % 2 != 0 || d > maxRotaryDim)
    return std::nullopt;
  Matrix a(d * d);
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) {
      a[i * d + j] =
          double(primitive[i * d + j]) - double(primitive[j * d + i]);
      if (!std::isfinite(a[i * d + j]))
        return std::nullopt;
    }
  RotaryForm form;
  if (!skewNormalForm(a, d, form.basis, form.angles))
    return std::nullopt;

  // Accept the form only if Q is orthogonal and Q·R·Qᵀ reproduces W.
  Matrix rotations(d * d, 0.0);
  for (int64_t m = 0; m < d / 2; ++m) {
    double c = std::cos(form.angles[m]), sn = std::sin(form.angles[m]);
    rotations[(2 * m) * d + 2 * m] = c;
    rotations[(2 * m) * d + 2 * m + 1] = -sn;
    rotations[(2 * m + 1) * d + 2 * m] = sn;
    rotations[(2 * m + 1) * d + 2 * m + 1] = c;
  }
  Matrix qt(d * d);
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j)
      qt[i * d + j] = form.basis[j * d + i];
  Matrix w = skewExpm(primitive, d);
  Matrix rebuilt = multiply(multiply(form.basis, rotations, d), qt, d);
  Matrix gram = multiply(qt, form.basis, d), eye = identity(d);
  double error = 0;
  for (int64_t i = 0; i < d * d; ++i)
    error = std::max(
        {error, std::fabs(rebuilt[i] - w[i]), std::fabs(gram[i] - eye[i])});
  if (!(error <= tolerance))
    return std::nullopt;
  return form;
}

} // namespace dat
