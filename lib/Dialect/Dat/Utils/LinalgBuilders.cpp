//===- LinalgBuilders.cpp - the linalg the frontend and lowerings share ---===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

namespace mlir::dat {

Value filledTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> shape,
                   Type elementType, TypedAttr value) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, elementType);
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

Value emptyTensorLike(OpBuilder &b, Location loc, RankedTensorType type,
                      Value like) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, like, d));
  return tensor::EmptyOp::create(b, loc, type, sizes);
}

Value buildTranspose(OpBuilder &b, Location loc, Value value,
                     ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(value.getType());
  Value init = tensor::EmptyOp::create(
      b, loc, applyPermutation(tensor::getMixedSizes(b, loc, value), perm),
      type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, init, perm)->getResult(0);
}

Value buildEmptyFor(OpBuilder &b, Location loc, RankedTensorType resultType,
                    ValueRange inputs, ArrayRef<AffineMap> inputMaps) {
  // A dynamic dimension of the result takes its size from an input that
  // reads it directly (map result i is that dimension) where the input's
  // own size is dynamic too (a static 1 there would be a broadcast).
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < resultType.getRank(); ++d) {
    if (!resultType.isDynamicDim(d))
      continue;
    Value size;
    for (auto [input, map] : llvm::zip(inputs, inputMaps)) {
      auto t = dyn_cast<RankedTensorType>(input.getType());
      for (unsigned r = 0; t && !size && r < map.getNumResults(); ++r)
        if (map.getResult(r) == b.getAffineDimExpr(d) && t.isDynamicDim(r))
          size = tensor::DimOp::create(b, loc, input, r);
      if (size)
        break;
    }
    assert(size && "a dynamic elementwise result dimension that no input "
                   "reads directly");
    sizes.push_back(size);
  }
  return tensor::EmptyOp::create(b, loc, resultType, sizes);
}

Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                       ScalarBody body) {
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(
      AffineMap::getMultiDimIdentityMap(resultType.getRank(), b.getContext()));
  Value init = buildEmptyFor(b, loc, resultType, inputs, inputMaps);
  return linalg::GenericOp::create(
             b, loc, resultType, inputs, ValueRange{init}, maps,
             SmallVector<IteratorType>(resultType.getRank(), kPar),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, body(nb, nl, args.drop_back()));
             })
      .getResult(0);
}

Value buildMulAcc(OpBuilder &b, Location loc, Value lhs, Value rhs, Value acc,
                  ArrayRef<AffineMap> maps, ArrayRef<IteratorType> iterators) {
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

Value buildLinear(OpBuilder &b, Location loc, Value x, Value weight, Value bias,
                  WeightLayout layout) {
  MLIRContext *ctx = b.getContext();
  auto xTy = cast<RankedTensorType>(x.getType());
  unsigned rank = xTy.getRank();
  auto wTy = cast<RankedTensorType>(weight.getType());
  SmallVector<int64_t> shape(xTy.getShape());
  shape.back() = wTy.getDimSize(layout == WeightLayout::OutIn ? 0 : 1);
  auto resultTy = RankedTensorType::get(shape, b.getF32Type());
  Value init;
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  sizes.back() = b.getIndexAttr(shape.back());
  if (bias) {
    // The bias broadcast over the rows, the contraction accumulated onto it.
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    init =
        linalg::GenericOp::create(
            b, loc, resultTy, ValueRange{bias},
            ValueRange{tensor::EmptyOp::create(b, loc, sizes, b.getF32Type())},
            ArrayRef<AffineMap>{
                AffineMap::get(rank, 0, {b.getAffineDimExpr(rank - 1)}, ctx),
                id},
            SmallVector<IteratorType>(rank, kPar),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              linalg::YieldOp::create(nb, nl, args[0]);
            })
            .getResult(0);
  } else {
    init = filledTensor(b, loc, sizes, b.getF32Type(), b.getF32FloatAttr(0));
  }
  // Loops: the rank-1 row dims, o, then the reduction i.
  SmallVector<AffineExpr> xe, ye;
  for (unsigned d = 0; d + 1 < rank; ++d)
    xe.push_back(b.getAffineDimExpr(d));
  ye = xe;
  AffineExpr o = b.getAffineDimExpr(rank - 1), i = b.getAffineDimExpr(rank);
  xe.push_back(i);
  ye.push_back(o);
  SmallVector<AffineExpr> we = layout == WeightLayout::OutIn
                                   ? SmallVector<AffineExpr>{o, i}
                                   : SmallVector<AffineExpr>{i, o};
  SmallVector<IteratorType> iters(rank, kPar);
  iters.push_back(kRed);
  return buildMulAcc(b, loc, x, weight, init,
                     {AffineMap::get(rank + 1, 0, xe, ctx),
                      AffineMap::get(rank + 1, 0, we, ctx),
                      AffineMap::get(rank + 1, 0, ye, ctx)},
                     iters);
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

Value reduceAlong(OpBuilder &b, Location loc, Value x, unsigned axis,
                  TypedAttr init, ScalarCombine combine) {
  auto t = cast<RankedTensorType>(x.getType());
  MLIRContext *ctx = b.getContext();
  unsigned rank = t.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<IteratorType> iterators(rank, kPar);
  iterators[axis] = kRed;
  SmallVector<OpFoldResult> rowShape = tensor::getMixedSizes(b, loc, x);
  rowShape.erase(rowShape.begin() + axis);
  Value acc = filledTensor(b, loc, rowShape, init.getType(), init);
  return linalg::GenericOp::create(
             b, loc, acc.getType(), ValueRange{x}, ValueRange{acc},
             ArrayRef<AffineMap>{id, id.dropResult(axis)}, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl,
                                       combine(nb, nl, args[0], args[1]));
             })
      .getResult(0);
}

Value maxAlong(OpBuilder &b, Location loc, Value x, unsigned axis) {
  auto ft = cast<FloatType>(getElementTypeOrSelf(x.getType()));
  return reduceAlong(
      b, loc, x, axis,
      b.getFloatAttr(ft, APFloat::getInf(ft.getFloatSemantics(), true)),
      [](OpBuilder &nb, Location nl, Value a, Value c) -> Value {
        return arith::MaximumFOp::create(nb, nl, a, c);
      });
}

Value sumAlong(OpBuilder &b, Location loc, Value x, unsigned axis) {
  auto ft = cast<FloatType>(getElementTypeOrSelf(x.getType()));
  return reduceAlong(b, loc, x, axis, b.getFloatAttr(ft, 0.0),
                     [](OpBuilder &nb, Location nl, Value a, Value c) -> Value {
                       return arith::AddFOp::create(nb, nl, a, c);
                     });
}

Value rowwise(OpBuilder &b, Location loc, Value x, Value rowValue,
              unsigned axis, ScalarCombine fn, bool inPlace) {
  auto t = cast<RankedTensorType>(x.getType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(t.getRank(), b.getContext());
  AffineMap row = axis < t.getRank() ? id.dropResult(axis) : id;
  SmallVector<IteratorType> par(t.getRank(), kPar);
  if (inPlace)
    return linalg::GenericOp::create(
               b, loc, t, ValueRange{rowValue}, ValueRange{x},
               ArrayRef<AffineMap>{row, id}, par,
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 linalg::YieldOp::create(nb, nl, fn(nb, nl, args[1], args[0]));
               })
        .getResult(0);
  return linalg::GenericOp::create(
             b, loc, t, ValueRange{x, rowValue},
             ValueRange{tensor::EmptyOp::create(
                 b, loc, tensor::getMixedSizes(b, loc, x), t.getElementType())},
             ArrayRef<AffineMap>{id, row, id}, par,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, fn(nb, nl, args[0], args[1]));
             })
      .getResult(0);
}

Value softmaxAlong(OpBuilder &b, Location loc, Value x, unsigned axis) {
  Value ex = rowwise(b, loc, x, maxAlong(b, loc, x, axis), axis,
                     [](OpBuilder &nb, Location nl, Value v, Value m) -> Value {
                       return math::ExpOp::create(
                           nb, nl, arith::SubFOp::create(nb, nl, v, m));
                     });
  return rowwise(b, loc, ex, sumAlong(b, loc, ex, axis), axis,
                 [](OpBuilder &nb, Location nl, Value v, Value s) -> Value {
                   return arith::DivFOp::create(nb, nl, v, s);
                 });
}

Value buildActivation(OpBuilder &b, Location loc, StringRef name, Value x) {
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

} // namespace mlir::dat
