//===- ModelLayers.cpp - ModelBuilder: the layer library ------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//
//
// The linalg the modules are built from: projections, head splits and
// merges, elementwise arithmetic, activations and normalizations.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"
#include "dat/Frontend/ModelBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace llvm;
using namespace mlir;

namespace dat {

Value ModelBuilder::emptyLike(ArrayRef<int64_t> shape) {
  return tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
}

Value ModelBuilder::emptyLike(ArrayRef<OpFoldResult> shape) {
  return tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
}

OpFoldResult ModelBuilder::dimOf(Value x, int64_t d) {
  return tensor::getMixedSize(b, loc, x, d);
}

Value ModelBuilder::linear(Value x, StringRef prefix, int64_t out, bool bias) {
  if (failed() || !x)
    return {};
  int64_t in = cast<RankedTensorType>(x.getType()).getShape().back();
  Value w = weight((prefix + ".weight").str(), {out, in});
  return linear(x, w, bias ? weight((prefix + ".bias").str(), {out}) : Value());
}

Value ModelBuilder::linear(Value x, Value w, Value bv) {
  if (failed() || !x || !w)
    return {};
  return mlir::dat::buildLinear(b, loc, x, w, bv);
}

Value ModelBuilder::splitHeads(Value x, int64_t heads) {
  if (failed() || !x)
    return {};
  auto t = cast<RankedTensorType>(x.getType());
  int64_t width = t.getShape().back();
  if (heads <= 0 || width % heads != 0) {
    error(config.path + ": cannot split " + Twine(width) + " features into " +
          Twine(heads) + " heads");
    return {};
  }
  SmallVector<int64_t> shape = {t.getDimSize(0), t.getDimSize(1), heads,
                                width / heads};
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), x,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
}

Value ModelBuilder::swapSeqHeads(Value x) {
  if (failed() || !x)
    return {};
  return mlir::dat::buildTranspose(b, loc, x, {0, 2, 1, 3});
}

Value ModelBuilder::mergeHeads(Value x) {
  if (failed() || !x)
    return {};
  Value y = swapSeqHeads(x);
  auto t = cast<RankedTensorType>(y.getType());
  SmallVector<int64_t> shape = {t.getDimSize(0), t.getDimSize(1),
                                t.getDimSize(2) * t.getDimSize(3)};
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), y,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
}

/// A parallel elementwise generic over `inputs` (read through
/// `inputMaps`) producing a tensor like `like`.
static Value elementwise(ModelBuilder &mb, Value like, ValueRange inputs,
                         ArrayRef<AffineMap> inputMaps,
                         mlir::dat::ScalarBody body) {
  return mlir::dat::buildElementwise(mb.b, mb.loc,
                                     cast<RankedTensorType>(like.getType()),
                                     inputs, inputMaps, body);
}

bool ModelBuilder::sameShape(Value a, Value c) {
  if (a.getType() == c.getType())
    return true;
  // Residual streams of different widths: the inputs' shapes disagree with
  // the configured dimensions somewhere the module checks do not catch.
  std::string sa, sc;
  llvm::raw_string_ostream oa(sa), oc(sc);
  oa << a.getType();
  oc << c.getType();
  error(config.path +
        ": inputs: the tensors' shapes do not fit the model's "
        "dimensions (" +
        sa + " vs " + sc + "): check the inputs against d_model/dim");
  return false;
}

/// op(a, c) elementwise on two tensors of one shape.
template <typename ArithOp>
static Value binary(ModelBuilder &mb, Value a, Value c) {
  AffineMap id = AffineMap::getMultiDimIdentityMap(
      cast<RankedTensorType>(a.getType()).getRank(), mb.b.getContext());
  return elementwise(mb, a, {a, c}, {id, id},
                     [](OpBuilder &nb, Location nl, ValueRange v) {
                       return Value(ArithOp::create(nb, nl, v[0], v[1]));
                     });
}

Value ModelBuilder::add(Value a, Value c) {
  if (failed() || !a || !c || !sameShape(a, c))
    return {};
  return binary<arith::AddFOp>(*this, a, c);
}

Value ModelBuilder::mul(Value a, Value c) {
  if (failed() || !a || !c || !sameShape(a, c))
    return {};
  return binary<arith::MulFOp>(*this, a, c);
}

namespace {
/// The maps of a reduction over the last axis of a rank-r tensor.
struct LastAxis {
  AffineMap id, row, last;
  SmallVector<utils::IteratorType> reduce;
  SmallVector<OpFoldResult> rowShape; // dynamic sizes as values
};
} // namespace

static LastAxis lastAxis(OpBuilder &b, Location loc, Value x) {
  auto t = cast<RankedTensorType>(x.getType());
  int64_t rank = t.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> rowExprs;
  for (int64_t i = 0; i + 1 < rank; ++i)
    rowExprs.push_back(b.getAffineDimExpr(i));
  LastAxis m;
  m.id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  m.row = AffineMap::get(rank, 0, rowExprs, ctx);
  m.last = AffineMap::get(rank, 0, {b.getAffineDimExpr(rank - 1)}, ctx);
  m.reduce.assign(rank - 1, utils::IteratorType::parallel);
  m.reduce.push_back(utils::IteratorType::reduction);
  m.rowShape = tensor::getMixedSizes(b, loc, x);
  m.rowShape.pop_back();
  return m;
}

/// Σ over the last axis of f(inputs), into a zero-filled row tensor.
static Value
sumLastAxis(ModelBuilder &mb, const LastAxis &m, ValueRange ins,
            ArrayRef<AffineMap> inMaps,
            llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> f) {
  Value zero = arith::ConstantOp::create(mb.b, mb.loc, mb.b.getF32FloatAttr(0));
  Value init =
      linalg::FillOp::create(mb.b, mb.loc, zero, mb.emptyLike(m.rowShape))
          .getResult(0);
  SmallVector<AffineMap> maps(inMaps);
  maps.push_back(m.row);
  return linalg::GenericOp::create(
             mb.b, mb.loc, init.getType(), ins, ValueRange{init}, maps,
             m.reduce,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value v = f(nb, nl, args.drop_back());
               linalg::YieldOp::create(
                   nb, nl,
                   Value(arith::AddFOp::create(nb, nl, args.back(), v)));
             })
      .getResult(0);
}

Value ModelBuilder::rmsNorm(Value x, StringRef prefix, double eps) {
  if (failed() || !x)
    return {};
  auto t = cast<RankedTensorType>(x.getType());
  int64_t d = t.getShape().back();
  Value w = weight((prefix + ".weight").str(), {d});
  if (failed())
    return {};
  LastAxis m = lastAxis(b, loc, x);
  Value sq = sumLastAxis(
      *this, m, {x}, {m.id}, [](OpBuilder &nb, Location nl, ValueRange a) {
        return Value(arith::MulFOp::create(nb, nl, a[0], a[0]));
      });
  float n = static_cast<float>(d), e = static_cast<float>(eps);
  return elementwise(*this, x, {x, sq, w}, {m.id, m.row, m.last},
                     [n, e](OpBuilder &nb, Location nl, ValueRange a) {
                       auto c = [&](float v) {
                         return arith::ConstantOp::create(
                             nb, nl, nb.getF32FloatAttr(v));
                       };
                       Value mean = arith::DivFOp::create(nb, nl, a[1], c(n));
                       Value inv = math::RsqrtOp::create(
                           nb, nl, arith::AddFOp::create(nb, nl, mean, c(e)));
                       Value y = arith::MulFOp::create(nb, nl, a[0], inv);
                       return Value(arith::MulFOp::create(nb, nl, y, a[2]));
                     });
}

Value ModelBuilder::activation(Value x, StringRef name) {
  if (failed() || !x || name == "identity")
    return x;
  AffineMap id = AffineMap::getMultiDimIdentityMap(
      cast<RankedTensorType>(x.getType()).getRank(), b.getContext());
  return elementwise(*this, x, {x}, {id},
                     [name](OpBuilder &nb, Location nl, ValueRange v) {
                       return mlir::dat::buildActivation(nb, nl, name, v[0]);
                     });
}

Value ModelBuilder::layerNorm(Value x, StringRef prefix, double eps,
                              bool bias) {
  if (failed() || !x)
    return {};
  auto t = cast<RankedTensorType>(x.getType());
  int64_t d = t.getShape().back();
  Value w = weight((prefix + ".weight").str(), {d});
  Value bv = bias ? weight((prefix + ".bias").str(), {d}) : Value();
  if (failed())
    return {};
  LastAxis m = lastAxis(b, loc, x);
  // Two passes, as nn.LayerNorm: mean, then the biased mean of (x − mean)².
  float n = static_cast<float>(d), e = static_cast<float>(eps);
  Value sum =
      sumLastAxis(*this, m, {x}, {m.id},
                  [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  Value sq = sumLastAxis(
      *this, m, {x, sum}, {m.id, m.row},
      [n](OpBuilder &nb, Location nl, ValueRange a) {
        Value mean = arith::DivFOp::create(
            nb, nl, a[1],
            arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(n)));
        Value dlt = arith::SubFOp::create(nb, nl, a[0], mean);
        return Value(arith::MulFOp::create(nb, nl, dlt, dlt));
      });
  SmallVector<Value> ins = {x, sum, sq, w};
  SmallVector<AffineMap> maps = {m.id, m.row, m.row, m.last};
  if (bv) {
    ins.push_back(bv);
    maps.push_back(m.last);
  }
  return elementwise(
      *this, x, ins, maps, [n, e](OpBuilder &nb, Location nl, ValueRange a) {
        auto c = [&](float v) {
          return arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(v));
        };
        Value mean = arith::DivFOp::create(nb, nl, a[1], c(n));
        Value var = arith::DivFOp::create(nb, nl, a[2], c(n));
        Value inv = math::RsqrtOp::create(
            nb, nl, arith::AddFOp::create(nb, nl, var, c(e)));
        Value y = arith::MulFOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, a[0], mean), inv);
        y = arith::MulFOp::create(nb, nl, y, a[3]);
        if (a.size() > 4)
          y = arith::AddFOp::create(nb, nl, y, a[4]);
        return y;
      });
}

} // namespace dat
