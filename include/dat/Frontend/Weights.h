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

#include <functional>
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
  /// Declares `alias` to be the same tensor as `target` (the reference
  /// registers one module under two names, e.g. symmetric relations), so
  /// either key may be present in the file and neither is unexpected.
  void addAlias(llvm::StringRef alias, llvm::StringRef target);

  /// A tensor computed at compile time from other weights (e.g. the powers of
  /// an orthogonal map): `compute` receives the dependencies' values, in
  /// order, and writes the result. Dependencies must have been `require`d.
  using Derivation =
      std::function<void(const std::vector<const float *> &, float *)>;
  void
  addDerived(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
             std::vector<std::pair<std::string, std::vector<int64_t>>> deps,
             Derivation compute);

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
  /// name -> every name tied to it (including itself); the names of one
  /// group share one list, so that a model's thousand aliases stay cheap.
  using TiedGroup = std::shared_ptr<std::vector<std::string>>;
  std::map<std::string, TiedGroup> tied_;
  std::set<std::string> used_;
  struct Derived {
    std::vector<std::pair<std::string, std::vector<int64_t>>> deps;
    Derivation compute;
  };
  std::map<std::string, Derived> derived_;
};

} // namespace dat

#endif // DAT_FRONTEND_WEIGHTS_H
