//===- DeviceAllocations.cpp - the program's buffers in device memory -----===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The host code allocates and frees the buffers kernels use, and copies
// constants into them; the buffers live in device memory. (Only the
// buffers the host alone uses stay in host memory.)
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"
#include "dat/Dialect/Dat/IR/DatDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dat {

#define GEN_PASS_DEF_DATGPUSTAGECONSTANTS
#define GEN_PASS_DEF_DATGPUDEVICEALLOCATIONS
#include "dat/Conversion/Passes.h.inc"

namespace {

struct AllocToDevice final : OpRewritePattern<memref::AllocOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::AllocOp op,
                                PatternRewriter &rewriter) const override {
    if (!isOnHost(op) || isHostOnly(op))
      return failure();
    // Device memory: the host touches no buffer's contents (copies are
    // device copies, dat-gpu-device-copies; dat-gpu-check-host-access
    // checks it) and the runtime copies results out explicitly.
    Location loc = op.getLoc();
    Value start = createAsyncStart(rewriter, loc);
    auto alloc = gpu::AllocOp::create(
        rewriter, loc, op.getType(), rewriter.getType<gpu::AsyncTokenType>(),
        ValueRange{start}, op.getDynamicSizes(), op.getSymbolOperands(),
        /*hostShared=*/nullptr);
    createWait(rewriter, loc, alloc.getAsyncToken());
    rewriter.replaceOp(op, alloc.getMemref());
    return success();
  }
};

struct DeallocOnDevice final : OpRewritePattern<memref::DeallocOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::DeallocOp op,
                                PatternRewriter &rewriter) const override {
    if (!isOnHost(op) || isHostMemory(op.getMemref()))
      return failure();
    Location loc = op.getLoc();
    Value start = createAsyncStart(rewriter, loc);
    auto dealloc = gpu::DeallocOp::create(
        rewriter, loc, rewriter.getType<gpu::AsyncTokenType>(),
        ValueRange{start}, op.getMemref());
    createWait(rewriter, loc, dealloc.getAsyncToken());
    rewriter.eraseOp(op);
    return success();
  }
};

/// A copy of a constant, in an allocation that deallocation and
/// dat-gpu-device-allocations then treat like any other buffer.
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
      if (isOnHost(op))
        constants.push_back(op);
    });
    OpBuilder b(&getContext());
    for (memref::GetGlobalOp op : constants)
      stageConstant(b, op);
  }
};

struct GPUDeviceAllocationsPass final
    : impl::DatGPUDeviceAllocationsBase<GPUDeviceAllocationsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDeviceAllocationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void populateDeviceAllocationPatterns(RewritePatternSet &patterns) {
  patterns.add<AllocToDevice, DeallocOnDevice>(patterns.getContext());
}

} // namespace mlir::dat
