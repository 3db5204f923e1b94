//===- Program.h - calling a compiled model from a program ------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The pieces of a program's main shared by a plain run and generation: the
// manifest's slots, memref descriptors, and one compiled function's call
// (arguments bound to buffers, results copied out contiguously).
//
//===----------------------------------------------------------------------===//

#ifndef DAT_RUNTIME_CPU_PROGRAM_H
#define DAT_RUNTIME_CPU_PROGRAM_H

#include "dat/Support/SafeTensors.h"
#include "dat/Support/TinyJson.h"

#include <string>
#include <vector>

namespace datrt {

extern const char *gProgram;
[[noreturn]] void fail(const std::string &message);

struct Slot {
  enum Kind { Input, Weight, Cache, Result } kind = Input;
  std::string name;
  dat::DType dtype = dat::DType::F32;
  std::vector<int64_t> shape;
  bool hasRange = false;
  int64_t lo = 0, hi = 0;
  /// A packed weight: dimension i of `shape` is dimension permutation[i] of
  /// the tensor in the weights file (empty: the same layout).
  std::vector<int64_t> permutation;
  int64_t numElements() const;
  /// The shape the weights file holds.
  std::vector<int64_t> fileShape() const;
};

std::string shapeString(const std::vector<int64_t> &shape);

/// One compiled function (`forward` or `step`) and its call array.
class Call {
public:
  Call(const dat::json::Value &section, void (*entry)(void **));
  std::vector<Slot> args, results;

  /// Binds argument `i` to a contiguous row-major buffer.
  void bind(size_t i, const void *data);
  /// Binds every weight argument from `weights` (checked against the slots).
  void bindWeights(const dat::SafeTensorsFile &weights);
  /// Binds argument `i` to tensor `key` of `file`, checking dtype, shape and
  /// (for integer inputs that index tables) the accepted range.
  void bindChecked(size_t i, const dat::SafeTensorsFile &file,
                   const std::string &key, bool allowNonFinite = false);
  void run();
  /// Copies result `r` of the last run into `out` (contiguous).
  void copyResult(size_t r, void *out) const;
  /// Result `r` of the last run as floats (F32 or BF16 results).
  std::vector<float> resultFloats(size_t r) const;
  /// Frees the results of the last run that the callee allocated (results
  /// never alias a bound argument's buffer in the functions freed this way).
  void freeResults();

private:
  void (*entry)(void **);
  std::vector<std::vector<int64_t>> argDescs;
  /// The packed copies of weights with a permutation, bound in their place.
  std::vector<std::vector<uint8_t>> packed;
  std::vector<int64_t> resultDescs;
  std::vector<size_t> resultOffsets;
};

/// `--generate N`: greedy decoding from the prompt input.idx, with the KV
/// cache (`step`) or, with `full`, by repeated forward passes.
int generate(const dat::json::Value &manifest,
             const dat::SafeTensorsFile &weights,
             const dat::SafeTensorsFile &inputs, long count, bool full);

} // namespace datrt

#endif // DAT_RUNTIME_CPU_PROGRAM_H
