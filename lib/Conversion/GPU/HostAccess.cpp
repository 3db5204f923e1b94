//===- HostAccess.cpp - what the host of a GPU program may touch ----------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Shared by the passes that keep the host's hands off device buffers
// (dat-gpu-device-copies, dat-gpu-map-parallel-loops,
// dat-gpu-device-allocations, dat-gpu-check-host-access).
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"
#include "dat/Dialect/Dat/IR/DatDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::dat {

bool isOnHost(Operation *op) {
  return !op->getParentOfType<gpu::LaunchOp>() &&
         !op->getParentOfType<gpu::GPUModuleOp>();
}

bool isHostOnly(Operation *alloc) {
  if (!isa<memref::AllocOp>(alloc))
    return false;
  if (alloc->hasAttr(kHostMemoryAttr))
    return true;
  // The helper's arrays: passed to it, otherwise only loaded and stored by
  // the host. (A data buffer that only host code touches so far is not
  // host-only: that code becomes kernels.)
  bool passedToHelper = false;
  SmallVector<Value> worklist{alloc->getResult(0)};
  while (!worklist.empty()) {
    Value buffer = worklist.pop_back_val();
    for (Operation *user : buffer.getUsers()) {
      if (!isOnHost(user) || user->getParentOfType<linalg::LinalgOp>())
        return false;
      if (isa<memref::LoadOp, memref::StoreOp, memref::DeallocOp,
              memref::DimOp>(user))
        continue;
      if (auto call = dyn_cast<func::CallOp>(user);
          call && isDeallocHelper(call.getCallee())) {
        passedToHelper = true;
        continue;
      }
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == buffer) {
        worklist.append(user->result_begin(), user->result_end());
        continue;
      }
      return false;
    }
  }
  return passedToHelper;
}

Value rootBuffer(Value buffer) {
  auto memref = dyn_cast<TypedValue<BaseMemRefType>>(buffer);
  return memref ? memref::skipViewLikeOps(memref) : buffer;
}

bool isHostMemory(Value buffer) {
  Operation *root = rootBuffer(buffer).getDefiningOp();
  return root && (isHostOnly(root) || isa<memref::GetGlobalOp>(root));
}

SmallVector<Value> accessedBuffers(Operation *op) {
  if (!isa<memref::LoadOp, memref::StoreOp, memref::CopyOp, memref::AtomicRMWOp,
           linalg::LinalgOp, vector::TransferReadOp, vector::TransferWriteOp,
           vector::LoadOp, vector::StoreOp>(op))
    return {};
  return llvm::filter_to_vector(op->getOperands(), [](Value v) {
    return isa<BaseMemRefType>(v.getType());
  });
}

Value createAsyncStart(OpBuilder &b, Location loc) {
  return gpu::WaitOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                             ValueRange{})
      .getAsyncToken();
}

void createWait(OpBuilder &b, Location loc, Value token) {
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
}

void createBlockingMemcpy(OpBuilder &b, Location loc, Value dst, Value src) {
  Value start = createAsyncStart(b, loc);
  auto copy = gpu::MemcpyOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                                    ValueRange{start}, dst, src);
  createWait(b, loc, copy.getAsyncToken());
}

} // namespace mlir::dat
