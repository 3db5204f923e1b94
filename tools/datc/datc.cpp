//===- datc.cpp - the dat compiler driver ---------------------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//   datc compile CONFIG.json (--weights MODEL.safetensors |
//                --random-weights SEED) [--target cpu|cuda]
//                [--emit mlir|llvm|ptx|exe] [--flash-tiles Q,K | --no-flash]
//                [--general-maps] [--emulate-gpu-tiles]
//                [--precision fp32|bf16] [--gemm generated|library] -o OUT
//   datc check CASE_DIR [--target cpu|cuda] [--flash-tiles Q,K | --no-flash]
//                [--general-maps] [--emulate-gpu-tiles]
//                [--precision fp32|bf16] [--gemm generated|library]
//
//===----------------------------------------------------------------------===//

#include "dat/Driver/Driver.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <string>

using namespace llvm;

static const char *kUsage =
    "usage:\n"
    "  datc compile CONFIG.json (--weights MODEL.safetensors |\n"
    "               --random-weights SEED) [--target cpu|cuda]\n"
    "               [--emit mlir|llvm|ptx|exe] [--precision fp32|bf16]\n"
    "               [--gemm generated|library] [ATTENTION] -o OUT\n"
    "  datc check CASE_DIR [--target cpu|cuda] [--precision fp32|bf16]\n"
    "               [--gemm generated|library] [ATTENTION]\n"
    "  --precision bf16   store inputs, weights, outputs and activations in\n"
    "                     bfloat16, compute in float32 (check: inputs rounded\n"
    "                     to bf16, bf16 tolerance; see docs/precision.md)\n"
    "  --gemm library     projections by the runtime's GEMM (cuBLAS on the\n"
    "                     GPU, tensor cores for bf16) instead of generated\n"
    "                     loops fused with their epilogues (the default)\n"
    "ATTENTION:\n"
    "  --flash-tiles Q,K  query rows and keys per flash-attention tile\n"
    "                     (default 64,64 on the CPU; on the GPU 64 keys and,\n"
    "                     per op, 64, 32 or 16 query rows: enough tiles for\n"
    "                     every SM)\n"
    "  --no-flash         lower attention through the N×N reference form "
    "(CPU)\n"
    "  --general-maps     apply APE's sequence and grid maps as d×d matrices "
    "(default: their exact rotary form, RoPE with learned angles)\n"
    "  --emulate-gpu-tiles run the GPU's mapping of the attention tiles "
    "(a block per tile, ops spread over threads) as loops on the CPU\n";

static int usageError(const Twine &message) {
  WithColor::error(errs(), "datc") << message << "\n" << kUsage;
  return 2;
}

static int report(Error e) {
  int rc = 0;
  handleAllErrors(std::move(e), [&](const ErrorInfoBase &info) {
    WithColor::error(errs(), "datc") << info.message() << "\n";
    rc = 1;
  });
  return rc;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  if (argc < 2)
    return usageError("missing command");
  StringRef command = argv[1];
  if (command == "--help" || command == "-h") {
    outs() << kUsage;
    return 0;
  }

  dat::CompileOptions options;
  std::string positional;
  for (int i = 2; i < argc; ++i) {
    StringRef a = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    // The option's value, if it is one of `allowed`.
    auto choice = [&](std::string &out,
                      std::initializer_list<StringRef> allowed) {
      return value(out) && llvm::is_contained(allowed, StringRef(out));
    };
    std::string v;
    if (a == "--weights") {
      if (!value(options.weightsPath))
        return usageError("--weights needs a file");
    } else if (a == "--random-weights") {
      if (!value(v))
        return usageError("--random-weights needs a seed");
      uint64_t seed;
      if (StringRef(v).getAsInteger(10, seed))
        return usageError("--random-weights: '" + v +
                          "' is not a non-negative integer");
      options.randomSeed = seed;
    } else if (a == "--target") {
      if (!choice(options.target, {"cpu", "cuda"}))
        return usageError("--target expects cpu or cuda");
    } else if (a == "--emit") {
      if (!choice(options.emit, {"mlir", "llvm", "ptx", "exe"}))
        return usageError("--emit expects mlir, llvm, ptx or exe");
    } else if (a == "--precision") {
      if (!choice(options.precision, {"fp32", "bf16"}))
        return usageError("--precision expects fp32 or bf16");
    } else if (a == "--gemm") {
      if (!choice(options.gemm, {"generated", "library"}))
        return usageError("--gemm expects generated or library");
    } else if (a == "--flash-tiles") {
      std::pair<StringRef, StringRef> qk =
          StringRef(value(v) ? v : "").split(',');
      int64_t q, k;
      if (qk.first.getAsInteger(10, q) || qk.second.getAsInteger(10, k) ||
          q < 1 || k < 1 || q > (1 << 20) || k > (1 << 20))
        return usageError("--flash-tiles expects Q,K: two positive integers "
                          "up to 1048576, got '" +
                          v + "'");
      options.queryTile = q;
      options.keyTile = k;
    } else if (a == "--no-flash") {
      options.flash = false;
    } else if (a == "--general-maps") {
      options.rotaryMaps = false;
    } else if (a == "--emulate-gpu-tiles") {
      options.emulateGPUTiles = true;
    } else if (a == "-o") {
      if (!value(options.outputPath))
        return usageError("-o needs a path");
    } else if (a.starts_with("-")) {
      return usageError("unknown option '" + a + "'");
    } else if (positional.empty()) {
      positional = a.str();
    } else {
      return usageError("unexpected argument '" + a + "'");
    }
  }

  if (command == "compile") {
    if (positional.empty())
      return usageError("compile needs a CONFIG.json");
    if (options.outputPath.empty())
      return usageError("compile needs -o OUT");
    if (options.weightsPath.empty() == !options.randomSeed)
      return usageError(
          "compile needs exactly one of --weights and --random-weights");
    options.configPath = positional;
    return report(dat::compileModel(options));
  }
  if (command == "check") {
    if (positional.empty())
      return usageError("check needs a CASE_DIR");
    if (!options.weightsPath.empty() || options.randomSeed ||
        !options.outputPath.empty() || options.emit != "exe")
      return usageError("check takes only CASE_DIR, --target, --precision, "
                        "--gemm and the attention options");
    Expected<bool> pass = dat::checkCase(positional, options, outs());
    if (!pass) {
      report(pass.takeError());
      outs() << "FAIL " << positional << "\n";
      return 1;
    }
    return *pass ? 0 : 1;
  }
  return usageError("unknown command '" + command + "'");
}
