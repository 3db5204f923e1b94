//===- InitAll.cpp - register everything dat provides ---------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/InitAll.h"

#include "dat/Conversion/Passes.h"
#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Pipelines/Pipelines.h"

namespace mlir::dat {

void registerAllDialects(DialectRegistry &registry) {
  registry.insert<DatDialect>();
  registerNVGPUToLLVMInterface(registry);
}

void registerAllPasses() {
  registerDatPasses();
  registerDatConversionPasses();
  registerPipelines();
}

} // namespace mlir::dat
