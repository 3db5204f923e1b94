//===- OrthogonalMapOp.cpp - dat.orthogonal_map verifier ------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatOps.h"

namespace mlir::dat {

LogicalResult OrthogonalMapOp::verify() {
  auto x = cast<RankedTensorType>(getInput().getType());
  auto m = cast<RankedTensorType>(getMaps().getType());
  if (x.getRank() != 4)
    return emitOpError("expected input to have rank 4 [B,H,L,d], got rank ")
           << x.getRank();
  if (m.getRank() != 5)
    return emitOpError("expected maps to have rank 5 [1|B,L,H,d,d], got rank ")
           << m.getRank();
  if (!isa<FloatType>(x.getElementType()) ||
      m.getElementType() != x.getElementType())
    return emitOpError("expected float input and maps of one element type");
  if (getResult().getType() != x)
    return emitOpError("expected the result type to be the input type");
  struct Check {
    unsigned dim;
    const char *name;
    int64_t expected;
  } checks[] = {{1, "length", x.getDimSize(2)},
                {2, "heads", x.getDimSize(1)},
                {3, "rows", x.getDimSize(3)},
                {4, "columns", x.getDimSize(3)}};
  for (const Check &c : checks) {
    int64_t actual = m.getDimSize(c.dim);
    if (!ShapedType::isDynamic(actual) && !ShapedType::isDynamic(c.expected) &&
        actual != c.expected)
      return emitOpError("expected maps dim ")
             << c.dim << " (" << c.name << ") to be " << c.expected << ", got "
             << actual;
  }
  int64_t mb = m.getDimSize(0), b = x.getDimSize(0);
  if (mb != 1 && !ShapedType::isDynamic(mb) && !ShapedType::isDynamic(b) &&
      mb != b)
    return emitOpError("expected maps dim 0 (batch) to be 1 or ")
           << b << ", got " << mb;
  return success();
}

} // namespace mlir::dat
