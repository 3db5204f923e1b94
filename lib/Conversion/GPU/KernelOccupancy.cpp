//===- KernelOccupancy.cpp - blocks per SM each kernel must fit -----------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::dat {
#define GEN_PASS_DEF_DATGPUKERNELOCCUPANCY
#include "dat/Conversion/Passes.h.inc"

namespace {
struct GPUKernelOccupancyPass final
    : impl::DatGPUKernelOccupancyBase<GPUKernelOccupancyPass> {
  using Base::Base;
  void runOnOperation() override {
    if (blocksPerSM < 1) {
      getOperation()->emitError("dat-gpu-kernel-occupancy: blocks-per-sm "
                                "must be positive, got ")
          << static_cast<int64_t>(blocksPerSM);
      return signalPassFailure();
    }
    Builder b(&getContext());
    getOperation()->walk([&](gpu::GPUFuncOp fn) {
      if (fn.isKernel() &&
          !fn->hasAttr(NVVM::NVVMDialect::getMinctasmAttrName()))
        fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    b.getI32IntegerAttr(blocksPerSM));
    });
  }
};
} // namespace
} // namespace mlir::dat
