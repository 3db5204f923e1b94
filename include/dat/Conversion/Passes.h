//===- Passes.h - dat conversion passes -------------------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_CONVERSION_PASSES_H
#define DAT_CONVERSION_PASSES_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace mlir {
namespace linalg {
class LinalgOp;
} // namespace linalg
namespace memref {
class ViewOp;
} // namespace memref
namespace scf {
class ParallelOp;
} // namespace scf
namespace dat {

/// The most shared memory a tile kernel may ask for per block: sm_90's
/// opt-in limit of 227 KiB, less the 16 bytes each tile kernel adds to its
/// tile buffers (the launch asks for shared-memory + 16).
inline constexpr int64_t kMaxTileSharedMemory = 227 * 1024 - 16;

#ifndef DAT_CUDA_TOOLKIT
#define DAT_CUDA_TOOLKIT "/usr/local/cuda"
#endif

/// The CUDA toolkit the GPU pipelines and passes use by default
/// ($CUDA_HOME, else the folder found at configure time).
inline std::string defaultCudaToolkit() {
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    return home;
  return DAT_CUDA_TOOLKIT;
}

/// Threads per warp.
inline constexpr int64_t kWarpSize = 32;
/// sm_90's 32-bit registers per SM.
inline constexpr int64_t kRegistersPerSM = 65536;
/// The most registers ptxas gives a thread.
inline constexpr int64_t kMaxRegistersPerThread = 255;
/// The registers a thread of a tile kernel is given room for
/// (dat-gpu-kernel-occupancy's default `registers-per-thread`): the MMA
/// loops' fragments and the warp-row programs' rows fit without spills.
inline constexpr int64_t kTileKernelRegisters = 168;

/// The registers a thread may use where `blocks` blocks of `threads` threads
/// share an SM. The register file is four partitions of 16,384, each holding
/// whole warps, and ptxas allocates 8 registers a thread at a time: 5 blocks
/// of 2 warps leave a partition 3 warps, 168 registers each, as 6 do.
inline int64_t registersPerThreadAt(int64_t blocks, int64_t threads) {
  constexpr int64_t partitions = 4;
  int64_t warps = blocks * ((threads + kWarpSize - 1) / kWarpSize);
  int64_t perPartition = (warps + partitions - 1) / partitions;
  int64_t registers = kRegistersPerSM / partitions / (perPartition * kWarpSize);
  return std::min(registers / 8 * 8, kMaxRegistersPerThread);
}

/// The most blocks of `threads` threads an SM holds at `registersPerThread`
/// each, at least one.
inline int64_t blocksPerSMAt(int64_t threads, int64_t registersPerThread) {
  int64_t blocks = 1;
  while (registersPerThreadAt(blocks + 1, threads) >= registersPerThread)
    ++blocks;
  return blocks;
}

/// Blocks of `threads` threads a kernel that keeps its rows in its warps'
/// registers gets per SM: as many as the register file holds at
/// `registersPerThread` each, at least one. One means the block is alone on
/// its SM: dat-gpu-map-tiles gives its tile buffers the SM's shared memory,
/// and dat-gpu-kernel-occupancy its registers.
inline int64_t
rowsInRegistersBlocksPerSM(int64_t threads,
                           int64_t registersPerThread = kTileKernelRegisters) {
  return blocksPerSMAt(threads, registersPerThread);
}

#define GEN_PASS_DECL
#include "dat/Conversion/Passes.h.inc"

/// Gives the nvgpu dialect the ConvertToLLVMPatternInterface, so that
/// convert-gpu-to-nvvm lowers its ops in its own conversion (one `index`
/// width for the whole kernel; NVGPUToLLVMInterface.cpp).
void registerNVGPUToLLVMInterface(DialectRegistry &registry);

#define GEN_PASS_REGISTRATION
#include "dat/Conversion/Passes.h.inc"

/// The fewest elements of an elementwise loop that
/// mapParallelLoopToBlocksAndThreads gives several to a thread: below it,
/// fewer blocks than a few waves of the H200's 132 SMs would be left.
inline constexpr int64_t kMinCoarsenedElements = int64_t(1) << 20;

/// Collapses `loop` to one dimension, tiles it by `blockSize` and maps the
/// tiles to blocks and the tile's elements to threads (nested loops run
/// sequentially in their thread). An elementwise loop (loads, arithmetic,
/// stores) of a static kMinCoarsenedElements or more elements gives each
/// thread `elementsPerThread` of them, blockSize apart, its loads first.
LogicalResult mapParallelLoopToBlocksAndThreads(RewriterBase &rewriter,
                                                scf::ParallelOp loop,
                                                int64_t blockSize,
                                                int64_t elementsPerThread = 1);

/// XOR-swizzles the 16-byte chunks of each row of the shared-memory tile
/// buffer seen through `views` (views of the same bytes with the same rows)
/// by the row's index mod 8, rewriting every access; fails, changing
/// nothing, where its rows are not a multiple of 128 bytes or a use is not
/// an element load or store, a vector load or store or a cp.async inside
/// one 16-byte chunk, an ldmatrix or a size or address query. The caller
/// makes sure no other view of the shared memory overlaps the buffer (see
/// dat-gpu-swizzle-shared-tiles).
LogicalResult swizzleSharedTileBuffers(RewriterBase &rewriter,
                                       ArrayRef<memref::ViewOp> views);

/// What pipelineStagingCopies changed.
struct StagingPipeline {
  /// Staging copies now issued ahead of the barrier that makes them ready:
  /// no barrier right after them.
  DenseSet<Operation *> issued;
  /// The barriers that took their places (after a cp.async wait where the
  /// copies are asynchronous).
  SmallVector<Operation *> readyBarriers;
};

/// Moves each staging copy (`isStagingCopy`: global → shared tile buffer,
/// heads moved or not)
/// of the loops in `kernel` up to right after the barrier before it, the
/// first of a loop round to the previous iteration (and before the loop),
/// leaving a barrier where it was (PipelineStagingCopies.cpp). Run on the
/// tile's body before its linalg ops are spread over the threads, which
/// put a barrier after each op but the `issued` copies.
StagingPipeline
pipelineStagingCopies(RewriterBase &rewriter, Operation *kernel,
                      llvm::function_ref<bool(linalg::LinalgOp)> isStagingCopy,
                      bool asyncCopies);

/// Moves `op` into a new scf.parallel of one iteration where it is, which
/// dat-gpu-map-parallel-loops maps to a kernel of one thread.
void wrapInOneIterationLoop(RewriterBase &rewriter, Operation *op);

/// Rewrites host-side allocations of buffers a kernel may touch into device
/// memory (see dat-gpu-device-allocations).
void populateDeviceAllocationPatterns(RewritePatternSet &patterns);

// What the host of a GPU program may touch (HostAccess.cpp).

/// Whether `op` runs on the host: not inside a kernel nor a GPU module.
bool isOnHost(Operation *op);

/// Whether `symbol` names the deallocation helper that
/// convert-bufferization-to-memref generates (host code on host arrays).
inline bool isDeallocHelper(StringRef symbol) {
  return symbol.starts_with("dealloc_helper");
}

/// Whether only the host uses the buffer `alloc` allocates: one marked
/// `dat.host_memory`, or an array of pointers or flags for the deallocation
/// helper (passed to it, otherwise only loaded and stored on the host).
bool isHostOnly(Operation *alloc);

/// The buffer a chain of views of `buffer` starts from (an allocation, a
/// global or an argument).
Value rootBuffer(Value buffer);

/// Whether `buffer` is in host memory: a view of a host-only allocation
/// (isHostOnly) or of a global constant.
bool isHostMemory(Value buffer);

/// The buffers whose contents `op` reads or writes (loads, stores, copies,
/// linalg ops, vector transfers); none for other ops.
SmallVector<Value> accessedBuffers(Operation *op);

/// The asynchronous GPU ops gpu-to-llvm lowers, made blocking: a token to
/// start from, and a wait for the op's token. (gpu-to-llvm lowers no
/// synchronous gpu.alloc, gpu.dealloc or gpu.memcpy.)
Value createAsyncStart(OpBuilder &b, Location loc);
void createWait(OpBuilder &b, Location loc, Value token);

/// A gpu.memcpy from `src` to `dst` that the host waits for.
void createBlockingMemcpy(OpBuilder &b, Location loc, Value dst, Value src);

} // namespace dat
} // namespace mlir

#endif // DAT_CONVERSION_PASSES_H
