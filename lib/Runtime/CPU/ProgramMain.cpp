//===- ProgramMain.cpp - main() of every program datc builds --------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Loads the weights (mapped from the sidecar file) and the inputs named in
// the manifest, calls the compiled model, and writes the outputs. Plain C++:
// a program needs only the C/C++ runtime libraries.
//
//===----------------------------------------------------------------------===//

#include "dat/Runtime/ProgramABI.h"
#include "dat/Support/SafeTensors.h"
#include "dat/Support/TinyJson.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" const char dat_manifest[];
extern "C" void dat_entry(void **argv);

namespace {

const char *gProgram = "program";

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "%s: error: %s\n", gProgram, message.c_str());
  std::exit(1);
}

struct Slot {
  std::string name;
  bool isWeight = false;
  dat::DType dtype = dat::DType::F32;
  std::vector<int64_t> shape;
  bool hasRange = false;
  int64_t lo = 0, hi = 0;
};

std::vector<Slot> readSlots(const dat::json::Value &list, bool args) {
  std::vector<Slot> slots;
  for (const dat::json::Value &v : list.array) {
    Slot s;
    s.name = v.get("name")->string;
    if (args)
      s.isWeight = v.get("kind")->string == "weight";
    if (const dat::json::Value *r = v.get("range")) {
      s.hasRange = true;
      s.lo = r->array[0].integer;
      s.hi = r->array[1].integer;
    }
    dat::parseDType(v.get("dtype")->string, s.dtype);
    for (const dat::json::Value &d : v.get("shape")->array)
      s.shape.push_back(d.integer);
    slots.push_back(std::move(s));
  }
  return slots;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// A rank-r descriptor (3 + 2r words) of a contiguous row-major buffer.
std::vector<int64_t> descriptor(const void *data,
                                const std::vector<int64_t> &shape) {
  size_t r = shape.size();
  std::vector<int64_t> d(3 + 2 * r);
  d[0] = d[1] = reinterpret_cast<int64_t>(data);
  d[2] = 0;
  int64_t stride = 1;
  for (size_t i = r; i-- > 0;) {
    d[3 + i] = shape[i];
    d[3 + r + i] = stride;
    stride *= shape[i];
  }
  return d;
}

void usage() {
  std::printf(
      "usage: %s --input IO.safetensors [--output RESULT.safetensors]\n"
      "          [--weights FILE] [--repeat N]\n\n"
      "Reads tensors named input.<name>, writes output.<name>. Without\n"
      "--output, prints each output's shape and a checksum. --repeat N runs\n"
      "the model N times and reports the time per run. The weights default\n"
      "to the file next to the program (<program>%s).\n",
      gProgram, DAT_WEIGHTS_SUFFIX);
}

} // namespace

int main(int argc, char **argv) {
  gProgram = argv[0];
  std::string inputPath, outputPath, weightsPath;
  long repeat = 0;
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
    else if (a == "--repeat") {
      std::string v = value();
      char *end = nullptr;
      repeat = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || repeat < 1 || repeat > 1000000)
        fail("--repeat expects a count from 1 to 1000000, got '" + v + "'");
    } else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else
      fail("unknown argument '" + a + "' (see --help)");
  }

  dat::json::Value manifest;
  std::string error;
  if (!dat::json::parse(dat_manifest, manifest, error))
    fail("corrupt manifest: " + error);
  std::vector<Slot> args = readSlots(*manifest.get("args"), true);
  std::vector<Slot> results = readSlots(*manifest.get("results"), false);

  std::unique_ptr<dat::SafeTensorsFile> weights, inputs;
  bool needWeights = false, needInputs = false;
  for (const Slot &s : args)
    (s.isWeight ? needWeights : needInputs) = true;
  if (needWeights) {
    if (weightsPath.empty())
      weightsPath = std::string(argv[0]) + DAT_WEIGHTS_SUFFIX;
    weights = dat::SafeTensorsFile::open(weightsPath, error);
    if (!weights)
      fail(error);
  }
  if (needInputs) {
    if (inputPath.empty())
      fail("--input is required (the model reads input tensors)");
    inputs = dat::SafeTensorsFile::open(inputPath, error);
    if (!inputs)
      fail(error);
  }

  std::vector<std::vector<int64_t>> descriptors;
  for (const Slot &s : args) {
    dat::SafeTensorsFile &file = s.isWeight ? *weights : *inputs;
    std::string key = s.isWeight ? s.name : "input." + s.name;
    const dat::TensorView *t = file.find(key);
    if (!t)
      fail(file.path() + ": missing tensor '" + key + "' (" +
           dat::dtypeName(s.dtype) + " " + shapeString(s.shape) + ")");
    if (t->dtype != s.dtype || t->shape != s.shape)
      fail(file.path() + ": tensor '" + key + "' is " +
           dat::dtypeName(t->dtype) + " " + shapeString(t->shape) +
           ", the model was compiled for " + dat::dtypeName(s.dtype) + " " +
           shapeString(s.shape));
    if (reinterpret_cast<uintptr_t>(t->data) % dat::dtypeSize(s.dtype) != 0)
      fail(file.path() + ": tensor '" + key + "' is not aligned");
    if (s.hasRange && s.dtype == dat::DType::I64) {
      // Integer inputs index tables: one out of range would read outside
      // them, so it is an error here, not undefined behaviour later.
      const int64_t *v = reinterpret_cast<const int64_t *>(t->data);
      for (int64_t i = 0, n = t->numElements(); i < n; ++i)
        if (v[i] < s.lo || v[i] > s.hi)
          fail(file.path() + ": tensor '" + key + "' element " +
               std::to_string(i) + " is " + std::to_string(v[i]) +
               ", outside the accepted range [" + std::to_string(s.lo) + ", " +
               std::to_string(s.hi) + "]");
    }
    descriptors.push_back(descriptor(t->data, t->shape));
  }

  size_t resultWords = 0;
  for (const Slot &s : results)
    resultWords += 3 + 2 * s.shape.size();
  std::vector<int64_t> resultDescs(resultWords);
  std::vector<void *> call;
  if (!results.empty())
    call.push_back(resultDescs.data());
  for (std::vector<int64_t> &d : descriptors)
    call.push_back(d.data());

  auto runOnce = [&] { dat_entry(call.data()); };
  runOnce();
  if (repeat > 0) {
    auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < repeat; ++i)
      runOnce();
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    std::printf("ran %ld times: %.4f ms per run\n", repeat, ms / repeat);
  }

  // Results: copy each (possibly strided) memref into a contiguous buffer.
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<dat::TensorToWrite> out;
  size_t word = 0;
  for (const Slot &s : results) {
    size_t r = s.shape.size();
    const int64_t *d = &resultDescs[word];
    word += 3 + 2 * r;
    size_t elt = dat::dtypeSize(s.dtype);
    int64_t n = 1;
    for (int64_t dim : s.shape)
      n *= dim;
    std::vector<uint8_t> buf(n * elt);
    const uint8_t *base = reinterpret_cast<const uint8_t *>(d[1]) + d[2] * elt;
    std::vector<int64_t> idx(r, 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = 0;
      for (size_t k = 0; k < r; ++k)
        off += idx[k] * d[3 + r + k];
      std::memcpy(&buf[i * elt], base + off * elt, elt);
      for (size_t k = r; k-- > 0;)
        if (++idx[k] < s.shape[k])
          break;
        else
          idx[k] = 0;
    }
    buffers.push_back(std::move(buf));
    out.push_back(
        {"output." + s.name, s.dtype, s.shape, buffers.back().data()});
  }

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
    if (t.dtype == dat::DType::F32)
      for (int64_t i = 0; i < n; ++i) {
        float v = static_cast<const float *>(t.data)[i];
        sum += v;
        absSum += std::fabs(v);
      }
    std::printf("%s: %s %s sum=%.6g abs-sum=%.6g\n", t.name.c_str(),
                dat::dtypeName(t.dtype), shapeString(t.shape).c_str(), sum,
                absSum);
  }
  return 0;
}
