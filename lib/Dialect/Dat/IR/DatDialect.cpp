//===- DatDialect.cpp - dat dialect registration --------------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Dialect/Dat/IR/DatOps.h"

using namespace mlir;
using namespace mlir::dat;

#include "dat/Dialect/Dat/IR/DatDialect.cpp.inc"

void DatDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dat/Dialect/Dat/IR/DatOps.cpp.inc"
      >();
}
