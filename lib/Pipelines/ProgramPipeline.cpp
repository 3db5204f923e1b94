//===- ProgramPipeline.cpp - a model's program, one pipeline --------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The frontend's module → the LLVM dialect module of a program: everything
// between the frontend and LLVM is a pass here, so that `datc` and
// `dat-opt --dat-program-pipeline` run the same thing.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Pipelines/Pipelines.h"

namespace mlir::dat {

// The target halves (CPUPipeline.cpp, GPUPipeline.cpp).
void buildCPUProgram(OpPassManager &pm, const ProgramPipelineOptions &options);
void buildGPUProgram(OpPassManager &pm, const ProgramPipelineOptions &options);

std::string checkProgramPipelineOptions(const ProgramPipelineOptions &options) {
  bool cuda = options.target == Target::CUDA;
  if (cuda && !options.tileAttention)
    return "tile-attention=false: the GPU lowering always tiles attention "
           "(the N×N reference form is for the CPU)";
  if (options.emulateGPUTiles && (cuda || !options.tileAttention))
    return "emulate-gpu-tiles runs the GPU mapping of the flash tiles on "
           "the CPU: it needs target=cpu and tile-attention";
  if (options.queryTile < 0 || options.queryTile > (1 << 20))
    return "query-tile=" + std::to_string(options.queryTile) +
           ": expected 0 (the target's default) up to 1048576";
  if (options.keyTile < 1 || options.keyTile > (1 << 20))
    return "key-tile=" + std::to_string(options.keyTile) +
           ": expected 1 up to 1048576";
  if (options.tileThreads < 0 || options.tileThreads > 4096)
    return "tile-threads=" + std::to_string(options.tileThreads) +
           ": expected 0 (this host's hardware threads) up to 4096";
  return checkGPUTargetOptions(options.blockSize, options.sharedMemory);
}

std::string checkGPUTargetOptions(int64_t blockSize, int64_t sharedMemory) {
  if (blockSize < 1 || blockSize > 1024)
    return "block-size=" + std::to_string(blockSize) +
           ": expected 1 to 1024 threads";
  if (sharedMemory < 0 || sharedMemory > kMaxTileSharedMemory)
    return "shared-memory=" + std::to_string(sharedMemory) +
           ": expected at most " + std::to_string(kMaxTileSharedMemory) +
           " bytes (sm_90's 227 KiB per block, less the 16 the kernels "
           "keep for themselves)";
  return "";
}

void buildProgramPipeline(OpPassManager &pm,
                          const ProgramPipelineOptions &options) {
  if (options.precision == Precision::BF16)
    pm.addPass(createDatNarrowStorage(DatNarrowStorageOptions{"bf16"}));
  // The manifest describes the entry functions' final signatures: on the
  // CPU, after dat-pack-weights (buildCPUProgram adds it there).
  if (options.target == Target::CUDA) {
    pm.addPass(createDatProgramManifest());
    buildGPUProgram(pm, options);
  } else {
    buildCPUProgram(pm, options);
  }
  pm.addPass(createDatProgramEntry());
}

} // namespace mlir::dat
