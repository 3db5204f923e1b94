//===- AttentionBuilders.cpp - pieces shared by the reference lowerings ---===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "AttentionBuilders.h"

namespace mlir::dat {

Value andCausal(OpBuilder &nb, Location nl, Value allowed, Value queryOffset) {
  Value row = linalg::IndexOp::create(nb, nl, 2);
  if (queryOffset)
    row = arith::AddIOp::create(nb, nl, row, queryOffset);
  Value col = linalg::IndexOp::create(nb, nl, 3);
  Value ok = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sle, col, row);
  return allowed ? arith::AndIOp::create(nb, nl, allowed, ok) : ok;
}

Value buildScores(OpBuilder &b, Location loc, const ScoreInputs &in,
                  FloatType accTy) {
  MLIRContext *ctx = b.getContext();
  auto size = [&](Value v, int64_t dim) {
    return tensor::getMixedSize(b, loc, v, dim);
  };
  OpFoldResult B = size(in.query, 0), H = size(in.query, 1),
               Nq = size(in.query, 2), Nk = size(in.key, 2);
  AffineExpr bb, h, i, j, x;
  bindDims(ctx, bb, h, i, j, x);
  auto map = [&](ArrayRef<AffineExpr> results) {
    return AffineMap::get(5, 0, results, ctx);
  };
  AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);

  // S[b,h,i,j] = Σ_d q[b,h,i,d] · k[b,g(h),j,d]   (x = d)
  Value scores =
      filledTensor(b, loc, {B, H, Nq, Nk}, accTy, b.getFloatAttr(accTy, 0.0));
  scores =
      buildMulAcc(b, loc, in.query, in.key, scores,
                  {map({bb, h, i, x}), map({bb, h.floorDiv(in.group), j, x}),
                   map({bb, h, i, j})},
                  {kPar, kPar, kPar, kPar, kRed});

  // Nothing to scale or mask (the scale folded into the query tile).
  if (in.scale == 1.0 && in.onlyScaled())
    return scores;

  // Scale (and the per-pair score_scale), then the fill value where a mask
  // or causality forbids the pair.
  SmallVector<Value> maskInputs;
  SmallVector<AffineMap> maskMaps;
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  if (in.scoreScale) {
    bool broadcast =
        cast<RankedTensorType>(in.scoreScale.getType()).getDimSize(0) == 1;
    maskInputs.push_back(in.scoreScale);
    maskMaps.push_back(AffineMap::get(
        4, 0, {broadcast ? getAffineConstantExpr(0, ctx) : d0, d2, d3}, ctx));
  }
  if (in.mask) {
    maskInputs.push_back(in.mask);
    maskMaps.push_back(AffineMap::get(4, 0, {d2, d3}, ctx));
  }
  if (in.keyMask) {
    maskInputs.push_back(in.keyMask);
    maskMaps.push_back(AffineMap::get(4, 0, {d0, d3}, ctx));
  }
  maskMaps.push_back(id4);
  TypedAttr fillAttr =
      in.fill ? b.getFloatAttr(accTy, *in.fill)
              : b.getFloatAttr(
                    accTy, APFloat::getInf(accTy.getFloatSemantics(), true));
  Value scale =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(accTy, in.scale));
  return linalg::GenericOp::create(
             b, loc, scores.getType(), maskInputs, ValueRange{scores}, maskMaps,
             ArrayRef<IteratorType>{kPar, kPar, kPar, kPar},
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value s = arith::MulFOp::create(nb, nl, args.back(), scale);
               unsigned next = 0;
               if (in.scoreScale)
                 s = arith::MulFOp::create(
                     nb, nl, s, castFloat(nb, nl, args[next++], accTy));
               Value allowed;
               if (in.mask)
                 allowed = args[next++];
               if (in.keyMask) {
                 Value km = args[next++];
                 allowed =
                     allowed ? arith::AndIOp::create(nb, nl, allowed, km) : km;
               }
               if (in.causal)
                 allowed = andCausal(nb, nl, allowed, in.queryOffset);
               if (allowed) {
                 Value fill = arith::ConstantOp::create(nb, nl, fillAttr);
                 s = arith::SelectOp::create(nb, nl, allowed, s, fill);
               }
               linalg::YieldOp::create(nb, nl, s);
             })
      .getResult(0);
}

void prescaleQuery(OpBuilder &b, Location loc, ScoreInputs &in,
                   FloatType accTy) {
  auto type = cast<RankedTensorType>(in.query.getType());
  if (in.scale == 1.0 || !in.onlyScaled() || type.getElementType() != accTy)
    return;
  Value scale =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(accTy, in.scale));
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, in.query), accTy);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(), kPar);
  in.query =
      linalg::GenericOp::create(
          b, loc, init.getType(), ValueRange{in.query}, ValueRange{init},
          ArrayRef<AffineMap>{id, id}, iterators,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(
                nb, nl, Value(arith::MulFOp::create(nb, nl, args[0], scale)));
          })
          .getResult(0);
  in.scale = 1.0;
}

Value accumulateRelativeSymbols(OpBuilder &b, Location loc, Value p,
                                Value table, Value queryOffset, Value acc,
                                int64_t group) {
  MLIRContext *ctx = b.getContext();
  AffineExpr bb, h, i, j, e;
  bindDims(ctx, bb, h, i, j, e);
  auto map = [&](ArrayRef<AffineExpr> r) {
    return AffineMap::get(5, 0, r, ctx);
  };
  Type accTy = getElementTypeOrSelf(acc.getType());
  Value rows = tensor::DimOp::create(b, loc, table, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value two = arith::ConstantIndexOp::create(b, loc, 2);
  Value maxRel = arith::DivUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, rows, one), two);
  Value offset =
      queryOffset ? queryOffset : arith::ConstantIndexOp::create(b, loc, 0);
  return linalg::GenericOp::create(
             b, loc, acc.getType(), ValueRange{p}, ValueRange{acc},
             ArrayRef<AffineMap>{map({bb, h, i, j}), map({bb, h, i, e})},
             ArrayRef<IteratorType>{kPar, kPar, kPar, kRed, kPar},
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value row = linalg::IndexOp::create(nb, nl, 2);
               Value col = linalg::IndexOp::create(nb, nl, 3);
               Value head = linalg::IndexOp::create(nb, nl, 1);
               Value dim = linalg::IndexOp::create(nb, nl, 4);
               // clamp(j - i - offset + M, 0, 2M), signed.
               Value rel = arith::SubIOp::create(
                   nb, nl, col, arith::AddIOp::create(nb, nl, row, offset));
               rel = arith::AddIOp::create(nb, nl, rel, maxRel);
               Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
               Value last = arith::SubIOp::create(nb, nl, rows, one);
               rel = arith::MinSIOp::create(
                   nb, nl, arith::MaxSIOp::create(nb, nl, rel, zero), last);
               Value kvHead = arith::DivUIOp::create(
                   nb, nl, head, arith::ConstantIndexOp::create(nb, nl, group));
               Value s = tensor::ExtractOp::create(
                   nb, nl, table, ValueRange{rel, kvHead, dim});
               Value prod = arith::MulFOp::create(
                   nb, nl, castFloat(nb, nl, args[0], accTy),
                   castFloat(nb, nl, s, accTy));
               linalg::YieldOp::create(
                   nb, nl, Value(arith::AddFOp::create(nb, nl, args[1], prod)));
             })
      .getResult(0);
}

Value accumulateRelativeSymbolsAsProduct(OpBuilder &b, Location loc, Value p,
                                         Value table, Value queryOffset,
                                         Value acc, int64_t group) {
  MLIRContext *ctx = b.getContext();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value rows = tensor::DimOp::create(b, loc, table, 0);
  Value last = arith::SubIOp::create(b, loc, rows, index(1));
  Value maxRel = arith::DivUIOp::create(b, loc, last, index(2));
  Value offset = queryOffset ? queryOffset : index(0);
  Value nq = tensor::DimOp::create(b, loc, p, 2);
  Value nk = tensor::DimOp::create(b, loc, p, 3);
  // Pair (i, j) reads table row clamp(j - i - offset + M); over the block
  // these are the window's rows lo + (j - i + nq - 1), lo the pair
  // (nq - 1, 0)'s. The window is nq + nk rows (one past the last pair's, so
  // that 16 + 64 stays a multiple of the MMA's k).
  Value lo = arith::SubIOp::create(
      b, loc, maxRel,
      arith::AddIOp::create(b, loc, offset,
                            arith::SubIOp::create(b, loc, nq, index(1))));
  Value width = arith::AddIOp::create(b, loc, nq, nk);
  Value zero = index(0);
  auto clampRow = [&](OpBuilder &nb, Location nl, Value row) -> Value {
    return arith::MinSIOp::create(
        nb, nl, arith::MaxSIOp::create(nb, nl, row, zero), last);
  };
  // A tensor of `shape` whose element at indices (linalg.index) is body's.
  auto generate =
      [&](ArrayRef<OpFoldResult> shape, Type type,
          function_ref<Value(OpBuilder &, Location, ValueRange)> body)
      -> Value {
    Value init = tensor::EmptyOp::create(b, loc, shape, type);
    SmallVector<IteratorType> iterators(shape.size(), kPar);
    return linalg::GenericOp::create(
               b, loc, init.getType(), ValueRange{}, ValueRange{init},
               ArrayRef<AffineMap>{b.getMultiDimIdentityMap(shape.size())},
               iterators,
               [&](OpBuilder &nb, Location nl, ValueRange) {
                 SmallVector<Value> at;
                 for (int64_t d = 0, e = shape.size(); d < e; ++d)
                   at.push_back(linalg::IndexOp::create(nb, nl, d));
                 linalg::YieldOp::create(nb, nl, body(nb, nl, at));
               })
        .getResult(0);
  };
  // window[r, g, e] = table[clamp(lo + r), g, e]: the clamped rows repeat,
  // so each pair's symbol is the window's row at its unclamped offset.
  Value window = generate(
      {width, tensor::getMixedSize(b, loc, table, 1),
       tensor::getMixedSize(b, loc, table, 2)},
      getElementTypeOrSelf(table.getType()),
      [&](OpBuilder &nb, Location nl, ValueRange at) -> Value {
        Value row = clampRow(nb, nl, arith::AddIOp::create(nb, nl, lo, at[0]));
        return tensor::ExtractOp::create(nb, nl, table,
                                         ValueRange{row, at[1], at[2]});
      });
  // skewed[b, h, i, r] = p[b, h, i, r - (nq - 1) + i] where that is a key
  // of the block, else 0: each pair in its own column, no sum.
  SmallVector<OpFoldResult> skewShape = tensor::getMixedSizes(b, loc, p);
  skewShape[3] = width;
  Type pTy = getElementTypeOrSelf(p.getType());
  Value skewed = generate(
      skewShape, pTy, [&](OpBuilder &nb, Location nl, ValueRange at) -> Value {
        Value j = arith::SubIOp::create(
            nb, nl, arith::AddIOp::create(nb, nl, at[3], at[2]),
            arith::SubIOp::create(nb, nl, nq, index(1)));
        Value inside = arith::AndIOp::create(
            nb, nl,
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, j, zero),
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, j, nk));
        Value jc = arith::MinSIOp::create(
            nb, nl, arith::MaxSIOp::create(nb, nl, j, zero),
            arith::SubIOp::create(nb, nl, nk, index(1)));
        Value v = tensor::ExtractOp::create(
            nb, nl, p, ValueRange{at[0], at[1], at[2], jc});
        Value none =
            arith::ConstantOp::create(nb, nl, nb.getFloatAttr(pTy, 0.0));
        return arith::SelectOp::create(nb, nl, inside, v, none);
      });
  // acc[b,h,i,e] += Σ_r skewed[b,h,i,r] · window[r, g(h), e]   (loops b, h,
  // i, e, r): a contraction, on the GPU's tensor cores.
  AffineExpr bb, h, i, e, r;
  bindDims(ctx, bb, h, i, e, r);
  auto map = [&](ArrayRef<AffineExpr> res) {
    return AffineMap::get(5, 0, res, ctx);
  };
  return buildMulAcc(
      b, loc, skewed, window, acc,
      {map({bb, h, i, r}), map({r, h.floorDiv(group), e}), map({bb, h, i, e})},
      {kPar, kPar, kPar, kPar, kRed});
}

Value expMinusSafeMax(OpBuilder &nb, Location nl, Value x, Value m) {
  auto ft = cast<FloatType>(m.getType());
  Value negInf = arith::ConstantOp::create(
      nb, nl,
      nb.getFloatAttr(ft, APFloat::getInf(ft.getFloatSemantics(), true)));
  Value zero = arith::ConstantOp::create(nb, nl, nb.getFloatAttr(ft, 0.0));
  Value isEmpty =
      arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, m, negInf);
  Value safe = arith::SelectOp::create(nb, nl, isEmpty, zero, m);
  return math::ExpOp::create(nb, nl, arith::SubFOp::create(nb, nl, x, safe));
}

SoftmaxParts buildSoftmaxParts(OpBuilder &b, Location loc,
                               const ScoreInputs &in) {
  FloatType accTy = accumulationType(getElementTypeOrSelf(in.query.getType()));
  Value scores = buildScores(b, loc, in, accTy);
  // exp(S - m); a fully masked row has m = -inf and uses 0 instead, so that
  // its weights are exp(-inf) = 0 rather than NaN.
  Value exps =
      rowwise(b, loc, scores, maxAlong(b, loc, scores, 3), 3, expMinusSafeMax);
  return {scores, exps, sumAlong(b, loc, exps, 3), accTy};
}

Value buildRelations(OpBuilder &b, Location loc, Value relQuery, Value relKey,
                     double scale, StringRef activation, FloatType accTy,
                     bool relationMajor) {
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
  SmallVector<OpFoldResult> shape = {B, Lq, Lk, R};
  AffineMap outMap = map5({bb, i, j, l});
  if (relationMajor) {
    shape = {B, R, Lq, Lk};
    outMap = map5({bb, l, i, j});
  }
  Value init = filledTensor(b, loc, shape, accTy, b.getFloatAttr(accTy, 0.0));
  Value logits = buildMulAcc(b, loc, relQuery, relKey, init,
                             {map5({bb, l, i, c}), map5({bb, l, j, c}), outMap},
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
                      v = buildActivation(nb, nl, activation, v);
                    linalg::YieldOp::create(nb, nl, v);
                  })
                  .getResult(0);
  if (!softmax)
    return rel;

  // softmax over the key axis j (dim 2 of [B,Lq,Lk,R], 3 of [B,R,Lq,Lk]).
  return softmaxAlong(b, loc, rel, relationMajor ? 3 : 2);
}

} // namespace mlir::dat
