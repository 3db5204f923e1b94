//===- PipelineStagingCopies.cpp - key blocks copied while the warps work -===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// dat-gpu-map-tiles stages the key and value blocks of a tile's key loop
// into shared memory with a barrier after each copy, so the block waits for
// every copy before its warps compute on it: nothing is in flight while the
// tensor cores work. FlashAttention-2 issues each copy as early as its
// buffer is free instead — the value block right after the barrier that
// makes the key block ready, the next key block right after the one that
// makes the value block ready — and waits for it only where it is read.
//
// Here that is a reordering of the key loop's body before its ops are
// spread over the threads: each staging copy moves up to right after the
// barrier that makes the copy before it ready (going round the loop for the
// first: the next key block is copied in the previous iteration, the first
// one before the loop), past the barriers of the ops between (a block-wide
// tile's scores and softmax steps), and its barrier stays where the copy
// was. The barriers stay where they were, so the copy overlaps what ran
// between them. On the GPU
// the copies become cp.async (`nvgpu.device_async_copy`, committed as a
// group) and each barrier waits for them first (`cp.async.wait_group 0`);
// on the CPU emulation they stay synchronous, which checks the reordering
// and the next block's indices against the golden cases.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::dat {

namespace {

/// The ops of `body` that `op`'s operands come from, transitively, in
/// program order; failure where one is not pure or `op` uses a value of
/// `body` other than its ops' results and the induction variable `iv`.
FailureOr<SmallVector<Operation *>> sliceInBlock(Operation *op, Block *body,
                                                 Value iv) {
  Operation *loop = body->getParentOp();
  SetVector<Operation *> slice;
  SmallVector<Value> worklist(op->getOperands());
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!loop->isAncestor(v.getParentBlock()->getParentOp()))
      continue; // Defined outside the loop.
    if (v == iv)
      continue;
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body || !isPure(def) ||
        def->getNumRegions() != 0)
      return failure();
    if (slice.insert(def))
      llvm::append_range(worklist, def->getOperands());
  }
  SmallVector<Operation *> ordered = slice.takeVector();
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// The root buffers the ops in `kernel` may write; failure where an op may
/// write memory it does not name.
FailureOr<DenseSet<Value>> writtenRoots(Operation *kernel) {
  DenseSet<Value> roots;
  WalkResult walk = kernel->walk([&](Operation *op) {
    if (op == kernel || op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return isa<gpu::BarrierOp>(op) ? WalkResult::advance()
                                     : WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (MemoryEffects::EffectInstance &effect : instances) {
      if (!isa<MemoryEffects::Write>(effect.getEffect()))
        continue;
      Value value = effect.getValue();
      if (!value)
        return WalkResult::interrupt();
      roots.insert(rootBuffer(value));
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return roots;
}

/// Whether every use of the tile buffer `copy` writes (through its views
/// and casts) other than `copy` lies in `body` after `after` and, where
/// `last` is given, not after `last`.
bool readersBetween(linalg::LinalgOp copy, Block *body, Operation *after,
                    Operation *last) {
  SmallVector<Value> views = {copy.getDpsInits()[0]};
  if (auto cast = views[0].getDefiningOp<memref::MemorySpaceCastOp>())
    views.push_back(cast.getSource());
  for (unsigned i = 0; i < views.size(); ++i)
    for (Operation *user : views[i].getUsers()) {
      if (user == copy.getOperation())
        continue;
      // (The readers of a view of the buffer read it.)
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == views[i]) {
        for (Value result : user->getResults())
          if (!llvm::is_contained(views, result))
            views.push_back(result);
        continue;
      }
      Operation *top = body->findAncestorOpInBlock(*user);
      if (!top || !after->isBeforeInBlock(top) ||
          (last && top != last && !top->isBeforeInBlock(last)))
        return false;
    }
  return true;
}

/// The barrier (after a cp.async wait on the GPU) that takes the place of a
/// staging copy whose issue moves: what it copied is ready past it.
Operation *createReadyBarrier(RewriterBase &rewriter, Location loc,
                              bool asyncCopies) {
  if (asyncCopies)
    NVVM::CpAsyncWaitGroupOp::create(rewriter, loc, 0);
  return gpu::BarrierOp::create(rewriter, loc);
}

/// Pipelines the staging copies of one loop (see the file comment).
void pipelineLoop(RewriterBase &rewriter, scf::ForOp loop,
                  llvm::function_ref<bool(linalg::LinalgOp)> isStagingCopy,
                  const DenseSet<Value> &written, bool asyncCopies,
                  StagingPipeline &result) {
  Block *body = loop.getBody();
  SmallVector<Operation *> linalgOps;
  for (Operation &op : body->without_terminator()) {
    if (isa<linalg::LinalgOp>(op)) {
      linalgOps.push_back(&op);
      continue;
    }
    // A linalg op nested deeper has its barrier inside: not this form.
    if (op.getNumRegions() && op.walk([](linalg::LinalgOp) {
                                  return WalkResult::interrupt();
                                }).wasInterrupted())
      return;
  }
  if (linalgOps.size() < 2)
    return;
  auto stagingCopy = [&](Operation *op) -> linalg::LinalgOp {
    auto copy = dyn_cast<linalg::LinalgOp>(op);
    if (!copy || !isStagingCopy(copy) ||
        written.contains(rootBuffer(copy.getDpsInputs()[0])))
      return nullptr;
    return copy;
  };

  // After which op the barrier following each linalg op stands: the op
  // itself (dat-gpu-map-tiles puts it right after), or the barrier that
  // took a moved copy's place.
  SmallVector<Operation *> barrierAfter(linalgOps);
  Location loc = loop.getLoc();
  Value iv = loop.getInductionVar();

  // The first op of the body, a copy, is issued for the next iteration
  // after the last op's barrier, and for the first before the loop: where
  // its buffer's readers all come before that barrier, and its view and
  // source depend only on the induction variable.
  linalg::LinalgOp rotated = stagingCopy(linalgOps.front());
  FailureOr<SmallVector<Operation *>> rotatedSlice = failure();
  if (rotated) {
    rotatedSlice = sliceInBlock(rotated, body, iv);
    if (failed(rotatedSlice) ||
        !readersBetween(rotated, body, rotated, linalgOps.back()))
      rotated = nullptr;
  }
  if (rotated) {
    rewriter.setInsertionPointAfter(rotated);
    barrierAfter.front() = createReadyBarrier(rewriter, loc, asyncCopies);
    result.readyBarriers.push_back(barrierAfter.front());
  }

  // Every other copy moves up past the barriers before it, to right after
  // the nearest one that makes another copy's block ready (the value block
  // right after the key block's): not past that one, whose wait would then
  // wait for this copy too. With no such barrier, to right after the first.
  for (size_t k = 1; k < linalgOps.size(); ++k) {
    linalg::LinalgOp copy = stagingCopy(linalgOps[k]);
    if (!copy)
      continue;
    size_t m = k - 1;
    while (m > 0 && !llvm::is_contained(result.readyBarriers, barrierAfter[m]))
      --m;
    Operation *anchor = barrierAfter[m];
    FailureOr<SmallVector<Operation *>> slice = sliceInBlock(copy, body, iv);
    if (failed(slice) || !readersBetween(copy, body, copy, nullptr))
      continue;
    rewriter.setInsertionPointAfter(copy);
    barrierAfter[k] = createReadyBarrier(rewriter, loc, asyncCopies);
    result.readyBarriers.push_back(barrierAfter[k]);
    Operation *at = anchor;
    for (Operation *op : *slice) {
      if (!anchor->isBeforeInBlock(op))
        continue;
      rewriter.moveOpAfter(op, at);
      at = op;
    }
    rewriter.moveOpAfter(copy, at);
    result.issued.insert(copy);
  }

  if (!rotated)
    return;
  // if (i + step < ub) copy block i + step, after the last barrier; if (lb
  // < ub) copy block lb, before the loop.
  auto issueAt = [&](Value i, Value exists) {
    auto branch = scf::IfOp::create(rewriter, loc, exists,
                                    /*withElseRegion=*/false);
    rewriter.setInsertionPoint(branch.thenBlock()->getTerminator());
    IRMapping mapping;
    mapping.map(iv, i);
    for (Operation *op : *rotatedSlice)
      rewriter.clone(*op, mapping);
    result.issued.insert(rewriter.clone(*rotated, mapping));
  };
  rewriter.setInsertionPointAfter(barrierAfter.back());
  Value next = arith::AddIOp::create(rewriter, loc, iv, loop.getStep());
  issueAt(next, arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt,
                                      next, loop.getUpperBound()));
  rewriter.setInsertionPoint(loop);
  issueAt(loop.getLowerBound(),
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt,
                                loop.getLowerBound(), loop.getUpperBound()));
  rewriter.eraseOp(rotated);
  for (Operation *op : llvm::reverse(*rotatedSlice))
    if (op->use_empty())
      rewriter.eraseOp(op);
}

} // namespace

StagingPipeline
pipelineStagingCopies(RewriterBase &rewriter, Operation *kernel,
                      llvm::function_ref<bool(linalg::LinalgOp)> isStagingCopy,
                      bool asyncCopies) {
  StagingPipeline result;
  // A copy's source must not change while it is in flight.
  FailureOr<DenseSet<Value>> written = writtenRoots(kernel);
  if (failed(written))
    return result;
  SmallVector<scf::ForOp> loops;
  kernel->walk([&](scf::ForOp loop) { loops.push_back(loop); });
  for (scf::ForOp loop : loops)
    pipelineLoop(rewriter, loop, isStagingCopy, *written, asyncCopies, result);
  return result;
}

} // namespace mlir::dat
