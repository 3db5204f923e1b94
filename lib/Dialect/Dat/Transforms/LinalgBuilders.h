//===- LinalgBuilders.h - helpers shared by the reference lowerings -------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_LIB_DIALECT_DAT_TRANSFORMS_LINALGBUILDERS_H
#define DAT_LIB_DIALECT_DAT_TRANSFORMS_LINALGBUILDERS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

namespace mlir::dat {

using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

/// Converts a scalar between float types (a no-op when they are equal).
inline Value castFloat(OpBuilder &b, Location loc, Value v, Type to) {
  auto from = cast<FloatType>(v.getType());
  auto target = cast<FloatType>(to);
  if (from == target)
    return v;
  if (from.getWidth() < target.getWidth())
    return arith::ExtFOp::create(b, loc, target, v);
  return arith::TruncFOp::create(b, loc, target, v);
}

/// The type reductions and rotations are computed in: f32 for narrower
/// floats, the element type otherwise.
inline FloatType accumulationType(Type elementType) {
  auto ft = cast<FloatType>(elementType);
  return ft.getWidth() < 32 ? Float32Type::get(ft.getContext()) : ft;
}

/// An empty tensor of `shape` (sizes may be dynamic) filled with `value`.
inline Value filledTensor(OpBuilder &b, Location loc,
                          ArrayRef<OpFoldResult> shape, Type elementType,
                          TypedAttr value) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, elementType);
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

/// `value` (static shape) transposed by `perm` (dimension i of the result
/// is dimension perm[i] of `value`) into a new tensor.
inline Value buildTranspose(OpBuilder &b, Location loc, Value value,
                            ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(value.getType());
  Value init = tensor::EmptyOp::create(
      b, loc, applyPermutation(type.getShape(), perm), type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, init, perm)->getResult(0);
}

/// Per-pair symbols `[Lq,Lk,Hs,hd]` as they are read: `[Lq,Lk,hd]` when
/// one symbol per pair serves every head (Hs = 1, collapsed away, so that
/// the product's maps stay projected permutations), else unchanged.
inline Value sharedPairSymbols(OpBuilder &b, Location loc, Value symbols) {
  auto t = cast<RankedTensorType>(symbols.getType());
  if (t.getDimSize(2) != 1)
    return symbols;
  return tensor::CollapseShapeOp::create(
      b, loc, symbols, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
}

/// acc += lhs · rhs as one linalg.generic with `maps` (lhs, rhs, acc) and
/// `iterators`; operands are widened to acc's element type.
inline Value buildMulAcc(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         Value acc, ArrayRef<AffineMap> maps,
                         ArrayRef<IteratorType> iterators) {
  Type accTy = cast<RankedTensorType>(acc.getType()).getElementType();
  return linalg::GenericOp::create(
             b, loc, acc.getType(), ValueRange{lhs, rhs}, ValueRange{acc}, maps,
             iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value p = arith::MulFOp::create(
                   nb, nl, castFloat(nb, nl, args[0], accTy),
                   castFloat(nb, nl, args[1], accTy));
               Value sum = arith::AddFOp::create(nb, nl, args[2], p);
               linalg::YieldOp::create(nb, nl, sum);
             })
      .getResult(0);
}

} // namespace mlir::dat

#endif // DAT_LIB_DIALECT_DAT_TRANSFORMS_LINALGBUILDERS_H
