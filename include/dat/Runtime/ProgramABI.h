//===- ProgramABI.h - contract between datc and its programs ----*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// datc links every program from the compiled model (an object file) and the
// runtime's `main`. The object file defines:
//
//   extern "C" const char dat_manifest[];  // JSON, see below
//   extern "C" void dat_entry(void **argv);
//   extern "C" void dat_step(void **argv);  // language models only
//
// The manifest lists the model function's arguments and results in order:
//
//   {"args":    [{"name": "x", "kind": "input"|"weight", "dtype": "F32",
//                 "shape": [2, 16, 64],
//                 "dims": ["batch", "seq", ""]}, ...],  // dynamic_dims only
//    "results": [{"name": "y", "dtype": "F32", "shape": [...]}, ...],
//    "step":    {"args": [...], "results": [...]}}     // language models
//
// A tensor with dynamic dimensions (a config's dynamic_dims) names them in
// "dims" ("" for a static one); its "shape" holds their largest sizes, and
// its descriptors carry the sizes of the call.
//
// `dat_step` decodes one token: inputs `idx` [B, 1] and `position` [1],
// args of kind "cache" (zeroed before the first step) and the weights;
// results `logits` [B, 1, V] then every cache, updated, in the order of the
// cache args (results named "cache.<name>").
//
// `argv[0]` points to the results (the memref descriptors of every result,
// back to back) when there are results; the next entries point to one
// memref descriptor per argument. A descriptor of rank r is 3 + 2r 64-bit
// words: allocated pointer, aligned pointer, offset, sizes, strides.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_RUNTIME_PROGRAMABI_H
#define DAT_RUNTIME_PROGRAMABI_H

#define DAT_ENTRY_SYMBOL "dat_entry"
#define DAT_MANIFEST_SYMBOL "dat_manifest"
#define DAT_STEP_SYMBOL "dat_step"
/// The sidecar file next to a program holding its weights.
#define DAT_WEIGHTS_SUFFIX ".weights"
// CPU programs (dat-profile-points): calls around each op group, and the
// JSON array naming them; `prog --profile` reads both.
#define DAT_PROFILE_BEGIN_SYMBOL "dat_profile_begin"
#define DAT_PROFILE_END_SYMBOL "dat_profile_end"
#define DAT_PROFILE_POINTS_SYMBOL "dat_profile_points"

#include <cstdint>
#include <vector>

namespace dat {
/// The shape a weight argument of `shape` whose manifest entry has
/// `permutation` is transposed from (dat-pack-weights: argument dimension i
/// is dimension permutation[i] of it; empty: the same layout).
inline std::vector<int64_t>
weightFileShape(const std::vector<int64_t> &shape,
                const std::vector<int64_t> &permutation) {
  if (permutation.empty())
    return shape;
  std::vector<int64_t> file(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    file[permutation[i]] = shape[i];
  return file;
}

/// The shape the weights file holds for that argument: the one it is
/// transposed from, unless the manifest entry has a `reference_shape` (a
/// blocked layout: the file's tensor, reshaped row-major to the former).
inline std::vector<int64_t>
weightFileShape(const std::vector<int64_t> &shape,
                const std::vector<int64_t> &permutation,
                const std::vector<int64_t> &referenceShape) {
  return referenceShape.empty() ? weightFileShape(shape, permutation)
                                : referenceShape;
}
} // namespace dat

#endif // DAT_RUNTIME_PROGRAMABI_H
