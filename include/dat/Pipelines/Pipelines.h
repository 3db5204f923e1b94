//===- Pipelines.h - dat compilation pipelines ------------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The pipelines live here, in C++, so that dat-opt, datc and the tests run
// exactly the same pass sequence.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_PIPELINES_PIPELINES_H
#define DAT_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::dat {

/// Shared memory per block for the GPU's tile buffers: a 64×64 attention
/// tile's query, key and value blocks, scores and accumulator (head dim 64)
/// fit, and two blocks share an H200 SM (227 KiB each at most; past 48 KiB
/// the runtime raises the kernel's limit). Not yet tuned on a GPU.
inline constexpr int64_t kTileSharedMemory = 96 * 1024;

struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  PassOptions::Option<bool> cInterface{
      *this, "c-interface",
      llvm::cl::desc("Give every public function a C-callable "
                     "`_mlir_ciface_` wrapper (llvm.emit_c_interface)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> tileAttention{
      *this, "tile-attention",
      llvm::cl::desc("Lower the attention-family ops through the flash tiling "
                     "(dat-tile-attention) instead of the N×N reference form"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> queryTile{
      *this, "query-tile", llvm::cl::desc("Query rows per attention tile"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> keyTile{
      *this, "key-tile", llvm::cl::desc("Keys per online-softmax block"),
      llvm::cl::init(64)};
  PassOptions::Option<bool> fuseEpilogues{
      *this, "fuse-epilogues",
      llvm::cl::desc("Compute projections with their bias, activation and "
                     "residual epilogues row block by row block "
                     "(dat-fuse-epilogues)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> gemmLibrary{
      *this, "gemm-library",
      llvm::cl::desc("Compute the projections with the runtime's GEMM "
                     "(dat-gemm-library-calls; cuBLAS on the GPU) instead "
                     "of generated loops fused with their epilogues"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> trackMemory{
      *this, "track-memory",
      llvm::cl::desc("Allocate through MLIR's generic allocation functions, "
                     "which the runtime of datc's programs defines to track "
                     "the model's peak memory (other hosts, e.g. "
                     "mlir-runner, do not define them)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> emulateGPUTiles{
      *this, "emulate-gpu-tiles",
      llvm::cl::desc("Run the GPU pipeline's block/thread mapping of the "
                     "attention tiles (dat-gpu-map-tiles) as sequential "
                     "loops, to check it on the CPU"),
      llvm::cl::init(false)};
};

#ifndef DAT_CUDA_TOOLKIT
#define DAT_CUDA_TOOLKIT "/usr/local/cuda"
#endif

struct GPUPipelineOptions : public PassPipelineOptions<GPUPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("NVIDIA architecture of the cubin"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features (ISA version)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit folder (ptxas, libdevice)"),
      llvm::cl::init(DAT_CUDA_TOOLKIT)};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Device code embedded in the host module: bin (cubin "
                     "from ptxas), isa (PTX, JIT-compiled at load) or fatbin"),
      llvm::cl::init("bin")};
  // A block per tile: 0 chooses each op's query tile from its shape — 64
  // rows, or 32/16 where that is what it takes to give every SM of an H200
  // two blocks (dat-tile-attention min-tiles; not yet tuned on a GPU).
  PassOptions::Option<int64_t> queryTile{
      *this, "query-tile",
      llvm::cl::desc("Query rows per attention tile (0: per op, by shape)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> keyTile{
      *this, "key-tile", llvm::cl::desc("Keys per online-softmax block"),
      llvm::cl::init(64)};
  PassOptions::Option<bool> fuseEpilogues{
      *this, "fuse-epilogues",
      llvm::cl::desc("Compute projections with their bias, activation and "
                     "residual epilogues row block by row block "
                     "(dat-fuse-epilogues)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> gemmLibrary{
      *this, "gemm-library",
      llvm::cl::desc("Compute the projections with the runtime's GEMM "
                     "(dat-gemm-library-calls; cuBLAS on the GPU) instead "
                     "of generated loops fused with their epilogues"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> blockSize{*this, "block-size",
                                         llvm::cl::desc("Threads per block"),
                                         llvm::cl::init(256)};
  PassOptions::Option<int64_t> sharedMemory{
      *this, "shared-memory",
      llvm::cl::desc("Bytes of shared memory per block for tile buffers"),
      llvm::cl::init(kTileSharedMemory)};
  PassOptions::Option<bool> cInterface{
      *this, "c-interface",
      llvm::cl::desc("Give every public function a C-callable "
                     "`_mlir_ciface_` wrapper (llvm.emit_c_interface)"),
      llvm::cl::init(true)};
};

/// dat on tensors → host LLVM dialect with the kernels embedded as cubin:
/// flash tiling, decomposition, bufferization into memory host and device
/// share, one kernel per parallel loop nest (blocks × threads), NVVM,
/// ptxas. Host code keeps the loops over tiles and key blocks.
void buildGPUPipeline(OpPassManager &pm, const GPUPipelineOptions &options);

/// dat on tensors → LLVM dialect for the host CPU: flash tiling of the
/// attention ops (unless disabled), decomposition of the rest,
/// bufferization, loops, LLVM.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// The shared front half: (flash tiling), decomposition, bufferization with
/// `beforeDealloc`'s passes (may be null) ahead of buffer deallocation.
/// Projections are fused with their epilogues, or with `gemmLibrary` left
/// whole and turned into calls of the runtime's GEMM.
void buildLinalgOnBuffers(OpPassManager &pm, bool tileAttention,
                          int64_t queryTile, int64_t keyTile,
                          bool fuseEpilogues, bool gemmLibrary,
                          function_ref<void(OpPassManager &)> beforeDealloc);

/// Loops on buffers → control flow: strided metadata, affine, scf, and the
/// math expansions LLVM lacks.
void buildLoopsToControlFlow(OpPassManager &pm);

/// Host functions → LLVM dialect (C wrappers when `cInterface`), with
/// `beforeLLVM`'s passes (may be null) ahead of convert-to-llvm.
void buildHostToLLVM(OpPassManager &pm, bool cInterface,
                     function_ref<void(OpPassManager &)> beforeLLVM);

/// Registers `--dat-cpu-pipeline` and `--dat-gpu-pipeline` with the pass
/// registry, for dat-opt.
void registerPipelines();

} // namespace mlir::dat

#endif // DAT_PIPELINES_PIPELINES_H
