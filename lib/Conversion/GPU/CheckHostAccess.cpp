//===- CheckHostAccess.cpp - the host touches no device buffer ------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::dat {

#define GEN_PASS_DEF_DATGPUCHECKHOSTACCESS
#include "dat/Conversion/Passes.h.inc"

/// Where a buffer lives, from the start of its view chain: a function's
/// argument (bound by the runtime) or a gpu.alloc is device memory.
static Operation *deviceOrigin(Value buffer, Operation *&allocation) {
  allocation = nullptr;
  while (Operation *def = buffer.getDefiningOp()) {
    if (isa<gpu::AllocOp>(def)) {
      allocation = def;
      return def;
    }
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return nullptr;
    buffer = view.getViewSource();
  }
  auto arg = cast<BlockArgument>(buffer);
  return arg.getOwner()->getParentOp();
}

namespace {
struct GPUCheckHostAccessPass final
    : impl::DatGPUCheckHostAccessBase<GPUCheckHostAccessPass> {
  void runOnOperation() override {
    WalkResult result =
        getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
          if (!isOnHost(op))
            return WalkResult::skip();
          if (auto fn = dyn_cast<FunctionOpInterface>(op);
              fn && fn.getName().starts_with("dealloc_helper"))
            return WalkResult::skip(); // reads the pointer arrays only
          bool reads =
              isa<memref::LoadOp, memref::StoreOp, memref::CopyOp,
                  memref::AtomicRMWOp, linalg::LinalgOp, vector::TransferReadOp,
                  vector::TransferWriteOp, vector::LoadOp, vector::StoreOp>(op);
          if (!reads)
            return WalkResult::advance();
          for (Value operand : op->getOperands()) {
            if (!isa<MemRefType>(operand.getType()))
              continue;
            Operation *allocation = nullptr;
            Operation *origin = deviceOrigin(operand, allocation);
            if (!origin)
              continue;
            InFlightDiagnostic diag =
                op->emitError("dat-gpu-check-host-access: the host accesses a "
                              "buffer in device memory ('")
                << op->getName() << "' outside a kernel)";
            if (allocation)
              diag.attachNote(allocation->getLoc()) << "allocated here";
            else
              diag.attachNote(origin->getLoc())
                  << "an argument of this function";
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace

} // namespace mlir::dat
