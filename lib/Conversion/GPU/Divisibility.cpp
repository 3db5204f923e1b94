//===- Divisibility.cpp - index values known to be multiples --------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Divisibility.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::dat {

bool isKnownMultipleOf(Value value, int64_t m) {
  if (std::optional<int64_t> c = getConstantIntValue(value))
    return *c % m == 0;
  // (During a dialect conversion an index op may still read the induction
  // variable of a loop whose body moved: a block without a parent.)
  if (auto iv = dyn_cast<BlockArgument>(value)) {
    Operation *parent = iv.getOwner()->getParentOp();
    auto loop = dyn_cast_if_present<scf::ForOp>(parent);
    return loop && loop.getInductionVar() == iv &&
           isKnownMultipleOf(loop.getLowerBound(), m) &&
           isKnownMultipleOf(loop.getStep(), m);
  }
  Operation *op = value.getDefiningOp();
  if (isa_and_present<arith::AddIOp, arith::SubIOp>(op))
    return isKnownMultipleOf(op->getOperand(0), m) &&
           isKnownMultipleOf(op->getOperand(1), m);
  if (isa_and_present<arith::MulIOp>(op))
    return isKnownMultipleOf(op->getOperand(0), m) ||
           isKnownMultipleOf(op->getOperand(1), m);
  return false;
}

} // namespace mlir::dat
