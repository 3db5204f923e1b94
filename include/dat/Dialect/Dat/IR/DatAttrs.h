//===- DatAttrs.h - dat dialect attributes ----------------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_DIALECT_DAT_IR_DATATTRS_H
#define DAT_DIALECT_DAT_IR_DATATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "dat/Dialect/Dat/IR/DatEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dat/Dialect/Dat/IR/DatAttrs.h.inc"

#endif // DAT_DIALECT_DAT_IR_DATATTRS_H
