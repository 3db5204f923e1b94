//===- CheckHostAccess.cpp - the host touches no device buffer ------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::dat {

#define GEN_PASS_DEF_DATGPUCHECKHOSTACCESS
#include "dat/Conversion/Passes.h.inc"

namespace {
struct GPUCheckHostAccessPass final
    : impl::DatGPUCheckHostAccessBase<GPUCheckHostAccessPass> {
  void runOnOperation() override {
    WalkResult result =
        getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
          if (!isOnHost(op))
            return WalkResult::skip();
          if (auto fn = dyn_cast<FunctionOpInterface>(op);
              fn && isDeallocHelper(fn.getName()))
            return WalkResult::skip(); // reads the pointer arrays only
          for (Value buffer : accessedBuffers(op)) {
            // Device memory: a gpu.alloc, or an argument (the runtime binds
            // device buffers).
            Value root = rootBuffer(buffer);
            auto arg = dyn_cast<BlockArgument>(root);
            if (!arg && !root.getDefiningOp<gpu::AllocOp>())
              continue;
            InFlightDiagnostic diag =
                op->emitError("dat-gpu-check-host-access: the host accesses a "
                              "buffer in device memory ('")
                << op->getName() << "' outside a kernel)";
            if (arg)
              diag.attachNote(arg.getOwner()->getParentOp()->getLoc())
                  << "an argument of this function";
            else
              diag.attachNote(root.getLoc()) << "allocated here";
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
