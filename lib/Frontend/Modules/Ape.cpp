//===- Ape.cpp - frontend of APE's positional maps with SelfMHA -----------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// `Sequential + SelfMHA` and `Grid + SelfMHA` (spec §9): one positional
// module, whose maps table datc computes from the primitives at compile
// time, and APE's self-attention with head-minor packing (feature
// f = d·H + h), a multiplicative mediator and -1e10 key masking.
//
//===----------------------------------------------------------------------===//

#include "Modules.h"

#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Frontend/OrthogonalMaps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace llvm;
using namespace mlir;

namespace dat {

/// Reads integer `key` of the nested kwargs object of the current scope.
static Value sliceLast(ModelBuilder &mb, Value x, int64_t offset,
                       int64_t size) {
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(t.getShape());
  int64_t rank = t.getRank();
  SmallVector<int64_t> offsets(rank, 0), sizes(shape), strides(rank, 1);
  offsets.back() = offset;
  sizes.back() = size;
  shape.back() = size;
  return tensor::ExtractSliceOp::create(
      mb.b, mb.loc, RankedTensorType::get(shape, t.getElementType()), x,
      ValueRange{}, ValueRange{}, ValueRange{},
      mb.b.getDenseI64ArrayAttr(offsets), mb.b.getDenseI64ArrayAttr(sizes),
      mb.b.getDenseI64ArrayAttr(strides));
}

static Value transpose(ModelBuilder &mb, Value x, ArrayRef<int64_t> perm) {
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(t.getDimSize(p));
  return linalg::TransposeOp::create(mb.b, mb.loc, x, mb.emptyLike(shape), perm)
      .getResult()[0];
}

/// [B,L,dh·H] (head-minor) -> [B,H,L,dh].
static Value headMinorSplit(ModelBuilder &mb, Value x, int64_t heads) {
  auto t = cast<RankedTensorType>(x.getType());
  int64_t dh = t.getDimSize(2) / heads;
  Value e = tensor::ExpandShapeOp::create(
      mb.b, mb.loc,
      RankedTensorType::get({t.getDimSize(0), t.getDimSize(1), dh, heads},
                            t.getElementType()),
      x, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  return transpose(mb, e, {0, 3, 1, 2});
}

/// [B,H,L,dh] -> [B,L,dh·H] (head-minor).
static Value headMinorMerge(ModelBuilder &mb, Value x) {
  Value t = transpose(mb, x, {0, 2, 3, 1});
  auto tt = cast<RankedTensorType>(t.getType());
  return tensor::CollapseShapeOp::create(
      mb.b, mb.loc,
      RankedTensorType::get({tt.getDimSize(0), tt.getDimSize(1),
                             tt.getDimSize(2) * tt.getDimSize(3)},
                            tt.getElementType()),
      t, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
}

/// maps[b,l,h] = table[wrap(pos[b,l]), first + h] for pos [Bp,L]; table is
/// [size+1, count, d, d]. Negative positions wrap like Python indexing.
static Value gatherMaps(ModelBuilder &mb, Value table, Value positions,
                        int64_t size, int64_t first, int64_t heads, int64_t d) {
  auto pt = cast<RankedTensorType>(positions.getType());
  SmallVector<int64_t> shape = {pt.getDimSize(0), pt.getDimSize(1), heads, d,
                                d};
  MLIRContext *ctx = mb.b.getContext();
  AffineExpr b, l, h, r, c;
  bindDims(ctx, b, l, h, r, c);
  return linalg::GenericOp::create(
             mb.b, mb.loc, RankedTensorType::get(shape, mb.b.getF32Type()),
             ValueRange{positions}, ValueRange{mb.emptyLike(shape)},
             ArrayRef<AffineMap>{AffineMap::get(5, 0, {b, l}, ctx),
                                 AffineMap::getMultiDimIdentityMap(5, ctx)},
             SmallVector<utils::IteratorType>(5, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value p = args[0];
               Value zero = arith::ConstantIntOp::create(nb, nl, 0, 64);
               Value n = arith::ConstantIntOp::create(nb, nl, size + 1, 64);
               Value neg = arith::CmpIOp::create(
                   nb, nl, arith::CmpIPredicate::slt, p, zero);
               Value wrapped = arith::SelectOp::create(
                   nb, nl, neg, arith::AddIOp::create(nb, nl, p, n), p);
               Value idx = arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                                      wrapped);
               Value hh = arith::AddIOp::create(
                   nb, nl, linalg::IndexOp::create(nb, nl, 2),
                   arith::ConstantIndexOp::create(nb, nl, first));
               Value v = tensor::ExtractOp::create(
                   nb, nl, table,
                   ValueRange{idx, hh, linalg::IndexOp::create(nb, nl, 3),
                              linalg::IndexOp::create(nb, nl, 4)});
               linalg::YieldOp::create(nb, nl, v);
             })
      .getResult(0);
}

static void buildApeSelfMHA(ModelBuilder &mb, bool grid) {
  int64_t axes = 1, mapDim = 0, mapHeads = 0;
  mb.withKwargs("positional_encoder", grid ? "Grid" : "Sequential", [&] {
    if (grid)
      axes = mb.intArg("num_axes");
    mapDim = mb.intArg("dim");
    mapHeads = mb.intArg("num_heads");
  });
  int64_t heads = 0, dim = 0;
  mb.withKwargs("mha", "SelfMHA", [&] {
    heads = mb.intArg("num_heads");
    dim = mb.intArg("dim");
    mb.floatArg("dropout_rate", 0.0);
  });
  const json::Value *sizeV = mb.config.call.get("precompute_size");
  std::optional<int64_t> size = sizeV ? sizeV->getAsInteger() : std::nullopt;
  if (mb.failed())
    return;
  if (!size || *size < 1 || *size > (1 << 20)) {
    mb.error(mb.config.path + ": call.precompute_size: expected an integer in "
                              "[1, 2^20]");
    return;
  }
  if (grid && axes != 2) {
    mb.error(mb.config.path + ": kwargs.positional_encoder.num_axes: the "
                              "reference's Grid is hard-wired to 2 axes");
    return;
  }
  if (heads == 0 || dim % heads || mapHeads != heads ||
      mapDim * axes != dim / heads) {
    mb.error(mb.config.path + ": kwargs: the maps (" + Twine(axes) + " × " +
             Twine(mapDim) + " per head, " + Twine(mapHeads) +
             " heads) must cover each attention head (dim " + Twine(dim) +
             " / " + Twine(heads) + " heads)");
    return;
  }
  int64_t dh = dim / heads, count = axes * heads;
  std::vector<int64_t> primShape = {count, mapDim, mapDim};
  std::vector<int64_t> tableShape = {*size + 1, count, mapDim, mapDim};
  int64_t tableSize = *size;
  Value table = mb.derivedWeight(
      "positional_encoder.maps_table", tableShape,
      {{"positional_encoder._primitives", primShape}},
      [count, mapDim, tableSize](const std::vector<const float *> &in,
                                 float *out) {
        orthogonalPowerTable(in[0], count, mapDim, tableSize, out);
      });

  Value x = mb.input("x");
  if (mb.failed() || !x)
    return;
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t B = xt.getDimSize(0), L = xt.getDimSize(1);
  SmallVector<Value> maps;
  for (StringRef pos : grid ? SmallVector<StringRef>{"x_pos", "y_pos"}
                            : SmallVector<StringRef>{"positions"}) {
    Value p = mb.input(pos);
    if (!p)
      return;
    auto pt = cast<RankedTensorType>(p.getType());
    if (!pt.getElementType().isInteger(64) || pt.getRank() != 2 ||
        pt.getDimSize(1) != L ||
        (pt.getDimSize(0) != 1 && pt.getDimSize(0) != B)) {
      mb.error(mb.config.path + ": inputs." + pos +
               ": expected int64 [B or 1, " + Twine(L) + "]");
      return;
    }
    mb.inputRange(pos, -(*size + 1), *size);
    int64_t axis = maps.size();
    maps.push_back(
        gatherMaps(mb, table, p, *size, axis * heads, heads, mapDim));
  }
  if (grid) {
    mb.output("maps_x", maps[0]);
    mb.output("maps_y", maps[1]);
  } else {
    mb.output("maps", maps[0]);
  }

  Value lin = mb.linear(x, "mha.linear", 3 * dim, true);
  Value q = headMinorSplit(mb, sliceLast(mb, lin, 0, dim), heads);
  Value k = headMinorSplit(mb, sliceLast(mb, lin, dim, dim), heads);
  Value v = headMinorSplit(mb, sliceLast(mb, lin, 2 * dim, dim), heads);
  auto applyMaps = [&](Value t) -> Value {
    if (!grid)
      return mlir::dat::OrthogonalMapOp::create(mb.b, mb.loc, t.getType(), t,
                                                maps[0]);
    // Each head's features split in halves: axis 0 maps the first half,
    // axis 1 the second. (The reference uses the query maps for keys too,
    // which is the same in self-attention.)
    Value lo = sliceLast(mb, t, 0, mapDim),
          hi = sliceLast(mb, t, mapDim, mapDim);
    lo = mlir::dat::OrthogonalMapOp::create(mb.b, mb.loc, lo.getType(), lo,
                                            maps[0]);
    hi = mlir::dat::OrthogonalMapOp::create(mb.b, mb.loc, hi.getType(), hi,
                                            maps[1]);
    return concatLast(mb, lo, hi);
  };
  q = applyMaps(q);
  k = applyMaps(k);

  // Mediator [1|B, L, L, 1, 1] -> the per-pair score scale [1|B, L, L].
  Value mediator;
  if (mb.hasInput("mediator")) {
    Value m = mb.input("mediator");
    auto mt = cast<RankedTensorType>(m.getType());
    if (mt.getRank() != 5 || mt.getDimSize(1) != L || mt.getDimSize(2) != L ||
        mt.getDimSize(3) != 1 || mt.getDimSize(4) != 1 ||
        (mt.getDimSize(0) != 1 && mt.getDimSize(0) != B)) {
      mb.error(mb.config.path + ": inputs.mediator: expected [1 or B, L, L, "
                                "1, 1] (a multiplicative per-pair scale)");
      return;
    }
    mediator = tensor::CollapseShapeOp::create(
        mb.b, mb.loc,
        RankedTensorType::get({mt.getDimSize(0), L, L}, mb.b.getF32Type()), m,
        ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3, 4}});
  }
  Value keyMask;
  if (mb.hasInput("key_mask")) {
    Value km = mb.input("key_mask");
    auto kt = cast<RankedTensorType>(km.getType());
    if (kt.getRank() != 2 || kt.getDimSize(0) != B || kt.getDimSize(1) != L) {
      mb.error(mb.config.path + ": inputs.key_mask: expected [B, L]");
      return;
    }
    // Nonzero = keep, as the reference's bool conversion.
    MLIRContext *ctx = mb.b.getContext();
    auto boolTy = RankedTensorType::get({B, L}, mb.b.getI1Type());
    keyMask =
        linalg::GenericOp::create(
            mb.b, mb.loc, boolTy, ValueRange{km},
            ValueRange{tensor::EmptyOp::create(mb.b, mb.loc, boolTy.getShape(),
                                               mb.b.getI1Type())},
            ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(2, ctx),
                                AffineMap::getMultiDimIdentityMap(2, ctx)},
            SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value zero =
                  kt.getElementType().isInteger(64)
                      ? Value(arith::ConstantIntOp::create(nb, nl, 0, 64))
                      : Value();
              Value ne =
                  zero ? Value(arith::CmpIOp::create(
                             nb, nl, arith::CmpIPredicate::ne, args[0], zero))
                       : Value(arith::CmpFOp::create(
                             nb, nl, arith::CmpFPredicate::UNE, args[0],
                             arith::ConstantOp::create(nb, nl,
                                                       nb.getF32FloatAttr(0))));
              linalg::YieldOp::create(nb, nl, ne);
            })
            .getResult(0);
  }
  if (mb.failed())
    return;

  float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  FloatAttr fill = mb.b.getF32FloatAttr(-1e10f);
  Value o = mlir::dat::AttentionOp::create(
      mb.b, mb.loc, mb.emptyLike({B, heads, L, dh}).getType(), q, k, v,
      /*mask=*/Value(), keyMask, mediator, /*query_offset=*/Value(),
      mb.emptyLike({B, heads, L, dh}), mb.b.getF32FloatAttr(scale), fill,
      /*causal=*/false);
  mb.output("y", mb.linear(headMinorMerge(mb, o), "mha.out", dim, true));
  if (mb.wantsOutput("scores")) {
    Value init = mb.emptyLike({B, heads, L, L});
    Value s = mlir::dat::AttentionWeightsOp::create(
        mb.b, mb.loc, init.getType(), q, k, Value(), keyMask, mediator, Value(),
        init, mb.b.getF32FloatAttr(scale), fill, false,
        /*logits=*/true);
    mb.output("scores", transpose(mb, s, {0, 2, 3, 1}));
  }
}

void buildApeSequentialSelfMHA(ModelBuilder &mb) { buildApeSelfMHA(mb, false); }
void buildApeGridSelfMHA(ModelBuilder &mb) { buildApeSelfMHA(mb, true); }

} // namespace dat
