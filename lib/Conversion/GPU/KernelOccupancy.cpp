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
    if (failed(checkOptionRange(getOperation(), getArgument(),
                                "registers-per-thread", registersPerThread, 1)))
      return signalPassFailure();
    Builder b(&getContext());
    getOperation()->walk([&](gpu::GPUFuncOp fn) {
      if (!fn.isKernel() ||
          fn->hasAttr(NVVM::NVVMDialect::getMinctasmAttrName()))
        return;
      // Small blocks (a warp-row tile's 128 threads): as many as the
      // register file holds at `registersPerThread` each. A kernel that
      // keeps its rows in its warps' registers (it shuffles across lanes:
      // their row reductions) gets that many registers even where fewer
      // blocks then fit (relational attention's 256 threads: one).
      int64_t blocks = blocksPerSM;
      if (std::optional<ArrayRef<int32_t>> size = fn.getKnownBlockSize()) {
        int64_t threads = 1;
        for (int32_t extent : *size)
          threads *= extent;
        int64_t fit = blocksPerSMAt(threads, registersPerThread);
        bool rowsInRegisters = fn.walk([](gpu::ShuffleOp) {
                                   return WalkResult::interrupt();
                                 }).wasInterrupted();
        blocks = rowsInRegisters
                     ? rowsInRegistersBlocksPerSM(threads, registersPerThread)
                     : std::max<int64_t>(blocks, fit);
      }
      fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  b.getI32IntegerAttr(blocks));
    });
  }
};
} // namespace
} // namespace mlir::dat
