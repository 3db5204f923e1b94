//===- ProgramMain.cpp - main() of every program datc builds --------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Loads the weights (mapped from the sidecar file) and the inputs named in
// the manifest, calls the compiled model, and writes the outputs; or, for a
// language model, decodes tokens greedily (--generate). Plain C++: a program
// needs only the C/C++ runtime libraries.
//
//===----------------------------------------------------------------------===//

#include "MemoryStats.h"
#include "Profile.h"
#include "Program.h"
#include "ProgramMemory.h"

#include "dat/Runtime/ProgramABI.h"
#include "dat/Support/BFloat16.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

extern "C" const char dat_manifest[];
extern "C" void dat_entry(void **argv);

using namespace datrt;

namespace {

void usage() {
  std::printf(
      "usage: %s --input IO.safetensors [--output RESULT.safetensors]\n"
      "          [--weights FILE] [--repeat N] [--top K]\n"
      "          [--generate N [--full]] [--allow-nonfinite] [--threads N]\n"
      "          [--allow-extra-inputs] [--json] [--profile]\n\n"
      "Reads tensors named input.<name>, writes output.<name>. Without\n"
      "--output, prints each output's shape and a checksum. --repeat N runs\n"
      "the model N times and reports the time per run and the peak memory\n"
      "the model allocated (--json: as one JSON object). --profile times one\n"
      "call per op group (CPU) or kernel (GPU), slowest first. --top K also\n"
      "prints\n"
      "the K largest entries of each output's last axis, for every batch row\n"
      "at the last position (the top classes, or the likeliest next tokens).\n"
      "The weights default to the file next to the program\n"
      "(<program>%s).\n"
      "Language models: --generate N decodes N tokens greedily after the\n"
      "prompt input.idx [B, T0] with a KV cache; --full does the same with a\n"
      "full forward pass per token (for checking; needs T0 + N - 1 <= T).\n"
      "Float inputs with NaN or infinite values are refused unless\n"
      "--allow-nonfinite is given; input.* tensors the program does not\n"
      "read are refused unless --allow-extra-inputs is given.\n"
      "CPU programs run their tiles on OpenMP threads: --threads N (or\n"
      "OMP_NUM_THREADS) sets how many, default all cores; results do not\n"
      "depend on it.\n",
      gProgram, DAT_WEIGHTS_SUFFIX);
  // What this program was compiled for (its manifest).
  dat::json::Value manifest;
  std::string error;
  if (!dat::json::parse(dat_manifest, manifest, error))
    return;
  Call forward(manifest, dat_entry);
  std::printf(forward.isDynamic()
                  ? "\nThis program reads (named dimensions take any size up "
                    "to theirs, the same in every tensor that has them):\n"
                  : "\nThis program reads (its shapes are fixed):\n");
  for (const Slot &s : forward.args)
    if (s.kind == Slot::Input) {
      std::printf("  input.%s: %s %s", s.name.c_str(), dat::dtypeName(s.dtype),
                  dimsString(s).c_str());
      if (s.hasRange)
        std::printf(", values %lld to %lld", static_cast<long long>(s.lo),
                    static_cast<long long>(s.hi));
      std::printf("\n");
    }
  std::printf("and writes:\n");
  for (const Slot &s : forward.results)
    std::printf("  output.%s: %s %s\n", s.name.c_str(), dat::dtypeName(s.dtype),
                dimsString(s).c_str());
  if (manifest.get("step"))
    std::printf("It has a decode step: --generate N.\n");
}

/// The profile of one call: slowest first, with each entry's share of the
/// call and, where its bytes are known, the rate they moved at.
void printProfile(std::vector<ProfileEntry> entries, double totalMs) {
  std::sort(
      entries.begin(), entries.end(),
      [](const ProfileEntry &a, const ProfileEntry &b) { return a.ms > b.ms; });
  double covered = 0;
  for (const ProfileEntry &e : entries)
    covered += e.ms;
  std::printf("profile of one call: %.3f ms, %.1f%% of it in the %zu entries "
              "below\n",
              totalMs, totalMs > 0 ? 100 * covered / totalMs : 0.0,
              entries.size());
  std::printf("%10s %6s %12s %9s %5s  %s\n", "ms", "%", "bytes", "GB/s", "runs",
              "op group / kernel");
  for (const ProfileEntry &e : entries) {
    std::string bytes = e.bytes >= 0 ? std::to_string(e.bytes) : "-";
    char rate[32] = "-";
    if (e.bytes >= 0 && e.ms > 0)
      std::snprintf(rate, sizeof(rate), "%.3g",
                    static_cast<double>(e.bytes) / (e.ms * 1e6));
    std::printf("%10.3f %6.1f %12s %9s %5ld  %s\n", e.ms,
                totalMs > 0 ? 100 * e.ms / totalMs : 0.0, bytes.c_str(), rate,
                e.count, e.name.c_str());
  }
}

/// Refuses input.* tensors of `file` that no argument of `call` reads: a
/// misspelt or undeclared input would otherwise be ignored without a word.
void checkNoExtraInputs(const Call &call, const dat::SafeTensorsFile &file) {
  std::vector<std::string> expected;
  for (const Slot &s : call.args)
    if (s.kind == Slot::Input)
      expected.push_back("input." + s.name);
  for (const dat::TensorView &t : file.tensors()) {
    if (t.name.rfind("input.", 0) != 0 ||
        std::find(expected.begin(), expected.end(), t.name) != expected.end())
      continue;
    std::string list;
    for (const std::string &e : expected)
      list += (list.empty() ? "" : ", ") + e;
    fail(file.path() + ": tensor '" + t.name +
         "' is not an input of this program (it reads " +
         (list.empty() ? std::string("none") : list) +
         "; --allow-extra-inputs ignores the others)");
  }
}

long countArg(const std::string &option, const std::string &v, long max) {
  char *end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || n < 1 || n > max)
    fail(option + " expects a count from 1 to " + std::to_string(max) +
         ", got '" + v + "'");
  return n;
}

/// The `k` largest entries of the last axis at [b, ..., last, :] for every
/// batch row b, largest first.
void printTop(const dat::TensorToWrite &t, const std::vector<float> &values,
              long k) {
  int64_t batch = t.shape.front(), width = t.shape.back(), perBatch = 1;
  for (size_t i = 1; i < t.shape.size(); ++i)
    perBatch *= t.shape[i];
  k = std::min<long>(k, width);
  for (int64_t b = 0; b < batch; ++b) {
    const float *row = values.data() + (b + 1) * perBatch - width;
    std::vector<int64_t> order(width);
    for (int64_t i = 0; i < width; ++i)
      order[i] = i;
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int64_t x, int64_t y) {
                        return row[x] > row[y] || (row[x] == row[y] && x < y);
                      });
    std::printf("  top-%ld [%lld]:", k, static_cast<long long>(b));
    for (long i = 0; i < k; ++i)
      std::printf(" %lld (%.4g)", static_cast<long long>(order[i]),
                  row[order[i]]);
    std::printf("\n");
  }
}

} // namespace

static int programMain(int argc, char **argv) {
  // OpenMP workers (CPU programs) spin for 1 ms after a parallel region,
  // then sleep: a call is a few dozen short regions back to back, and
  // waking sleeping workers for each cost whole models a third of their
  // time (tiny DAT LM 11.4 → 8.9 ms, ViT 3.5 → 1.9 ms), while libomp's
  // default of 200 ms would starve whatever else runs on the cores after
  // a call (other programs, the test runner). KMP_BLOCKTIME in the
  // environment wins.
  ::setenv("KMP_BLOCKTIME", "1", /*overwrite=*/0);
  std::string inputPath, outputPath, weightsPath;
  long repeat = 0, generateCount = 0, top = 0;
  bool full = false, allowNonFinite = false, allowExtraInputs = false,
       json = false, profile = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        fail("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--input")
      inputPath = value();
    else if (a == "--output")
      outputPath = value();
    else if (a == "--weights")
      weightsPath = value();
    else if (a == "--repeat")
      repeat = countArg(a, value(), 1000000);
    else if (a == "--top")
      top = countArg(a, value(), 1000);
    else if (a == "--generate")
      generateCount = countArg(a, value(), 1000000);
    else if (a == "--full")
      full = true;
    else if (a == "--threads")
      // Read by the OpenMP runtime when the first parallel region starts.
      ::setenv("OMP_NUM_THREADS",
               std::to_string(countArg(a, value(), 1024)).c_str(), 1);
    else if (a == "--allow-nonfinite")
      allowNonFinite = true;
    else if (a == "--allow-extra-inputs")
      allowExtraInputs = true;
    else if (a == "--json")
      json = true;
    else if (a == "--profile")
      profile = true;
    else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else
      fail("unknown argument '" + a + "' (see --help)");
  }
  if (full && !generateCount)
    fail("--full only applies to --generate");
  if (generateCount && (repeat || !outputPath.empty()))
    fail("--generate prints tokens; it does not take --repeat or --output");

  dat::json::Value manifest;
  std::string error;
  if (!dat::json::parse(dat_manifest, manifest, error))
    fail("corrupt manifest: " + error);
  Call forward(manifest, dat_entry);

  std::unique_ptr<dat::SafeTensorsFile> weights, inputs;
  bool needWeights = false, needInputs = false;
  for (const Slot &s : forward.args)
    (s.kind == Slot::Weight ? needWeights : needInputs) = true;
  if (needWeights) {
    if (weightsPath.empty())
      weightsPath = std::string(argv[0]) + DAT_WEIGHTS_SUFFIX;
    weights = dat::SafeTensorsFile::open(weightsPath, error);
    if (!weights)
      fail(error);
  }
  if (needInputs || generateCount) {
    if (inputPath.empty())
      fail("--input is required (the model reads input tensors)");
    inputs = dat::SafeTensorsFile::open(inputPath, error);
    if (!inputs)
      fail(error);
  }
  if (json && !repeat)
    fail("--json reports the timings of --repeat N");
  if (inputs && !allowExtraInputs && !generateCount)
    checkNoExtraInputs(forward, *inputs);
  if (generateCount)
    return generate(manifest, *weights, *inputs, generateCount, full);

  if (forward.isDynamic()) {
    // The dynamic dimensions' sizes: the input tensors'.
    std::vector<std::vector<int64_t>> shapes(forward.args.size());
    for (size_t i = 0; i < forward.args.size(); ++i)
      if (forward.args[i].kind == Slot::Input)
        if (const dat::TensorView *t =
                inputs->find("input." + forward.args[i].name))
          shapes[i] = t->shape;
    forward.shapeInputs(shapes, [&](size_t i) {
      return inputPath + ": tensor 'input." + forward.args[i].name + "'";
    });
  }
  for (size_t i = 0; i < forward.args.size(); ++i)
    forward.bindChecked(
        i, forward.args[i].kind == Slot::Weight ? *weights : *inputs,
        forward.args[i].kind == Slot::Weight ? forward.args[i].name
                                             : "input." + forward.args[i].name,
        allowNonFinite);
  forward.run();
  if (profile) {
    // One more call, recorded: the first warmed up what is lazily set up.
    forward.freeResults();
    profileStart();
    auto start = std::chrono::steady_clock::now();
    forward.run();
    std::vector<ProfileEntry> entries = profileStop();
    double total = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count();
    printProfile(entries, total);
  }
  if (repeat > 0) {
    auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < repeat; ++i) {
      forward.freeResults();
      forward.run();
    }
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    const MemoryStats &m = memoryStats();
    if (json) {
      // One object on its own line, for scripts (bench/run.py).
      std::printf("{\"runs\": %ld, \"ms_per_run\": %.6f, "
                  "\"peak_bytes\": %zu, \"argument_bytes\": %zu}\n",
                  repeat, ms / repeat, m.peak.load(), m.arguments);
    } else {
      std::printf("ran %ld times: %.4f ms per run\n", repeat, ms / repeat);
      std::printf("peak memory: %zu bytes allocated by the model",
                  m.peak.load());
      // Only a GPU program copies its arguments anywhere.
      if (argumentsOnDevice())
        std::printf(", %zu bytes of arguments copied to the device",
                    m.arguments);
      std::printf("\n");
    }
  }

  std::vector<std::vector<uint8_t>> buffers;
  std::vector<dat::TensorToWrite> out;
  for (size_t r = 0; r < forward.results.size(); ++r) {
    const Slot &s = forward.results[r];
    buffers.emplace_back(s.numElements() * dat::dtypeSize(s.dtype));
    forward.copyResult(r, buffers.back().data());
    out.push_back(
        {"output." + s.name, s.dtype, s.shape, buffers.back().data()});
  }
  forward.freeResults(); // copied out: the model's buffers are all returned

  if (!outputPath.empty()) {
    if (!dat::writeSafeTensors(outputPath, out, {}, error))
      fail(error);
    return 0;
  }
  for (const dat::TensorToWrite &t : out) {
    double sum = 0, absSum = 0;
    int64_t n = 1;
    for (int64_t dim : t.shape)
      n *= dim;
    std::vector<float> values = dat::floatValues(t.dtype, t.data, n);
    for (float v : values) {
      sum += v;
      absSum += std::fabs(v);
    }
    std::printf("%s: %s %s sum=%.6g abs-sum=%.6g\n", t.name.c_str(),
                dat::dtypeName(t.dtype), shapeString(t.shape).c_str(), sum,
                absSum);
    if (top && !values.empty() && t.shape.size() >= 2)
      printTop(t, values, top);
  }
  return 0;
}

int main(int argc, char **argv) {
  gProgram = argv[0];
  try {
    int status = programMain(argc, argv);
    // The blocks kept for reuse go back, so that a leak checker
    // (compute-sanitizer --leak-check full) sees every buffer freed.
    releaseCachedBuffers();
    return status;
  } catch (const Failure &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", gProgram, e.what());
    return 1;
  }
}
