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

namespace mlir::dat {

void registerPipelines() {
  PassPipelineRegistration<CPUPipelineOptions>(
      "dat-cpu-pipeline",
      "Lower dat ops on tensors to the LLVM dialect for the host CPU "
      "(flash tiling, decomposition, bufferization, loops)",
      buildCPUPipeline);
  registerPassPipeline(
      "dat-gpu-pipeline",
      "Lower dat ops on tensors to host LLVM dialect code launching NVVM "
      "kernels embedded as cubin (flash tiling, decomposition, managed "
      "memory, one kernel per parallel loop nest, ptxas)",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        GPUPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::string error =
            checkGPUTargetOptions(options.blockSize, options.sharedMemory);
        if (!error.empty())
          return errorHandler("dat-gpu-pipeline: " + error);
        buildGPUPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> handler) {
        handler(GPUPipelineOptions());
      });
  registerPassPipeline(
      "dat-program-pipeline",
      "A model's program, from the frontend's module (datc compile --emit "
      "dat) to the LLVM dialect module datc compiles and links: bf16 "
      "narrowing, the manifest, the target's pipeline, the entry points",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        ProgramPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::string error = checkProgramPipelineOptions(options);
        if (!error.empty())
          return errorHandler("dat-program-pipeline: " + error);
        buildProgramPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> handler) {
        handler(ProgramPipelineOptions());
      });
}

} // namespace mlir::dat
