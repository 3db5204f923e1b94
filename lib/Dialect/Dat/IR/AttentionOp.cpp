//===- AttentionOp.cpp - dat.attention builders and verifier --------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>

namespace mlir::dat {

void AttentionOp::build(OpBuilder &builder, OperationState &state, Value query,
                        Value key, Value value, Value init, float scale,
                        bool causal, Value mask, Value queryOffset) {
  build(builder, state, init.getType(), query, key, value, mask, queryOffset,
        init, builder.getF32FloatAttr(scale), causal);
}

std::optional<int64_t> AttentionOp::getGroupSize() {
  int64_t heads = getQueryType().getDimSize(1);
  int64_t kvHeads = getKeyType().getDimSize(1);
  if (ShapedType::isDynamic(heads) || ShapedType::isDynamic(kvHeads) ||
      kvHeads == 0 || heads % kvHeads != 0)
    return std::nullopt;
  return heads / kvHeads;
}

namespace {
/// One operand dimension that must equal a dimension of another operand.
struct DimConstraint {
  StringRef operand;
  RankedTensorType type;
  unsigned dim;
  StringRef dimName;
  StringRef refOperand;
  int64_t expected;
};
} // namespace

static std::string shapeString(RankedTensorType type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(
      type.getShape(), os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << '?';
        else
          os << d;
      },
      "x");
  return s;
}

LogicalResult AttentionOp::verify() {
  struct Named {
    StringRef name;
    RankedTensorType type;
    StringRef layout;
  };
  Named rank4[] = {{"query", getQueryType(), "[B,H,Nq,D]"},
                   {"key", getKeyType(), "[B,Hkv,Nk,D]"},
                   {"value", getValueType(), "[B,Hkv,Nk,Dv]"},
                   {"init", getInitType(), "[B,H,Nq,Dv]"}};
  for (const Named &n : rank4)
    if (n.type.getRank() != 4)
      return emitOpError("expected ")
             << n.name << " to have rank 4 " << n.layout << ", got rank "
             << n.type.getRank() << " (" << shapeString(n.type) << ")";

  Type elementType = getQueryType().getElementType();
  if (!isa<FloatType>(elementType))
    return emitOpError("expected query element type to be a float, got ")
           << elementType;
  for (const Named &n : ArrayRef(rank4).drop_front())
    if (n.type.getElementType() != elementType)
      return emitOpError("expected ")
             << n.name << " element type " << n.type.getElementType()
             << " to match query element type " << elementType;
  if (getResult().getType() != getInit().getType())
    return emitOpError("expected result type ")
           << getResult().getType() << " to match init type "
           << getInit().getType();

  RankedTensorType q = getQueryType(), k = getKeyType(), v = getValueType(),
                   o = getInitType();
  SmallVector<DimConstraint> constraints = {
      {"key", k, 0, "batch", "query", q.getDimSize(0)},
      {"value", v, 0, "batch", "query", q.getDimSize(0)},
      {"key", k, 3, "head dim", "query", q.getDimSize(3)},
      {"value", v, 1, "kv heads", "key", k.getDimSize(1)},
      {"value", v, 2, "key length", "key", k.getDimSize(2)},
      {"init", o, 0, "batch", "query", q.getDimSize(0)},
      {"init", o, 1, "heads", "query", q.getDimSize(1)},
      {"init", o, 2, "query length", "query", q.getDimSize(2)},
      {"init", o, 3, "value dim", "value", v.getDimSize(3)}};

  if (Value mask = getMask()) {
    auto m = cast<RankedTensorType>(mask.getType());
    if (!m.getElementType().isInteger(1))
      return emitOpError("expected mask element type i1, got ")
             << m.getElementType();
    if (m.getRank() != 2)
      return emitOpError("expected mask to have rank 2 [Nq,Nk], got rank ")
             << m.getRank() << " (" << shapeString(m) << ")";
    constraints.push_back(
        {"mask", m, 0, "query length", "query", q.getDimSize(2)});
    constraints.push_back({"mask", m, 1, "key length", "key", k.getDimSize(2)});
  }

  for (const DimConstraint &c : constraints) {
    int64_t actual = c.type.getDimSize(c.dim);
    if (ShapedType::isDynamic(actual) || ShapedType::isDynamic(c.expected) ||
        actual == c.expected)
      continue;
    return emitOpError("expected ")
           << c.operand << " dim " << c.dim << " (" << c.dimName << ") to be "
           << c.expected << " as in " << c.refOperand << ", got " << actual;
  }

  int64_t heads = q.getDimSize(1), kvHeads = k.getDimSize(1);
  if (kvHeads == 0)
    return emitOpError("expected key dim 1 (kv heads) to be at least 1");
  if (!ShapedType::isDynamic(heads) && !ShapedType::isDynamic(kvHeads) &&
      heads % kvHeads != 0)
    return emitOpError("expected query dim 1 (heads) ")
           << heads << " to be a multiple of key dim 1 (kv heads) " << kvHeads;

  if (!std::isfinite(getScale().convertToFloat()))
    return emitOpError("expected a finite scale, got ")
           << getScale().convertToFloat();
  return success();
}

} // namespace mlir::dat
