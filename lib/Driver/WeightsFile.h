//===- WeightsFile.h - the program's weights file --------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// datc writes the weights a program's manifest lists (from the checkpoint,
// derived from it, or seeded random) into the program's weights file. The
// file needs nothing of the code, so it is written on a thread of its own
// while LLVM compiles: for a large model (examples/m1-dat-lm.json, 343M
// parameters of random weights) it takes as long as code generation.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_LIB_DRIVER_WEIGHTSFILE_H
#define DAT_LIB_DRIVER_WEIGHTSFILE_H

#include "dat/Frontend/Weights.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace dat {

/// A weight the program reads: its reference name, shape, and whether the
/// program stores it as bf16.
struct WeightSpec {
  std::string name;
  std::vector<int64_t> shape;
  bool bf16;
};

/// Writes `specs` from `weights` into the safetensors file `path` on a
/// thread of its own, into a temporary file that `finish` moves to `path`;
/// a weight that is not finite is an error naming it and the element. Not
/// finished, the job is joined and its file removed when it is destroyed (the
/// compile failed). `weights` must not be used elsewhere until then.
class WeightsFileJob {
public:
  WeightsFileJob(std::string path, WeightSource &weights,
                 std::vector<WeightSpec> specs);
  ~WeightsFileJob();
  WeightsFileJob(const WeightsFileJob &) = delete;
  WeightsFileJob &operator=(const WeightsFileJob &) = delete;

  /// Waits for the file; its error, or the file moved into place.
  llvm::Error finish();
  /// How long the thread took.
  double seconds() const { return seconds_; }

private:
  std::string path_, tmp_;
  std::vector<WeightSpec> specs_;
  llvm::Error error_ = llvm::Error::success();
  double seconds_ = 0;
  bool finished_ = false;
  std::thread thread_; // last: starts once the rest is initialized
};

} // namespace dat

#endif // DAT_LIB_DRIVER_WEIGHTSFILE_H
