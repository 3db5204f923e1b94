//===- ApePositions.cpp - APE's maps and distances from positions ---------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Tree maps and the models' distance decay (spec §9.2, §9.5) computed by
// the program from the positions it is given: no table bounded at compile
// time, and no N×N tensor — the per-pair decay is a cheap elementwise op
// the flash tiling recomputes per tile (`dat.recompute_per_tile`).
//
//===----------------------------------------------------------------------===//

#include "ApePositions.h"

#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"
#include "dat/Frontend/OrthogonalMaps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace llvm;
using namespace mlir;

namespace dat {

int64_t maxTreeNode(int64_t branching) {
  // Nodes of depth <= 16: 1 + bf + ... + bf^16; the largest id is one less.
  int64_t total = 0, level = 1;
  for (int64_t depth = 0; depth <= kMaxTreeDepth; ++depth) {
    if (total > std::numeric_limits<int64_t>::max() - level)
      return std::numeric_limits<int64_t>::max();
    total += level;
    if (depth < kMaxTreeDepth) {
      if (level > std::numeric_limits<int64_t>::max() / branching)
        return std::numeric_limits<int64_t>::max();
      level *= branching;
    }
  }
  return total - 1;
}

namespace {
using BodyFn = llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// A linalg.generic over `shape` (all parallel) writing `elt`, reading
/// `inputs` through `maps` (of rank shape.size()).
Value parallelGeneric(ModelBuilder &mb, ArrayRef<int64_t> shape, Type elt,
                      ValueRange inputs, ArrayRef<AffineMap> maps,
                      BodyFn body) {
  return mlir::dat::buildElementwise(
      mb.b, mb.loc, RankedTensorType::get(shape, elt), inputs, maps, body);
}

AffineMap dims(ModelBuilder &mb, unsigned rank, ArrayRef<unsigned> which) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : which)
    exprs.push_back(getAffineDimExpr(d, mb.b.getContext()));
  return AffineMap::get(rank, 0, exprs, mb.b.getContext());
}

/// Integer arithmetic on i64 in a payload.
struct I64 {
  OpBuilder &b;
  Location l;
  Value c(int64_t v) { return arith::ConstantIntOp::create(b, l, v, 64); }
  Value gt0(Value v) {
    return arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, v, c(0));
  }
  Value eq(Value x, Value y) {
    return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, y);
  }
  Value sel(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, l, cond, x, y);
  }
  Value index(unsigned dim) {
    return arith::IndexCastOp::create(b, l, b.getI64Type(),
                                      linalg::IndexOp::create(b, l, dim));
  }
  /// The node of a position: <= 0 is the root.
  Value node(Value p) { return arith::MaxSIOp::create(b, l, p, c(0)); }
  /// The parent of node m (the root stays the root); (m - 1) / bf is only
  /// selected where m > 0, so its operands are non-negative.
  Value parent(Value m, int64_t bf) {
    Value up = arith::DivSIOp::create(
        b, l, arith::SubIOp::create(b, l, m, c(1)), c(bf));
    return sel(gt0(m), up, c(0));
  }
  /// The branch taken into node m > 0 from its parent.
  Value branch(Value m, int64_t bf) {
    return arith::RemSIOp::create(b, l, arith::SubIOp::create(b, l, m, c(1)),
                                  c(bf));
  }
  /// m_0 = node, m_{k+1} = parent(m_k): the node's ancestors k steps up,
  /// for k = 0..kMaxTreeDepth (the last is the root for every valid node).
  SmallVector<Value> chain(Value node, int64_t bf) {
    SmallVector<Value> m = {node};
    for (int64_t k = 0; k < kMaxTreeDepth; ++k)
      m.push_back(parent(m.back(), bf));
    return m;
  }
  /// The node's depth: the steps up that are not yet at the root.
  Value depth(ArrayRef<Value> chain) {
    Value d = c(0);
    for (int64_t k = 0; k < kMaxTreeDepth; ++k)
      d = arith::AddIOp::create(
          b, l, d, arith::ExtUIOp::create(b, l, b.getI64Type(), gt0(chain[k])));
    return d;
  }
};
} // namespace

Value treeMapsAtRunTime(ModelBuilder &mb, Value positions, int64_t branching,
                        int64_t heads, int64_t d) {
  auto pt = cast<RankedTensorType>(positions.getType());
  int64_t Bp = pt.getDimSize(0), L = pt.getDimSize(1);
  // P_bᵀ for the branches, computed at compile time from the primitives
  // (only the first `branching` are used, shared by the heads).
  Value branchMaps = mb.derivedWeight(
      "positional_encoder.branch_maps_t", {branching, d, d},
      {{"positional_encoder._primitives", {branching * heads + 1, d, d}}},
      [branching, d](const std::vector<const float *> &in, float *out) {
        for (int64_t br = 0; br < branching; ++br) {
          std::vector<double> w = skewExpm(in[0] + br * d * d, d);
          for (int64_t i = 0; i < d; ++i)
            for (int64_t j = 0; j < d; ++j)
              out[(br * d + i) * d + j] = static_cast<float>(w[j * d + i]);
        }
      });
  Value identity = mb.weight("positional_encoder.identity", {1, 1, d, d});
  if (mb.failed())
    return {};
  Type i64 = mb.b.getI64Type(), f32 = mb.b.getF32Type();

  // syms[b, l, t]: the branch taken into the node's ancestor at depth t + 1
  // (root first), -1 below the node.
  Value syms = parallelGeneric(
      mb, {Bp, L, kMaxTreeDepth}, i64, positions, {dims(mb, 3, {0, 1})},
      [&](OpBuilder &b, Location l, ValueRange args) {
        I64 a{b, l};
        SmallVector<Value> m = a.chain(a.node(args[0]), branching);
        // Ancestor k steps up is at depth (depth - k): t = depth - 1 - k.
        Value k = arith::SubIOp::create(
            b, l, arith::SubIOp::create(b, l, a.depth(m), a.c(1)), a.index(2));
        Value sym = a.c(-1);
        for (int64_t s = 0; s < kMaxTreeDepth; ++s)
          sym = a.sel(a.eq(k, a.c(s)), a.branch(m[s], branching), sym);
        return sym;
      });
  MLIRContext *ctx = mb.b.getContext();
  // (Batch and length may be dynamic: N = Bp·L nodes.)
  Value flatSyms = tensor::CollapseShapeOp::create(
      mb.b, mb.loc, syms, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  auto flat = RankedTensorType::get(
      {cast<RankedTensorType>(flatSyms.getType()).getDimSize(0), d, d}, f32);
  SmallVector<OpFoldResult> flatSizes = {
      mb.dimOf(flatSyms, 0), mb.b.getIndexAttr(d), mb.b.getIndexAttr(d)};
  // X = Id (the module's frozen identity, the table's maps[0]), then
  // X ← X · P_{b_t}ᵀ down the path: M = Id · P_{b_1}ᵀ ⋯ P_{b_t}ᵀ. A loop, so
  // that only two [N, d, d] buffers exist at a time.
  Value x =
      linalg::GenericOp::create(
          mb.b, mb.loc, TypeRange{flat}, ValueRange{identity},
          ValueRange{tensor::EmptyOp::create(mb.b, mb.loc, flatSizes, f32)},
          ArrayRef<AffineMap>{AffineMap::get(3, 0,
                                             {getAffineConstantExpr(0, ctx),
                                              getAffineConstantExpr(0, ctx),
                                              getAffineDimExpr(1, ctx),
                                              getAffineDimExpr(2, ctx)},
                                             ctx),
                              AffineMap::getMultiDimIdentityMap(3, ctx)},
          SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
          [](OpBuilder &b, Location l, ValueRange args) {
            linalg::YieldOp::create(b, l, args[0]);
          })
          .getResult(0);
  // Two steps per iteration, ping-ponging between two buffers (each step
  // writes the buffer the one before read), so that bufferization reuses
  // them in place.
  Value lo = arith::ConstantIndexOp::create(mb.b, mb.loc, 0);
  Value hi = arith::ConstantIndexOp::create(mb.b, mb.loc, kMaxTreeDepth);
  Value two = arith::ConstantIndexOp::create(mb.b, mb.loc, 2);
  Value spare = tensor::EmptyOp::create(mb.b, mb.loc, flatSizes, f32);
  // One step: G = P_{sym_t}ᵀ per node (the identity below the node),
  // gathered into `g`; `into` = `from` · G, a batched matmul.
  auto step = [&](OpBuilder &b, Location l, Value from, Value into, Value g,
                  Value t) -> std::pair<Value, Value> {
    AffineMap id3 = AffineMap::getMultiDimIdentityMap(3, ctx);
    Value gathered =
        linalg::GenericOp::create(
            b, l, TypeRange{flat}, ValueRange{}, ValueRange{g},
            ArrayRef<AffineMap>{id3},
            SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location nl, ValueRange) {
              I64 a{nb, nl};
              Value sym = tensor::ExtractOp::create(
                  nb, nl, flatSyms,
                  ValueRange{linalg::IndexOp::create(nb, nl, 0), t});
              Value rIdx = linalg::IndexOp::create(nb, nl, 1);
              Value jIdx = linalg::IndexOp::create(nb, nl, 2);
              Value at = arith::IndexCastOp::create(
                  nb, nl, nb.getIndexType(),
                  arith::MaxSIOp::create(nb, nl, sym, a.c(0)));
              Value p = tensor::ExtractOp::create(nb, nl, branchMaps,
                                                  ValueRange{at, rIdx, jIdx});
              Value diag = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::eq, rIdx, jIdx);
              Value id = arith::SelectOp::create(
                  nb, nl, diag,
                  arith::ConstantFloatOp::create(nb, nl, cast<FloatType>(f32),
                                                 APFloat(1.0f)),
                  arith::ConstantFloatOp::create(nb, nl, cast<FloatType>(f32),
                                                 APFloat(0.0f)));
              Value past = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::slt, sym, a.c(0));
              linalg::YieldOp::create(
                  nb, nl,
                  arith::SelectOp::create(nb, nl, past, id, p).getResult());
            })
            .getResult(0);
    Value zero = arith::ConstantFloatOp::create(b, l, cast<FloatType>(f32),
                                                APFloat(0.0f));
    Value acc =
        linalg::FillOp::create(b, l, zero, ValueRange{into}).getResult(0);
    Value next = linalg::BatchMatmulOp::create(b, l, TypeRange{flat},
                                               ValueRange{from, gathered}, acc)
                     .getResult(0);
    return {next, gathered};
  };
  Value spareG = tensor::EmptyOp::create(mb.b, mb.loc, flatSizes, f32);
  auto loop = scf::ForOp::create(
      mb.b, mb.loc, lo, hi, two, ValueRange{x, spare, spareG},
      [&](OpBuilder &b, Location l, Value t, ValueRange iter) {
        Value t1 = arith::AddIOp::create(
            b, l, t, arith::ConstantIndexOp::create(b, l, 1));
        auto [y, g1] = step(b, l, iter[0], iter[1], iter[2], t);
        auto [x2, g2] = step(b, l, y, iter[0], g1, t1);
        scf::YieldOp::create(b, l, ValueRange{x2, y, g2});
      });
  SmallVector<OpFoldResult> outSizes = {
      mb.dimOf(positions, 0), mb.dimOf(positions, 1), mb.b.getIndexAttr(1),
      mb.b.getIndexAttr(d), mb.b.getIndexAttr(d)};
  if (!pt.isDynamicDim(0) || !pt.isDynamicDim(1))
    return tensor::ExpandShapeOp::create(
        mb.b, mb.loc, RankedTensorType::get({Bp, L, 1, d, d}, f32),
        loop.getResult(0), ArrayRef<ReassociationIndices>{{0, 1}, {2, 3}, {4}},
        outSizes);
  // Batch and length both dynamic: a copy, as memref-expand-strided-metadata
  // crashes on an expand_shape with two dynamic sizes in one group (LLVM 22).
  Value maps = loop.getResult(0);
  Value length =
      getValueOrCreateConstantIndexOp(mb.b, mb.loc, mb.dimOf(positions, 1));
  Value init = mb.emptyLike(outSizes);
  return linalg::GenericOp::create(
             mb.b, mb.loc, init.getType(), ValueRange{}, ValueRange{init},
             ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(5, ctx)},
             SmallVector<utils::IteratorType>(5, utils::IteratorType::parallel),
             [&](OpBuilder &b, Location l, ValueRange) {
               Value node = arith::AddIOp::create(
                   b, l,
                   arith::MulIOp::create(b, l, linalg::IndexOp::create(b, l, 0),
                                         length),
                   linalg::IndexOp::create(b, l, 1));
               Value v = tensor::ExtractOp::create(
                   b, l, maps,
                   ValueRange{node, linalg::IndexOp::create(b, l, 3),
                              linalg::IndexOp::create(b, l, 4)});
               linalg::YieldOp::create(b, l, v);
             })
      .getResult(0);
}

std::optional<double> readDistanceDecay(ModelBuilder &mb,
                                        std::optional<double> dflt) {
  const json::Value *dv = mb.config.call.get("distance_decay");
  if (!dv)
    return dflt;
  std::optional<double> v = dv->getAsNumber();
  if (!v || !(*v > 0 && *v <= 1)) {
    mb.error(mb.config.path + ": call.distance_decay: expected a number in "
                              "(0, 1] (the models' 0.98)");
    return std::nullopt;
  }
  return v;
}

/// A tree position's node (<= 0: the root).
static Value treeNodes(ModelBuilder &mb, Value p) {
  auto pt = cast<RankedTensorType>(p.getType());
  return parallelGeneric(mb, pt.getShape(), mb.b.getI64Type(), p,
                         {dims(mb, 2, {0, 1})},
                         [](OpBuilder &b, Location l, ValueRange args) {
                           return I64{b, l}.node(args[0]);
                         });
}

/// ancestors[b, l, t]: the node's ancestor at depth t + 1, -1 deeper than
/// the node; with `depthMajor`, ancestors[b, t, l] (the key side's layout:
/// one depth's ancestors of a key block contiguous).
static Value treeAncestors(ModelBuilder &mb, Value p, int64_t branching,
                           bool depthMajor) {
  auto pt = cast<RankedTensorType>(p.getType());
  SmallVector<int64_t> shape = {pt.getDimSize(0), pt.getDimSize(1),
                                kMaxTreeDepth};
  if (depthMajor)
    std::swap(shape[1], shape[2]);
  unsigned depthDim = depthMajor ? 1 : 2;
  return parallelGeneric(
      mb, shape, mb.b.getI64Type(), p, {dims(mb, 3, {0, depthMajor ? 2u : 1u})},
      [&](OpBuilder &b, Location l, ValueRange args) {
        I64 a{b, l};
        SmallVector<Value> m = a.chain(a.node(args[0]), branching);
        Value target = arith::SubIOp::create(
            b, l, a.depth(m),
            arith::AddIOp::create(b, l, a.index(depthDim), a.c(1)));
        Value anc = a.c(-1);
        for (int64_t k = 0; k < kMaxTreeDepth; ++k)
          anc = a.sel(a.eq(target, a.c(k)), m[k], anc);
        return anc;
      });
}

Value ApeDecay::longestPath(ModelBuilder &mb, ArrayRef<Value> every,
                            int64_t branching) {
  Type i64 = mb.b.getI64Type();
  Value zero = arith::ConstantIntOp::create(mb.b, mb.loc, 0, 64);
  Value longest =
      linalg::FillOp::create(mb.b, mb.loc, zero,
                             ValueRange{tensor::EmptyOp::create(
                                 mb.b, mb.loc, ArrayRef<int64_t>{}, i64)})
          .getResult(0);
  for (Value p : every) {
    auto pt = cast<RankedTensorType>(p.getType());
    Value depths =
        parallelGeneric(mb, pt.getShape(), i64, p, {dims(mb, 2, {0, 1})},
                        [&](OpBuilder &b, Location l, ValueRange args) {
                          I64 a{b, l};
                          return a.depth(a.chain(a.node(args[0]), branching));
                        });
    longest =
        linalg::ReduceOp::create(
            mb.b, mb.loc, ValueRange{depths}, ValueRange{longest},
            ArrayRef<int64_t>{0, 1},
            [](OpBuilder &b, Location l, ValueRange args) {
              linalg::YieldOp::create(
                  b, l,
                  arith::MaxSIOp::create(b, l, args[0], args[1]).getResult());
            })
            .getResult(0);
  }
  return longest;
}

ApeDecay::TreeSide ApeDecay::treeSide(ModelBuilder &mb, Value positions,
                                      int64_t branching) {
  return {positions, treeNodes(mb, positions),
          treeAncestors(mb, positions, branching, /*depthMajor=*/false),
          treeAncestors(mb, positions, branching, /*depthMajor=*/true)};
}

ApeDecay ApeDecay::make(ModelBuilder &mb, ApeDistance kind, double base,
                        ArrayRef<Value> positions, int64_t branching) {
  if (kind == ApeDistance::Tree) {
    TreeSide side = treeSide(mb, positions.front(), branching);
    return makeTree(base, side, side,
                    longestPath(mb, positions.front(), branching), branching);
  }
  ApeDecay decay;
  decay.kind = kind;
  decay.base = base;
  decay.qPositions.assign(positions.begin(), positions.end());
  decay.kPositions = decay.qPositions;
  return decay;
}

ApeDecay ApeDecay::makeTree(double base, const TreeSide &q, const TreeSide &k,
                            Value longest, int64_t branching) {
  ApeDecay decay;
  decay.kind = ApeDistance::Tree;
  decay.base = base;
  decay.branching = branching;
  decay.qPositions = {q.positions};
  decay.kPositions = {k.positions};
  decay.qNode = q.node;
  decay.qAncestors = q.ancestors;
  decay.kNode = k.node;
  decay.kAncestors = k.ancestorsByDepth;
  decay.longest = longest;
  return decay;
}

/// The tree's common path lengths cpl[b, i, j] (f32): the depths at which
/// query node i and key node j have the same ancestor. In a tree those are
/// a prefix of the depths (the ancestors of a common ancestor are common),
/// so cpl is their count: a sum over the 16 depths of compares, which the
/// CPU's vector layer computes a key block at a time (the key side's
/// ancestors are depth-major, [B, 16, L]). The bisection over the depths it
/// replaces was scalar code, over half of a tree attention tile. A per-pair
/// tensor: the flash tiling computes it per tile, fill and sum, like the
/// decay after it.
static Value commonPathLengths(ModelBuilder &mb, Value qAnc, Value kAnc,
                               Value qNode, Value kNode, int64_t Bp) {
  // [Bp, Lq, Lk], sized from the nodes as the decay's generic is.
  auto type = RankedTensorType::get(
      {Bp, cast<RankedTensorType>(qNode.getType()).getDimSize(1),
       cast<RankedTensorType>(kNode.getType()).getDimSize(1)},
      mb.b.getF32Type());
  Value zero = arith::ConstantFloatOp::create(
      mb.b, mb.loc, cast<FloatType>(type.getElementType()), APFloat(0.0f));
  auto fill = linalg::FillOp::create(
      mb.b, mb.loc, zero,
      mlir::dat::buildEmptyFor(
          mb.b, mb.loc, type, ValueRange{qNode, kNode},
          ArrayRef<AffineMap>{dims(mb, 3, {0, 1}), dims(mb, 3, {0, 2})}));
  fill->setAttr(mlir::dat::kRecomputePerTileAttr, mb.b.getUnitAttr());
  // loops (b, i, j, t)
  auto sum = linalg::GenericOp::create(
      mb.b, mb.loc, fill.getResult(0).getType(), ValueRange{qAnc, kAnc},
      ValueRange{fill.getResult(0)},
      ArrayRef<AffineMap>{dims(mb, 4, {0, 1, 3}), dims(mb, 4, {0, 3, 2}),
                          dims(mb, 4, {0, 1, 2})},
      SmallVector<utils::IteratorType>{
          utils::IteratorType::parallel, utils::IteratorType::parallel,
          utils::IteratorType::parallel, utils::IteratorType::reduction},
      [&](OpBuilder &b, Location l, ValueRange args) {
        I64 a{b, l};
        Value same = arith::AndIOp::create(
            b, l, a.eq(args[0], args[1]),
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, args[0],
                                  a.c(0)));
        auto f = cast<FloatType>(b.getF32Type());
        Value one = arith::ConstantFloatOp::create(b, l, f, APFloat(1.0f));
        Value none = arith::ConstantFloatOp::create(b, l, f, APFloat(0.0f));
        linalg::YieldOp::create(
            b, l,
            arith::AddFOp::create(b, l, args[2], a.sel(same, one, none))
                .getResult());
      });
  sum->setAttr(mlir::dat::kRecomputePerTileAttr, mb.b.getUnitAttr());
  return sum.getResult(0);
}

Value ApeDecay::decayAt(ModelBuilder &mb) const {
  auto qt = cast<RankedTensorType>(qPositions.front().getType());
  auto kt = cast<RankedTensorType>(kPositions.front().getType());
  // A dynamic batch is the larger (the other may be a broadcast 1).
  int64_t Bp = qt.isDynamicDim(0) || kt.isDynamicDim(0)
                   ? ShapedType::kDynamic
                   : std::max(qt.getDimSize(0), kt.getDimSize(0));
  int64_t Lq = qt.getDimSize(1), Lk = kt.getDimSize(1);
  Type f32 = mb.b.getF32Type();
  AffineMap at_i = dims(mb, 3, {0, 1}), at_j = dims(mb, 3, {0, 2});
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  if (kind == ApeDistance::Tree) {
    Value cpl = commonPathLengths(mb, qAncestors, kAncestors, qNode, kNode, Bp);
    inputs = {qNode, kNode, longest, cpl};
    maps = {at_i, at_j, AffineMap::get(3, 0, {}, mb.b.getContext()),
            dims(mb, 3, {0, 1, 2})};
  } else {
    for (auto [q, k] : llvm::zip(qPositions, kPositions)) {
      inputs.append({q, k});
      maps.append({at_i, at_j});
    }
  }
  ApeDistance k = kind;
  float lnBaseF = static_cast<float>(std::log(base));
  Value out = parallelGeneric(
      mb, {Bp, Lq, Lk}, f32, inputs, maps,
      [&](OpBuilder &b, Location l, ValueRange args) {
        I64 a{b, l};
        Value dist; // f32
        auto toF = [&](Value v) {
          return arith::SIToFPOp::create(b, l, b.getF32Type(), v);
        };
        if (k == ApeDistance::Sequence) {
          Value diff = arith::SubIOp::create(b, l, args[0], args[1]);
          dist = toF(math::AbsIOp::create(b, l, diff));
        } else if (k == ApeDistance::Grid) {
          Value dx = toF(arith::SubIOp::create(b, l, args[0], args[1]));
          Value dy = toF(arith::SubIOp::create(b, l, args[2], args[3]));
          Value sq =
              arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, dx, dx),
                                    arith::MulFOp::create(b, l, dy, dy));
          dist = math::FloorOp::create(b, l, math::SqrtOp::create(b, l, sq));
        } else {
          // steps = 2T - 2 cpl between distinct nodes (the padded paths'
          // symbols that differ), 0 between a node and itself: small
          // integers, exact in f32.
          Value twoT = toF(arith::MulIOp::create(b, l, a.c(2), args[2]));
          Value steps = arith::SubFOp::create(
              b, l, twoT, arith::AddFOp::create(b, l, args[3], args[3]));
          Value zero = arith::ConstantFloatOp::create(
              b, l, cast<FloatType>(b.getF32Type()), APFloat(0.0f));
          dist = a.sel(a.eq(args[0], args[1]), zero, steps);
        }
        // base^dist = exp(dist · ln base): math.exp is a polynomial on the
        // CPU (vectorized), powf a libm call.
        Value lnBase = arith::ConstantFloatOp::create(
            b, l, cast<FloatType>(b.getF32Type()), APFloat(lnBaseF));
        return math::ExpOp::create(b, l,
                                   arith::MulFOp::create(b, l, dist, lnBase))
            .getResult();
      });
  // Cheap and position-only: the flash tiling computes it per tile.
  out.getDefiningOp()->setAttr(mlir::dat::kRecomputePerTileAttr,
                               mb.b.getUnitAttr());
  return out;
}

Value rasterPositions(ModelBuilder &mb, OpFoldResult L, int64_t width,
                      bool column) {
  Value init = tensor::EmptyOp::create(
      mb.b, mb.loc, ArrayRef<OpFoldResult>{mb.b.getIndexAttr(1), L},
      mb.b.getI64Type());
  AffineMap id = AffineMap::getMultiDimIdentityMap(2, mb.b.getContext());
  return linalg::GenericOp::create(
             mb.b, mb.loc, init.getType(), ValueRange{}, ValueRange{init},
             ArrayRef<AffineMap>{id},
             SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
             [&](OpBuilder &b, Location l, ValueRange) {
               Value t = arith::IndexCastOp::create(
                   b, l, b.getI64Type(), linalg::IndexOp::create(b, l, 1));
               if (width <= 0) {
                 linalg::YieldOp::create(b, l, t);
                 return;
               }
               Value w = arith::ConstantIntOp::create(b, l, width, 64);
               Value v = column
                             ? arith::RemSIOp::create(b, l, t, w).getResult()
                             : arith::DivSIOp::create(b, l, t, w).getResult();
               linalg::YieldOp::create(b, l, v);
             })
      .getResult(0);
}

} // namespace dat
