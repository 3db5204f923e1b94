//===- OrthogonalMaps.h - APE's orthogonal positional maps ------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The maps depend on the weights only, so datc builds them once at compile
// time (in double precision) and the program loads the table.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_FRONTEND_ORTHOGONALMAPS_H
#define DAT_FRONTEND_ORTHOGONALMAPS_H

#include <cstdint>
#include <optional>
#include <vector>

namespace dat {

/// W = expm(P − Pᵀ) for a row-major d×d `primitive` (scaling and squaring
/// with a Taylor series; W is orthogonal).
std::vector<double> skewExpm(const float *primitive, int64_t d);

/// maps[p, n] = W_n^p for p = 0..size and each of the `count` primitives
/// (`primitives` is [count, d, d]); row-major [size+1, count, d, d] as
/// float32, with maps[0] = I. Powers by repeated doubling, as the reference
/// precomputes them.
void orthogonalPowerTable(const float *primitives, int64_t count, int64_t d,
                          int64_t size, float *out);

/// maps[n] for the nodes n = 0..size of a complete `branching`-ary tree
/// numbered breadth-first from 0 (APE's Branching, spec §9.2): with
/// P_b = expm(A_b − A_bᵀ) for the first `branching` primitives,
/// maps[0] = `identity` and maps[n] = maps[(n−1) / bf] · P_{(n−1) % bf}ᵀ,
/// i.e. P_{b_1}ᵀ ⋯ P_{b_t}ᵀ over the root-first path. Row-major
/// [size+1, d, d] float32.
void treePathTable(const float *primitives, const float *identity,
                   int64_t branching, int64_t d, int64_t size, float *out);

/// The real normal form of W = expm(P − Pᵀ): W = Q·R·Qᵀ with Q orthogonal
/// and R block-diagonal 2×2 rotations R(θ_m) = [[cos, −sin], [sin, cos]].
/// Then W^p = Q·R(p·θ)·Qᵀ, so ⟨W^i q, W^j k⟩ = ⟨R^i Qᵀq, R^j Qᵀk⟩: the maps
/// are RoPE with angles θ on the coordinates Qᵀq (architecture item 3).
struct RotaryForm {
  std::vector<double> basis;  // d×d row-major; column 2m, 2m+1 span pair m
  std::vector<double> angles; // θ_m, d/2 of them
};

/// The rotary form of a row-major d×d `primitive`, or nullopt when d is odd
/// or above `maxRotaryDim`, or the form reproduces W = skewExpm(primitive)
/// less accurately than `tolerance` (max abs; also for non-finite input).
inline constexpr int64_t maxRotaryDim = 256;
std::optional<RotaryForm> rotaryForm(const float *primitive, int64_t d,
                                     double tolerance = 1e-9);

} // namespace dat

#endif // DAT_FRONTEND_ORTHOGONALMAPS_H
