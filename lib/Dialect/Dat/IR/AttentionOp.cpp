//===- AttentionOp.cpp - dat.attention builders and verifier --------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::dat {

void AttentionOp::build(OpBuilder &builder, OperationState &state, Value query,
                        Value key, Value value, Value init, float scale,
                        bool causal, Value mask, Value queryOffset) {
  build(builder, state, init.getType(), query, key, value, mask,
        /*key_mask=*/Value(), /*score_scale=*/Value(), queryOffset, init,
        builder.getF32FloatAttr(scale), /*mask_fill=*/FloatAttr(), causal);
}

/// H / Hkv, or std::nullopt when a head count is dynamic or does not divide.
static std::optional<int64_t> groupSize(RankedTensorType query,
                                        RankedTensorType key) {
  int64_t heads = query.getDimSize(1);
  int64_t kvHeads = key.getDimSize(1);
  if (ShapedType::isDynamic(heads) || ShapedType::isDynamic(kvHeads) ||
      kvHeads == 0 || heads % kvHeads != 0)
    return std::nullopt;
  return heads / kvHeads;
}

std::optional<int64_t> AttentionOp::getGroupSize() {
  return groupSize(getQueryType(), getKeyType());
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

/// Verifies the operands shared by dat.attention and dat.attention_weights.
/// `value` is null for the weights op, whose init is [B,H,Nq,Nk].
static LogicalResult verifyAttentionLike(Operation *op, Value queryV,
                                         Value keyV, Value valueV, Value mask,
                                         Value keyMask, Value scoreScale,
                                         FloatAttr maskFill, Value initV,
                                         Type resultType,
                                         const APFloat &scale) {
  auto q = cast<RankedTensorType>(queryV.getType());
  auto k = cast<RankedTensorType>(keyV.getType());
  auto o = cast<RankedTensorType>(initV.getType());
  RankedTensorType v =
      valueV ? cast<RankedTensorType>(valueV.getType()) : RankedTensorType();
  struct Named {
    StringRef name;
    RankedTensorType type;
    StringRef layout;
  };
  SmallVector<Named> rank4 = {{"query", q, "[B,H,Nq,D]"},
                              {"key", k, "[B,Hkv,Nk,D]"}};
  if (v)
    rank4.push_back({"value", v, "[B,Hkv,Nk,Dv]"});
  rank4.push_back({"init", o, v ? "[B,H,Nq,Dv]" : "[B,H,Nq,Nk]"});
  for (const Named &n : rank4)
    if (n.type.getRank() != 4)
      return op->emitOpError("expected ")
             << n.name << " to have rank 4 " << n.layout << ", got rank "
             << n.type.getRank() << " (" << shapeString(n.type) << ")";

  Type elementType = q.getElementType();
  if (!isa<FloatType>(elementType))
    return op->emitOpError("expected query element type to be a float, got ")
           << elementType;
  for (const Named &n : ArrayRef(rank4).drop_front())
    if (n.type.getElementType() != elementType)
      return op->emitOpError("expected ")
             << n.name << " element type " << n.type.getElementType()
             << " to match query element type " << elementType;
  if (resultType != o)
    return op->emitOpError("expected result type ")
           << resultType << " to match init type " << o;

  SmallVector<DimConstraint> constraints = {
      {"key", k, 0, "batch", "query", q.getDimSize(0)},
      {"key", k, 3, "head dim", "query", q.getDimSize(3)}};
  if (v) {
    constraints.append({{"value", v, 0, "batch", "query", q.getDimSize(0)},
                        {"value", v, 1, "kv heads", "key", k.getDimSize(1)},
                        {"value", v, 2, "key length", "key", k.getDimSize(2)}});
  }
  constraints.append(
      {{"init", o, 0, "batch", "query", q.getDimSize(0)},
       {"init", o, 1, "heads", "query", q.getDimSize(1)},
       {"init", o, 2, "query length", "query", q.getDimSize(2)}});
  if (v)
    constraints.push_back(
        {"init", o, 3, "value dim", "value", v.getDimSize(3)});
  else
    constraints.push_back({"init", o, 3, "key length", "key", k.getDimSize(2)});

  if (mask) {
    auto m = cast<RankedTensorType>(mask.getType());
    if (!m.getElementType().isInteger(1))
      return op->emitOpError("expected mask element type i1, got ")
             << m.getElementType();
    if (m.getRank() != 2)
      return op->emitOpError("expected mask to have rank 2 [Nq,Nk], got rank ")
             << m.getRank() << " (" << shapeString(m) << ")";
    constraints.push_back(
        {"mask", m, 0, "query length", "query", q.getDimSize(2)});
    constraints.push_back({"mask", m, 1, "key length", "key", k.getDimSize(2)});
  }

  if (keyMask) {
    auto m = cast<RankedTensorType>(keyMask.getType());
    if (m.getRank() != 2 || !m.getElementType().isInteger(1))
      return op->emitOpError("expected key_mask of type tensor<BxNkxi1>");
    constraints.push_back(
        {"key_mask", m, 0, "batch", "query", q.getDimSize(0)});
    constraints.push_back(
        {"key_mask", m, 1, "key length", "key", k.getDimSize(2)});
  }
  if (scoreScale) {
    auto t = cast<RankedTensorType>(scoreScale.getType());
    if (t.getRank() != 3 || t.getElementType() != elementType)
      return op->emitOpError("expected score_scale of rank 3 [1|B,Nq,Nk] with "
                             "the query's element type");
    if (t.getDimSize(0) != 1)
      constraints.push_back(
          {"score_scale", t, 0, "batch", "query", q.getDimSize(0)});
    constraints.push_back(
        {"score_scale", t, 1, "query length", "query", q.getDimSize(2)});
    constraints.push_back(
        {"score_scale", t, 2, "key length", "key", k.getDimSize(2)});
  }
  if (maskFill && !maskFill.getValue().isFinite())
    return op->emitOpError("expected a finite mask_fill (omit it for -inf)");

  for (const DimConstraint &c : constraints) {
    int64_t actual = c.type.getDimSize(c.dim);
    if (ShapedType::isDynamic(actual) || ShapedType::isDynamic(c.expected) ||
        actual == c.expected)
      continue;
    return op->emitOpError("expected ")
           << c.operand << " dim " << c.dim << " (" << c.dimName << ") to be "
           << c.expected << " as in " << c.refOperand << ", got " << actual;
  }

  int64_t heads = q.getDimSize(1), kvHeads = k.getDimSize(1);
  if (kvHeads == 0)
    return op->emitOpError("expected key dim 1 (kv heads) to be at least 1");
  if (!ShapedType::isDynamic(heads) && !ShapedType::isDynamic(kvHeads) &&
      heads % kvHeads != 0)
    return op->emitOpError("expected query dim 1 (heads) ")
           << heads << " to be a multiple of key dim 1 (kv heads) " << kvHeads;

  if (!scale.isFinite())
    return op->emitOpError("expected a finite scale, got ")
           << scale.convertToFloat();
  return success();
}

LogicalResult AttentionOp::verify() {
  return verifyAttentionLike(*this, getQuery(), getKey(), getValue(), getMask(),
                             getKeyMask(), getScoreScale(), getMaskFillAttr(),
                             getInit(), getResult().getType(), getScale());
}

std::optional<int64_t> AttentionWeightsOp::getGroupSize() {
  return groupSize(getQueryType(), getKeyType());
}

LogicalResult AttentionWeightsOp::verify() {
  return verifyAttentionLike(*this, getQuery(), getKey(), /*value=*/nullptr,
                             getMask(), getKeyMask(), getScoreScale(),
                             getMaskFillAttr(), getInit(),
                             getResult().getType(), getScale());
}

} // namespace mlir::dat
