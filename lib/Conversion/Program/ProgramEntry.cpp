//===- ProgramEntry.cpp - dat_entry and dat_step --------------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The generated `_mlir_ciface_forward` takes one pointer per memref (plus a
// leading result pointer). The runtime's main is generic over models, so it
// calls `dat_entry(void **argv)` instead, which unpacks the pointer array:
// the only model-specific glue, generated here in the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"
#include "dat/Runtime/ProgramABI.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::dat {
#define GEN_PASS_DEF_DATPROGRAMENTRY
#include "dat/Conversion/Passes.h.inc"
} // namespace mlir::dat

using namespace mlir;

/// `symbol(void **argv)`: unpacks the pointer array into a call of the
/// C-interface function `target`.
static LogicalResult addEntry(ModuleOp module, LLVM::LLVMFuncOp target,
                              StringRef symbol) {
  if (module.lookupSymbol(symbol))
    return module.emitError() << "the module already has a '" << symbol << "'";
  MLIRContext *ctx = module.getContext();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  LLVM::LLVMFunctionType targetTy = target.getFunctionType();
  for (unsigned i = 0, e = targetTy.getNumParams(); i < e; ++i)
    if (targetTy.getParamType(i) != ptr)
      return target.emitError()
             << "parameter " << i
             << " is not a pointer: entry points take C interfaces "
                "(llvm.emit_c_interface), which pass memrefs by pointer";
  auto entryTy =
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr});
  auto entry = LLVM::LLVMFuncOp::create(b, loc, symbol, entryTy);
  Block *body = entry.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> operands;
  for (unsigned i = 0, e = targetTy.getNumParams(); i < e; ++i) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    operands.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
  }
  LLVM::CallOp::create(b, loc, target, operands);
  LLVM::ReturnOp::create(b, loc, ValueRange());
  return success();
}

namespace mlir::dat {
namespace {
struct DatProgramEntry : public impl::DatProgramEntryBase<DatProgramEntry> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward =
        module.lookupSymbol<LLVM::LLVMFuncOp>("_mlir_ciface_forward");
    if (!forward) {
      module.emitError() << "no _mlir_ciface_forward: run after the "
                            "conversion to LLVM, with C interfaces requested";
      return signalPassFailure();
    }
    if (failed(addEntry(module, forward, DAT_ENTRY_SYMBOL)))
      return signalPassFailure();
    if (auto step = module.lookupSymbol<LLVM::LLVMFuncOp>("_mlir_ciface_step"))
      if (failed(addEntry(module, step, DAT_STEP_SYMBOL)))
        return signalPassFailure();
  }
};
} // namespace
} // namespace mlir::dat
