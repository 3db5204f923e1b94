//===- HostSharedMemory.cpp - host buffers the device can read ------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The first GPU programs keep the CPU program's structure: the host code
// allocates, copies and loops, kernels do the arithmetic. Managed memory
// lets both sides use every buffer without explicit transfers.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dat {

#define GEN_PASS_DEF_DATGPUSTAGECONSTANTS
#define GEN_PASS_DEF_DATGPUHOSTSHAREDMEMORY
#include "dat/Conversion/Passes.h.inc"

/// Host code: not inside a kernel, nor in a GPU module.
static bool onHost(Operation *op) {
  return !op->getParentOfType<gpu::LaunchOp>() &&
         !op->getParentOfType<gpu::GPUModuleOp>();
}

namespace {

struct AllocToHostShared final : OpRewritePattern<memref::AllocOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::AllocOp op,
                                PatternRewriter &rewriter) const override {
    if (!onHost(op))
      return failure();
    rewriter.replaceOpWithNewOp<gpu::AllocOp>(
        op, op.getType(), /*asyncToken=*/Type(), ValueRange{},
        op.getDynamicSizes(), op.getSymbolOperands(), rewriter.getUnitAttr());
    return success();
  }
};

struct DeallocToHostShared final : OpRewritePattern<memref::DeallocOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::DeallocOp op,
                                PatternRewriter &rewriter) const override {
    if (!onHost(op))
      return failure();
    // The runtime call of gpu.dealloc takes a stream: free on a fresh one
    // and wait for it (gpu-to-llvm lowers only the async form).
    Location loc = op.getLoc();
    Type token = rewriter.getType<gpu::AsyncTokenType>();
    Value stream =
        gpu::WaitOp::create(rewriter, loc, token, ValueRange{}).getAsyncToken();
    auto dealloc = gpu::DeallocOp::create(rewriter, loc, token,
                                          ValueRange{stream}, op.getMemref());
    gpu::WaitOp::create(rewriter, loc, Type(),
                        ValueRange{dealloc.getAsyncToken()});
    rewriter.eraseOp(op);
    return success();
  }
};

struct StageConstant final : OpRewritePattern<memref::GetGlobalOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::GetGlobalOp op,
                                PatternRewriter &rewriter) const override {
    if (!onHost(op) || op->hasAttr("dat.staged"))
      return failure();
    Location loc = op.getLoc();
    MemRefType type = op.getType();
    auto plain = MemRefType::get(type.getShape(), type.getElementType());
    rewriter.setInsertionPointAfter(op);
    Value copy = memref::AllocOp::create(rewriter, loc, plain);
    memref::CopyOp::create(rewriter, loc, op.getResult(), copy);
    Value result = copy;
    if (plain != type)
      result = memref::CastOp::create(rewriter, loc, type, copy);
    rewriter.replaceAllUsesExcept(op.getResult(), result,
                                  copy.getDefiningOp()->getNextNode());
    rewriter.modifyOpInPlace(
        op, [&] { op->setAttr("dat.staged", rewriter.getUnitAttr()); });
    return success();
  }
};

struct GPUStageConstantsPass final
    : impl::DatGPUStageConstantsBase<GPUStageConstantsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StageConstant>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    getOperation()->walk(
        [](memref::GetGlobalOp op) { op->removeAttr("dat.staged"); });
  }
};

struct GPUHostSharedMemoryPass final
    : impl::DatGPUHostSharedMemoryBase<GPUHostSharedMemoryPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateHostSharedMemoryPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void populateHostSharedMemoryPatterns(RewritePatternSet &patterns) {
  patterns.add<AllocToHostShared, DeallocToHostShared>(patterns.getContext());
}

} // namespace mlir::dat
