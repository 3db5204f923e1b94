//===- FlashAttention.cpp - key-block tiling with an online softmax -------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Rewrites the attention-family ops into a loop over blocks of keys that
// carries, per query row, the running max m, the running sum l and the
// unnormalized accumulators; each block computes its [B,H,Nq,Bk] scores,
// rescales the state by exp(m_old - m_new) and adds its exp-weighted values.
// Applied to the query tiles of dat-tile-attention, no tensor larger than
// [1,H,Bq,Bk] (relations: [1,R,Bq,Bk]) exists.
//
// A key block of an op is the op's math on key-axis slices of its operands
// with the causal offset shifted by the block's first key, so the block math
// reuses the reference lowering's builders.
//
//===----------------------------------------------------------------------===//

#include "AttentionBuilders.h"
#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

namespace mlir::dat {
namespace {

using BlockBody = llvm::function_ref<SmallVector<Value>(
    OpBuilder &, Location, Value j0, OpFoldResult len, ValueRange state)>;

/// The keys [0, upper) a key loop visits; `wholeBlocks` where `upper` is a
/// multiple of the block, so that every block has the block's static size.
struct KeyRange {
  OpFoldResult upper;
  bool wholeBlocks = false;
};

/// for j0 = 0 to `keys.upper` step `keyTile`, with len = keyTile for whole
/// blocks, else min(keyTile, upper - j0), and `inits` carried through `body`.
SmallVector<Value> buildKeyLoop(OpBuilder &b, Location loc, KeyRange keys,
                                int64_t keyTile, ValueRange inits,
                                BlockBody body) {
  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value ub = getValueOrCreateConstantIndexOp(b, loc, keys.upper);
  Value step = arith::ConstantIndexOp::create(b, loc, keyTile);
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, step, inits,
      [&](OpBuilder &nb, Location nl, Value j0, ValueRange state) {
        AffineExpr d0, d1;
        bindDims(nb.getContext(), d0, d1);
        OpFoldResult len =
            keys.wholeBlocks
                ? OpFoldResult(nb.getIndexAttr(keyTile))
                : affine::makeComposedFoldedAffineMin(
                      nb, nl,
                      AffineMap::get(
                          2, 0, {nb.getAffineConstantExpr(keyTile), d1 - d0},
                          nb.getContext()),
                      {j0, ub});
        scf::YieldOp::create(nb, nl, body(nb, nl, j0, len, state));
      });
  return loop.getResults();
}

/// `v` restricted to [off, off + len) along `dim` (null stays null).
Value sliceDim(OpBuilder &b, Location loc, Value v, unsigned dim, Value off,
               OpFoldResult len) {
  if (!v)
    return v;
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> offsets(t.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, v);
  SmallVector<OpFoldResult> strides(t.getRank(), b.getIndexAttr(1));
  offsets[dim] = off;
  sizes[dim] = len;
  return tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, strides);
}

/// The causal offset of a key block starting at j0: (offset or 0) - j0, so
/// that "key ≤ query + offset" holds in block coordinates.
Value blockQueryOffset(OpBuilder &b, Location loc, Value offset, Value j0) {
  Value base = offset ? offset : arith::ConstantIndexOp::create(b, loc, 0);
  return arith::SubIOp::create(b, loc, base, j0);
}

/// The last key any query of a causal op can see, + 1: min(Nk, Nq + offset),
/// or with `roundTo` the end of the block of `roundTo` keys that holds it.
/// Keys past it are masked with -inf for every row and are skipped.
OpFoldResult causalKeyBound(OpBuilder &b, Location loc, OpFoldResult nk,
                            OpFoldResult nq, Value offset,
                            int64_t roundTo = 1) {
  AffineExpr d0, d1, d2;
  bindDims(b.getContext(), d0, d1, d2);
  Value off = offset ? offset : arith::ConstantIndexOp::create(b, loc, 0);
  return affine::makeComposedFoldedAffineMin(
      b, loc,
      AffineMap::get(3, 0, {d0, (d1 + d2).ceilDiv(roundTo) * roundTo},
                     b.getContext()),
      {nk, nq, off});
}

Value mulF(OpBuilder &b, Location l, Value x, Value y) {
  return arith::MulFOp::create(b, l, x, y);
}
Value addF(OpBuilder &b, Location l, Value x, Value y) {
  return arith::AddFOp::create(b, l, x, y);
}
Value divF(OpBuilder &b, Location l, Value x, Value y) {
  return arith::DivFOp::create(b, l, x, y);
}

/// One online-softmax step on a block of scores [B,H,Nq,Bk]: updates the
/// running max `m` and sum `l` [B,H,Nq], rescales `accs` [B,H,Nq,·] by
/// exp(m_old - m_new) and returns p = exp(S - m_new) for the caller to add
/// its weighted values. Empty rows (m = -inf) stay at l = 0.
Value onlineSoftmaxStep(OpBuilder &b, Location loc, Value scores, Value &m,
                        Value &l, MutableArrayRef<Value> accs) {
  // Every state tensor is updated in place (its loop buffer is reused):
  // corr = exp(m - max(m, m_blk)) is read before m becomes max(m, m_blk).
  constexpr unsigned kSameShape = 3; // rowwise on [B,H,Nq] with [B,H,Nq]
  Value blockMax = maxAlong(b, loc, scores, 3);
  Value corr = rowwise(b, loc, m, blockMax, kSameShape,
                       [](OpBuilder &nb, Location nl, Value mOld, Value mBlk) {
                         Value mNew =
                             arith::MaximumFOp::create(nb, nl, mOld, mBlk);
                         return expMinusSafeMax(nb, nl, mOld, mNew);
                       });
  m = rowwise(
      b, loc, m, blockMax, kSameShape,
      [](OpBuilder &nb, Location nl, Value x, Value y) {
        return Value(arith::MaximumFOp::create(nb, nl, x, y));
      },
      /*inPlace=*/true);
  Value p = rowwise(b, loc, scores, m, 3, expMinusSafeMax, /*inPlace=*/true);
  l = rowwise(b, loc, l, corr, kSameShape, mulF, /*inPlace=*/true);
  l = rowwise(b, loc, l, sumAlong(b, loc, p, 3), kSameShape, addF,
              /*inPlace=*/true);
  for (Value &acc : accs)
    acc = rowwise(b, loc, acc, corr, 3, mulF, /*inPlace=*/true);
  return p;
}

/// -inf / 0 initial state [B,H,Nq] of the online softmax.
std::pair<Value, Value> initialRowState(OpBuilder &b, Location loc,
                                        ArrayRef<OpFoldResult> rowShape,
                                        FloatType accTy) {
  Value m = filledTensor(
      b, loc, rowShape, accTy,
      b.getFloatAttr(accTy, APFloat::getInf(accTy.getFloatSemantics(), true)));
  Value l = filledTensor(b, loc, rowShape, accTy, b.getFloatAttr(accTy, 0.0));
  return {m, l};
}

Value zeros(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> shape,
            FloatType accTy) {
  return filledTensor(b, loc, shape, accTy, b.getFloatAttr(accTy, 0.0));
}

/// p[b,h,i,j] · x[b,g(h),j,e] summed over j into acc[b,h,i,e].
Value accumulateWeighted(OpBuilder &b, Location loc, Value p, Value x,
                         Value acc, int64_t group) {
  MLIRContext *ctx = b.getContext();
  AffineExpr bb, h, i, j, e;
  bindDims(ctx, bb, h, i, j, e);
  auto map = [&](ArrayRef<AffineExpr> r) {
    return AffineMap::get(5, 0, r, ctx);
  };
  return buildMulAcc(b, loc, p, x, acc,
                     {map({bb, h, i, j}), map({bb, h.floorDiv(group), j, e}),
                      map({bb, h, i, e})},
                     {kPar, kPar, kPar, kRed, kPar});
}

/// The score inputs of one key block [j0, j0 + len).
ScoreInputs keyBlock(OpBuilder &b, Location loc, ScoreInputs in, Value j0,
                     OpFoldResult len) {
  in.key = sliceDim(b, loc, in.key, 2, j0, len);
  in.mask = sliceDim(b, loc, in.mask, 1, j0, len);
  in.keyMask = sliceDim(b, loc, in.keyMask, 1, j0, len);
  in.scoreScale = sliceDim(b, loc, in.scoreScale, 2, j0, len);
  in.queryOffset = blockQueryOffset(b, loc, in.queryOffset, j0);
  return in;
}

/// Keys a causal op can attend to: all of them, unless a -inf fill lets the
/// blocks past the last visible key be skipped. With `wholeKeyBlocks`, a
/// causal op's keys run to the end of the block of `keyTile` keys that holds
/// its last visible key (the rest of that block masked, like the diagonal
/// block), and where the op has a static multiple of `keyTile` keys every
/// block is whole. (Other ops keep min(keyTile, Nk - j0) blocks: with static
/// ones, ptxas unrolls the staging copies' fallback loops, and K1's tile at
/// heads of 128 then needs 36 bytes of spills for 3 blocks per SM.)
KeyRange visibleKeys(OpBuilder &b, Location loc, const ScoreInputs &in,
                     int64_t keyTile, bool wholeKeyBlocks) {
  OpFoldResult nk = tensor::getMixedSize(b, loc, in.key, 2);
  if (!in.causal || in.fill)
    return {nk};
  OpFoldResult nq = tensor::getMixedSize(b, loc, in.query, 2);
  if (!wholeKeyBlocks)
    return {causalKeyBound(b, loc, nk, nq, in.queryOffset)};
  std::optional<int64_t> keys = getConstantIntValue(nk);
  return {causalKeyBound(b, loc, nk, nq, in.queryOffset, keyTile),
          keys && *keys % keyTile == 0};
}

SmallVector<OpFoldResult> rowShapeOf(OpBuilder &b, Location loc, Value init) {
  SmallVector<OpFoldResult> shape = tensor::getMixedSizes(b, loc, init);
  shape.pop_back();
  return shape;
}

/// A rewrite into loops over blocks of `keyTile` keys.
template <typename OpTy> struct KeyBlockPattern : OpRewritePattern<OpTy> {
  KeyBlockPattern(MLIRContext *ctx, int64_t keyTile, int64_t blockBytes,
                  bool wholeKeyBlocks, bool narrowValueNetwork,
                  bool relativeSymbolsAsProduct)
      : OpRewritePattern<OpTy>(ctx), keyTile(keyTile), blockBytes(blockBytes),
        wholeKeyBlocks(wholeKeyBlocks), narrowValueNetwork(narrowValueNetwork),
        relativeSymbolsAsProduct(relativeSymbolsAsProduct) {}
  int64_t keyTile;
  /// See populateFlashAttentionPatterns (0: no bound).
  int64_t blockBytes;
  bool wholeKeyBlocks;
  bool narrowValueNetwork;
  bool relativeSymbolsAsProduct;
};

/// The shape of `v` with each dynamic dim replaced by its constant upper
/// bound (a partial query tile's rows: the tile's), kDynamic where none is
/// known.
static SmallVector<int64_t> boundedShape(Value v) {
  auto type = cast<ShapedType>(v.getType());
  SmallVector<int64_t> shape(type.getShape());
  for (auto [d, size] : llvm::enumerate(shape)) {
    if (!ShapedType::isDynamic(size))
      continue;
    FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
        presburger::BoundType::UB, {v, static_cast<int64_t>(d)},
        /*stopCondition=*/nullptr, /*closedUB=*/true);
    if (succeeded(bound) && *bound >= 0)
      size = *bound;
  }
  return shape;
}

/// Bytes of a static shape's elements (nullopt where a dim is dynamic).
static std::optional<int64_t> staticBytes(ArrayRef<int64_t> shape,
                                          int64_t elementBytes) {
  int64_t bytes = elementBytes;
  for (int64_t d : shape) {
    if (ShapedType::isDynamic(d))
      return std::nullopt;
    bytes *= d;
  }
  return bytes;
}

} // namespace

/// Bytes of a bf16 relational attention tile of `rows` query rows (0: the
/// bound of `op`'s own), as the GPU lays its buffers out: the query and
/// relation query tiles, and per key one row of keys, relation keys and
/// symbols (bf16; per pair: the tile's rows of them) and the f32 relations
/// of the tile's rows.
///
/// Position-relative symbols (a table) make the tile block-wide on the GPU
/// (no warp-row program): every buffer of the tile is laid out in shared
/// memory, so all of them are counted, as dat-gpu-map-tiles lays them out —
/// the row state, the block's row statistics, both accumulators and their
/// normalized copies, the scores, and with the symbols as a product the
/// window of table rows (the tile's rows plus one per key) and the f32
/// skewed probabilities (a column per key). A partial query tile's rows
/// count at their bound. (Before, its dynamic rows made the rule give up:
/// M2's tile with the product kept 64 keys and 90 KiB in global scratch.)
/// So do symbols summed at their own width (`symbol_proj`: d_model per
/// head, too wide for a warp's registers, so the tile is block-wide):
/// the row state and both accumulators, each with its normalized copy, are
/// in shared memory too (K2's position-relative entry, d_model 512, 16
/// rows: 544 KiB of global scratch per block before they were counted).
std::optional<RelationalTileBytes>
relationalTileBytes(RelationalAttentionOp op, int64_t rows,
                    bool relativeSymbolsAsProduct) {
  if (!op.getQueryType().getElementType().isBF16())
    return std::nullopt;
  SmallVector<int64_t> q = boundedShape(op.getQuery()),
                       k = boundedShape(op.getKey()),
                       rq = boundedShape(op.getRelQuery()),
                       rk = boundedShape(op.getRelKey()),
                       s = boundedShape(op.getSymbols());
  if (rows > 0) {
    // A tile of one batch row and `rows` query rows (the op before
    // dat-tile-attention). Symbols per pair have no batch dimension.
    q[0] = k[0] = rq[0] = rk[0] = 1;
    q[2] = rq[2] = rows;
    s[0] = op.getSymbolsPerPair() ? rows : 1;
  }
  // Per key: a row of each of [B, Hkv, ·, dk], [B, R, ·, dr] and the
  // symbols (per pair: the tile's rows of them), and [B, R, Nq] relations.
  std::optional<int64_t> fixed = staticBytes(q, 2), rel = staticBytes(rq, 2);
  std::optional<int64_t> perKey = staticBytes({k[0], k[1], k[3]}, 2),
                         relKey = staticBytes({rk[0], rk[1], rk[3]}, 2),
                         relations = staticBytes({rq[0], rq[1], rq[2]}, 4);
  if (!fixed || !rel || !perKey || !relKey || !relations)
    return std::nullopt;
  int64_t row = *perKey + *relKey + *relations;
  // A block-wide tile's f32 state: the [B, H, Nq] rows (m, l and the
  // block's max, rescale and sum), and both accumulators, [B, H, Nq,
  // symbolWidth] and the relations' [B, H, Nq, R], each twice (it and its
  // normalized copy after the key loop).
  auto blockWideState = [&](int64_t symbolWidth) -> bool {
    std::optional<int64_t> rowsBytes = staticBytes({q[0], q[1], q[2]}, 4),
                           out =
                               staticBytes({q[0], q[1], q[2], symbolWidth}, 4),
                           relOut = staticBytes({q[0], q[1], q[2], rq[1]}, 4);
    if (!rowsBytes || !out || !relOut)
      return false;
    *fixed += 5 * *rowsBytes + 2 * *out + 2 * *relOut;
    return true;
  };
  if (op.getRelativeSymbols()) {
    // The output's [B, H, Nq, hd] accumulator, the scores' column per key.
    std::optional<int64_t> rowsBytes = staticBytes({q[0], q[1], q[2]}, 4),
                           tableRow = staticBytes({s[1], s[2]}, 2);
    if (!rowsBytes || !tableRow || !blockWideState(s[2]))
      return std::nullopt;
    row += *rowsBytes;
    if (op.getActivation() == "softmax") {
      // Softmax relations are built once per query tile, over every key.
      std::optional<int64_t> all = staticBytes({rq[0], rq[1], rq[2], rk[2]}, 4);
      if (!all)
        return std::nullopt;
      *fixed += *all;
      row -= *relations;
    }
    if (relativeSymbolsAsProduct) {
      // The window: a table row per query row and per key; the skewed
      // probabilities: a [B, H, Nq] column per window row.
      *fixed += q[2] * (*tableRow + *rowsBytes);
      row += *tableRow + *rowsBytes;
    }
  } else {
    std::optional<int64_t> symbols = op.getSymbolsPerPair()
                                         ? staticBytes({s[0], s[2], s[3]}, 2)
                                         : staticBytes({s[0], s[1], s[3]}, 2);
    if (!symbols)
      return std::nullopt;
    if (Value proj = op.getSymbolProj()) {
      int64_t width = cast<ShapedType>(proj.getType()).getDimSize(2);
      if (ShapedType::isDynamic(width) || !blockWideState(width))
        return std::nullopt;
    }
    return RelationalTileBytes{*fixed + *rel, row, *symbols};
  }
  return RelationalTileBytes{*fixed + *rel, row, 0};
}

namespace {

/// The keys per block of a bf16 relational attention tile whose buffers
/// (relationalTileBytes) must fit in `blockBytes`: halved down to 16.
static int64_t relationalKeyTile(RelationalAttentionOp op, int64_t keyTile,
                                 int64_t blockBytes,
                                 bool relativeSymbolsAsProduct) {
  if (!blockBytes)
    return keyTile;
  int64_t tile = keyTile;
  std::optional<RelationalTileBytes> bytes =
      relationalTileBytes(op, 0, relativeSymbolsAsProduct);
  auto fits = [&](int64_t keys) {
    return !bytes ||
           bytes->fixed + keys * (bytes->perKey + bytes->perKeySymbols) <=
               blockBytes;
  };
  while (tile > 16 && !fits(tile))
    tile /= 2;
  return tile;
}

/// The keys per block of a bf16 HYLA tile whose buffers must fit in
/// `blockBytes`: the query tile and the f32 accumulator, and per key one row
/// of keys and values (bf16), the tile's f32 weights of every head, its
/// pair statistics, a bias's tile and, with a generated value network, its
/// f32 products or, narrowed, their bf16 copy alone (the GPU's tensor cores
/// write that directly). The GPU keeps all of them in shared memory; what
/// does not fit goes to global scratch.
static int64_t hyperKeyTile(HyperAttentionOp op, int64_t keyTile,
                            int64_t blockBytes, bool narrowValueNetwork) {
  if (!blockBytes || !getElementTypeOrSelf(op.getQuery().getType()).isBF16())
    return keyTile;
  SmallVector<int64_t> q = boundedShape(op.getQuery()),
                       v = boundedShape(op.getValue());
  int64_t b = q[0], h = q[1], rows = q[2], dq = q[3], dv = v[3];
  std::optional<int64_t> fixed = staticBytes(q, 2),
                         acc = staticBytes({b, h, rows, dv}, 4),
                         perKey = staticBytes({b, h, dq + dv}, 2),
                         weights = staticBytes({b, h + 1, rows}, 4);
  if (!fixed || !acc || !perKey || !weights)
    return keyTile;
  int64_t row = *perKey + *weights;
  if (op.getBias())
    row += h * rows * 2;
  // (Narrowed, the products go straight to their bf16 copy on the GPU:
  // dat-gpu-map-tiles never lays out the f32 buffer.)
  if (op.getNetwork() != "default")
    row += b * rows * dv * (narrowValueNetwork ? 2 : 4);
  int64_t tile = keyTile;
  while (tile > 8 && *fixed + *acc + tile * row > blockBytes)
    tile /= 2;
  return tile;
}

struct FlashAttention final : KeyBlockPattern<AttentionOp> {
  using KeyBlockPattern::KeyBlockPattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rw) const override {
    std::optional<int64_t> group = op.getGroupSize();
    if (!group)
      return rw.notifyMatchFailure(op, "dynamic head counts");
    Location loc = op.getLoc();
    FloatType accTy = accumulationType(op.getQueryType().getElementType());
    ScoreInputs in = scoreInputs(op, *group);
    prescaleQuery(rw, loc, in, accTy);
    auto [m0, l0] =
        initialRowState(rw, loc, rowShapeOf(rw, loc, op.getInit()), accTy);
    Value acc0 =
        zeros(rw, loc, tensor::getMixedSizes(rw, loc, op.getInit()), accTy);
    SmallVector<Value> state = buildKeyLoop(
        rw, loc, visibleKeys(rw, loc, in, keyTile, wholeKeyBlocks), keyTile,
        {m0, l0, acc0},
        [&](OpBuilder &b, Location l, Value j0, OpFoldResult len,
            ValueRange s) -> SmallVector<Value> {
          Value scores = buildScores(b, l, keyBlock(b, l, in, j0, len), accTy);
          Value m = s[0], sum = s[1], acc = s[2];
          Value p = onlineSoftmaxStep(b, l, scores, m, sum, acc);
          acc = accumulateWeighted(
              b, l, p, sliceDim(b, l, op.getValue(), 2, j0, len), acc, *group);
          return {m, sum, acc};
        });
    rw.replaceOp(
        op, normalizeInto(rw, loc, state[2], state[1], op.getInit(), accTy));
    return success();
  }
};

struct FlashRelationalAttention final : KeyBlockPattern<RelationalAttentionOp> {
  using KeyBlockPattern::KeyBlockPattern;

  LogicalResult matchAndRewrite(RelationalAttentionOp op,
                                PatternRewriter &rw) const override {
    std::optional<int64_t> group = op.getGroupSize();
    if (!group)
      return rw.notifyMatchFailure(op, "dynamic head counts");
    Location loc = op.getLoc();
    MLIRContext *ctx = rw.getContext();
    FloatType accTy = accumulationType(op.getQueryType().getElementType());
    ScoreInputs in = scoreInputs(op, *group);
    prescaleQuery(rw, loc, in, accTy);
    double relScale = op.getRelScale().convertToDouble();
    StringRef act = op.getActivation();
    // Softmax relations are normalized over every key: computed once per
    // query tile ([B,Bq,Nk,R]) and sliced per block. Every other activation
    // is elementwise, so the relation tile is built per block.
    // Relations relation-major ([B,R,Nq,Bk]): each relation's tile is a
    // plain product whose rows run along the keys, like a score tile (laid
    // out [B,Nq,Bk,R], its rows were scattered R floats apart).
    Value allRelations;
    if (act == "softmax")
      allRelations = buildRelations(rw, loc, op.getRelQuery(), op.getRelKey(),
                                    relScale, act, accTy,
                                    /*relationMajor=*/true);

    SmallVector<OpFoldResult> outShape =
        tensor::getMixedSizes(rw, loc, op.getInit());
    SmallVector<OpFoldResult> relShape = outShape;
    relShape[3] = tensor::getMixedSize(rw, loc, op.getRelQuery(), 1);
    // Projected symbols are summed at their own width, projected once after
    // the key loop.
    Value proj = op.getSymbolProj();
    SmallVector<OpFoldResult> symShape = outShape;
    if (proj)
      symShape[3] = tensor::getMixedSize(rw, loc, proj, 2);
    auto [m0, l0] =
        initialRowState(rw, loc, rowShapeOf(rw, loc, op.getInit()), accTy);
    AffineExpr b, h, i, j, e;
    bindDims(ctx, b, h, i, j, e);
    auto map = [&](ArrayRef<AffineExpr> r) {
      return AffineMap::get(5, 0, r, ctx);
    };
    int64_t tile =
        relationalKeyTile(op, keyTile, blockBytes, relativeSymbolsAsProduct);
    SmallVector<Value> state = buildKeyLoop(
        rw, loc, visibleKeys(rw, loc, in, tile, wholeKeyBlocks), tile,
        {m0, l0, zeros(rw, loc, symShape, accTy),
         zeros(rw, loc, relShape, accTy)},
        [&](OpBuilder &nb, Location l, Value j0, OpFoldResult len,
            ValueRange s) -> SmallVector<Value> {
          Value scores =
              buildScores(nb, l, keyBlock(nb, l, in, j0, len), accTy);
          Value m = s[0], sum = s[1];
          SmallVector<Value> accs = {s[2], s[3]};
          Value p = onlineSoftmaxStep(nb, l, scores, m, sum, accs);
          // The relation tile [B,R,Nq,Bk], shared by every head.
          Value rel =
              allRelations
                  ? sliceDim(nb, l, allRelations, 3, j0, len)
                  : buildRelations(nb, l, op.getRelQuery(),
                                   sliceDim(nb, l, op.getRelKey(), 2, j0, len),
                                   relScale, act, accTy,
                                   /*relationMajor=*/true);
          Value symbols;
          if (op.getRelativeSymbols()) {
            // The band of table rows this block's pairs use: gathered per
            // pair and element, or as a window times the skewed p.
            Value offset = blockQueryOffset(nb, l, op.getQueryOffset(), j0);
            accs[0] =
                relativeSymbolsAsProduct
                    ? accumulateRelativeSymbolsAsProduct(
                          nb, l, p, op.getSymbols(), offset, accs[0], *group)
                    : accumulateRelativeSymbols(nb, l, p, op.getSymbols(),
                                                offset, accs[0], *group);
          } else if (op.getSymbolsPerPair()) {
            // [Nq,Nk,Hkv,hd]: the block's columns, read as [i,j,g(h),e].
            // ([Nq,Nk,1,hd], shared by every head: read as [i,j,e].)
            symbols = sliceDim(nb, l, op.getSymbols(), 1, j0, len);
            Value shared = sharedPairSymbols(nb, l, symbols);
            accs[0] = buildMulAcc(nb, l, p, shared, accs[0],
                                  {map({b, h, i, j}),
                                   shared == symbols
                                       ? map({i, j, h.floorDiv(*group), e})
                                       : map({i, j, e}),
                                   map({b, h, i, e})},
                                  {kPar, kPar, kPar, kRed, kPar});
          } else {
            symbols = sliceDim(nb, l, op.getSymbols(), 2, j0, len);
            accs[0] = accumulateWeighted(nb, l, p, symbols, accs[0], *group);
          }
          // Σ_j p·r with the keys innermost (loops b, h, i, e, j): each
          // relation's row and the probabilities' row are read along j.
          AffineExpr jl = getAffineDimExpr(4, ctx),
                     el = getAffineDimExpr(3, ctx);
          accs[1] = buildMulAcc(
              nb, l, p, rel, accs[1],
              {map({b, h, i, jl}), map({b, el, i, jl}), map({b, h, i, el})},
              {kPar, kPar, kPar, kPar, kRed});
          return {m, sum, accs[0], accs[1]};
        });

    // [P ·] (Σ p·s)/l + wr · (Σ p·r)/l
    Value symOut =
        normalizeInto(rw, loc, state[2], state[1],
                      tensor::EmptyOp::create(rw, loc, symShape, accTy), accTy);
    if (proj)
      symOut =
          buildMulAcc(rw, loc, symOut, proj, zeros(rw, loc, outShape, accTy),
                      {map({b, h, i, j}), map({h, e, j}), map({b, h, i, e})},
                      {kPar, kPar, kPar, kRed, kPar});
    Value relOut =
        normalizeInto(rw, loc, state[3], state[1],
                      tensor::EmptyOp::create(rw, loc, relShape, accTy), accTy);
    Value out =
        buildMulAcc(rw, loc, relOut, op.getWr(), symOut,
                    {map({b, h, i, j}), map({h, e, j}), map({b, h, i, e})},
                    {kPar, kPar, kPar, kRed, kPar});
    rw.replaceOp(op, convertInto(rw, loc, out, op.getInit()));
    return success();
  }
};

struct FlashHyperAttention final : KeyBlockPattern<HyperAttentionOp> {
  using KeyBlockPattern::KeyBlockPattern;

  LogicalResult matchAndRewrite(HyperAttentionOp op,
                                PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    FloatType accTy = accumulationType(
        cast<RankedTensorType>(op.getQuery().getType()).getElementType());
    StringRef norm = op.getNormalization(), network = op.getNetwork();
    double scale = op.getScale().convertToDouble();
    int64_t tile = hyperKeyTile(op, keyTile, blockBytes, narrowValueNetwork);
    auto blockScores = [&](OpBuilder &b, Location l, Value j0,
                           OpFoldResult len) {
      return buildHyperScores(
          b, l, op.getQuery(), sliceDim(b, l, op.getKey(), 2, j0, len),
          sliceDim(b, l, op.getBias(), 3, j0, len),
          sliceDim(b, l, op.getMask(), 1, j0, len), op.getCausal(),
          blockQueryOffset(b, l, op.getQueryOffset(), j0), scale, norm, accTy);
    };
    KeyRange nk{tensor::getMixedSize(rw, loc, op.getKey(), 2)};
    SmallVector<OpFoldResult> outShape =
        tensor::getMixedSizes(rw, loc, op.getInit());
    Value acc0 = zeros(rw, loc, outShape, accTy);
    Value out;

    if (norm != "softmax") {
      // rms_head and none normalize each (query, key) pair across heads
      // only: every key block adds its own share. The block holds all heads.
      out =
          buildKeyLoop(rw, loc, nk, tile, {acc0},
                       [&](OpBuilder &b, Location l, Value j0, OpFoldResult len,
                           ValueRange s) -> SmallVector<Value> {
                         Value a = normalizeHyperScores(
                             b, l, blockScores(b, l, j0, len), norm);
                         return {accumulateHyperValues(
                             b, l, a, sliceDim(b, l, op.getValue(), 2, j0, len),
                             network, s[0], narrowValueNetwork)};
                       })[0];
    } else {
      auto [m0, l0] =
          initialRowState(rw, loc, rowShapeOf(rw, loc, op.getInit()), accTy);
      if (network == "default") {
        // Standard flash attention per head.
        SmallVector<Value> state = buildKeyLoop(
            rw, loc, nk, tile, {m0, l0, acc0},
            [&](OpBuilder &b, Location l, Value j0, OpFoldResult len,
                ValueRange s) -> SmallVector<Value> {
              Value m = s[0], sum = s[1], acc = s[2];
              Value p = onlineSoftmaxStep(b, l, blockScores(b, l, j0, len), m,
                                          sum, acc);
              acc = accumulateWeighted(
                  b, l, p, sliceDim(b, l, op.getValue(), 2, j0, len), acc, 1);
              return {m, sum, acc};
            });
        rw.replaceOp(op, normalizeInto(rw, loc, state[2], state[1],
                                       op.getInit(), accTy));
        return success();
      }
      // The generated value network needs the final weights of every head
      // for a key, so the row statistics come first (one pass), then the
      // exactly normalized blocks (a second pass).
      SmallVector<Value> stats = buildKeyLoop(
          rw, loc, nk, tile, {m0, l0},
          [&](OpBuilder &b, Location l, Value j0, OpFoldResult len,
              ValueRange s) -> SmallVector<Value> {
            Value m = s[0], sum = s[1];
            onlineSoftmaxStep(b, l, blockScores(b, l, j0, len), m, sum, {});
            return {m, sum};
          });
      out =
          buildKeyLoop(rw, loc, nk, tile, {acc0},
                       [&](OpBuilder &b, Location l, Value j0, OpFoldResult len,
                           ValueRange s) -> SmallVector<Value> {
                         Value a = rowwise(b, l, blockScores(b, l, j0, len),
                                           stats[0], 3, expMinusSafeMax);
                         a = rowwise(b, l, a, stats[1], 3, divF);
                         return {accumulateHyperValues(
                             b, l, a, sliceDim(b, l, op.getValue(), 2, j0, len),
                             network, s[0], narrowValueNetwork)};
                       })[0];
    }
    rw.replaceOp(op, convertInto(rw, loc, out, op.getInit()));
    return success();
  }
};

} // namespace

void populateFlashAttentionPatterns(RewritePatternSet &patterns,
                                    int64_t keyTile, int64_t blockBytes,
                                    bool wholeKeyBlocks,
                                    bool narrowValueNetwork,
                                    bool relativeSymbolsAsProduct) {
  patterns.add<FlashAttention, FlashRelationalAttention, FlashHyperAttention>(
      patterns.getContext(), keyTile, blockBytes, wholeKeyBlocks,
      narrowValueNetwork, relativeSymbolsAsProduct);
}

} // namespace mlir::dat
