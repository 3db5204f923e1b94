//===- MapParallelLoops.cpp - scf.parallel nests → GPU blocks/threads -----===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The simplest mapping that is right for every loop nest the linalg
// lowering produces: one thread per element of the collapsed parallel
// iteration space, reductions sequential in the thread.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"
#include "dat/Pass/OptionChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

namespace mlir::dat {

#define GEN_PASS_DEF_DATGPUMAPPARALLELLOOPS
#define GEN_PASS_DEF_DATGPUWRAPSERIALOPS
#include "dat/Conversion/Passes.h.inc"

static gpu::ParallelLoopDimMappingAttr mapTo(MLIRContext *ctx,
                                             gpu::Processor processor) {
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  return gpu::ParallelLoopDimMappingAttr::get(ctx, processor, id, id);
}

static LogicalResult mapSequential(scf::ParallelOp loop) {
  SmallVector<gpu::ParallelLoopDimMappingAttr> seq(
      loop.getNumLoops(), mapTo(loop.getContext(), gpu::Processor::Sequential));
  return gpu::setMappingAttr(loop, seq);
}

LogicalResult mapParallelLoopToBlocksAndThreads(RewriterBase &rewriter,
                                                scf::ParallelOp loop,
                                                int64_t blockSize) {
  MLIRContext *ctx = loop.getContext();
  if (loop.getNumLoops() > 1) {
    std::vector<unsigned> all(loop.getNumLoops());
    std::iota(all.begin(), all.end(), 0u);
    rewriter.setInsertionPoint(loop);
    Operation *before = loop->getPrevNode();
    Block *block = loop->getBlock();
    collapseParallelLoops(rewriter, loop, {all});
    // The collapsed loop replaces `loop` right where it was.
    Operation *next = before ? before->getNextNode() : &block->front();
    while (next && !isa<scf::ParallelOp>(next))
      next = next->getNextNode();
    if (!next)
      return failure();
    loop = cast<scf::ParallelOp>(next);
  }
  auto [outer, inner] =
      scf::tileParallelLoop(loop, {blockSize}, /*noMinMaxBounds=*/true);
  if (failed(gpu::setMappingAttr(outer, mapTo(ctx, gpu::Processor::BlockX))) ||
      failed(gpu::setMappingAttr(inner, mapTo(ctx, gpu::Processor::ThreadX))))
    return failure();
  // Loops nested in the thread's work run sequentially in it: as scf.for
  // (a sequentially mapped scf.parallel below an scf.for or scf.if would
  // keep convert-parallel-loops-to-gpu from converting the nest at all).
  SmallVector<scf::ParallelOp> nested;
  inner.getBody()->walk([&](scf::ParallelOp op) { nested.push_back(op); });
  for (scf::ParallelOp op : nested) {
    rewriter.setInsertionPoint(op);
    if (succeeded(scf::parallelForToNestedFors(rewriter, op)))
      continue;
    if (failed(mapSequential(op)))
      return failure();
  }
  return success();
}

void wrapInOneIterationLoop(RewriterBase &rewriter, Operation *op) {
  Location loc = op->getLoc();
  rewriter.setInsertionPoint(op);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto loop = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                      ValueRange{one}, ValueRange{one});
  rewriter.moveOpBefore(op, loop.getBody()->getTerminator());
}

namespace {
struct GPUWrapSerialOpsPass final
    : impl::DatGPUWrapSerialOpsBase<GPUWrapSerialOpsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> serial;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumParallelLoops() == 0 &&
          isOnHost(op) && !op->getParentOfType<scf::ParallelOp>())
        serial.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : serial)
      wrapInOneIterationLoop(rewriter, op);
  }
};

struct GPUMapParallelLoopsPass final
    : impl::DatGPUMapParallelLoopsBase<GPUMapParallelLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(checkOptionRange(getOperation(), getArgument(), "block-size",
                                blockSize, 1, 1024)))
      return signalPassFailure();
    SmallVector<scf::ParallelOp> roots;
    getOperation()->walk([&](scf::ParallelOp op) {
      if (!op->getParentOfType<scf::ParallelOp>() &&
          !op->getParentOfType<gpu::LaunchOp>() &&
          !op->hasAttr(gpu::getMappingAttrName()))
        roots.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : roots)
      if (failed(mapParallelLoopToBlocksAndThreads(rewriter, loop, blockSize)))
        return signalPassFailure();
  }
};
} // namespace
} // namespace mlir::dat
