//===- DatDialect.cpp - dat dialect registration --------------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Dialect/Dat/IR/DatAttrs.h"
#include "dat/Dialect/Dat/IR/DatOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dat;

#include "dat/Dialect/Dat/IR/DatDialect.cpp.inc"
#include "dat/Dialect/Dat/IR/DatEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dat/Dialect/Dat/IR/DatAttrs.cpp.inc"

void DatDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dat/Dialect/Dat/IR/DatOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dat/Dialect/Dat/IR/DatAttrs.cpp.inc"
      >();
}

LogicalResult ProgramValueAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, ProgramValueKind kind,
    StringRef name, std::optional<int64_t> min, std::optional<int64_t> max,
    DenseI64ArrayAttr referenceShape, ArrayAttr dims,
    DenseI64ArrayAttr maxShape, ArrayRef<int64_t> permutation) {
  if (static_cast<bool>(dims) != static_cast<bool>(maxShape) ||
      (dims && static_cast<int64_t>(dims.size()) != maxShape.size()))
    return emitError() << "'" << name
                       << "': dims and max_shape come together, one entry "
                          "per dimension";
  if (dims && kind == ProgramValueKind::Weight)
    return emitError() << "'" << name
                       << "': weights have no dynamic dimensions";
  if (dims &&
      llvm::any_of(dims, [](Attribute a) { return !isa<StringAttr>(a); }))
    return emitError() << "'" << name << "': dims must be strings";
  if (referenceShape && permutation.empty())
    return emitError() << "'" << name
                       << "': a reference shape without a permutation";
  if (name.empty())
    return emitError() << "a program value needs a non-empty name";
  if (min.has_value() != max.has_value())
    return emitError() << "'" << name
                       << "': min and max come together (an inclusive range)";
  if (min && *min > *max)
    return emitError() << "'" << name << "': empty range [" << *min << ", "
                       << *max << "]";
  if (min && kind != ProgramValueKind::Input)
    return emitError() << "'" << name
                       << "': only inputs carry a range of accepted values";
  if (!permutation.empty()) {
    if (kind != ProgramValueKind::Weight)
      return emitError() << "'" << name
                         << "': only weights carry a permutation";
    llvm::SmallVector<bool> seen(permutation.size(), false);
    bool valid = true;
    for (int64_t d : permutation) {
      valid =
          valid && d >= 0 && d < static_cast<int64_t>(seen.size()) && !seen[d];
      if (valid)
        seen[d] = true;
    }
    if (!valid)
      return emitError() << "'" << name << "': permutation is not one";
  }
  return success();
}

/// Checks a `dat.program_value` on argument or result `index` of `op`.
static LogicalResult verifyProgramValue(Operation *op, NamedAttribute attr,
                                        unsigned index, bool result) {
  if (attr.getName() != DatDialect::kProgramValueAttrName)
    return op->emitError() << "unknown dat attribute '"
                           << attr.getName().getValue() << "' on "
                           << (result ? "result " : "argument ") << index;
  auto value = dyn_cast<ProgramValueAttr>(attr.getValue());
  if (!value)
    return op->emitError() << "'" << attr.getName().getValue() << "' of "
                           << (result ? "result " : "argument ") << index
                           << " must be a #dat.program_value";
  bool isOutput = value.getKind() == ProgramValueKind::Output;
  if (!result && !value.getPermutation().empty()) {
    auto fn = dyn_cast<FunctionOpInterface>(op);
    auto type =
        fn ? dyn_cast<ShapedType>(fn.getArgumentTypes()[index]) : ShapedType();
    // (After lowering to LLVM, arguments are descriptors: nothing to check.)
    if (type &&
        type.getRank() != static_cast<int64_t>(value.getPermutation().size()))
      return op->emitError()
             << "argument " << index << " ('" << value.getName()
             << "'): the permutation's size is not the argument's rank";
    if (type && type.hasStaticShape() && value.getReferenceShape()) {
      int64_t n = 1;
      for (int64_t d : value.getReferenceShape().asArrayRef())
        n *= d;
      if (n != type.getNumElements())
        return op->emitError()
               << "argument " << index << " ('" << value.getName()
               << "'): the reference shape holds " << n
               << " elements, the argument " << type.getNumElements();
    }
  }

  if (isOutput != result)
    return op->emitError() << (result ? "result " : "argument ") << index
                           << " ('" << value.getName() << "'): "
                           << (result ? "results are outputs"
                                      : "arguments are inputs, weights or "
                                        "caches");
  return success();
}

LogicalResult DatDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned /*regionIndex*/,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  return verifyProgramValue(op, attr, argIndex, /*result=*/false);
}

LogicalResult DatDialect::verifyRegionResultAttribute(Operation *op,
                                                      unsigned /*regionIndex*/,
                                                      unsigned resultIndex,
                                                      NamedAttribute attr) {
  return verifyProgramValue(op, attr, resultIndex, /*result=*/true);
}

LogicalResult DatDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kOriginAttr) {
    auto origin = dyn_cast<StringAttr>(attr.getValue());
    if (!origin || origin.empty())
      return op->emitOpError()
             << "'" << name
             << "' must be a non-empty string: the op the tile loop computes";
    if (op->getNumRegions() == 0)
      return op->emitOpError() << "'" << name << "' marks tile loops; '"
                               << op->getName() << "' is not a loop";
    return success();
  }
  if (name == kRestOfSplitAttr || name == kRecomputePerTileAttr ||
      name == kHostMemoryAttr || name == kOverlappedLastTileAttr ||
      name == kSwizzleOuterDimsAttr) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' is a unit attribute";
    if (name == kHostMemoryAttr &&
        op->getName().getStringRef() != "memref.alloc")
      return op->emitOpError()
             << "'" << name << "' marks host allocations (memref.alloc)";
    if (name == kSwizzleOuterDimsAttr &&
        op->getName().getStringRef() != "memref.view")
      return op->emitOpError()
             << "'" << name << "' marks shared-memory views (memref.view)";
    if ((name == kRestOfSplitAttr || name == kOverlappedLastTileAttr) &&
        op->getNumRegions() == 0)
      return op->emitOpError() << "'" << name << "' marks tile loops; '"
                               << op->getName() << "' is not a loop";
    return success();
  }
  if (name == kProgramValueAttrName)
    return op->emitOpError() << "'" << name
                             << "' belongs on an entry function's arguments "
                                "and results, not on an op";
  return op->emitOpError() << "unknown dat attribute '" << name << "'";
}
