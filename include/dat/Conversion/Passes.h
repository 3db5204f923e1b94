//===- Passes.h - dat conversion passes -------------------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_CONVERSION_PASSES_H
#define DAT_CONVERSION_PASSES_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace scf {
class ParallelOp;
} // namespace scf
namespace dat {

/// The most shared memory a tile kernel may ask for per block: sm_90's
/// opt-in limit of 227 KiB, less the 16 bytes each tile kernel adds to its
/// tile buffers (the launch asks for shared-memory + 16).
inline constexpr int64_t kMaxTileSharedMemory = 227 * 1024 - 16;

#define GEN_PASS_DECL
#include "dat/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dat/Conversion/Passes.h.inc"

/// Collapses `loop` to one dimension, tiles it by `blockSize` and maps the
/// tiles to blocks and the tile's elements to threads (nested loops run
/// sequentially in their thread).
LogicalResult mapParallelLoopToBlocksAndThreads(RewriterBase &rewriter,
                                                scf::ParallelOp loop,
                                                int64_t blockSize);

/// Rewrites host-side allocations of buffers a kernel may touch into device
/// memory (see dat-gpu-device-allocations).
void populateDeviceAllocationPatterns(RewritePatternSet &patterns);

/// Whether `op` runs on the host: not inside a kernel nor a GPU module.
bool isOnHost(Operation *op);

/// Whether only the host uses the buffer `alloc` allocates: one marked
/// `dat.host_memory`, or an array of pointers or flags for the deallocation
/// helper (passed to it, otherwise only loaded and stored on the host).
bool isHostOnly(Operation *alloc);

/// Whether `buffer` is in host memory: a view of a host-only allocation
/// (isHostOnly) or of a global constant.
bool isHostMemory(Value buffer);

/// A gpu.memcpy from `src` to `dst` that the host waits for.
void createBlockingMemcpy(OpBuilder &b, Location loc, Value dst, Value src);

} // namespace dat
} // namespace mlir

#endif // DAT_CONVERSION_PASSES_H
