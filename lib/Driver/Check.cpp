//===- Check.cpp - datc check ---------------------------------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Compiles a golden case, runs the program on the case's inputs (as a
// separate process: the real binary is what is checked), and compares every
// output with |got − want| ≤ atol + rtol·|want| (bf16: see bf16Tolerance).
//
//===----------------------------------------------------------------------===//

#include "dat/Driver/Driver.h"
#include "dat/Frontend/Config.h"
#include "dat/Support/BFloat16.h"
#include "dat/Support/SafeTensors.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cmath>

using namespace llvm;

namespace dat {

namespace {
struct Comparison {
  int64_t count = 0, bad = 0, worst = -1;
  double maxAbs = 0, worstRatio = 0;
  double errSq = 0, wantSq = 0; // for the relative RMS error
};
} // namespace

static Comparison compare(const float *got, const float *want, int64_t n,
                          double rtol, double atol) {
  Comparison c;
  c.count = n;
  for (int64_t i = 0; i < n; ++i) {
    double g = got[i], w = want[i];
    bool ok;
    double err = std::fabs(g - w);
    if (std::isnan(w) || std::isnan(g))
      ok = std::isnan(w) && std::isnan(g);
    else if (std::isinf(w) || std::isinf(g))
      ok = g == w;
    else
      ok = err <= atol + rtol * std::fabs(w);
    double ratio = ok ? err / (atol + rtol * std::fabs(w))
                      : std::numeric_limits<double>::infinity();
    if (!ok)
      ++c.bad;
    if (std::isfinite(err)) {
      c.maxAbs = std::max(c.maxAbs, err);
      c.errSq += err * err;
      c.wantSq += w * w;
    }
    if (c.worst < 0 || ratio > c.worstRatio) {
      c.worstRatio = ratio;
      c.worst = i;
    }
  }
  return c;
}

/// The bf16 tolerance (docs/precision.md): bf16 keeps 8 significant bits
/// (a relative rounding error up to 2^-9) and every stored activation is
/// rounded once more, so errors grow with depth and relative error means
/// little for outputs near zero. An element passes with
/// |got - want| <= 2^-4 * (|want| + rms(want)): 1/16 of its own size plus
/// 1/16 of the output's typical size; the case's own, tighter tolerance
/// is kept where it is looser.
static std::pair<double, double> bf16Tolerance(const std::vector<float> &want,
                                               double rtol, double atol) {
  double sumSq = 0;
  int64_t n = 0;
  for (float v : want)
    if (std::isfinite(v)) {
      sumSq += double(v) * v;
      ++n;
    }
  double rms = n ? std::sqrt(sumSq / n) : 0;
  constexpr double kBF16Tolerance = 1.0 / 16;
  return {std::max(rtol, kBF16Tolerance), std::max(atol, kBF16Tolerance * rms)};
}

/// Writes the input.* tensors of `ioPath` to `path`, float32 ones rounded
/// to bf16.
static Error writeBF16Inputs(StringRef ioPath, const std::string &path) {
  std::string error;
  auto io = SafeTensorsFile::open(ioPath.str(), error);
  if (!io)
    return createStringError("%s", error.c_str());
  std::vector<std::vector<uint16_t>> rounded;
  std::vector<TensorToWrite> tensors;
  for (const TensorView &t : io->tensors()) {
    if (!StringRef(t.name).starts_with("input."))
      continue;
    if (t.dtype != DType::F32) {
      tensors.push_back({t.name, t.dtype, t.shape, t.data});
      continue;
    }
    std::vector<float> v = floatValues(t.dtype, t.data, t.numElements());
    rounded.emplace_back(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      rounded.back()[i] = floatToBF16(v[i]);
    tensors.push_back({t.name, DType::BF16, t.shape, rounded.back().data()});
  }
  if (!writeSafeTensors(path, tensors, {}, error))
    return createStringError("%s", error.c_str());
  return Error::success();
}

Expected<bool> checkCase(StringRef caseDir, const CompileOptions &base,
                         raw_ostream &os) {
  SmallString<256> configPath(caseDir), modelPath(caseDir), ioPath(caseDir);
  sys::path::append(configPath, "config.json");
  sys::path::append(modelPath, "model.safetensors");
  sys::path::append(ioPath, "io.safetensors");
  Expected<ModelConfig> config = loadModelConfig(configPath);
  if (!config)
    return config.takeError();
  std::string caseName =
      config->name.empty() ? sys::path::filename(caseDir).str() : config->name;

  SmallString<128> dir;
  if (std::error_code ec = sys::fs::createUniqueDirectory("datc-check", dir))
    return createStringError("cannot create a temporary folder: %s",
                             ec.message().c_str());
  llvm::scope_exit cleanup([&] { sys::fs::remove_directories(dir); });
  std::string program = (dir + "/program").str();
  std::string result = (dir + "/result.safetensors").str();

  Expected<bool> bf16 = storesBF16(base.pipeline);
  if (!bf16)
    return bf16.takeError();
  CompileOptions options = base;
  options.configPath = configPath.str().str();
  options.weightsPath = modelPath.str().str();
  options.outputPath = program;
  if (Error e = compileModel(options))
    return std::move(e);

  std::string error;
  // A bf16 program reads bf16 inputs: the golden ones, rounded.
  std::string inputPath = ioPath.str().str();
  if (*bf16) {
    inputPath = (dir + "/input.safetensors").str();
    if (Error e = writeBF16Inputs(ioPath, inputPath))
      return std::move(e);
  }
  SmallVector<StringRef> args = {program, "--input", inputPath, "--output",
                                 result};
  std::string message;
  int rc = sys::ExecuteAndWait(program, args, std::nullopt, {}, 0, 0, &message);
  if (rc != 0) {
    os << "the compiled program failed (exit " << rc << ")"
       << (message.empty() ? "" : ": ") << message << "\nFAIL " << caseName
       << "\n";
    return false;
  }

  auto want = SafeTensorsFile::open(ioPath.str().str(), error);
  if (!want)
    return createStringError("%s", error.c_str());
  auto got = SafeTensorsFile::open(result, error);
  if (!got)
    return createStringError("%s", error.c_str());

  bool pass = true;
  for (const TensorSpec &spec : config->outputs) {
    std::string key = "output." + spec.name;
    const TensorView *w = want->find(key), *g = got->find(key);
    if (!w) {
      os << "  " << spec.name << ": " << ioPath << " has no tensor '" << key
         << "'\n";
      pass = false;
      continue;
    }
    DType expected = *bf16 ? DType::BF16 : DType::F32;
    if (!g || g->shape != w->shape || g->dtype != expected ||
        w->dtype != DType::F32) {
      os << "  " << spec.name << ": the program's output does not have the "
         << "expected " << dtypeName(expected) << " shape\n";
      pass = false;
      continue;
    }
    std::vector<float> gv = floatValues(g->dtype, g->data, g->numElements());
    std::vector<float> wv = floatValues(w->dtype, w->data, w->numElements());
    auto [rtol, atol] = *bf16 ? bf16Tolerance(wv, config->rtol, config->atol)
                              : std::pair(config->rtol, config->atol);
    Comparison c = compare(gv.data(), wv.data(), wv.size(), rtol, atol);
    os << "  " << spec.name << ": " << c.bad << " of " << c.count
       << " outside tolerance (rtol " << format("%g", rtol) << ", atol "
       << format("%g", atol) << "); max abs error " << format("%.3g", c.maxAbs)
       << ", relative RMS error "
       << format("%.3g", c.wantSq > 0 ? std::sqrt(c.errSq / c.wantSq) : 0.0);
    if (c.worst >= 0) {
      os << "; worst at flat index " << c.worst << ": got "
         << format("%.8g", gv[c.worst]) << ", want "
         << format("%.8g", wv[c.worst]);
      if (std::isfinite(c.worstRatio))
        os << " (" << format("%.2f", c.worstRatio) << " of its allowance)";
    }
    os << "\n";
    pass = pass && c.bad == 0;
  }
  os << (pass ? "PASS " : "FAIL ") << caseName << "\n";
  return pass;
}

} // namespace dat
