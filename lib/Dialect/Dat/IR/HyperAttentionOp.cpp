//===- HyperAttentionOp.cpp - HYLA attention verifiers --------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatOps.h"

namespace mlir::dat {

/// Shared checks: q/k [B,H,Lq|Lk,dq], optional value [B,H,Lk,dv], bias
/// [1|B,H,Lq,Lk], mask [Lq,Lk], normalization name; `initLast` is the size
/// the init's last dimension must have.
static LogicalResult verifyHyper(Operation *op, Value query, Value key,
                                 Value value, Value bias, Value mask,
                                 Value init, Type resultType,
                                 StringRef normalization,
                                 const APFloat &scale) {
  auto q = cast<RankedTensorType>(query.getType());
  auto k = cast<RankedTensorType>(key.getType());
  auto o = cast<RankedTensorType>(init.getType());
  for (auto [name, t] : {std::pair<StringRef, RankedTensorType>{"query", q},
                         {"key", k},
                         {"init", o}})
    if (t.getRank() != 4)
      return op->emitOpError("expected ") << name << " to have rank 4";
  if (!isa<FloatType>(q.getElementType()) ||
      k.getElementType() != q.getElementType() ||
      o.getElementType() != q.getElementType())
    return op->emitOpError("expected query, key and init of one float type");
  if (resultType != o)
    return op->emitOpError("expected result type to match init type");
  if (!llvm::is_contained({"softmax", "rms_head", "none"}, normalization))
    return op->emitOpError("unknown normalization '")
           << normalization << "' (expected softmax, rms_head or none)";
  if (!scale.isFinite())
    return op->emitOpError("expected a finite scale");
  auto mismatch = [&](StringRef what, int64_t a, int64_t b) -> LogicalResult {
    if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b)
      return success();
    return op->emitOpError("expected ")
           << what << " to be " << b << ", got " << a;
  };
  int64_t B = q.getDimSize(0), H = q.getDimSize(1), Lq = q.getDimSize(2),
          Lk = k.getDimSize(2);
  if (failed(mismatch("key dim 0 (batch)", k.getDimSize(0), B)))
    return failure();
  if (failed(mismatch("key dim 1 (heads)", k.getDimSize(1), H)))
    return failure();
  if (failed(mismatch("key dim 3 (qk dim)", k.getDimSize(3), q.getDimSize(3))))
    return failure();
  if (failed(mismatch("init dim 0 (batch)", o.getDimSize(0), B)))
    return failure();
  if (failed(mismatch("init dim 1 (heads)", o.getDimSize(1), H)))
    return failure();
  if (failed(mismatch("init dim 2 (query length)", o.getDimSize(2), Lq)))
    return failure();
  if (value) {
    auto v = cast<RankedTensorType>(value.getType());
    if (v.getRank() != 4 || v.getElementType() != q.getElementType())
      return op->emitOpError("expected value of rank 4 with the query's type");
    if (failed(mismatch("value dim 0 (batch)", v.getDimSize(0), B)))
      return failure();
    if (failed(mismatch("value dim 1 (heads)", v.getDimSize(1), H)))
      return failure();
    if (failed(mismatch("value dim 2 (key length)", v.getDimSize(2), Lk)))
      return failure();
    if (failed(mismatch("init dim 3 (value dim)", o.getDimSize(3),
                        v.getDimSize(3))))
      return failure();
  } else if (failed(mismatch("init dim 3 (key length)", o.getDimSize(3), Lk))) {
    return failure();
  }
  if (bias) {
    auto bt = cast<RankedTensorType>(bias.getType());
    if (bt.getRank() != 4 || bt.getElementType() != q.getElementType())
      return op->emitOpError("expected bias [1|B,H,Lq,Lk] of the query's type");
    if (bt.getDimSize(0) != 1 &&
        failed(mismatch("bias dim 0 (batch)", bt.getDimSize(0), B)))
      return failure();
    if (failed(mismatch("bias dim 1 (heads)", bt.getDimSize(1), H)))
      return failure();
    if (failed(mismatch("bias dim 2 (query length)", bt.getDimSize(2), Lq)))
      return failure();
    if (failed(mismatch("bias dim 3 (key length)", bt.getDimSize(3), Lk)))
      return failure();
  }
  if (mask) {
    auto m = cast<RankedTensorType>(mask.getType());
    if (m.getRank() != 2 || !m.getElementType().isInteger(1))
      return op->emitOpError("expected mask of type tensor<LqxLkxi1>");
    if (failed(mismatch("mask dim 0 (query length)", m.getDimSize(0), Lq)))
      return failure();
    if (failed(mismatch("mask dim 1 (key length)", m.getDimSize(1), Lk)))
      return failure();
  }
  return success();
}

LogicalResult HyperAttentionOp::verify() {
  if (!llvm::is_contained({"default", "mlp_relu", "mlp_linear"}, getNetwork()))
    return emitOpError("unknown value network '")
           << getNetwork() << "' (expected default, mlp_relu or mlp_linear)";
  return verifyHyper(*this, getQuery(), getKey(), getValue(), getBias(),
                     getMask(), getInit(), getResult().getType(),
                     getNormalization(), getScale());
}

LogicalResult HyperAttentionWeightsOp::verify() {
  return verifyHyper(*this, getQuery(), getKey(), Value(), getBias(), getMask(),
                     getInit(), getResult().getType(), getNormalization(),
                     getScale());
}

} // namespace mlir::dat
