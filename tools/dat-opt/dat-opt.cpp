//===- dat-opt.cpp - the dat pass pipeline driver -------------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// mlir-opt with the dat dialect, its passes and pipelines, and the GPU→LLVM
// IR translations that `gpu-module-to-binary` needs.
//
//===----------------------------------------------------------------------===//

#include "dat/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllGPUToLLVMIRTranslations(registry);
  mlir::dat::registerAllDialects(registry);

  mlir::registerAllPasses();
  mlir::dat::registerAllPasses();

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dat optimizer driver\n", registry));
}
