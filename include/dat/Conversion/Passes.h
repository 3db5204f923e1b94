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

/// Rewrites host-side allocations and constants of `module` into memory that
/// host and device share (see dat-gpu-host-shared-memory).
void populateHostSharedMemoryPatterns(RewritePatternSet &patterns);

} // namespace dat
} // namespace mlir

#endif // DAT_CONVERSION_PASSES_H
