//===- Check.cpp - datc check ---------------------------------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Compiles a golden case, runs the program on the case's inputs (as a
// separate process: the real binary is what is checked), and compares every
// output with |got − want| ≤ atol + rtol·|want|.
//
//===----------------------------------------------------------------------===//

#include "dat/Driver/Driver.h"

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
    if (std::isfinite(err))
      c.maxAbs = std::max(c.maxAbs, err);
    if (c.worst < 0 || ratio > c.worstRatio) {
      c.worstRatio = ratio;
      c.worst = i;
    }
  }
  return c;
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

  CompileOptions options = base;
  options.configPath = configPath.str().str();
  options.weightsPath = modelPath.str().str();
  options.outputPath = program;
  if (Error e = compileModel(options))
    return std::move(e);

  SmallVector<StringRef> args = {program, "--input", ioPath, "--output",
                                 result};
  std::string message;
  int rc = sys::ExecuteAndWait(program, args, std::nullopt, {}, 0, 0, &message);
  if (rc != 0) {
    os << "the compiled program failed (exit " << rc << ")"
       << (message.empty() ? "" : ": ") << message << "\nFAIL " << caseName
       << "\n";
    return false;
  }

  std::string error;
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
    if (!g || g->shape != w->shape || g->dtype != DType::F32 ||
        w->dtype != DType::F32) {
      os << "  " << spec.name << ": the program's output does not have the "
         << "expected float32 shape\n";
      pass = false;
      continue;
    }
    Comparison c = compare(reinterpret_cast<const float *>(g->data),
                           reinterpret_cast<const float *>(w->data),
                           w->numElements(), config->rtol, config->atol);
    os << "  " << spec.name << ": " << c.bad << " of " << c.count
       << " outside tolerance (rtol " << format("%g", config->rtol) << ", atol "
       << format("%g", config->atol) << "); max abs error "
       << format("%.3g", c.maxAbs);
    if (c.worst >= 0) {
      float gv = reinterpret_cast<const float *>(g->data)[c.worst];
      float wv = reinterpret_cast<const float *>(w->data)[c.worst];
      os << "; worst at flat index " << c.worst << ": got "
         << format("%.8g", gv) << ", want " << format("%.8g", wv);
    }
    os << "\n";
    pass = pass && c.bad == 0;
  }
  os << (pass ? "PASS " : "FAIL ") << caseName << "\n";
  return pass;
}

} // namespace dat
