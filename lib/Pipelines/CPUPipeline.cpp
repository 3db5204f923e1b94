//===- CPUPipeline.cpp - dat → LLVM dialect for the host CPU --------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/Threading.h"

namespace mlir::dat {

void buildLinalgOnBuffers(OpPassManager &pm, bool tileAttention,
                          int64_t queryTile,
                          const DatDecomposeFlashOptions &flash,
                          bool fuseEpilogues, GemmStrategy gemm,
                          bool libraryEpilogues,
                          function_ref<void(OpPassManager &)> beforeDealloc,
                          function_ref<void(OpPassManager &)> beforeBufferize,
                          int64_t balanceThreads, int64_t projectionThreads) {
  assert(gemm != GemmStrategy::Auto && "resolveGemm first");
  bool gemmLibrary = gemm == GemmStrategy::Library;
  if (tileAttention) {
    DatTileAttentionOptions tiles;
    tiles.queryTile = queryTile;
    tiles.balanceThreads = balanceThreads;
    // (The query rows fitted to the key blocks' budget too.)
    tiles.blockBytes = flash.blockBytes;
    pm.addPass(createDatTileAttention(tiles));
    pm.addPass(createDatDecomposeFlash(flash));
  }
  pm.addPass(createDatDecomposeToLinalg());
  pm.addPass(createCanonicalizerPass());
  if (fuseEpilogues && !gemmLibrary) {
    DatFuseEpiloguesOptions fuse;
    fuse.threads = projectionThreads;
    pm.addPass(createDatFuseEpilogues(fuse));
    pm.addPass(createCanonicalizerPass());
  }

  if (beforeBufferize)
    beforeBufferize(pm);
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // Plain row-major memrefs at function boundaries, so that the C interface
  // takes ordinary strided descriptors.
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  if (gemmLibrary) {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createDatGemmLibraryCalls(
        DatGemmLibraryCallsOptions{/*epilogues=*/libraryEpilogues}));
  }
  if (beforeDealloc)
    beforeDealloc(pm);
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
}

void buildLoopsToControlFlow(OpPassManager &pm) {
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // math.erf (the exact GELU) has no LLVM intrinsic: expand it.
  pm.addPass(createDatExpandMath());
}

void addStaticKeyBlocks(OpPassManager &pm) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  fn.addPass(createSCFForLoopCanonicalizationPass());
  fn.addPass(createCanonicalizerPass());
}

void buildHostToLLVM(OpPassManager &pm, bool cInterface,
                     function_ref<void(OpPassManager &)> beforeLLVM) {
  if (cInterface)
    pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  if (beforeLLVM)
    beforeLLVM(pm);
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

/// The CPU pipeline with `trackMemory` given apart: the CPU pipeline's
/// option (off by default, for mlir-runner) or the program pipeline's (on).
template <typename Options>
static void buildCPU(OpPassManager &pm, const Options &options,
                     bool trackMemory, bool openmp, bool program,
                     bool profilePoints) {
  // The GPU mapping's emulation runs the tile bodies as the GPU would: as
  // linalg loops, without the CPU's vector layer.
  bool registerTiles = options.vectorWidth > 0 && !options.emulateGPUTiles;
  // The threads the tiles are balanced for (query tiles, overlapped last
  // tiles).
  int64_t threads = options.tileThreads > 0
                        ? static_cast<int64_t>(options.tileThreads)
                        : llvm::hardware_concurrency().compute_thread_count();
  DatDecomposeFlashOptions flash;
  flash.keyTile = options.keyTile;
  // The emulation runs the GPU's key loops (and key blocks sized for its
  // shared memory).
  if (options.emulateGPUTiles && options.fitKeyBlocks)
    flash.blockBytes = kMaxTileSharedMemory;
  flash.wholeKeyBlocks = options.emulateGPUTiles && options.wholeKeyBlocks;
  flash.rotateKeysOnce = options.emulateGPUTiles && options.rotateKeysOnce;
  flash.narrowValueNetwork =
      options.emulateGPUTiles && options.narrowValueNetwork;
  flash.relativeSymbolsAsProduct =
      options.emulateGPUTiles && options.relativeSymbolsAsProduct;
  buildLinalgOnBuffers(
      pm, options.tileAttention, options.queryTile, flash,
      options.fuseEpilogues, resolveGemm(options.gemm, /*cuda=*/false),
      options.libraryEpilogues,
      [](OpPassManager &pm) {
        // A key loop's scratch tiles (scores, row maxima and sums) once per
        // flash tile, not per key block: thousands of allocations per call
        // otherwise, which serialized the threads. Upstream's hoisting
        // keeps allocations inside scf.forall, so each tile keeps its own.
        pm.addNestedPass<func::FuncOp>(
            bufferization::createBufferLoopHoistingPass());
      },
      [&](OpPassManager &pm) {
        if (registerTiles) {
          // Static tiles, which the vector layer needs: key loops split
          // into full blocks and a partial last one (causal bounds), and
          // the bounds of loops whose last block is full folded.
          // (Loops of one block, e.g. 17 keys, are folded away first.)
          // Tile loops likewise: full tiles and a partial last one.
          DatPeelTileLoopsOptions peel;
          peel.overlap = options.overlapLastTile;
          peel.threads = threads;
          pm.addPass(createDatPeelTileLoops(peel));
          pm.addPass(createCanonicalizerPass());
          pm.addPass(createSCFForLoopCanonicalizationPass());
          pm.addPass(createSCFForLoopPeeling());
          pm.addPass(createSCFForLoopCanonicalizationPass());
          pm.addPass(createCanonicalizerPass());
          // Tiles of a dynamic size (a dynamic length's last tile and key
          // block) computed padded to their bound, so that they are static.
          pm.addPass(createDatPadDynamicTiles());
          pm.addPass(createCanonicalizerPass());
          DatRegisterTilesOptions tiles;
          tiles.vectorWidth = options.vectorWidth;
          tiles.rows = options.registerRows;
          tiles.blockWeights = options.blockWeights;
          tiles.vectorRegisters = options.vectorRegisters;
          tiles.packBlocks = options.packBlocks;
          tiles.reductionTile = options.reductionTile;
          // Library GEMMs take whole projections.
          tiles.outsideLoops = resolveGemm(options.gemm, /*cuda=*/false) !=
                               GemmStrategy::Library;
          pm.addPass(createDatRegisterTiles(tiles));
          pm.addPass(createDatPackWeights());
          pm.addPass(createCanonicalizerPass());
          // (Last before bufferization: canonicalization would fold the
          // padded buffers' slices back into smaller ones.)
          if (options.padTileBuffers)
            pm.addPass(createDatPadTileBuffers());
        }
        if (program)
          pm.addPass(createDatProgramManifest());
        if (profilePoints)
          pm.addPass(createDatProfilePoints());
      },
      /*balanceThreads=*/threads,
      // (The vector layer's tiles; the GPU mapping's emulation keeps the
      // GPU's projection tiles.)
      /*projectionThreads=*/registerTiles ? threads : 0);
  if (registerTiles) {
    // The register tiles' n-D transfers as unrolled 1-D loads and stores.
    VectorTransferToSCFOptions transfers;
    transfers.enableFullUnroll(true);
    pm.addPass(createConvertVectorToSCFPass(transfers));
  }
  if (options.vectorizableLoops)
    pm.addPass(createDatVectorizableLoops());
  if (options.emulateGPUTiles) {
    DatGPUMapTilesOptions mapTiles{/*blockSize=*/256,
                                   /*sharedMemory=*/kTileSharedMemory,
                                   /*emulate=*/true,
                                   options.tensorCores,
                                   options.warpRows,
                                   /*vectorCopies=*/true,
                                   options.wideMmaTiles};
    mapTiles.asyncCopies = options.asyncCopies;
    mapTiles.sharedOverScratch = options.sharedOverScratch;
    if (options.staticKeyBlocks)
      addStaticKeyBlocks(pm);
    pm.addNestedPass<func::FuncOp>(createDatGPUMapTiles(mapTiles));
    // The warps' MMA tiles (bf16 contractions) as unrolled 1-D transfers.
    VectorTransferToSCFOptions transfers;
    transfers.enableFullUnroll(true);
    pm.addPass(createConvertVectorToSCFPass(transfers));
  }
  pm.addPass(createForallToParallelLoopPass());
  // The tile loops (now scf.parallel; every other loop is sequential) on
  // OpenMP threads: tiles write disjoint outputs, so results do not depend
  // on the thread count.
  // (The conversion wraps each body in a memref.alloca_scope, which must
  // stay one block; ours allocate on the heap, and canonicalization inlines
  // scopes without allocas before scf-to-cf makes their loops blocks.)
  if (openmp) {
    pm.addPass(createConvertSCFToOpenMPPass());
    pm.addPass(createCanonicalizerPass());
  }
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  buildLoopsToControlFlow(pm);
  // bf16 storage (dat-narrow-storage): x86 has no bf16 conversions, and
  // LLVM's libcall for the narrowing one is missing from older libgcc; the
  // expansion is integer arithmetic with the same rounding (to nearest even).
  buildHostToLLVM(pm, options.cInterface, [&](OpPassManager &pm) {
    // Row sums as trees of vector adds rather than one scalar chain (the
    // order is fixed by the vector length, so reruns agree bit for bit).
    ConvertVectorToLLVMPassOptions vectors;
    vectors.reassociateFPReductions = true;
    pm.addPass(createConvertVectorToLLVMPass(vectors));
    arith::ArithExpandOpsPassOptions expand;
    expand.includeBf16 = true;
    pm.addPass(arith::createArithExpandOpsPass(expand));
    // Buffers allocated through MLIR's generic allocation functions, which
    // the program's runtime defines to track the model's peak memory.
    if (trackMemory) {
      FinalizeMemRefToLLVMConversionPassOptions memref;
      memref.useGenericFunctions = true;
      pm.addPass(createFinalizeMemRefToLLVMConversionPass(memref));
    }
  });
}

void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options) {
  buildCPU(pm, options, options.trackMemory, options.openmp,
           /*program=*/false, /*profilePoints=*/false);
}

void buildCPUProgram(OpPassManager &pm, const ProgramPipelineOptions &options) {
  buildCPU(pm, options, options.trackMemory, options.openmp,
           /*program=*/true, options.profilePoints);
}

} // namespace mlir::dat
