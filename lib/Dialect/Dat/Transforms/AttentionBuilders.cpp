//===- AttentionBuilders.cpp - pieces shared by the reference lowerings ---===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "AttentionBuilders.h"

#include <cmath>

namespace mlir::dat {

Value andCausal(OpBuilder &nb, Location nl, Value allowed, Value queryOffset) {
  Value row = linalg::IndexOp::create(nb, nl, 2);
  if (queryOffset)
    row = arith::AddIOp::create(nb, nl, row, queryOffset);
  Value col = linalg::IndexOp::create(nb, nl, 3);
  Value ok = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ule, col, row);
  return allowed ? arith::AndIOp::create(nb, nl, allowed, ok) : ok;
}

Value convertInto(OpBuilder &b, Location loc, Value x, Value init) {
  auto t = cast<RankedTensorType>(init.getType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(t.getRank(), b.getContext());
  return linalg::GenericOp::create(
             b, loc, t, ValueRange{x}, ValueRange{init},
             ArrayRef<AffineMap>{id, id},
             SmallVector<IteratorType>(t.getRank(), kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nl, castFloat(nb, nl, args[0], t.getElementType()));
             })
      .getResult(0);
}

Value softmaxAlong(OpBuilder &b, Location loc, Value x, unsigned axis) {
  auto t = cast<RankedTensorType>(x.getType());
  auto ft = cast<FloatType>(t.getElementType());
  MLIRContext *ctx = b.getContext();
  unsigned rank = t.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap row = id.dropResult(axis);
  SmallVector<IteratorType> reduce(rank, kPar), par(rank, kPar);
  reduce[axis] = kRed;
  SmallVector<OpFoldResult> rowShape = tensor::getMixedSizes(b, loc, x);
  rowShape.erase(rowShape.begin() + axis);
  auto rowReduce = [&](Value in, TypedAttr init, auto combine) {
    Value acc = filledTensor(b, loc, rowShape, ft, init);
    return linalg::GenericOp::create(
               b, loc, acc.getType(), ValueRange{in}, ValueRange{acc},
               ArrayRef<AffineMap>{id, row}, reduce,
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 linalg::YieldOp::create(nb, nl,
                                         combine(nb, nl, args[0], args[1]));
               })
        .getResult(0);
  };
  auto rowwise = [&](Value in, Value rowValue, auto fn) {
    return linalg::GenericOp::create(
               b, loc, t, ValueRange{in, rowValue},
               ValueRange{tensor::EmptyOp::create(
                   b, loc, tensor::getMixedSizes(b, loc, x), ft)},
               ArrayRef<AffineMap>{id, row, id}, par,
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 linalg::YieldOp::create(nb, nl, fn(nb, nl, args[0], args[1]));
               })
        .getResult(0);
  };
  Value mx = rowReduce(
      x, b.getFloatAttr(ft, APFloat::getInf(ft.getFloatSemantics(), true)),
      [](OpBuilder &nb, Location nl, Value a, Value c) -> Value {
        return arith::MaximumFOp::create(nb, nl, a, c);
      });
  Value ex =
      rowwise(x, mx, [](OpBuilder &nb, Location nl, Value v, Value m) -> Value {
        return math::ExpOp::create(nb, nl, arith::SubFOp::create(nb, nl, v, m));
      });
  Value sum =
      rowReduce(ex, b.getFloatAttr(ft, 0.0),
                [](OpBuilder &nb, Location nl, Value a, Value c) -> Value {
                  return arith::AddFOp::create(nb, nl, a, c);
                });
  return rowwise(ex, sum,
                 [](OpBuilder &nb, Location nl, Value v, Value s) -> Value {
                   return arith::DivFOp::create(nb, nl, v, s);
                 });
}

Value emitActivation(OpBuilder &b, Location loc, StringRef name, Value x) {
  auto ft = cast<FloatType>(x.getType());
  auto cst = [&](double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(ft, v));
  };
  auto sigmoid = [&](Value v) {
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, v));
    return arith::DivFOp::create(b, loc, cst(1.0),
                                 arith::AddFOp::create(b, loc, cst(1.0), e));
  };
  if (name == "relu")
    return arith::MaximumFOp::create(b, loc, x, cst(0.0));
  if (name == "sigmoid")
    return sigmoid(x);
  if (name == "tanh")
    return math::TanhOp::create(b, loc, x);
  if (name == "silu")
    return arith::MulFOp::create(b, loc, x, sigmoid(x));
  if (name == "gelu") {
    // 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³))), DAT's tanh form.
    Value x3 =
        arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
    Value inner = arith::AddFOp::create(
        b, loc, x, arith::MulFOp::create(b, loc, cst(0.044715), x3));
    Value t = math::TanhOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, cst(std::sqrt(2.0 / M_PI)), inner));
    Value half = arith::MulFOp::create(b, loc, cst(0.5), x);
    return arith::MulFOp::create(b, loc, half,
                                 arith::AddFOp::create(b, loc, cst(1.0), t));
  }
  if (name == "gelu_erf") {
    // 0.5·x·(1 + erf(x/√2)), the exact form (APE).
    Value e = math::ErfOp::create(
        b, loc, arith::MulFOp::create(b, loc, x, cst(M_SQRT1_2)));
    Value half = arith::MulFOp::create(b, loc, cst(0.5), x);
    return arith::MulFOp::create(b, loc, half,
                                 arith::AddFOp::create(b, loc, cst(1.0), e));
  }
  return x; // identity
}

Value buildRelations(OpBuilder &b, Location loc, Value relQuery, Value relKey,
                     double scale, StringRef activation, FloatType accTy) {
  MLIRContext *ctx = b.getContext();
  OpFoldResult B = tensor::getMixedSize(b, loc, relQuery, 0),
               R = tensor::getMixedSize(b, loc, relQuery, 1),
               Lq = tensor::getMixedSize(b, loc, relQuery, 2),
               Lk = tensor::getMixedSize(b, loc, relKey, 2);
  AffineExpr bb, i, j, l, c;
  bindDims(ctx, bb, i, j, l, c);
  auto map5 = [&](ArrayRef<AffineExpr> r) {
    return AffineMap::get(5, 0, r, ctx);
  };
  Value init =
      filledTensor(b, loc, {B, Lq, Lk, R}, accTy, b.getFloatAttr(accTy, 0.0));
  Value logits = buildMulAcc(
      b, loc, relQuery, relKey, init,
      {map5({bb, l, i, c}), map5({bb, l, j, c}), map5({bb, i, j, l})},
      {kPar, kPar, kPar, kPar, kRed});

  AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
  Value scaleV =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(accTy, scale));
  bool softmax = activation == "softmax";
  Value rel = linalg::GenericOp::create(
                  b, loc, logits.getType(), ValueRange{}, ValueRange{logits},
                  ArrayRef<AffineMap>{id4},
                  ArrayRef<IteratorType>{kPar, kPar, kPar, kPar},
                  [&](OpBuilder &nb, Location nl, ValueRange args) {
                    Value v = arith::MulFOp::create(nb, nl, args[0], scaleV);
                    if (!softmax)
                      v = emitActivation(nb, nl, activation, v);
                    linalg::YieldOp::create(nb, nl, v);
                  })
                  .getResult(0);
  if (!softmax)
    return rel;

  // softmax over the key axis j (dim 2) of [B,Lq,Lk,R].
  return softmaxAlong(b, loc, rel, 2);
}

} // namespace mlir::dat
