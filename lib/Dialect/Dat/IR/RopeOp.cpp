//===- RopeOp.cpp - dat.rope verifier -------------------------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatOps.h"

namespace mlir::dat {

LogicalResult RopeOp::verify() {
  auto x = cast<RankedTensorType>(getInput().getType());
  auto table = cast<RankedTensorType>(getCos().getType());
  if (x.getRank() != 4)
    return emitOpError("expected input to have rank 4 [B,L,H,K], got rank ")
           << x.getRank();
  if (!isa<FloatType>(x.getElementType()))
    return emitOpError("expected a float input, got ") << x.getElementType();
  if (table.getRank() != 2)
    return emitOpError("expected cos/sin to have rank 2 [L,K/2], got rank ")
           << table.getRank();
  if (table.getElementType() != x.getElementType())
    return emitOpError("expected cos/sin element type ")
           << table.getElementType() << " to match input element type "
           << x.getElementType();
  int64_t k = x.getDimSize(3);
  if (!ShapedType::isDynamic(k) && k % 2 != 0)
    return emitOpError("expected input dim 3 (K) to be even, got ") << k;
  int64_t len = x.getDimSize(1), rows = table.getDimSize(0);
  if (!ShapedType::isDynamic(len) && !ShapedType::isDynamic(rows) &&
      len != rows)
    return emitOpError("expected cos/sin dim 0 (positions) to be ")
           << len << " as in input dim 1, got " << rows;
  int64_t cols = table.getDimSize(1);
  if (!ShapedType::isDynamic(k) && !ShapedType::isDynamic(cols) &&
      cols * 2 != k)
    return emitOpError("expected cos/sin dim 1 (pairs) to be ")
           << k / 2 << " (input dim 3 / 2), got " << cols;
  return success();
}

} // namespace mlir::dat
