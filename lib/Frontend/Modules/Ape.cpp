//===- Ape.cpp - frontend of APE's positional maps with SelfMHA -----------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// `Sequential | Grid | Branching` + `SelfMHA | Encoder` (spec §9): one
// positional module, whose maps table datc computes from the primitives at
// compile time (powers for sequences and grid axes, root-first path products
// for tree nodes), and APE's self-attention with head-minor packing (feature
// f = d·H + h), a multiplicative mediator and -1e10 key masking.
//
//===----------------------------------------------------------------------===//

#include "ApePositions.h"
#include "ApeSetup.h"
#include "Modules.h"

#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"
#include "dat/Frontend/OrthogonalMaps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace llvm;
using namespace mlir;

namespace dat {

/// x[..., offset : offset + size] along the last axis.
Value sliceLast(ModelBuilder &mb, Value x, int64_t offset, int64_t size) {
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(t.getShape());
  int64_t rank = t.getRank();
  SmallVector<OpFoldResult> offsets(rank, mb.b.getIndexAttr(0)),
      sizes = tensor::getMixedSizes(mb.b, mb.loc, x),
      strides(rank, mb.b.getIndexAttr(1));
  offsets.back() = mb.b.getIndexAttr(offset);
  sizes.back() = mb.b.getIndexAttr(size);
  shape.back() = size;
  return tensor::ExtractSliceOp::create(
      mb.b, mb.loc, RankedTensorType::get(shape, t.getElementType()), x,
      offsets, sizes, strides);
}

static Value transpose(ModelBuilder &mb, Value x, ArrayRef<int64_t> perm) {
  return mlir::dat::buildTranspose(mb.b, mb.loc, x, perm);
}

/// [B,L,dh·H] (head-minor) -> [B,H,L,dh].
Value headMinorSplit(ModelBuilder &mb, Value x, int64_t heads) {
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
Value headMinorMerge(ModelBuilder &mb, Value x) {
  Value t = transpose(mb, x, {0, 2, 3, 1});
  auto tt = cast<RankedTensorType>(t.getType());
  return tensor::CollapseShapeOp::create(
      mb.b, mb.loc,
      RankedTensorType::get({tt.getDimSize(0), tt.getDimSize(1),
                             tt.getDimSize(2) * tt.getDimSize(3)},
                            tt.getElementType()),
      t, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
}

/// out[b,l,h,...] = table[index(pos[b,l]), first + h, ...] for positions
/// [Bp,L] and a table [size+1, count, ...] (maps d×d, or rotary angles'
/// cos/sin d/2). Negative positions wrap like Python indexing, or
/// (`treeNodes`) all select node 0, the root.
Value gatherAtPositions(ModelBuilder &mb, Value table, Value positions,
                        int64_t size, int64_t first, int64_t heads,
                        bool treeNodes) {
  auto tt = cast<RankedTensorType>(table.getType());
  SmallVector<OpFoldResult> shape = {
      mb.dimOf(positions, 0), mb.dimOf(positions, 1), mb.b.getIndexAttr(heads)};
  for (int64_t size : tt.getShape().drop_front(2))
    shape.push_back(mb.b.getIndexAttr(size));
  unsigned rank = shape.size();
  MLIRContext *ctx = mb.b.getContext();
  Value init = mb.emptyLike(shape);
  return linalg::GenericOp::create(
             mb.b, mb.loc, init.getType(), ValueRange{positions},
             ValueRange{init},
             ArrayRef<AffineMap>{AffineMap::get(rank, 0,
                                                {getAffineDimExpr(0, ctx),
                                                 getAffineDimExpr(1, ctx)},
                                                ctx),
                                 AffineMap::getMultiDimIdentityMap(rank, ctx)},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value p = args[0];
               Value zero = arith::ConstantIntOp::create(nb, nl, 0, 64);
               Value n = arith::ConstantIntOp::create(nb, nl, size + 1, 64);
               Value neg = arith::CmpIOp::create(
                   nb, nl, arith::CmpIPredicate::slt, p, zero);
               Value wrapped = arith::SelectOp::create(
                   nb, nl, neg,
                   treeNodes ? zero : arith::AddIOp::create(nb, nl, p, n), p);
               SmallVector<Value> at = {
                   arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                              wrapped),
                   arith::AddIOp::create(
                       nb, nl, linalg::IndexOp::create(nb, nl, 2),
                       arith::ConstantIndexOp::create(nb, nl, first))};
               for (unsigned d = 3; d < rank; ++d)
                 at.push_back(linalg::IndexOp::create(nb, nl, d));
               Value v = tensor::ExtractOp::create(nb, nl, table, at);
               linalg::YieldOp::create(nb, nl, v);
             })
      .getResult(0);
}

/// The SelfMHA packed projection `prefix`linear ([3·dim, dim] and bias) with
/// the query and key rows of each head replaced by their coordinates in the
/// rotary basis, Qᵀ·W_q (per axis slice for grids), and reordered head-major
/// (feature h·dh + a) for dat.rope; the value rows stay head-minor.
static Value rotaryProjection(ModelBuilder &mb, const ApeSetup &setup,
                              StringRef prefix, int64_t dim, int64_t heads,
                              bool bias) {
  int64_t cols = bias ? 1 : dim, md = setup.mapDim, dh = dim / heads;
  std::vector<int64_t> shape = {3 * dim};
  if (!bias)
    shape.push_back(dim);
  std::string from = (prefix + (bias ? "linear.bias" : "linear.weight")).str();
  std::string name =
      (prefix + (bias ? "linear.rotary.bias" : "linear.rotary.weight")).str();
  auto forms = setup.forms;
  return mb.derivedWeight(
      name, shape, {{from, shape}},
      [=](const std::vector<const float *> &in, float *out) {
        const float *w = in[0];
        std::copy(w, w + 3 * dim * cols, out);
        for (int64_t part = 0; part < 2; ++part)
          for (int64_t h = 0; h < heads; ++h)
            for (int64_t a = 0; a < dh; ++a) {
              int64_t axis = a / md, col = a % md;
              const std::vector<double> &q = (*forms)[axis * heads + h].basis;
              float *row = out + (part * dim + h * dh + a) * cols;
              for (int64_t j = 0; j < cols; ++j) {
                double acc = 0;
                for (int64_t c = 0; c < md; ++c)
                  acc +=
                      q[c * md + col] *
                      w[(part * dim + (axis * md + c) * heads + h) * cols + j];
                row[j] = static_cast<float>(acc);
              }
            }
      });
}

/// q, k [B,H,L,dh] ← their d×d maps (each axis on its slice of a head).
static void applyGeneralMaps(ModelBuilder &mb, const ApeSetup &setup, Value &q,
                             Value &k) {
  int64_t md = setup.mapDim;
  auto applyMaps = [&](Value t) -> Value {
    auto map = [&](Value x, Value maps) -> Value {
      return mlir::dat::OrthogonalMapOp::create(
          mb.b, mb.loc, x.getType(), x, maps,
          mb.emptyLike(tensor::getMixedSizes(mb.b, mb.loc, x)));
    };
    if (!setup.grid)
      return map(t, setup.maps[0]);
    // Each head's features split in halves: axis 0 maps the first half,
    // axis 1 the second. (The reference uses the query maps for keys too,
    // which is the same in self-attention.)
    Value lo = sliceLast(mb, t, 0, md), hi = sliceLast(mb, t, md, md);
    return concatLast(mb, map(lo, setup.maps[0]), map(hi, setup.maps[1]));
  };
  q = applyMaps(q);
  k = applyMaps(k);
}

/// SelfMHA (weights under `prefix`) with the shared maps: returns y and,
/// when `scores` is non-null, the pre-softmax scores [B,L,L,H].
static Value apeSelfAttention(ModelBuilder &mb, const ApeSetup &setup,
                              StringRef prefix, Value x, int64_t heads,
                              int64_t dim, Value *scores) {
  if (mb.failed() || !x)
    return {};
  // readApeSetup checked that the maps cover each head exactly.
  auto name = [&](StringRef n) { return (prefix + n).str(); };
  auto xt = cast<RankedTensorType>(x.getType());
  if (xt.getDimSize(2) != dim) {
    mb.error(mb.config.path + ": inputs.x: expected width " + Twine(dim) +
             " (the attention's dim), got " + Twine(xt.getDimSize(2)));
    return {};
  }
  int64_t dh = dim / heads;
  Value q, k, v;
  if (setup.forms) {
    // Rotary form: q, k come out of the folded projection head-major, in
    // the rotary basis; rotate them by the learned angles.
    Value lin =
        mb.linear(x, rotaryProjection(mb, setup, prefix, dim, heads, false),
                  rotaryProjection(mb, setup, prefix, dim, heads, true));
    if (mb.failed())
      return {};
    auto rotate = [&](Value t) -> Value {
      t = mb.splitHeads(t, heads);
      t = mlir::dat::RopeOp::create(mb.b, mb.loc, t.getType(), t, setup.cos,
                                    setup.sin);
      return transpose(mb, t, {0, 2, 1, 3});
    };
    q = rotate(sliceLast(mb, lin, 0, dim));
    k = rotate(sliceLast(mb, lin, dim, dim));
    v = headMinorSplit(mb, sliceLast(mb, lin, 2 * dim, dim), heads);
  } else {
    Value lin = mb.linear(x, name("linear"), 3 * dim, true);
    if (mb.failed())
      return {};
    q = headMinorSplit(mb, sliceLast(mb, lin, 0, dim), heads);
    k = headMinorSplit(mb, sliceLast(mb, lin, dim, dim), heads);
    v = headMinorSplit(mb, sliceLast(mb, lin, 2 * dim, dim), heads);
    applyGeneralMaps(mb, setup, q, k);
  }

  float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  FloatAttr fill = mb.b.getF32FloatAttr(-1e10f);
  // (Batch and length may be dynamic: x's own.)
  OpFoldResult B = mb.dimOf(x, 0), L = mb.dimOf(x, 1),
               H = mb.b.getIndexAttr(heads);
  Value oInit = mb.emptyLike({B, H, L, mb.b.getIndexAttr(dh)});
  Value o = mlir::dat::AttentionOp::create(
      mb.b, mb.loc, oInit.getType(), q, k, v,
      /*mask=*/Value(), setup.keyMask, setup.scoreScale(mb),
      /*query_offset=*/Value(), oInit, mb.b.getF32FloatAttr(scale), fill,
      /*causal=*/false);
  if (scores) {
    Value init = mb.emptyLike({B, H, L, L});
    Value s = mlir::dat::AttentionWeightsOp::create(
        mb.b, mb.loc, init.getType(), q, k, Value(), setup.keyMask,
        setup.scoreScale(mb), Value(), init, mb.b.getF32FloatAttr(scale), fill,
        false,
        /*logits=*/true);
    *scores = transpose(mb, s, {0, 2, 3, 1});
  }
  return mb.linear(headMinorMerge(mb, o), name("out"), dim, true);
}

static void outputMaps(ModelBuilder &mb, const ApeSetup &setup) {
  if (setup.maps.empty()) // rotary form, and no maps output asked for
    return;
  if (setup.grid) {
    mb.output("maps_x", setup.maps[0]);
    mb.output("maps_y", setup.maps[1]);
  } else {
    mb.output("maps", setup.maps[0]);
  }
}

static void buildApeSelfMHA(ModelBuilder &mb, ApeMaps kind) {
  int64_t heads = 0, dim = 0;
  mb.withKwargs("mha", "SelfMHA", [&] {
    heads = mb.intArg("num_heads");
    dim = mb.intArg("dim");
    mb.floatArg("dropout_rate", 0.0);
  });
  if (mb.failed())
    return;
  std::optional<ApeSetup> setup = readApeSetup(mb, kind, heads, dim);
  if (!setup)
    return;
  outputMaps(mb, *setup);
  Value scores;
  Value y = apeSelfAttention(mb, *setup, "mha.", mb.input("x", 3), heads, dim,
                             mb.wantsOutput("scores") ? &scores : nullptr);
  mb.output("y", y);
  mb.output("scores", scores);
}

/// `Encoder`: post-norm layers x = LN(x + MHA(x)); x = LN(x + FFN(x)),
/// FFN = Linear(dim, r·dim) → ReLU | exact GELU → Linear(r·dim, dim).
static void buildApeEncoder(ModelBuilder &mb, ApeMaps kind) {
  int64_t heads = 0, layers = 0, dim = 0, ratio = 4;
  std::string act;
  mb.withKwargs("encoder", "Encoder", [&] {
    heads = mb.intArg("num_heads");
    layers = mb.layersArg("num_layers");
    dim = mb.intArg("dim");
    mb.floatArg("dropout_rate", 0.0);
    mb.floatArg("weight_dropout", 0.0);
    ratio = mb.intArg("mlp_ratio", 4);
    act = mb.stringArg("activation", "ReLU");
    mb.boolArg("drop_path", false); // the identity at inference
  });
  if (mb.failed())
    return;
  if (act != "ReLU" && act != "GELU") {
    mb.error(mb.config.path + ": kwargs.encoder.activation: '" + act +
             "' (ReLU or GELU)");
    return;
  }
  std::optional<ApeSetup> setup = readApeSetup(mb, kind, heads, dim);
  if (!setup)
    return;
  outputMaps(mb, *setup);
  Value x = mb.input("x", 3);
  for (int64_t l = 0; l < layers && !mb.failed(); ++l) {
    std::string p = "encoder.encoder_layers." + std::to_string(l) + ".";
    Value a = apeSelfAttention(mb, *setup, p + "mha.", x, heads, dim, nullptr);
    x = mb.layerNorm(mb.add(x, a), p + "mha_ln", 1e-5);
    Value h = mb.activation(mb.linear(x, p + "ffn.0", ratio * dim, true),
                            act == "GELU" ? "gelu_erf" : "relu");
    x = mb.layerNorm(mb.add(x, mb.linear(h, p + "ffn.2", dim, true)),
                     p + "ffn_ln", 1e-5);
  }
  mb.output("y", x);
}

void buildApeSequentialSelfMHA(ModelBuilder &mb) {
  buildApeSelfMHA(mb, ApeMaps::Sequential);
}
void buildApeGridSelfMHA(ModelBuilder &mb) {
  buildApeSelfMHA(mb, ApeMaps::Grid);
}
void buildApeBranchingSelfMHA(ModelBuilder &mb) {
  buildApeSelfMHA(mb, ApeMaps::Branching);
}
void buildApeSequentialEncoder(ModelBuilder &mb) {
  buildApeEncoder(mb, ApeMaps::Sequential);
}
void buildApeGridEncoder(ModelBuilder &mb) {
  buildApeEncoder(mb, ApeMaps::Grid);
}
void buildApeBranchingEncoder(ModelBuilder &mb) {
  buildApeEncoder(mb, ApeMaps::Branching);
}

} // namespace dat
