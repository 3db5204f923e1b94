//===- KernelOccupancy.cpp - blocks per SM each kernel must fit -----------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"
#include "dat/Pass/OptionChecks.h"

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
    if (failed(checkOptionRange(getOperation(), getArgument(), "blocks-per-sm",
                                blocksPerSM, 1)))
      return signalPassFailure();
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
