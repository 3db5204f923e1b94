//===- DatOps.h - dat dialect operations ------------------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_DIALECT_DAT_IR_DATOPS_H
#define DAT_DIALECT_DAT_IR_DATOPS_H

#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"

#define GET_OP_CLASSES
#include "dat/Dialect/Dat/IR/DatOps.h.inc"

#endif // DAT_DIALECT_DAT_IR_DATOPS_H
