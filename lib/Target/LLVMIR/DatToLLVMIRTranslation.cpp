//===- DatToLLVMIRTranslation.cpp - dat attributes in LLVM IR -------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Without this interface the translation warns about every entry function's
// `dat.program_value` arguments — and a warning's diagnostic prints the
// whole function: for a 24-layer model (examples/m1-dat-lm.json, thousands
// of arguments) that printing was two thirds of the translation's time.
//
//===----------------------------------------------------------------------===//

#include "dat/Target/LLVMIR/DatToLLVMIRTranslation.h"
#include "dat/Dialect/Dat/IR/DatDialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/LLVMTranslationInterface.h"

namespace mlir::dat {
namespace {

struct DatToLLVMIRTranslationInterface final : LLVMTranslationDialectInterface {
  using LLVMTranslationDialectInterface::LLVMTranslationDialectInterface;

  LogicalResult
  convertParameterAttr(LLVM::LLVMFuncOp function, int argIdx,
                       NamedAttribute attr,
                       LLVM::ModuleTranslation &moduleTranslation) const final {
    if (attr.getName() == DatDialect::kProgramValueAttrName)
      return success(); // in the manifest already
    return function.emitError("argument ")
           << argIdx << ": no LLVM IR form for '" << attr.getName().getValue()
           << "'";
  }
};

} // namespace

void registerDatDialectTranslation(DialectRegistry &registry) {
  registry.insert<DatDialect>();
  registry.addExtension(+[](MLIRContext *, DatDialect *dialect) {
    dialect->addInterfaces<DatToLLVMIRTranslationInterface>();
  });
}

} // namespace mlir::dat
