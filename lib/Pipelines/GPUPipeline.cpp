//===- GPUPipeline.cpp - dat → host LLVM dialect + NVVM cubin -------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The attention tiles run as one kernel per op, a block per tile
// (dat-gpu-map-tiles); every other parallel loop nest of a linalg op is a
// kernel with one thread per element; the projections are cuBLAS calls
// (gemm=auto or library) or generated tiles fused with their epilogues
// (gemm=generated). A tile's bf16 contractions (QKᵀ, PV, ...) run on the
// tensor cores as warp-level mma.sync tiles where the tile is whole MMA
// tiles; everything else computes in f32 on CUDA cores.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"

namespace mlir::dat {

static StringRef formatName(DeviceCodeFormat format) {
  switch (format) {
  case DeviceCodeFormat::Bin:
    return "bin";
  case DeviceCodeFormat::Isa:
    return "isa";
  case DeviceCodeFormat::Fatbin:
    return "fatbin";
  }
  llvm_unreachable("unknown device code format");
}

/// Sets LLVM's `nvptx-short-ptr`: shared-memory pointers of 32 bits, so
/// that a tile's shared addresses are 32-bit arithmetic (LLVM narrows the
/// 64-bit index math that only feeds them). The NVPTX target machines that
/// gpu-module-to-binary and dat-gpu-register-budget create read it, and
/// give the module the matching data layout. A process-wide flag: the
/// pipeline sets it either way each time it is built.
static void setShortSharedPointers(bool on) {
  auto &registered = llvm::cl::getRegisteredOptions();
  auto it = registered.find("nvptx-short-ptr");
  if (it != registered.end())
    (void)it->second->addOccurrence(0, it->first, on ? "true" : "false");
}

template <typename Options>
static void buildGPU(OpPassManager &pm, const Options &options) {
  DatDecomposeFlashOptions flash;
  flash.keyTile = options.keyTile;
  // Relational attention's and HYLA's tiles are alone on their SM (a
  // warp-row program of 8 warps; a block-wide tile past 96 KiB): their key
  // blocks are sized to all of its shared memory.
  flash.blockBytes = options.fitKeyBlocks ? kMaxTileSharedMemory : 0;
  flash.wholeKeyBlocks = options.wholeKeyBlocks;
  flash.rotateKeysOnce = options.rotateKeysOnce;
  flash.narrowValueNetwork = options.narrowValueNetwork;
  flash.relativeSymbolsAsProduct = options.relativeSymbolsAsProduct;
  buildLinalgOnBuffers(pm, /*tileAttention=*/true, options.queryTile, flash,
                       options.fuseEpilogues,
                       resolveGemm(options.gemm, /*cuda=*/true),
                       options.libraryEpilogues, [](OpPassManager &nested) {
                         nested.addPass(createDatGPUStageConstants());
                       });

  // Each flash tile loop becomes one kernel, a block per tile; the rest of
  // the program (projections, norms, ...) one kernel per linalg op, whose
  // parallel loop nest is spread over blocks and threads.
  DatGPUMapTilesOptions mapTiles{options.blockSize,   options.sharedMemory,
                                 /*emulate=*/false,   options.tensorCores,
                                 options.warpRows,    options.vectorCopies,
                                 options.wideMmaTiles};
  mapTiles.asyncCopies = options.asyncCopies;
  mapTiles.sharedOverScratch = options.sharedOverScratch;
  if (options.staticKeyBlocks)
    addStaticKeyBlocks(pm);
  pm.addNestedPass<func::FuncOp>(createDatGPUMapTiles(mapTiles));
  pm.addPass(createForallToForLoopPass());
  // The host touches no buffer: its copies become device copies.
  pm.addPass(createDatGPUDeviceCopies());
  // Reductions along the innermost dim: a warp per output element.
  if (options.rowReductions)
    pm.addNestedPass<func::FuncOp>(createDatGPUMapRowReductions());
  // Scalar fills and full reductions become kernels too (of one thread).
  pm.addNestedPass<func::FuncOp>(createDatGPUWrapSerialOps());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  // Kernels before canonicalization, which would fold a nest of one
  // iteration (a 1×1 fill, one token's layer-norm statistics) into host
  // code on device buffers.
  pm.addNestedPass<func::FuncOp>(
      createDatGPUMapParallelLoops(DatGPUMapParallelLoopsOptions{
          options.blockSize, options.elementsPerThread}));
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addPass(createDatGPUDeviceAllocations());
  pm.addPass(createDatGPUCheckHostAccess());
  // Constants and index math into the kernels (else each is a kernel
  // argument, and a division by a tile size a division by a register).
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  // The warps' bf16 MMA tiles (dat-gpu-map-tiles) as mma.sync, while their
  // loops are still loops.
  pm.addNestedPass<gpu::GPUModuleOp>(
      createDatGPUWarpMmaToNVVM(DatGPUWarpMmaToNVVMOptions{
          options.ldmatrix, options.bPairOrder, options.mmaPairs}));
  if (options.swizzleShared)
    pm.addNestedPass<gpu::GPUModuleOp>(createDatGPUSwizzleSharedTiles());
  pm.addNestedPass<gpu::GPUModuleOp>(createDatGPUKernelOccupancy());
  // A kernel alone on its SM that fits 32-bit offsets computes its
  // addresses in 32 bits (a relational tile spilled at 255 registers).
  if (options.index32)
    pm.addPass(createDatGPUIndexWidth());

  buildLoopsToControlFlow(pm);

  setShortSharedPointers(options.shortSharedPointers);
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  if (options.approximateExp)
    device.addPass(createDatGPUApproximateExp());
  // The tiles' nvgpu ops (ldmatrix, cp.async) lower in the same conversion
  // (registerNVGPUToLLVMInterface), at the module's index width.
  device.addPass(createConvertGpuOpsToNVVMOps());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());

  buildHostToLLVM(pm, options.cInterface, [](OpPassManager &host) {
    host.addPass(createGpuToLLVMConversionPass());
  });

  // The bounds dat-gpu-kernel-occupancy chose, checked against ptxas:
  // where a tile kernel spills, fewer blocks per SM give it more registers.
  if (options.registerBudget) {
    DatGPURegisterBudgetOptions budget;
    budget.toolkit = options.toolkit;
    pm.addPass(createDatGPURegisterBudget(budget));
  }

  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.toolkit;
  binary.compilationTarget = formatName(options.format).str();
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createDatGPUStripCompileTimes());
}

void buildGPUPipeline(OpPassManager &pm, const GPUPipelineOptions &options) {
  buildGPU(pm, options);
}

void buildGPUProgram(OpPassManager &pm, const ProgramPipelineOptions &options) {
  buildGPU(pm, options);
}

} // namespace mlir::dat
