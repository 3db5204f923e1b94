//===- WeightsFile.cpp - the program's weights file -----------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "WeightsFile.h"
#include "dat/Support/BFloat16.h"
#include "dat/Support/SafeTensors.h"

#include "llvm/Support/FileSystem.h"

#include <chrono>
#include <cmath>

using namespace llvm;

namespace dat {

/// The weights file's contents into `writeTo`; messages name `path`.
static Error writeWeightsFile(const std::string &path, WeightSource &weights,
                              const std::vector<WeightSpec> &specs,
                              const std::string &writeTo) {
  std::vector<std::vector<float>> storage;
  std::vector<std::vector<uint16_t>> narrow; // bf16 copies
  std::vector<TensorToWrite> tensors;
  // Refuse absurd sizes before allocating anything.
  double total = 0;
  for (const WeightSpec &w : specs) {
    double n = 4;
    for (int64_t d : w.shape)
      n *= static_cast<double>(d);
    total += n;
  }
  if (total > static_cast<double>(int64_t(1) << 36))
    return createStringError(
        "%s: the model's weights would take %.3g GiB (limit 64 GiB): check "
        "the configuration's dimensions",
        path.c_str(), total / (1 << 30));
  for (const WeightSpec &w : specs) {
    int64_t n = 1;
    for (int64_t d : w.shape)
      n *= d;
    storage.emplace_back(n);
    weights.fill(w.name, w.shape, storage.back().data());
    // A NaN or infinity in a weight makes every output it reaches NaN:
    // refuse it here, naming the weight, rather than run a broken model.
    const std::vector<float> &v = storage.back();
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(v[i]))
        return createStringError(
            "%s: weight '%s' element %lld is %s (the model's weights must be "
            "finite)",
            weights.describe().c_str(), w.name.c_str(),
            static_cast<long long>(i), std::isnan(v[i]) ? "NaN" : "infinite");
    if (w.bf16) {
      narrow.emplace_back(n);
      for (int64_t i = 0; i < n; ++i)
        narrow.back()[i] = floatToBF16(v[i]);
      storage.back() = {};
      tensors.push_back({w.name, DType::BF16, w.shape, narrow.back().data()});
      continue;
    }
    tensors.push_back({w.name, DType::F32, w.shape, storage.back().data()});
  }
  std::string error;
  if (!writeSafeTensors(writeTo, tensors, {{"format", "dat-weights"}}, error))
    return createStringError("%s", error.c_str());
  return Error::success();
}

WeightsFileJob::WeightsFileJob(std::string path, WeightSource &weights,
                               std::vector<WeightSpec> specs)
    : path_(std::move(path)), tmp_(path_ + ".tmp"), specs_(std::move(specs)),
      thread_([this, &weights] {
        auto start = std::chrono::steady_clock::now();
        error_ = writeWeightsFile(path_, weights, specs_, tmp_);
        seconds_ = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
      }) {}

WeightsFileJob::~WeightsFileJob() {
  if (thread_.joinable())
    thread_.join();
  if (!finished_) {
    consumeError(std::move(error_));
    sys::fs::remove(tmp_);
  }
}

Error WeightsFileJob::finish() {
  thread_.join();
  finished_ = true;
  if (error_) {
    sys::fs::remove(tmp_);
    return std::move(error_);
  }
  if (std::error_code ec = sys::fs::rename(tmp_, path_)) {
    sys::fs::remove(tmp_);
    return createStringError("%s: cannot write: %s", path_.c_str(),
                             ec.message().c_str());
  }
  return Error::success();
}

} // namespace dat
