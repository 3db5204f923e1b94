//===- DeviceCopies.cpp - host copies of buffers as device copies ---------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Bufferization leaves copies on the host (a cache argument copied before it
// is updated, a row inserted into a cache, a constant staged into a buffer)
// and the language models read their position on the host. With buffers in
// device memory the host must touch none of them: copies become device-side
// (the copy engine for contiguous ones, a kernel for strided ones), and a
// small buffer the host reads comes to a host buffer first, explicitly.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"
#include "dat/Dialect/Dat/IR/DatDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::dat {

#define GEN_PASS_DEF_DATGPUDEVICECOPIES
#include "dat/Conversion/Passes.h.inc"

/// Whether the copy engine can copy `type` as one contiguous range.
static bool isContiguous(MemRefType type) {
  return type.hasStaticShape() && type.getLayout().isIdentity() &&
         type.getMemorySpace() == nullptr;
}

/// The most elements of a device buffer the host reads by copying it whole.
static constexpr int64_t kMaxHostRead = 4096;

namespace {
struct GPUDeviceCopiesPass final
    : impl::DatGPUDeviceCopiesBase<GPUDeviceCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    SmallVector<memref::LoadOp> loads;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      // Kernels, linalg bodies (kernels to be) and the deallocation
      // helper, which reads its own host arrays, are not host accesses.
      if (!isOnHost(op) || isa<linalg::LinalgOp>(op))
        return WalkResult::skip();
      if (auto fn = dyn_cast<FunctionOpInterface>(op);
          fn && isDeallocHelper(fn.getName()))
        return WalkResult::skip();
      if (auto copy = dyn_cast<memref::CopyOp>(op))
        copies.push_back(copy);
      else if (auto load = dyn_cast<memref::LoadOp>(op);
               load && !isHostMemory(load.getMemRef()))
        loads.push_back(load);
      return WalkResult::advance();
    });
    OpBuilder b(&getContext());
    for (memref::CopyOp copy : copies) {
      b.setInsertionPoint(copy);
      auto source = cast<MemRefType>(copy.getSource().getType());
      auto target = cast<MemRefType>(copy.getTarget().getType());
      if (isContiguous(source) && isContiguous(target))
        createBlockingMemcpy(b, copy.getLoc(), copy.getTarget(),
                             copy.getSource());
      else if (isHostMemory(copy.getSource())) {
        copy.emitError("dat-gpu-device-copies: a strided copy from host "
                       "memory to a device buffer");
        return signalPassFailure();
      } else
        // A kernel (convert-linalg-to-parallel-loops, then the mapping of
        // parallel loops to blocks and threads).
        linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                               copy.getTarget());
      copy.erase();
    }
    // A load on the host (a language model's position): the buffer comes
    // to host memory first.
    for (memref::LoadOp load : loads) {
      Value buffer = load.getMemRef();
      auto type = cast<MemRefType>(buffer.getType());
      if (!isContiguous(type) || type.getNumElements() > kMaxHostRead) {
        load.emitError("dat-gpu-device-copies: the host reads a device "
                       "buffer of ")
            << type << " (only whole buffers of up to " << kMaxHostRead
            << " elements are copied to the host)";
        return signalPassFailure();
      }
      b.setInsertionPoint(load);
      auto host = memref::AllocOp::create(b, load.getLoc(), type);
      host->setAttr(kHostMemoryAttr, b.getUnitAttr());
      createBlockingMemcpy(b, load.getLoc(), host, buffer);
      load.getMemrefMutable().assign(host);
      b.setInsertionPointAfter(load);
      memref::DeallocOp::create(b, load.getLoc(), host);
    }
  }
};
} // namespace

} // namespace mlir::dat
