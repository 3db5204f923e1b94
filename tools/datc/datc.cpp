//===- datc.cpp - the dat compiler driver ---------------------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//   datc compile CONFIG.json (--weights MODEL.safetensors |
//                --random-weights SEED) [--emit
//                dat|llvm|llvm-ir|ptx|exe|library] [PIPELINE] [--cpu NAME]
//                [--general-maps] [--mlir-...] -o OUT
//   datc check CASE_DIR [PIPELINE] [--general-maps] [--mlir-...]
//
// PIPELINE options are the textual options of --dat-program-pipeline,
// which datc runs: --target, --precision, --gemm, --flash-tiles,
// --no-flash and --emulate-gpu-tiles name the common ones, and
// --pipeline "K=V ..." passes any (docs/pipeline-options.md). --mlir-...
// are the pass manager's options (--mlir-print-ir-after-all,
// --mlir-timing, ...).
//
//===----------------------------------------------------------------------===//

#include "dat/Driver/Driver.h"
#include "dat/InitAll.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
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
    "               --random-weights SEED) [--emit "
    "dat|llvm|llvm-ir|ptx|exe|library]\n"
    "               [PIPELINE] [--cpu NAME] [--general-maps] [--verbose]\n"
    "               [--timing] [--mlir-...] -o OUT\n"
    "  datc compile FOLDER [--module NAME] [--batch B] [--seq-len T]\n"
    "               [--dynamic] ...\n"
    "               a save_pretrained folder (config.json of constructor\n"
    "               kwargs, model.safetensors): the language and vision\n"
    "               models, class inferred from the kwargs or --module;\n"
    "               inputs idx [B, T] (T default max_block_size) or image\n"
    "               [B, C, H, W]; output logits. --dynamic: any batch up\n"
    "               to B (and length up to T) at run time. A folder whose\n"
    "               config.json names its module is a config with its\n"
    "               weights.\n"
    "  datc check CASE_DIR [PIPELINE] [--general-maps] [--verbose] [--timing]\n"
    "             [--mlir-...]: compile a case (config.json, "
    "model.safetensors,\n"
    "             io.safetensors with input.* and the expected output.*), run\n"
    "             it, compare within the config's tolerance; PASS or FAIL\n"
    "  datc COMMAND --help: this text\n"
    "  --emit dat         the frontend's module (dat dialect), before any "
    "pass\n"
    "                     (mlir: the same); llvm: the LLVM dialect module\n"
    "                     after --dat-program-pipeline; llvm-ir: that module\n"
    "                     as LLVM IR; ptx: the kernels (cuda); exe: the\n"
    "                     program and its weights file (the default);\n"
    "                     library: the program as a shared library with a\n"
    "                     C API (include/dat/Runtime/dat_program.h; what\n"
    "                     the Python package loads) and its weights file\n"
    "  --cpu NAME         the CPU the program is compiled for (LLVM's names;\n"
    "                     default this host's, with its features, e.g.\n"
    "                     AVX-512; x86-64-v2 runs anywhere; DAT_CPU also\n"
    "                     sets it)\n"
    "  --general-maps     apply APE's sequence and grid maps as d×d matrices "
    "(default: their exact rotary form, RoPE with learned angles)\n"
    "  --verbose, -v      name each stage as it starts (a stage past 5 s is\n"
    "                     named anyway)\n"
    "  --timing           each stage's time at the end, and the pipeline's\n"
    "                     pass timing\n"
    "  --mlir-...         the pass manager's options, e.g.\n"
    "                     --mlir-print-ir-after-all, --mlir-timing\n"
    "PIPELINE (options of --dat-program-pipeline, which datc runs):\n"
    "  --target cpu|cuda  target=\n"
    "  --precision fp32|bf16\n"
    "                     precision=: bf16 stores inputs, weights, outputs\n"
    "                     and activations in bfloat16, computes in float32\n"
    "                     (check: inputs rounded to bf16, bf16 tolerance;\n"
    "                     see docs/precision.md)\n"
    "  --gemm auto|generated|library\n"
    "                     gemm=: library computes projections with the\n"
    "                     runtime's GEMM (cuBLAS on the GPU) instead of\n"
    "                     generated loops fused with their epilogues;\n"
    "                     auto (default): library on the GPU, generated\n"
    "                     on the CPU\n"
    "  --flash-tiles Q,K  query-tile=Q key-tile=K: query rows and keys per\n"
    "                     flash-attention tile (default: 64 keys and, per\n"
    "                     op, 64, 32 or 16 query rows; on the CPU the tiles\n"
    "                     shared evenly among the host's threads, on the GPU\n"
    "                     enough tiles for every SM; relational\n"
    "                     attention at most 8·16/heads rows, and in bf16\n"
    "                     fewer keys where its block would not fit in\n"
    "                     shared memory)\n"
    "  --no-flash         tile-attention=false: the N×N reference form (CPU)\n"
    "  --emulate-gpu-tiles\n"
    "                     emulate-gpu-tiles=true: run the GPU's mapping of\n"
    "                     the attention tiles (a block per tile, ops spread\n"
    "                     over threads) as loops on the CPU\n"
    "  --pipeline \"K=V ...\"\n"
    "                     any of the pipeline's options, e.g. \"chip=sm_90a\n"
    "                     block-size=128\" (docs/pipeline-options.md)\n";

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
  // The pass manager's options, parsed by llvm::cl below.
  std::vector<const char *> mlirArgs = {argv[0]};
  auto pipelineOption = [&](StringRef text) {
    options.pipeline += (options.pipeline.empty() ? "" : " ") + text.str();
  };
  for (int i = 2; i < argc; ++i) {
    StringRef a = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
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
    } else if (a == "--emit") {
      if (!value(v))
        return usageError("--emit needs a stage");
      std::optional<dat::Emit> emit =
          StringSwitch<std::optional<dat::Emit>>(v)
              .Cases({"dat", "mlir"}, dat::Emit::Dat)
              .Case("llvm", dat::Emit::LLVM)
              .Case("llvm-ir", dat::Emit::LLVMIR)
              .Case("ptx", dat::Emit::PTX)
              .Case("exe", dat::Emit::Exe)
              .Case("library", dat::Emit::Library)
              .Default(std::nullopt);
      if (!emit)
        return usageError("--emit expects dat, llvm, llvm-ir, ptx, exe or "
                          "library, "
                          "got '" +
                          v + "'");
      options.emit = *emit;
    } else if (a == "--target" || a == "--precision" || a == "--gemm") {
      if (!value(v))
        return usageError(a + " needs a value");
      pipelineOption(a.drop_front(2).str() + "=" + v);
    } else if (a == "--flash-tiles") {
      std::pair<StringRef, StringRef> qk =
          StringRef(value(v) ? v : "").split(',');
      int64_t q, k;
      if (qk.first.getAsInteger(10, q) || qk.second.getAsInteger(10, k) ||
          q < 1 || k < 1 || q > (1 << 20) || k > (1 << 20))
        return usageError("--flash-tiles expects Q,K: two positive integers "
                          "up to 1048576, got '" +
                          v + "'");
      pipelineOption("query-tile=" + std::to_string(q) +
                     " key-tile=" + std::to_string(k));
    } else if (a == "--no-flash") {
      pipelineOption("tile-attention=false");
    } else if (a == "--emulate-gpu-tiles") {
      pipelineOption("emulate-gpu-tiles=true");
    } else if (a == "--pipeline") {
      if (!value(v))
        return usageError("--pipeline needs the pipeline's options, "
                          "\"K=V ...\"");
      pipelineOption(v);
    } else if (a == "--help" || a == "-h") {
      outs() << kUsage;
      return 0;
    } else if (a == "--verbose" || a == "-v") {
      options.verbose = true;
    } else if (a == "--timing") {
      options.timing = true;
    } else if (a == "--cpu") {
      if (!value(options.cpu))
        return usageError("--cpu needs a CPU name (e.g. x86-64-v2)");
    } else if (a == "--module") {
      if (!value(options.folder.module))
        return usageError("--module needs a reference class name");
    } else if (a == "--batch" || a == "--seq-len") {
      int64_t n;
      if (!value(v) || StringRef(v).getAsInteger(10, n) || n < 1 ||
          n > (int64_t(1) << 31))
        return usageError(a + " expects a positive integer, got '" + v + "'");
      (a == "--batch" ? options.folder.batch : options.folder.seqLen) = n;
    } else if (a == "--dynamic") {
      options.folder.dynamic = true;
    } else if (a == "--general-maps") {
      options.rotaryMaps = false;
    } else if (a.starts_with("--mlir-") || a.starts_with("-mlir-")) {
      mlirArgs.push_back(argv[i]);
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
  // Pass names for --mlir-print-ir-after=PASS and the like.
  mlir::registerAllPasses();
  mlir::dat::registerAllPasses();
  mlir::registerPassManagerCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  if (!cl::ParseCommandLineOptions(mlirArgs.size(), mlirArgs.data(), "datc",
                                   &errs()))
    return usageError("invalid --mlir- option");

  if (command == "compile") {
    if (positional.empty())
      return usageError("compile needs a CONFIG.json or a model folder");
    if (options.outputPath.empty())
      return usageError("compile needs -o OUT");
    bool folder = sys::fs::is_directory(positional);
    if (!options.weightsPath.empty() && options.randomSeed)
      return usageError("--weights and --random-weights exclude each other");
    if (!folder && options.weightsPath.empty() && !options.randomSeed)
      return usageError(
          "compile needs one of --weights and --random-weights (a model "
          "folder has its own, model.safetensors)");
    options.configPath = positional;
    return report(dat::compileModel(options));
  }
  if (command == "check") {
    if (positional.empty())
      return usageError("check needs a CASE_DIR");
    if (!options.weightsPath.empty() || options.randomSeed ||
        !options.outputPath.empty() || options.emit != dat::Emit::Exe ||
        !options.folder.module.empty() || options.folder.batch ||
        options.folder.seqLen || options.folder.dynamic)
      return usageError("check takes only CASE_DIR, the pipeline's options, "
                        "--general-maps and --mlir- options");
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
