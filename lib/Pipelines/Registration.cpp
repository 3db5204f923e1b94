//===- Registration.cpp - the named pipelines of dat-opt ------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The GPU and program pipelines are registered by hand (not through
// PassPipelineRegistration) to refuse options that contradict each other or
// the hardware with a message, before anything is built.
//
//===----------------------------------------------------------------------===//

#include "dat/Pipelines/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"

#include <functional>

namespace mlir::dat {

/// Registers `name` like PassPipelineRegistration, refusing options for
/// which `check` returns a message.
template <typename Options>
static void
registerChecked(StringRef name, StringRef description,
                std::function<std::string(const Options &)> check,
                std::function<void(OpPassManager &, const Options &)> build) {
  registerPassPipeline(
      name, description,
      [=](OpPassManager &pm, StringRef text,
          function_ref<LogicalResult(const Twine &)> errorHandler) {
        Options options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::string error = check(options);
        if (!error.empty())
          return errorHandler(name + ": " + error);
        build(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> handler) {
        handler(Options());
      });
}

void registerPipelines() {
  PassPipelineRegistration<CPUPipelineOptions>(
      "dat-cpu-pipeline",
      "Lower dat ops on tensors to the LLVM dialect for the host CPU "
      "(flash tiling, decomposition, bufferization, loops)",
      buildCPUPipeline);
  registerChecked<GPUPipelineOptions>(
      "dat-gpu-pipeline",
      "Lower dat ops on tensors to host LLVM dialect code launching NVVM "
      "kernels embedded as cubin (flash tiling, decomposition, managed "
      "memory, one kernel per parallel loop nest, ptxas)",
      [](const GPUPipelineOptions &options) {
        return checkGPUTargetOptions(options.blockSize, options.sharedMemory);
      },
      buildGPUPipeline);
  registerChecked<ProgramPipelineOptions>(
      "dat-program-pipeline",
      "A model's program, from the frontend's module (datc compile --emit "
      "dat) to the LLVM dialect module datc compiles and links: bf16 "
      "narrowing, the manifest, the target's pipeline, the entry points",
      checkProgramPipelineOptions, buildProgramPipeline);
}

} // namespace mlir::dat
