//===- Weights.h - where a model's parameters come from ---------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_FRONTEND_WEIGHTS_H
#define DAT_FRONTEND_WEIGHTS_H

#include "dat/Support/SafeTensors.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace dat {

/// The parameters of a model, by their reference state_dict names: a
/// safetensors file (where tied tensors may be stored under any of their
/// aliases), or seeded random values.
class WeightSource {
public:
  static llvm::Expected<std::unique_ptr<WeightSource>>
  open(llvm::StringRef path);
  static std::unique_ptr<WeightSource> random(uint64_t seed);

  /// Checks that `name` exists (directly or through a tied alias) as float32
  /// with `shape`, and records it as used. Errors name the file and key.
  llvm::Error require(llvm::StringRef name, llvm::ArrayRef<int64_t> shape);
  bool has(llvm::StringRef name) const;
  /// Declares `alias` to be the same tensor as `target` (the reference
  /// registers one module under two names, e.g. symmetric relations), so
  /// either key may be present in the file and neither is unexpected.
  void addAlias(llvm::StringRef alias, llvm::StringRef target);

  /// Keys of the file that no `require` used, directly or through an alias.
  std::vector<std::string> unusedKeys() const;

  /// Copies (or generates) the values of a required weight into `out`.
  void fill(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
            float *out) const;

  std::string describe() const;

private:
  WeightSource() = default;
  const TensorView *lookup(llvm::StringRef name) const;

  std::unique_ptr<SafeTensorsFile> file_;
  uint64_t seed_ = 0;
  /// name -> every name tied to it (including itself).
  std::map<std::string, std::vector<std::string>> tied_;
  std::set<std::string> used_;
};

} // namespace dat

#endif // DAT_FRONTEND_WEIGHTS_H
