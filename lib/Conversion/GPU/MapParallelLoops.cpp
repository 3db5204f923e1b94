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
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

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

/// Whether `loop`'s body is loads, ops without memory effects and then
/// stores (an elementwise linalg op's), so that a thread may run it for
/// several elements with every load first.
static bool isLoadComputeStore(scf::ParallelOp loop) {
  // (A loop with reductions carries values the coarsened one would drop.)
  if (loop.getNumResults() > 0)
    return false;
  bool stored = false;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (isa<memref::StoreOp>(op)) {
      stored = true;
    } else if (isa<memref::LoadOp>(op)) {
      if (stored)
        return false;
    } else if (op.getNumRegions() > 0 || !isPure(&op)) {
      return false;
    }
  }
  return stored;
}

/// The collapsed loop `loop` (0 to N step 1) as a loop over N / perThread
/// work items, each `perThread` elements blockSize apart within a block's
/// chunk of blockSize · perThread (so each load and store of a warp stays
/// contiguous): the elements' loads first, then their arithmetic, then
/// their stores, each guarded where N is not a multiple of the chunk
/// (loads past N read element N - 1). With no store between them, the
/// loads of every element can be in flight together: one element per
/// thread keeps 2-4 bytes a thread in flight, a fraction of what HBM needs
/// to stream. Different elements never touch the same location (each
/// writes its own output elements, and reads inputs that alias an output
/// only at the same element), so moving the stores last is exact.
static scf::ParallelOp coarsen(RewriterBase &rewriter, scf::ParallelOp loop,
                               int64_t n, int64_t blockSize,
                               int64_t perThread) {
  Location loc = loop.getLoc();
  int64_t chunk = blockSize * perThread;
  bool partial = n % chunk != 0;
  rewriter.setInsertionPoint(loop);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  auto items = scf::ParallelOp::create(
      rewriter, loc, ValueRange{index(0)},
      ValueRange{index(llvm::divideCeil(n, chunk) * blockSize)},
      ValueRange{index(1)});
  rewriter.setInsertionPointToStart(items.getBody());
  Value item = items.getInductionVars()[0];
  Value block = index(blockSize);
  // The item's first element: its block's chunk plus its lane.
  Value first = arith::AddIOp::create(
      rewriter, loc,
      arith::MulIOp::create(rewriter, loc,
                            arith::DivUIOp::create(rewriter, loc, item, block),
                            index(chunk)),
      arith::RemUIOp::create(rewriter, loc, item, block));
  // (Only a partial last chunk clamps its loads and guards its stores.)
  Value last = partial ? index(n - 1) : Value(),
        bound = partial ? index(n) : Value();
  Value iv = loop.getInductionVars()[0];
  // The loads and the index arithmetic they need come first for every
  // element, then the rest of the arithmetic: in element order, each
  // element's arithmetic would wait for its load before the next load
  // issues (ptxas keeps that order).
  Block *body = loop.getBody();
  DenseSet<Operation *> addressing;
  for (Operation &op : llvm::reverse(body->without_terminator()))
    if (isa<memref::LoadOp>(op) ||
        llvm::any_of(op.getUsers(), [&](Operation *user) {
          return addressing.contains(user);
        }))
      addressing.insert(&op);
  SmallVector<IRMapping> clones(perThread);
  SmallVector<Value> elements;
  for (int64_t k = 0; k < perThread; ++k) {
    Value element =
        arith::AddIOp::create(rewriter, loc, first, index(k * blockSize));
    elements.push_back(element);
    clones[k].map(
        iv,
        partial
            ? arith::MinUIOp::create(rewriter, loc, element, last).getResult()
            : element);
    for (Operation &op : body->without_terminator())
      if (addressing.contains(&op))
        rewriter.clone(op, clones[k]);
  }
  for (int64_t k = 0; k < perThread; ++k)
    for (Operation &op : body->without_terminator())
      if (!addressing.contains(&op) && !isa<memref::StoreOp>(op))
        rewriter.clone(op, clones[k]);
  for (int64_t k = 0; k < perThread; ++k) {
    OpBuilder::InsertionGuard guard(rewriter);
    if (partial) {
      Value inside = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ult, elements[k], bound);
      auto ifOp = scf::IfOp::create(rewriter, loc, inside,
                                    /*withElseRegion=*/false);
      rewriter.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    }
    for (Operation &op : body->without_terminator())
      if (isa<memref::StoreOp>(op))
        rewriter.clone(op, clones[k]);
  }
  rewriter.eraseOp(loop);
  return items;
}

LogicalResult mapParallelLoopToBlocksAndThreads(RewriterBase &rewriter,
                                                scf::ParallelOp loop,
                                                int64_t blockSize,
                                                int64_t elementsPerThread) {
  MLIRContext *ctx = loop.getContext();
  // Its elements, where every dim's trip count is static (the collapsed
  // loop's bound is their product, not a constant); -1 where one is not.
  int64_t elements = 1;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> l = getConstantIntValue(lb),
                           u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    elements =
        l && u && s && *s > 0 && elements > 0
            ? elements * std::max<int64_t>(0, llvm::divideCeil(*u - *l, *s))
            : -1;
  }
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
  // Elementwise loops large enough to fill the GPU many times over: several
  // elements a thread (coarsen).
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[0]),
                         step = getConstantIntValue(loop.getStep()[0]);
  if (elementsPerThread > 1 && lb == 0 && step == 1 &&
      elements >= kMinCoarsenedElements && isLoadComputeStore(loop))
    loop = coarsen(rewriter, loop, elements, blockSize, elementsPerThread);
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
    if (failed(checkOptionRange(getOperation(), getArgument(),
                                "elements-per-thread", elementsPerThread, 1,
                                64)))
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : roots)
      if (failed(mapParallelLoopToBlocksAndThreads(rewriter, loop, blockSize,
                                                   elementsPerThread)))
        return signalPassFailure();
  }
};
} // namespace
} // namespace mlir::dat
