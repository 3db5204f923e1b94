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

/// A host copy of a constant, in an allocation that deallocation and
/// dat-gpu-host-shared-memory then treat like any other buffer.
void stageConstant(OpBuilder &b, memref::GetGlobalOp op) {
  Location loc = op.getLoc();
  MemRefType type = op.getType();
  auto plain = MemRefType::get(type.getShape(), type.getElementType());
  b.setInsertionPointAfter(op);
  auto copy = memref::AllocOp::create(b, loc, plain);
  auto copyOp = memref::CopyOp::create(b, loc, op.getResult(), copy);
  Value result = copy;
  if (plain != type)
    result = memref::CastOp::create(b, loc, type, copy);
  op.getResult().replaceAllUsesExcept(result, copyOp);
}

struct GPUStageConstantsPass final
    : impl::DatGPUStageConstantsBase<GPUStageConstantsPass> {
  void runOnOperation() override {
    SmallVector<memref::GetGlobalOp> constants;
    getOperation()->walk([&](memref::GetGlobalOp op) {
      if (onHost(op))
        constants.push_back(op);
    });
    OpBuilder b(&getContext());
    for (memref::GetGlobalOp op : constants)
      stageConstant(b, op);
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
