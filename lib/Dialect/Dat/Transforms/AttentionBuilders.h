//===- AttentionBuilders.h - softmax pieces of the reference lowerings ----===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The masked, max-subtracted softmax shared by dat.attention,
// dat.attention_weights and dat.relational_attention, and the relation
// tensor shared by dat.relations and dat.relational_attention.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_LIB_DIALECT_DAT_TRANSFORMS_ATTENTIONBUILDERS_H
#define DAT_LIB_DIALECT_DAT_TRANSFORMS_ATTENTIONBUILDERS_H

#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dat {

/// Inside a generic over (b, h, i, j): `allowed` (or true when null) and the
/// causal condition j <= i + queryOffset (queryOffset may be null: 0).
Value andCausal(OpBuilder &nb, Location nl, Value allowed, Value queryOffset);

/// The operands of a masked, scaled score tensor S[b,h,i,j] =
/// scale·⟨query[b,h,i], key[b,g(h),j]⟩ (× score_scale), with the fill where
/// a mask, the key mask or causality forbids the pair. A key block of an op
/// is the same bundle with key-axis slices and a shifted query offset.
struct ScoreInputs {
  Value query, key;
  Value mask;       // [Nq,Nk] i1, optional
  Value keyMask;    // [B,Nk] i1, optional
  Value scoreScale; // [1|B,Nq,Nk], optional
  Value queryOffset;
  bool causal = false;
  double scale = 1.0;
  std::optional<double> fill; // the masked value; -inf when unset
  int64_t group = 1;

  /// Whether the scores are only scaled: no per-pair scale, no mask.
  bool onlyScaled() const {
    return !scoreScale && !mask && !keyMask && !causal;
  }
};

/// The APE extras (key-padding mask, per-pair score scale, finite mask
/// fill) exist on dat.attention and dat.attention_weights only.
template <typename OpTy> ScoreInputs scoreInputs(OpTy op, int64_t group) {
  ScoreInputs in;
  in.query = op.getQuery();
  in.key = op.getKey();
  in.mask = op.getMask();
  in.queryOffset = op.getQueryOffset();
  in.causal = op.getCausal();
  in.scale = op.getScale().convertToDouble();
  in.group = group;
  if constexpr (!std::is_same_v<OpTy, RelationalAttentionOp>) {
    in.keyMask = op.getKeyMask();
    in.scoreScale = op.getScoreScale();
    if (op.getMaskFillAttr())
      in.fill = op.getMaskFillAttr().getValueAsDouble();
  }
  return in;
}

/// Folds `in`'s score scale into its query (a scaled copy, made once per
/// query tile rather than a pass over every key block's scores) where
/// nothing else scales or masks the scores and the query is stored in
/// `accTy`; otherwise leaves `in` as it is.
void prescaleQuery(OpBuilder &b, Location loc, ScoreInputs &in,
                   FloatType accTy);

/// S [B,H,Nq,Nk] in `accTy`: scaled, masked scores.
Value buildScores(OpBuilder &b, Location loc, const ScoreInputs &in,
                  FloatType accTy);

/// Builds the shared front half of attention: exp(S - max) with masking and
/// the row sums, in the accumulation type.
struct SoftmaxParts {
  Value logits; // [B,H,Nq,Nk]: scaled, masked scores
  Value exps;   // [B,H,Nq,Nk]: exp(S - m), 0 where masked
  Value rowSum; // [B,H,Nq]
  FloatType accTy;
};
SoftmaxParts buildSoftmaxParts(OpBuilder &b, Location loc,
                               const ScoreInputs &in);

template <typename OpTy>
inline SoftmaxParts buildSoftmaxParts(OpTy op, int64_t group,
                                      PatternRewriter &rewriter) {
  return buildSoftmaxParts(rewriter, op.getLoc(), scoreInputs(op, group));
}

/// result = x / l, or 0 where l = 0 (fully masked rows), converted to the
/// init's element type and written into `init`.
inline Value normalizeInto(OpBuilder &rewriter, Location loc, Value x,
                           Value rowSum, Value init, FloatType accTy) {
  MLIRContext *ctx = rewriter.getContext();
  AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
  AffineMap rowMap =
      AffineMap::get(4, 0,
                     {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx),
                      getAffineDimExpr(2, ctx)},
                     ctx);
  TypedAttr zeroAttr = rewriter.getFloatAttr(accTy, 0.0);
  return linalg::GenericOp::create(
             rewriter, loc, init.getType(), ValueRange{x, rowSum},
             ValueRange{init}, ArrayRef<AffineMap>{id4, rowMap, id4},
             ArrayRef<IteratorType>{kPar, kPar, kPar, kPar},
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value zero = arith::ConstantOp::create(nb, nl, zeroAttr);
               Value isEmpty = arith::CmpFOp::create(
                   nb, nl, arith::CmpFPredicate::OEQ, args[1], zero);
               Value q = arith::DivFOp::create(nb, nl, args[0], args[1]);
               Value r = arith::SelectOp::create(nb, nl, isEmpty, zero, q);
               linalg::YieldOp::create(nb, nl,
                                       castFloat(nb, nl, r, args[2].getType()));
             })
      .getResult(0);
}

/// exp(x - m), with m = -inf (an empty row) read as 0 so the result is 0.
Value expMinusSafeMax(OpBuilder &nb, Location nl, Value x, Value m);

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

/// r[b,i,j,l] = act(scale · Σ_c qr[b,l,i,c] · kr[b,l,j,c]) in `accTy`,
/// softmax over j for "softmax"; `relationMajor`: laid out r[b,l,i,j]
/// instead, each relation a batch of the product (its rows contiguous
/// along j, as a score tile's are).
Value buildRelations(OpBuilder &b, Location loc, Value relQuery, Value relKey,
                     double scale, StringRef activation, FloatType accTy,
                     bool relationMajor = false);

/// acc[b,h,i,e] + Σ_j p[b,h,i,j] · table[clamp(j - i - offset, -M, M) + M,
/// g(h), e] for a table [2M+1,Hkv,hd] of position-relative symbols (offset
/// null: 0). Gathers the rows in the loop: no [Lq,Lk,·] tensor.
Value accumulateRelativeSymbols(OpBuilder &b, Location loc, Value p,
                                Value table, Value queryOffset, Value acc,
                                int64_t group);

/// The same sum as a contraction: the table rows the block's pairs use are
/// one window of nq + nk rows (clamped rows repeated), p skewed so that pair
/// (i, j) sits in column j - i + nq - 1, then acc += skewed · window (a
/// tensor-core product on the GPU, where the gather per pair and element
/// was a thread loop).
Value accumulateRelativeSymbolsAsProduct(OpBuilder &b, Location loc, Value p,
                                         Value table, Value queryOffset,
                                         Value acc, int64_t group);

/// HYLA scores s[b,h,i,j] = scale·⟨q, k⟩ + bias in `accTy`, masked pairs set
/// to the fill of `normalization` (lowest float for softmax, else 0).
Value buildHyperScores(OpBuilder &rw, Location loc, Value query, Value key,
                       Value bias, Value mask, bool causal, Value queryOffset,
                       double scale, StringRef normalization, FloatType accTy);

/// HYLA's normalization of scores: across heads (rms_head), along keys
/// (softmax) or none.
Value normalizeHyperScores(OpBuilder &rw, Location loc, Value s,
                           StringRef normalization);

/// acc[b,h,i,e] + Σ_j a[b,h,i,j] · (HYLA value network)[.., j, e] for the
/// keys of `a` and `values`. With `narrowValueNetwork`, a generated value
/// network z is stored in `values`' element type between its two products.
Value accumulateHyperValues(OpBuilder &rw, Location loc, Value a, Value values,
                            StringRef network, Value acc,
                            bool narrowValueNetwork = false);

} // namespace mlir::dat

#endif // DAT_LIB_DIALECT_DAT_TRANSFORMS_ATTENTIONBUILDERS_H
