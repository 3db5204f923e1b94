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
