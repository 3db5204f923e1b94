//===- Stages.h - what datc is doing, and how long it took ------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// `--verbose` names each stage as it starts, `--timing` prints every
// stage's time at the end, and a stage that runs past a few seconds is
// announced anyway (a large model's compile takes a minute).
//
//===----------------------------------------------------------------------===//

#ifndef DAT_LIB_DRIVER_STAGES_H
#define DAT_LIB_DRIVER_STAGES_H

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dat {

class Stages {
public:
  Stages(bool verbose, bool timing, std::string what)
      : verbose(verbose), timing(timing), what(std::move(what)),
        watcher([this] { watch(); }) {}
  ~Stages() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
      finishCurrent(Clock::now());
    }
    wake.notify_all();
    watcher.join();
    if (!timing)
      return;
    double total = 0;
    for (const auto &[name, seconds] : times)
      total += seconds;
    llvm::errs() << "datc: stage times for " << what << ":\n";
    for (const auto &[name, seconds] : times)
      llvm::errs() << llvm::format("  %-28s %8.3f s\n", name.c_str(), seconds);
    llvm::errs() << llvm::format("  %-28s %8.3f s\n", "total", total);
    for (const auto &[name, seconds] : concurrent)
      llvm::errs() << llvm::format("  %-28s %8.3f s (alongside the above)\n",
                                   name.c_str(), seconds);
  }

  /// Ends the current stage and starts `name`.
  void start(std::string name) {
    std::lock_guard<std::mutex> lock(mutex);
    auto now = Clock::now();
    finishCurrent(now);
    current = std::move(name);
    since = now;
    announced = false;
    if (verbose) {
      llvm::errs() << "datc: " << current << "\n";
      announced = true;
    }
  }

  /// Records work that ran on another thread, overlapping the stages (not
  /// part of their total).
  void addConcurrent(std::string name, double seconds) {
    std::lock_guard<std::mutex> lock(mutex);
    concurrent.push_back({std::move(name), seconds});
  }

private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kQuiet{5};

  void finishCurrent(Clock::time_point now) {
    if (!current.empty())
      times.push_back(
          {current, std::chrono::duration<double>(now - since).count()});
    current.clear();
  }

  /// Announces a stage still running after kQuiet.
  void watch() {
    std::unique_lock<std::mutex> lock(mutex);
    while (!done) {
      wake.wait_for(lock, std::chrono::milliseconds(250));
      if (!done && !current.empty() && !announced &&
          Clock::now() - since > kQuiet) {
        llvm::errs() << "datc: " << what << ": " << current << " ...\n";
        announced = true;
      }
    }
  }

  bool verbose, timing;
  std::string what;
  std::mutex mutex;
  std::condition_variable wake;
  bool done = false, announced = false;
  std::string current;
  Clock::time_point since;
  std::vector<std::pair<std::string, double>> times, concurrent;
  std::thread watcher; // last: starts once the rest is initialized
};

} // namespace dat

#endif // DAT_LIB_DRIVER_STAGES_H
