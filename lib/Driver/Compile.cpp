//===- Compile.cpp - datc compile -----------------------------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// config.json + weights → dat IR → CPU pipeline → LLVM IR → object file
// (in-process, through LLVM's target machine) → executable (linked by the
// system C++ compiler driver with the runtime's main), with the weights in a
// sidecar file. Outputs are written to temporaries and renamed into place.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/Transforms/Patterns.h"
#include "dat/Driver/Driver.h"
#include "dat/Pipelines/Pipelines.h"
#include "dat/Runtime/ProgramABI.h"
#include "dat/Support/BFloat16.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <cmath>
#include <cstdlib>
#include <set>

using namespace llvm;
using namespace mlir;

namespace dat {

/// The CUDA toolkit datc compiles GPU code with: $CUDA_HOME, else the
/// folder found at configure time.
static std::string cudaToolkit() {
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    return home;
  return DAT_CUDA_TOOLKIT;
}

void registerDriverDialects(DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
}

Expected<OwningOpRef<ModuleOp>>
buildModelModule(MLIRContext &ctx, const ModelConfig &config,
                 WeightSource &weights,
                 std::vector<SignatureEntry> &signature) {
  ModelBuilder builder(ctx, config, weights);
  buildModel(builder);
  auto module = builder.finish();
  if (module)
    signature = builder.signature();
  return module;
}

/// The language models also get a one-token decode step with caches
/// (`--generate` in the program): built from the same kwargs and weights,
/// with its functions renamed (step, step_*) and moved into `module`.
static bool hasDecodeStep(const ModelConfig &config) {
  // Softmax relations are normalized over every key, future ones included
  // (spec §3.3): token t's output depends on later tokens, so there is no
  // causal decode step to build.
  if (const json::Object *ra = config.kwargs.getObject("ra_kwargs"))
    if (ra->getString("rel_activation") == "softmax")
      return false;
  return (config.module == "TransformerLM" ||
          config.module == "DualAttnTransformerLM") &&
         config.findInput("idx") && config.wantsOutput("logits");
}

static Error addDecodeStep(MLIRContext &ctx, ModuleOp module,
                           const ModelConfig &config, WeightSource &weights,
                           std::vector<SignatureEntry> &signature) {
  ModelConfig step = config;
  step.decodeStep = true;
  int64_t batch = config.findInput("idx")->shape.at(0);
  step.inputs = {{"idx", {batch, 1}, "int64"}};
  std::vector<int64_t> logits;
  for (const TensorSpec &out : config.outputs)
    if (out.name == "logits")
      logits = out.shape;
  if (logits.size() != 3)
    return createStringError("%s: outputs.logits: expected [B, T, vocab]",
                             config.path.c_str());
  step.outputs = {{"logits", {batch, 1, logits[2]}, "float32"}};
  auto stepModule = buildModelModule(ctx, step, weights, signature);
  if (!stepModule)
    return stepModule.takeError();
  SymbolTable symbols(**stepModule);
  for (auto fn : llvm::make_early_inc_range(
           (*stepModule)->getBody()->getOps<func::FuncOp>())) {
    std::string name = fn.getSymName() == "forward"
                           ? "step"
                           : ("step_" + fn.getSymName()).str();
    if (failed(symbols.rename(fn, name)))
      return createStringError("internal error: cannot rename %s",
                               fn.getSymName().str().c_str());
  }
  for (auto fn : llvm::make_early_inc_range(
           (*stepModule)->getBody()->getOps<func::FuncOp>()))
    fn->moveBefore(module.getBody(), module.getBody()->end());
  return Error::success();
}

/// Writes `text` to `path` through a temporary renamed into place.
static Error writeAtomically(StringRef path,
                             llvm::function_ref<void(raw_ostream &)> write) {
  std::error_code ec;
  ToolOutputFile out(path, ec, sys::fs::OF_None);
  if (ec)
    return createStringError("%s: cannot write: %s", path.str().c_str(),
                             ec.message().c_str());
  write(out.os());
  out.os().flush();
  if (out.os().has_error())
    return createStringError("%s: write failed", path.str().c_str());
  out.keep();
  return Error::success();
}

/// Emits an object file for the host (x86-64-v2 or the host's own CPU when
/// DAT_CPU=native) at -O2.
static Error emitObject(llvm::Module &module, StringRef path) {
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  std::string tripleName = sys::getDefaultTargetTriple();
  Triple triple(tripleName);
  std::string error;
  const Target *target = TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return createStringError("no LLVM target for %s: %s", tripleName.c_str(),
                             error.c_str());
  const char *cpuEnv = std::getenv("DAT_CPU");
  std::string cpu = cpuEnv && StringRef(cpuEnv) == "native"
                        ? sys::getHostCPUName().str()
                        : (triple.isX86() ? "x86-64-v2" : "generic");
  TargetOptions opts;
  std::unique_ptr<TargetMachine> tm(
      target->createTargetMachine(triple, cpu, "", opts, Reloc::PIC_,
                                  std::nullopt, CodeGenOptLevel::Aggressive));
  module.setDataLayout(tm->createDataLayout());
  module.setTargetTriple(triple);

  // The MLIR output is unoptimized: run LLVM's O2 pipeline first.
  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cgam;
  ModuleAnalysisManager mam;
  PassBuilder pb(tm.get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(OptimizationLevel::O2).run(module, mam);

  std::error_code ec;
  ToolOutputFile out(path, ec, sys::fs::OF_None);
  if (ec)
    return createStringError("%s: cannot write: %s", path.str().c_str(),
                             ec.message().c_str());
  legacy::PassManager codegen;
  if (tm->addPassesToEmitFile(codegen, out.os(), nullptr,
                              CodeGenFileType::ObjectFile))
    return createStringError("LLVM cannot emit object files for %s",
                             tripleName.c_str());
  codegen.run(module);
  out.keep();
  return Error::success();
}

/// The folder of the runtime libraries: <datc dir>/../lib.
static std::string runtimeDir() {
  std::string exe = sys::fs::getMainExecutable(nullptr, (void *)&runtimeDir);
  SmallString<256> dir(sys::path::parent_path(sys::path::parent_path(exe)));
  sys::path::append(dir, "lib");
  return dir.str().str();
}

static Error linkProgram(StringRef object, StringRef output, bool cuda) {
  ErrorOr<std::string> cxx = sys::findProgramByName("c++");
  if (!cxx)
    cxx = sys::findProgramByName("g++");
  if (!cxx)
    cxx = sys::findProgramByName("clang++");
  if (!cxx)
    return createStringError("no C++ compiler driver (c++, g++ or clang++) "
                             "on PATH to link the program");
  std::string rt = runtimeDir();
  std::string runtimeName = cuda ? "DatRuntimeCUDA" : "DatRuntimeCPU";
  std::string main = rt + "/lib" + runtimeName + ".a",
              support = rt + "/libDatSupport.a";
  for (const std::string &lib : {main, support})
    if (!sys::fs::exists(lib))
      return createStringError("runtime library %s is missing (build the "
                               "%s target)",
                               lib.c_str(), runtimeName.c_str());
  SmallVector<StringRef> args = {*cxx, "-o",    output, object,
                                 main, support, "-lm"};
  // GPU programs load libcuda.so.1 themselves (dlopen), at run time.
  if (cuda)
    args.push_back("-ldl");
  // A sanitizer build's runtime library needs the sanitizer at link time.
  if (StringRef(DAT_PROGRAM_LINK_FLAGS).size())
    args.push_back(DAT_PROGRAM_LINK_FLAGS);
  std::string message;
  int rc = sys::ExecuteAndWait(*cxx, args, std::nullopt, {}, 0, 0, &message);
  if (rc != 0)
    return createStringError("linking %s failed (%s exited with %d)%s%s",
                             output.str().c_str(), cxx->c_str(), rc,
                             message.empty() ? "" : ": ", message.c_str());
  return Error::success();
}

static Error writeWeights(StringRef path, WeightSource &weights,
                          const std::vector<SignatureEntry> &signature) {
  std::vector<std::vector<float>> storage;
  std::vector<std::vector<uint16_t>> narrow; // bf16 copies
  std::vector<TensorToWrite> tensors;
  std::set<std::string> written; // forward and step share their weights
  // Refuse absurd sizes before allocating anything.
  double total = 0;
  for (const SignatureEntry &e : signature)
    if (e.kind == SignatureEntry::Weight) {
      double n = 4;
      for (int64_t d : e.shape)
        n *= static_cast<double>(d);
      total += n;
    }
  if (total > static_cast<double>(int64_t(1) << 36))
    return createStringError(
        "%s: the model's weights would take %.3g GiB (limit 64 GiB): check "
        "the configuration's dimensions",
        path.str().c_str(), total / (1 << 30));
  for (const SignatureEntry &e : signature) {
    if (e.kind != SignatureEntry::Weight || !written.insert(e.name).second)
      continue;
    int64_t n = 1;
    for (int64_t d : e.shape)
      n *= d;
    storage.emplace_back(n);
    weights.fill(e.name, e.shape, storage.back().data());
    // A NaN or infinity in a weight makes every output it reaches NaN:
    // refuse it here, naming the weight, rather than run a broken model.
    const std::vector<float> &v = storage.back();
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(v[i]))
        return createStringError(
            "%s: weight '%s' element %lld is %s (the model's weights must be "
            "finite)",
            weights.describe().c_str(), e.name.c_str(),
            static_cast<long long>(i), std::isnan(v[i]) ? "NaN" : "infinite");
    if (e.dtype == "bfloat16") {
      narrow.emplace_back(n);
      for (int64_t i = 0; i < n; ++i)
        narrow.back()[i] = floatToBF16(v[i]);
      storage.back() = {};
      tensors.push_back({e.name, DType::BF16, e.shape, narrow.back().data()});
      continue;
    }
    tensors.push_back({e.name, DType::F32, e.shape, storage.back().data()});
  }
  std::string error;
  if (!writeSafeTensors(path.str(), tensors, {{"format", "dat-weights"}},
                        error))
    return createStringError("%s", error.c_str());
  return Error::success();
}

Error compileModel(const CompileOptions &options) {
  Expected<ModelConfig> config = loadModelConfig(options.configPath);
  if (!config)
    return config.takeError();
  config->generalOrthogonalMaps = !options.rotaryMaps;
  std::unique_ptr<WeightSource> weights;
  if (options.randomSeed) {
    weights = WeightSource::random(*options.randomSeed);
  } else {
    auto opened = WeightSource::open(options.weightsPath);
    if (!opened)
      return opened.takeError();
    weights = std::move(*opened);
  }
  bool cuda = options.target == "cuda";
  std::string toolkit = cudaToolkit();
  if (cuda && !sys::fs::can_execute(toolkit + "/bin/ptxas"))
    return createStringError(
        "--target cuda needs the CUDA toolkit's ptxas, not found at %s/bin "
        "(set CUDA_HOME to the toolkit's folder)",
        toolkit.c_str());
  if (cuda && !options.flash)
    return createStringError("--no-flash: the GPU lowering always tiles "
                             "attention (the reference form is for the CPU)");
  if (options.emulateGPUTiles && (cuda || !options.flash))
    return createStringError("--emulate-gpu-tiles runs the GPU mapping of the "
                             "flash tiles on the CPU: it needs --target cpu "
                             "and the flash tiling");
  if (options.emit == "ptx" && !cuda)
    return createStringError("--emit ptx needs --target cuda");

  DialectRegistry registry;
  registerDriverDialects(registry);
  MLIRContext ctx(registry);
  std::vector<SignatureEntry> signature, stepSignature;
  auto module = buildModelModule(ctx, *config, *weights, signature);
  if (!module)
    return module.takeError();
  bool step = hasDecodeStep(*config);
  if (step)
    if (Error e =
            addDecodeStep(ctx, **module, *config, *weights, stepSignature))
      return e;

  if (options.precision == "bf16") {
    if (failed(mlir::dat::narrowFloatStorage(**module,
                                             mlir::BFloat16Type::get(&ctx))))
      return createStringError("%s: internal error: bf16 storage failed",
                               options.configPath.c_str());
    for (std::vector<SignatureEntry> *entries : {&signature, &stepSignature})
      for (SignatureEntry &e : *entries)
        if (e.dtype == "float32")
          e.dtype = "bfloat16";
  } else if (options.precision != "fp32") {
    return createStringError("--precision %s: expected fp32 or bf16",
                             options.precision.c_str());
  }
  if (options.gemm != "generated" && options.gemm != "library")
    return createStringError("--gemm %s: expected generated or library",
                             options.gemm.c_str());

  if (options.emit == "mlir")
    return writeAtomically(options.outputPath,
                           [&](raw_ostream &os) { (*module)->print(os); });

  mlir::PassManager pm(&ctx);
  // --flash-tiles overrides the pipeline's default tiles (0: not given).
  auto setTiles = [&](auto &pipeline) {
    if (options.queryTile)
      pipeline.queryTile = options.queryTile;
    if (options.keyTile)
      pipeline.keyTile = options.keyTile;
    pipeline.gemmLibrary = options.gemm == "library";
  };
  if (cuda) {
    mlir::dat::GPUPipelineOptions pipeline;
    pipeline.toolkit = toolkit;
    if (options.emit == "ptx")
      pipeline.format = "isa";
    setTiles(pipeline);
    mlir::dat::buildGPUPipeline(pm, pipeline);
  } else {
    mlir::dat::CPUPipelineOptions pipeline;
    pipeline.tileAttention = options.flash;
    pipeline.emulateGPUTiles = options.emulateGPUTiles;
    pipeline.trackMemory = true; // the program's runtime counts allocations
    setTiles(pipeline);
    mlir::dat::buildCPUPipeline(pm, pipeline);
  }
  std::string diagnostics;
  {
    raw_string_ostream diagOs(diagnostics);
    llvm::SourceMgr sourceMgr;
    SourceMgrDiagnosticHandler handler(sourceMgr, &ctx, diagOs);
    if (failed(pm.run(**module)))
      return createStringError("%s: internal error: lowering failed:\n%s",
                               options.configPath.c_str(), diagnostics.c_str());
  }
  if (options.emit == "ptx")
    return writeAtomically(options.outputPath, [&](raw_ostream &os) {
      (*module)->walk([&](mlir::gpu::BinaryOp binary) {
        for (mlir::Attribute a : binary.getObjects())
          os << "// kernel module " << binary.getName() << "\n"
             << cast<mlir::gpu::ObjectAttr>(a).getObject().getValue() << "\n";
      });
    });
  if (Error e =
          addProgramEntry(**module, signature, step ? &stepSignature : nullptr))
    return e;

  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(**module, llvmCtx, "dat_model");
  if (!llvmModule)
    return createStringError("internal error: translation to LLVM IR failed");
  if (options.emit == "llvm")
    return writeAtomically(options.outputPath, [&](raw_ostream &os) {
      llvmModule->print(os, nullptr);
    });
  if (options.emit != "exe")
    return createStringError("--emit %s: expected mlir, llvm or exe",
                             options.emit.c_str());

  SmallString<128> object;
  if (std::error_code ec =
          sys::fs::createTemporaryFile("dat-model", "o", object))
    return createStringError("cannot create a temporary file: %s",
                             ec.message().c_str());
  FileRemover removeObject(object);
  if (Error e = emitObject(*llvmModule, object))
    return e;

  std::string tmpExe = options.outputPath + ".tmp-link";
  FileRemover removeTmp(tmpExe);
  if (Error e = linkProgram(object, tmpExe, options.target == "cuda"))
    return e;
  std::string weightsPath = options.outputPath + DAT_WEIGHTS_SUFFIX;
  std::vector<SignatureEntry> all = signature;
  all.insert(all.end(), stepSignature.begin(), stepSignature.end());
  if (Error e = writeWeights(weightsPath, *weights, all))
    return e;
  if (std::error_code ec = sys::fs::rename(tmpExe, options.outputPath)) {
    sys::fs::remove(weightsPath);
    return createStringError("%s: cannot write: %s", options.outputPath.c_str(),
                             ec.message().c_str());
  }
  return Error::success();
}

} // namespace dat
