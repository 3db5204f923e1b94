//===- Compile.cpp - datc compile -----------------------------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// config.json + weights → the frontend's module (buildProgram) →
// --dat-program-pipeline → LLVM IR → object file (in-process, through LLVM's
// target machine) → executable (linked by the system C++ compiler driver
// with the runtime's main), with the weights, listed by the program's
// manifest, in a sidecar file. Outputs are written to temporaries and
// renamed into place. Nothing here changes the IR: that is the pipeline's.
//
//===----------------------------------------------------------------------===//

#include "Stages.h"
#include "WeightsFile.h"
#include "dat/Driver/Driver.h"
#include "dat/Frontend/Frontend.h"
#include "dat/Pipelines/Pipelines.h"
#include "dat/Runtime/ProgramABI.h"
#include "dat/Support/BFloat16.h"
#include "dat/Support/SafeTensors.h"
#include "dat/Target/LLVMIR/DatToLLVMIRTranslation.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>

using namespace llvm;
using namespace mlir;

namespace dat {

void registerDriverDialects(DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::dat::registerDatDialectTranslation(registry);
  mlir::dat::registerNVGPUToLLVMInterface(registry);
}

/// The program pipeline's options from their textual form, checked.
static Expected<std::unique_ptr<mlir::dat::ProgramPipelineOptions>>
parsePipelineOptions(StringRef text) {
  auto options = std::make_unique<mlir::dat::ProgramPipelineOptions>();
  std::string message;
  raw_string_ostream os(message);
  if (failed(options->parseFromString(text, os)))
    return createStringError("invalid --dat-program-pipeline options '%s'%s%s",
                             text.str().c_str(), message.empty() ? "" : ": ",
                             StringRef(message).trim().str().c_str());
  std::string error = mlir::dat::checkProgramPipelineOptions(*options);
  if (!error.empty())
    return createStringError("%s", error.c_str());
  return std::move(options);
}

Expected<bool> storesBF16(StringRef pipelineOptions) {
  auto options = parsePipelineOptions(pipelineOptions);
  if (!options)
    return options.takeError();
  return (*options)->precision == mlir::dat::Precision::BF16;
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

/// The CPU a program is compiled for, with its features: the host's (with
/// AVX-512 where it has it) unless --cpu (or DAT_CPU) names another, e.g.
/// x86-64-v2 for a portable program.
struct HostTarget {
  const Target *target;
  Triple triple;
  std::string cpu;
  std::string features;
};

static Expected<HostTarget> resolveCPU(StringRef cpuOption) {
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  std::string tripleName = sys::getDefaultTargetTriple();
  Triple triple(tripleName);
  std::string error;
  const Target *target = TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return createStringError("no LLVM target for %s: %s", tripleName.c_str(),
                             error.c_str());
  std::string cpu = cpuOption.str();
  if (cpu.empty())
    if (const char *env = std::getenv("DAT_CPU"))
      cpu = env;
  std::string features;
  if (cpu.empty() || cpu == "native" || cpu == "host") {
    cpu = sys::getHostCPUName().str();
    SubtargetFeatures host;
    for (const StringMapEntry<bool> &f : sys::getHostCPUFeatures())
      host.AddFeature(f.getKey(), f.getValue());
    features = host.getString();
  } else if (!std::unique_ptr<MCSubtargetInfo>(
                  target->createMCSubtargetInfo(triple, "", ""))
                  ->isCPUStringValid(cpu)) {
    return createStringError("--cpu %s: not a CPU LLVM knows for %s (e.g. "
                             "x86-64-v2, x86-64-v3, x86-64-v4, "
                             "sapphirerapids, znver4; default: this host's)",
                             cpu.c_str(), tripleName.c_str());
  }
  return HostTarget{target, triple, cpu, features};
}

/// f32 lanes of the CPU's vector registers, for the register tiles: 16 with
/// AVX-512, 8 with AVX2, else 4.
static int64_t vectorLanes(const HostTarget &host) {
  std::unique_ptr<MCSubtargetInfo> info(
      host.target->createMCSubtargetInfo(host.triple, host.cpu, host.features));
  if (info->checkFeatures("+avx512f"))
    return 16;
  if (info->checkFeatures("+avx2,+fma"))
    return 8;
  return 4;
}

/// Emits an object file for `host` at -O2.
static Error emitObject(llvm::Module &module, StringRef path,
                        const HostTarget &host) {
  const Target *target = host.target;
  const Triple &triple = host.triple;
  const std::string &cpu = host.cpu;
  const std::string &features = host.features;
  TargetOptions opts;
  std::unique_ptr<TargetMachine> tm(
      target->createTargetMachine(triple, cpu, features, opts, Reloc::PIC_,
                                  std::nullopt, CodeGenOptLevel::Aggressive));
  module.setDataLayout(tm->createDataLayout());
  module.setTargetTriple(triple);

  // The MLIR output is unoptimized: run LLVM's O2 pipeline first.
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
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
                             triple.str().c_str());
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

/// Links the program: an executable, or with `library` a shared library
/// exporting only the C API (include/dat/Runtime/dat_program.h), so that
/// several models load side by side in one process.
static Error linkProgram(StringRef object, StringRef output, bool cuda,
                         bool library) {
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
  SmallVector<StringRef> args = {*cxx, "-o", output, object};
  SmallString<128> versionScript;
  std::string versionFlag;
  std::optional<FileRemover> removeScript;
  if (library) {
    if (std::error_code ec =
            sys::fs::createTemporaryFile("dat-exports", "map", versionScript))
      return createStringError("cannot create a temporary file: %s",
                               ec.message().c_str());
    removeScript.emplace(versionScript);
    std::error_code ec;
    raw_fd_ostream os(versionScript, ec);
    os << "{ global: dat_program_*; local: *; };\n";
    if (ec || (os.close(), os.has_error()))
      return createStringError("cannot write %s", versionScript.c_str());
    versionFlag = ("-Wl,--version-script=" + versionScript).str();
    // The C API lives in the runtime archive: pull it in.
    args.append({"-shared", "-Wl,-u,dat_program_create", versionFlag});
  }
  args.append({main, support, "-lm"});
  // GPU programs load libcuda.so.1 themselves (dlopen), at run time; CPU
  // programs call OpenBLAS for the library GEMM (--gemm library) and run
  // their tiles on LLVM's OpenMP runtime (the MLIR OpenMP dialect's calls
  // are libomp's __kmpc_* entry points).
  if (cuda) {
    args.push_back("-ldl");
  } else {
    args.push_back("-lopenblas");
    args.push_back("-lomp");
  }
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

/// One weight of the program: its name, shape and storage type.
/// The weights the program's manifest (dat-program-manifest) lists, once
/// each (forward and step share theirs).
static Expected<std::vector<WeightSpec>> manifestWeights(ModuleOp module) {
  auto global = module.lookupSymbol<LLVM::GlobalOp>(DAT_MANIFEST_SYMBOL);
  auto text = global ? dyn_cast_or_null<StringAttr>(global.getValueOrNull())
                     : StringAttr();
  if (!text)
    return createStringError("internal error: the program has no manifest");
  Expected<json::Value> manifest =
      json::parse(text.getValue().rtrim(StringRef("\0", 1)));
  if (!manifest)
    return manifest.takeError();
  std::vector<WeightSpec> weights;
  std::set<std::string> seen;
  auto collect = [&](const json::Object *signature) {
    const json::Array *args = signature ? signature->getArray("args") : nullptr;
    for (const json::Value &arg : args ? *args : json::Array()) {
      const json::Object *o = arg.getAsObject();
      if (!o || o->getString("kind") != "weight")
        continue;
      auto ints = [&](StringRef key) {
        std::vector<int64_t> values;
        if (const json::Array *a = o->getArray(key))
          for (const json::Value &d : *a)
            values.push_back(d.getAsInteger().value_or(0));
        return values;
      };
      // A packed weight (dat-pack-weights) is stored in the reference layout.
      WeightSpec w{o->getString("name").value_or("").str(),
                   weightFileShape(ints("shape"), ints("permutation"),
                                   ints("reference_shape")),
                   o->getString("dtype") == "BF16"};
      if (seen.insert(w.name).second)
        weights.push_back(std::move(w));
    }
  };
  const json::Object *forward = manifest->getAsObject();
  collect(forward);
  if (forward)
    collect(forward->getObject("step"));
  return weights;
}

/// Prints `module` as dat-opt prints its result, so that a replay through
/// dat-opt gives the same bytes.
static void printModule(ModuleOp module, raw_ostream &os) {
  module->print(os);
  os << "\n";
}

Error compileModel(const CompileOptions &options) {
  auto pipeline = parsePipelineOptions(options.pipeline);
  if (!pipeline)
    return pipeline.takeError();
  bool cuda = (*pipeline)->target == mlir::dat::Target::CUDA;
  if (options.emit == Emit::PTX) {
    if (!cuda)
      return createStringError("--emit ptx needs --target cuda");
    (*pipeline)->format = mlir::dat::DeviceCodeFormat::Isa;
  }
  Expected<HostTarget> host = resolveCPU(options.cpu);
  if (!host)
    return host.takeError();
  // The register tiles' vectors as wide as the CPU's, unless given.
  if (!cuda && !(*pipeline)->vectorWidth.hasValue())
    (*pipeline)->vectorWidth = vectorLanes(*host);
  std::string toolkit = (*pipeline)->toolkit;
  if (cuda && options.emit != Emit::Dat &&
      !sys::fs::can_execute(toolkit + "/bin/ptxas"))
    return createStringError(
        "--target cuda needs the CUDA toolkit's ptxas, not found at %s/bin "
        "(set CUDA_HOME to the toolkit's folder)",
        toolkit.c_str());

  // Refuse an output path that cannot be written before any work.
  if (options.outputPath != "-") {
    StringRef parent = sys::path::parent_path(options.outputPath);
    if (!parent.empty() && !sys::fs::is_directory(parent))
      return createStringError("-o %s: the folder %s does not exist",
                               options.outputPath.c_str(),
                               parent.str().c_str());
    if (sys::fs::is_directory(options.outputPath))
      return createStringError("-o %s: is a folder; name the program's file",
                               options.outputPath.c_str());
  }

  Stages stages(options.verbose, options.timing,
                sys::path::filename(options.configPath).str());
  stages.start("frontend (config, weights, dat IR)");
  bool folder = isModelFolder(options.configPath);
  if (!folder && (!options.folder.module.empty() || options.folder.batch ||
                  options.folder.seqLen || options.folder.dynamic))
    return createStringError("--module, --batch, --seq-len and --dynamic "
                             "apply to a "
                             "save_pretrained folder; %s is a config file",
                             options.configPath.c_str());
  Expected<ModelConfig> config =
      folder ? loadModelFolder(options.configPath, options.folder)
             : loadModelConfig(options.configPath);
  if (!config)
    return config.takeError();
  // The GPU mapping (and its emulation) tiles static shapes only.
  if (!config->dynamicDims.empty() && (cuda || (*pipeline)->emulateGPUTiles))
    return createStringError(
        "%s: dynamic_dims: the %s maps static shapes only; compile for the "
        "CPU, or give the shapes",
        options.configPath.c_str(),
        cuda ? "GPU target" : "GPU tile emulation (--emulate-gpu-tiles)");
  config->generalOrthogonalMaps = !options.rotaryMaps;
  std::unique_ptr<WeightSource> weights;
  std::string weightsPath = options.weightsPath;
  if (folder && weightsPath.empty() && !options.randomSeed) {
    SmallString<256> path(options.configPath);
    sys::path::append(path, "model.safetensors");
    weightsPath = path.str().str();
  }
  if (options.randomSeed) {
    weights = WeightSource::random(*options.randomSeed);
  } else {
    auto opened = WeightSource::open(weightsPath);
    if (!opened)
      return opened.takeError();
    weights = std::move(*opened);
  }

  DialectRegistry registry;
  registerDriverDialects(registry);
  MLIRContext ctx(registry);
  auto module = buildProgram(ctx, *config, *weights);
  if (!module)
    return module.takeError();
  if (options.emit == Emit::Dat)
    return writeAtomically(options.outputPath,
                           [&](raw_ostream &os) { printModule(**module, os); });

  stages.start("--dat-program-pipeline");
  mlir::PassManager pm(&ctx);
  if (failed(applyPassManagerCLOptions(pm)))
    return createStringError("invalid pass manager options (--mlir-...)");
  // --timing: the pipeline's passes, reported when compileModel returns.
  mlir::DefaultTimingManager passTiming;
  mlir::TimingScope passScope;
  if (options.timing) {
    passTiming.setEnabled(true);
    passScope = passTiming.getRootScope();
    pm.enableTiming(passScope);
  } else {
    applyDefaultTimingPassManagerCLOptions(pm);
  }
  mlir::dat::buildProgramPipeline(pm, **pipeline);
  std::string diagnostics;
  {
    raw_string_ostream diagOs(diagnostics);
    llvm::SourceMgr sourceMgr;
    SourceMgrDiagnosticHandler handler(sourceMgr, &ctx, diagOs);
    if (failed(pm.run(**module)))
      return createStringError("%s: internal error: lowering failed:\n%s",
                               options.configPath.c_str(), diagnostics.c_str());
  }
  if (options.emit == Emit::LLVM)
    return writeAtomically(options.outputPath,
                           [&](raw_ostream &os) { printModule(**module, os); });
  if (options.emit == Emit::PTX)
    return writeAtomically(options.outputPath, [&](raw_ostream &os) {
      (*module)->walk([&](mlir::gpu::BinaryOp binary) {
        for (mlir::Attribute a : binary.getObjects())
          os << "// kernel module " << binary.getName() << "\n"
             << cast<mlir::gpu::ObjectAttr>(a).getObject().getValue() << "\n";
      });
    });
  Expected<std::vector<WeightSpec>> weightSpecs = manifestWeights(**module);
  if (!weightSpecs)
    return weightSpecs.takeError();
  // The weights file needs none of what follows: it is written on a second
  // thread while LLVM compiles the code on this one.
  std::string outWeights = options.outputPath + DAT_WEIGHTS_SUFFIX;
  std::optional<WeightsFileJob> weightsJob;
  if (options.emit != Emit::LLVMIR)
    weightsJob.emplace(outWeights, *weights, std::move(*weightSpecs));

  stages.start("translation to LLVM IR");
  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(**module, llvmCtx, "dat_model");
  if (!llvmModule)
    return createStringError("internal error: translation to LLVM IR failed");
  if (options.emit == Emit::LLVMIR)
    return writeAtomically(options.outputPath, [&](raw_ostream &os) {
      llvmModule->print(os, nullptr);
    });

  SmallString<128> object;
  if (std::error_code ec =
          sys::fs::createTemporaryFile("dat-model", "o", object))
    return createStringError("cannot create a temporary file: %s",
                             ec.message().c_str());
  FileRemover removeObject(object);
  stages.start("LLVM -O2 and code generation");
  if (Error e = emitObject(*llvmModule, object, *host))
    return e;

  std::string tmpExe = options.outputPath + ".tmp-link";
  FileRemover removeTmp(tmpExe);
  stages.start("link");
  if (Error e =
          linkProgram(object, tmpExe, cuda, options.emit == Emit::Library))
    return e;
  stages.start("weights file (what was left)");
  if (Error e = weightsJob->finish())
    return e;
  stages.addConcurrent("weights file (on its own thread)",
                       weightsJob->seconds());
  if (std::error_code ec = sys::fs::rename(tmpExe, options.outputPath)) {
    sys::fs::remove(outWeights);
    return createStringError("%s: cannot write: %s", options.outputPath.c_str(),
                             ec.message().c_str());
  }
  return Error::success();
}

} // namespace dat
