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

/// The allocation a view chain starts from, if any.
static memref::AllocOp rootAllocation(Value buffer) {
  while (Operation *def = buffer.getDefiningOp()) {
    if (auto alloc = dyn_cast<memref::AllocOp>(def))
      return alloc;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return nullptr;
    buffer = view.getViewSource();
  }
  return nullptr;
}

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
    Type token = rewriter.getType<gpu::AsyncTokenType>();
    Value start =
        gpu::WaitOp::create(rewriter, loc, token, ValueRange{}).getAsyncToken();
    auto alloc = gpu::AllocOp::create(
        rewriter, loc, op.getType(), token, ValueRange{start},
        op.getDynamicSizes(), op.getSymbolOperands(), /*hostShared=*/nullptr);
    gpu::WaitOp::create(rewriter, loc, Type(),
                        ValueRange{alloc.getAsyncToken()});
    rewriter.replaceOp(op, alloc.getMemref());
    return success();
  }
};

struct DeallocOnDevice final : OpRewritePattern<memref::DeallocOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::DeallocOp op,
                                PatternRewriter &rewriter) const override {
    memref::AllocOp root = rootAllocation(op.getMemref());
    if (!isOnHost(op) || (root && isHostOnly(root)))
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
