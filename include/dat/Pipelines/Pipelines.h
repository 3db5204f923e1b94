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

#include "dat/Conversion/Passes.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::dat {

/// Shared memory per block for the GPU's tile buffers: a 64×64 attention
/// tile's query, key and value blocks, scores and accumulator (head dim 64)
/// fit, and two blocks share an H200 SM (227 KiB each at most; past 48 KiB
/// the runtime raises the kernel's limit). Not yet tuned on a GPU.
inline constexpr int64_t kTileSharedMemory = 96 * 1024;

// Option values, parsed and checked once (by the pass options' parser, for
// dat-opt and datc alike).
enum class Target { CPU, CUDA };
enum class Precision { FP32, BF16 };
/// How projections are computed. `Auto` is the target's default: the
/// runtime's GEMM (cuBLAS) on the GPU, where it was faster at every shape
/// measured (BENCHMARKS.md, "GPU"), the generated loops on the CPU.
enum class GemmStrategy { Auto, Generated, Library };

/// `gemm` with Auto resolved for the target.
inline GemmStrategy resolveGemm(GemmStrategy gemm, bool cuda) {
  if (gemm != GemmStrategy::Auto)
    return gemm;
  return cuda ? GemmStrategy::Library : GemmStrategy::Generated;
}
enum class DeviceCodeFormat { Bin, Isa, Fatbin };

/// The options every pipeline has: the flash tiles and the projections.
template <typename Derived>
struct CommonPipelineOptions : public PassPipelineOptions<Derived> {
  ::mlir::detail::PassOptions::Option<int64_t> queryTile{
      *this, "query-tile",
      llvm::cl::desc("Query rows per attention tile (0: the target's "
                     "default, per op by shape: 64, 32 or 16 rows; on the "
                     "CPU tiles shared evenly among tile-threads threads, "
                     "on the GPU enough tiles for every SM, relational "
                     "attention at most 8·16/heads)"),
      llvm::cl::init(0)};
  ::mlir::detail::PassOptions::Option<int64_t> keyTile{
      *this, "key-tile", llvm::cl::desc("Keys per online-softmax block"),
      llvm::cl::init(64)};
  ::mlir::detail::PassOptions::Option<bool> tensorCores{
      *this, "tensor-cores",
      llvm::cl::desc("GPU and its emulation: the tile kernels' bf16 "
                     "contractions as warp-level mma.sync tiles "
                     "(dat-gpu-map-tiles mma)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> warpRows{
      *this, "warp-rows",
      llvm::cl::desc("GPU and its emulation, with tensor-cores: online-softmax "
                     "tiles in FlashAttention-2's structure, a warp per 16 "
                     "query rows keeping its rows in registers "
                     "(dat-gpu-map-tiles warp-rows)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> wideMmaTiles{
      *this, "wide-mma-tiles",
      llvm::cl::desc("GPU and its emulation, with tensor-cores: 32×64 warp "
                     "tiles where a contraction has one for every warp (a "
                     "projection's), else strips of 16×32 "
                     "(dat-gpu-map-tiles wide-tiles)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> asyncCopies{
      *this, "async-copies",
      llvm::cl::desc("GPU and its emulation: a key loop's staging copies "
                     "issued as soon as their shared buffers are free, the "
                     "next key block during this one's values (cp.async on "
                     "the GPU; dat-gpu-map-tiles async-copies)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> wholeKeyBlocks{
      *this, "whole-key-blocks",
      llvm::cl::desc("GPU and its emulation: a causal tile's key loop ends "
                     "with a whole block (the keys past its last row "
                     "masked), so that with a key count that is a multiple "
                     "of the block every block has a static size "
                     "(dat-decompose-flash whole-key-blocks)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> rotateKeysOnce{
      *this, "rotate-keys-once",
      llvm::cl::desc("GPU and its emulation: RoPE on an attention tile's "
                     "keys computed once, before the tiles, not in every "
                     "query tile's key blocks; the key blocks are then "
                     "copies (dat-decompose-flash rotate-keys-once)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> fitKeyBlocks{
      *this, "fit-key-blocks",
      llvm::cl::desc("GPU and its emulation, bf16: relational attention's "
                     "and HYLA's key blocks made smaller until a tile's "
                     "buffers fit in the SM's shared memory "
                     "(dat-decompose-flash block-bytes)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> staticKeyBlocks{
      *this, "static-key-blocks",
      llvm::cl::desc("GPU and its emulation: a tile's key blocks of a "
                     "static size where the key loop's bounds prove it, "
                     "before dat-gpu-map-tiles (scf-for-loop-"
                     "canonicalization), so that their buffers can be "
                     "swizzled"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> sharedOverScratch{
      *this, "shared-over-scratch",
      llvm::cl::desc("GPU and its emulation: a tile whose buffers exceed "
                     "the block's shared memory but fit in the SM's takes "
                     "the SM's (one block per SM) instead of global "
                     "scratch (dat-gpu-map-tiles shared-over-scratch)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> narrowValueNetwork{
      *this, "narrow-value-network",
      llvm::cl::desc("GPU and its emulation: HYLA's value network z kept "
                     "in bf16 between its two products in a bf16 program, "
                     "so that its second product (Σ_j a·z) runs on tensor "
                     "cores (dat-decompose-flash narrow-value-network)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> relativeSymbolsAsProduct{
      *this, "relative-symbols-as-product",
      llvm::cl::desc("GPU and its emulation: relational attention's "
                     "position-relative symbols accumulated per key block "
                     "as a product with a window of their table, on tensor "
                     "cores (dat-decompose-flash "
                     "relative-symbols-as-product)"),
      llvm::cl::init(false)};
  ::mlir::detail::PassOptions::Option<bool> fuseEpilogues{
      *this, "fuse-epilogues",
      llvm::cl::desc("Compute projections with their bias, activation and "
                     "residual epilogues row block by row block "
                     "(dat-fuse-epilogues)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<GemmStrategy> gemm{
      *this, "gemm", llvm::cl::desc("How projections are computed"),
      llvm::cl::init(GemmStrategy::Auto),
      llvm::cl::values(
          clEnumValN(GemmStrategy::Auto, "auto",
                     "the target's default: library on the GPU (cuBLAS was "
                     "faster at every shape measured), generated on the CPU"),
          clEnumValN(GemmStrategy::Generated, "generated",
                     "generated loops fused with their epilogues"),
          clEnumValN(GemmStrategy::Library, "library",
                     "calls of the runtime's GEMM (dat-gemm-library-calls; "
                     "cuBLAS on the GPU)"))};
  ::mlir::detail::PassOptions::Option<bool> libraryEpilogues{
      *this, "library-epilogues",
      llvm::cl::desc("With library GEMMs: the call takes a zero fill before "
                     "it (beta 0) and the rounding of its output to bf16 "
                     "storage (dat-gemm-library-calls epilogues)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> cInterface{
      *this, "c-interface",
      llvm::cl::desc("Give every public function a C-callable "
                     "`_mlir_ciface_` wrapper (llvm.emit_c_interface)"),
      llvm::cl::init(true)};
};

/// The options of the CPU target.
template <typename Derived>
struct CPUTargetOptions : public CommonPipelineOptions<Derived> {
  ::mlir::detail::PassOptions::Option<bool> tileAttention{
      *this, "tile-attention",
      llvm::cl::desc("Lower the attention-family ops through the flash tiling "
                     "(dat-tile-attention) instead of the N×N reference form "
                     "(CPU only)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> vectorizableLoops{
      *this, "vectorizable-loops",
      llvm::cl::desc("CPU: reassociable reductions and a polynomial exp, so "
                     "that LLVM vectorizes the loops (dat-vectorizable-loops)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("CPU: f32 lanes of the register tiles' vectors "
                     "(dat-register-tiles; 16: AVX-512, 8: AVX2, 0: no "
                     "register tiles). datc sets it from the CPU it "
                     "compiles for"),
      llvm::cl::init(16)};
  ::mlir::detail::PassOptions::Option<bool> blockWeights{
      *this, "block-weights",
      llvm::cl::desc("CPU: weights read by the register tiles laid out in "
                     "contiguous register panels (dat-register-tiles)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> packBlocks{
      *this, "pack-blocks",
      llvm::cl::desc("CPU: key and value tiles packed block by block, each "
                     "block's register panels contiguous (dat-register-tiles)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<int64_t> vectorRegisters{
      *this, "vector-registers",
      llvm::cl::desc("CPU: vector registers per row of a register tile "
                     "(dat-register-tiles)"),
      llvm::cl::init(2)};
  ::mlir::detail::PassOptions::Option<int64_t> reductionTile{
      *this, "reduction-tile",
      llvm::cl::desc("CPU: projections' reductions in blocks of this many, "
                     "the row tiles innermost (dat-register-tiles; 0: off)"),
      llvm::cl::init(128)};
  ::mlir::detail::PassOptions::Option<int64_t> registerRows{
      *this, "register-rows",
      llvm::cl::desc("CPU: rows of a register tile (dat-register-tiles; "
                     "accumulators: rows × 2 vectors)"),
      llvm::cl::init(8)};
  ::mlir::detail::PassOptions::Option<bool> overlapLastTile{
      *this, "overlap-last-tile",
      llvm::cl::desc("CPU: an attention tile loop whose partial last tile "
                     "would run alone computes a full last tile overlapping "
                     "the one before it instead (dat-peel-tile-loops)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> padTileBuffers{
      *this, "pad-tile-buffers",
      llvm::cl::desc("CPU: a flash tile's per-head buffers one row larger "
                     "where their planes are a multiple of 4 KiB, off the "
                     "L1 set period (dat-pad-tile-buffers)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<int64_t> tileThreads{
      *this, "tile-threads",
      llvm::cl::desc("CPU: the thread count the query tiles are chosen "
                     "for and overlap-last-tile balances them for (a last "
                     "tile is overlapped only where the full tiles do not "
                     "divide evenly among the threads); 0: this host's "
                     "hardware threads, what a program uses by default"),
      llvm::cl::init(0)};
  ::mlir::detail::PassOptions::Option<bool> emulateGPUTiles{
      *this, "emulate-gpu-tiles",
      llvm::cl::desc("Run the GPU pipeline's block/thread mapping of the "
                     "attention tiles (dat-gpu-map-tiles) as sequential "
                     "loops, to check it on the CPU"),
      llvm::cl::init(false)};
};

/// The options of the GPU target, on top of `Base`'s.
template <typename Derived, typename Base = CommonPipelineOptions<Derived>>
struct GPUTargetOptions : public Base {
  ::mlir::detail::PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("NVIDIA architecture of the cubin"),
      llvm::cl::init("sm_90")};
  ::mlir::detail::PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features (ISA version)"),
      llvm::cl::init("+ptx80")};
  ::mlir::detail::PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit folder (ptxas, libdevice); default "
                     "$CUDA_HOME, else the one found at configure time"),
      llvm::cl::init(defaultCudaToolkit())};
  ::mlir::detail::PassOptions::Option<DeviceCodeFormat> format{
      *this, "format",
      llvm::cl::desc("Device code embedded in the host module"),
      llvm::cl::init(DeviceCodeFormat::Bin),
      llvm::cl::values(
          clEnumValN(DeviceCodeFormat::Bin, "bin", "cubin from ptxas"),
          clEnumValN(DeviceCodeFormat::Isa, "isa", "PTX, JIT-compiled at load"),
          clEnumValN(DeviceCodeFormat::Fatbin, "fatbin", "fat binary"))};
  ::mlir::detail::PassOptions::Option<int64_t> blockSize{
      *this, "block-size", llvm::cl::desc("Threads per block"),
      llvm::cl::init(256)};
  ::mlir::detail::PassOptions::Option<int64_t> sharedMemory{
      *this, "shared-memory",
      llvm::cl::desc("Bytes of shared memory per block for tile buffers"),
      llvm::cl::init(kTileSharedMemory)};
  ::mlir::detail::PassOptions::Option<bool> ldmatrix{
      *this, "ldmatrix",
      llvm::cl::desc("With tensor-cores: operand tiles in shared memory read "
                     "with ldmatrix (dat-gpu-warp-mma-to-nvvm ldmatrix)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> bPairOrder{
      *this, "b-pair-order",
      llvm::cl::desc("With ldmatrix: two B tiles read by one ldmatrix.x4 "
                     "get each tile's registers side by side, as mma.sync "
                     "takes them (dat-gpu-warp-mma-to-nvvm b-pair-order)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> mmaPairs{
      *this, "mma-pairs",
      llvm::cl::desc("With tensor-cores: a lane's two neighbouring fragment "
                     "elements loaded and stored with one access where the "
                     "buffer allows (dat-gpu-warp-mma-to-nvvm pairs)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> vectorCopies{
      *this, "vector-copies",
      llvm::cl::desc("Tile buffers' copies 16 bytes a thread at a time "
                     "(dat-gpu-map-tiles vector-copies)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> swizzleShared{
      *this, "swizzle-shared",
      llvm::cl::desc("Tile buffers of 128-byte rows XOR-swizzled in shared "
                     "memory against bank conflicts "
                     "(dat-gpu-swizzle-shared-tiles)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<int64_t> elementsPerThread{
      *this, "elements-per-thread",
      llvm::cl::desc("Elements each thread computes of an elementwise kernel "
                     "of 2^20 or more (dat-gpu-map-parallel-loops; 1: one)"),
      llvm::cl::init(8)};
  ::mlir::detail::PassOptions::Option<bool> rowReductions{
      *this, "row-reductions",
      llvm::cl::desc("A warp per output element for reductions along the "
                     "innermost dim (dat-gpu-map-row-reductions)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> approximateExp{
      *this, "approximate-exp",
      llvm::cl::desc("The kernels' f32 exponentials as ex2.approx of x times "
                     "log2(e) (__expf; dat-gpu-approximate-exp) instead of "
                     "libdevice's 1-ulp expf"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> registerBudget{
      *this, "register-budget",
      llvm::cl::desc("One block per SM fewer for each kernel that ptxas "
                     "spills more than 32 bytes at its bound, while that "
                     "spills less (dat-gpu-register-budget)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> index32{
      *this, "index32",
      llvm::cl::desc("32-bit indices in the kernels alone on their SM whose "
                     "buffers all fit them (dat-gpu-index-width)"),
      llvm::cl::init(true)};
  ::mlir::detail::PassOptions::Option<bool> shortSharedPointers{
      *this, "short-shared-pointers",
      llvm::cl::desc("32-bit shared-memory pointers in the device code "
                     "(LLVM's nvptx-short-ptr, a process-wide flag)"),
      llvm::cl::init(true)};
};

struct CPUPipelineOptions : public CPUTargetOptions<CPUPipelineOptions> {
  PassOptions::Option<bool> trackMemory{
      *this, "track-memory",
      llvm::cl::desc("Allocate through MLIR's generic allocation functions, "
                     "which the runtime of datc's programs defines to track "
                     "the model's peak memory (other hosts, e.g. "
                     "mlir-runner, do not define them)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> openmp{
      *this, "openmp",
      llvm::cl::desc("Run the tile loops on OpenMP threads (convert-scf-to-"
                     "openmp); the host must provide libomp (mlir-runner: "
                     "--shared-libs=.../libomp.so)"),
      llvm::cl::init(false)};
};

struct GPUPipelineOptions : public GPUTargetOptions<GPUPipelineOptions> {};

/// The options of `--dat-program-pipeline`: the target's, and how the
/// program stores its tensors. Programs track their peak memory (their
/// runtime defines the allocation functions).
struct ProgramPipelineOptions
    : public GPUTargetOptions<ProgramPipelineOptions,
                              CPUTargetOptions<ProgramPipelineOptions>> {
  PassOptions::Option<Target> target{
      *this, "target", llvm::cl::desc("Where the program runs"),
      llvm::cl::init(Target::CPU),
      llvm::cl::values(clEnumValN(Target::CPU, "cpu", "the host CPU"),
                       clEnumValN(Target::CUDA, "cuda",
                                  "NVIDIA GPUs (kernels for `chip`)"))};
  PassOptions::Option<Precision> precision{
      *this, "precision", llvm::cl::desc("Storage of float tensors"),
      llvm::cl::init(Precision::FP32),
      llvm::cl::values(clEnumValN(Precision::FP32, "fp32", "float32"),
                       clEnumValN(Precision::BF16, "bf16",
                                  "bfloat16 storage, float32 arithmetic "
                                  "(dat-narrow-storage)"))};
  PassOptions::Option<bool> trackMemory{
      *this, "track-memory",
      llvm::cl::desc("CPU: allocate through MLIR's generic allocation "
                     "functions, which the program's runtime defines to "
                     "report the model's peak memory (the GPU runtime "
                     "counts its allocations itself)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> openmp{
      *this, "openmp",
      llvm::cl::desc("CPU: run the tile loops on OpenMP threads (the "
                     "program's --threads, OMP_NUM_THREADS, default all "
                     "cores)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> profilePoints{
      *this, "profile-points",
      llvm::cl::desc("CPU: time each op group when the program runs with "
                     "--profile (dat-profile-points)"),
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

/// The shared front half: (flash tiling and dat-decompose-flash with
/// `flash`'s options), decomposition, bufferization with `beforeDealloc`'s
/// passes (may be null) ahead of buffer deallocation.
/// Projections are fused with their epilogues, or with `gemmLibrary` left
/// whole and turned into calls of the runtime's GEMM (which with
/// `libraryEpilogues` take zero fills and bf16 roundings around them).
/// With `queryTile` 0, `balanceThreads` > 0 chooses each op's query tile for
/// that many threads (the CPU), else for the GPU's blocks
/// (dat-tile-attention); `projectionThreads` > 1 sizes projections' row
/// tiles for that many threads (dat-fuse-epilogues).
void buildLinalgOnBuffers(
    OpPassManager &pm, bool tileAttention, int64_t queryTile,
    const DatDecomposeFlashOptions &flash, bool fuseEpilogues,
    GemmStrategy gemm, bool libraryEpilogues,
    function_ref<void(OpPassManager &)> beforeDealloc,
    function_ref<void(OpPassManager &)> beforeBufferize = nullptr,
    int64_t balanceThreads = 0, int64_t projectionThreads = 0);

/// Loops on buffers → control flow: strided metadata, affine, scf, and the
/// math expansions LLVM lacks.
void buildLoopsToControlFlow(OpPassManager &pm);

/// Key blocks of a static size where the key loop's bounds prove it (a key
/// count that the block divides): scf-for-loop-canonicalization folds each
/// block's affine.min size to the block, canonicalization makes the tile
/// buffers static (so that dat-gpu-swizzle-shared-tiles, which needs static
/// rows, takes them). Before dat-gpu-map-tiles, on the GPU and in its
/// emulation alike.
void addStaticKeyBlocks(OpPassManager &pm);

/// Host functions → LLVM dialect (C wrappers when `cInterface`), with
/// `beforeLLVM`'s passes (may be null) ahead of convert-to-llvm.
void buildHostToLLVM(OpPassManager &pm, bool cInterface,
                     function_ref<void(OpPassManager &)> beforeLLVM);

/// The program of a model, from the frontend's module (dat on tensors,
/// `@forward` and `@step` with #dat.program_value signatures) to the LLVM
/// dialect module `datc` translates, compiles and links: bf16 narrowing,
/// the manifest, the target's pipeline, the entry points. `datc` runs
/// exactly this pipeline, so `dat-opt --dat-program-pipeline` replays it.
void buildProgramPipeline(OpPassManager &pm,
                          const ProgramPipelineOptions &options);

/// Why `options` do not make a program (options that contradict each other
/// or the target), or "" when they do. `--dat-program-pipeline` and datc
/// refuse such options before building anything.
std::string checkProgramPipelineOptions(const ProgramPipelineOptions &options);
/// The same for the GPU's block size and shared memory per block.
std::string checkGPUTargetOptions(int64_t blockSize, int64_t sharedMemory);

/// Registers `--dat-cpu-pipeline`, `--dat-gpu-pipeline` and
/// `--dat-program-pipeline` with the pass registry, for dat-opt.
void registerPipelines();

} // namespace mlir::dat

#endif // DAT_PIPELINES_PIPELINES_H
