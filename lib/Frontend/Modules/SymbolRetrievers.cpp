//===- SymbolRetrievers.cpp - frontends of the symbol retrievers ----------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// SymbolicAttention, PositionalSymbolRetriever and
// PositionRelativeSymbolRetriever (spec §4.1-4.3).
//
//===----------------------------------------------------------------------===//

#include "Modules.h"

#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <cmath>

using namespace llvm;
using namespace mlir;

namespace dat {

Value broadcastBatch(ModelBuilder &mb, Value x, OpFoldResult batch) {
  if (mb.failed() || !x)
    return {};
  MLIRContext *ctx = mb.b.getContext();
  AffineExpr b, i, d;
  bindDims(ctx, b, i, d);
  Value init = mb.emptyLike({batch, mb.dimOf(x, 0), mb.dimOf(x, 1)});
  return linalg::GenericOp::create(
             mb.b, mb.loc, init.getType(), ValueRange{x}, ValueRange{init},
             ArrayRef<AffineMap>{AffineMap::get(3, 0, {i, d}, ctx),
                                 AffineMap::getMultiDimIdentityMap(3, ctx)},
             SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
             [](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, args[0]);
             })
      .getResult(0);
}

/// The input stream [B,L,D] a retriever reads (only its shape matters for
/// the positional ones).

Value emitSymbolicAttention(ModelBuilder &mb, StringRef prefix, Value x,
                            int64_t d, int64_t heads, int64_t symbols,
                            double dropout, std::optional<double> scale) {
  if (mb.failed() || !x)
    return {};
  if (dropout != 0.0) {
    // The reference passes dropout_p to SDPA even in eval mode (spec §4.1):
    // its output is random, so no compiled program can match it.
    mb.error(mb.config.path + ": kwargs.dropout: SymbolicAttention applies "
                              "dropout even at inference in the reference; "
                              "only 0 gives a deterministic model");
    return {};
  }
  if (heads == 0 || symbols == 0 || d % heads != 0) {
    mb.error(mb.config.path + ": kwargs.d_model: " + Twine(d) +
             " must be divisible by the symbolic attention heads " +
             Twine(heads) + " (and n_symbols positive)");
    return {};
  }
  auto xt = cast<RankedTensorType>(x.getType());
  if (xt.getRank() != 3 || xt.getDimSize(2) != d) {
    mb.error(mb.config.path + ": the symbolic attention input must be [B, L, " +
             Twine(d) + "]");
    return {};
  }
  auto name = [&](StringRef n) { return (prefix + n).str(); };
  int64_t dh = d / heads;
  // (Batch and length may be dynamic: the stream's own sizes.)
  OpFoldResult B = mb.dimOf(x, 0), L = mb.dimOf(x, 1);
  Value templates = mb.weight(name("template_features"), {symbols, d});
  Value library = mb.weight(name("symbol_library"), {symbols, d});
  Value q = mb.swapSeqHeads(
      mb.splitHeads(mb.linear(x, name("q_proj"), d, true), heads));
  Value k =
      mb.swapSeqHeads(mb.splitHeads(broadcastBatch(mb, templates, B), heads));
  Value v =
      mb.swapSeqHeads(mb.splitHeads(broadcastBatch(mb, library, B), heads));
  if (mb.failed())
    return {};
  float c = scale ? static_cast<float>(*scale)
                  : 1.0f / std::sqrt(static_cast<float>(dh));
  Value o = mlir::dat::AttentionOp::create(
      mb.b, mb.loc, q, k, v,
      mb.emptyLike({B, mb.b.getIndexAttr(heads), L, mb.b.getIndexAttr(dh)}), c,
      /*causal=*/false);
  return mb.mergeHeads(o);
}

Value emitSymbolicAttentionFromKwargs(ModelBuilder &mb, StringRef prefix,
                                      Value x) {
  int64_t d = mb.intArg("d_model");
  int64_t heads = mb.intArg("n_heads");
  int64_t symbols = mb.intArg("n_symbols");
  double dropout = mb.floatArg("dropout", 0.0);
  std::optional<double> scale = mb.optFloatArg("scale");
  mb.boolArg("trainable_symbols", true); // only toggles requires_grad
  return emitSymbolicAttention(mb, prefix, x, d, heads, symbols, dropout,
                               scale);
}

void buildSymbolicAttentionModule(ModelBuilder &mb) {
  mb.output("symbols",
            emitSymbolicAttentionFromKwargs(mb, "", mb.input("x", 3)));
}

Value emitRelationalSymbolicAttentionFromKwargs(ModelBuilder &mb,
                                                StringRef prefix, Value x) {
  auto name = [&](StringRef n) { return (prefix + n).str(); };
  int64_t d = mb.intArg("d_model");
  int64_t relHeads = mb.intArg("rel_n_heads");
  int64_t symHeads = mb.intArg("symbolic_attn_n_heads");
  int64_t symbols = mb.intArg("n_symbols");
  int64_t delta = mb.intArg("nbhd_delta");
  bool causalNbhd = mb.boolArg("causal_nbhd", true);
  bool includeSelf = mb.boolArg("include_self", false);
  bool normalize = mb.boolArg("normalize_rels", true);
  double dropout = mb.floatArg("dropout", 0.0);
  std::optional<double> relScale = mb.optFloatArg("rel_scale");
  std::optional<double> symScale = mb.optFloatArg("symbolic_attn_scale");
  if (mb.failed() || !x)
    return {};
  if (relHeads == 0 || d % relHeads) {
    mb.error(mb.config.path + ": kwargs.rel_n_heads: " + Twine(relHeads) +
             " must divide d_model " + Twine(d));
    return {};
  }
  if (delta < 0 || delta > 4096) {
    mb.error(mb.config.path + ": kwargs.nbhd_delta: " + Twine(delta) +
             " is outside [0, 4096]");
    return {};
  }
  // Neighbour offsets in the reference's order (spec §4.4).
  SmallVector<int64_t> offsets;
  if (causalNbhd) {
    for (int64_t m = includeSelf ? 0 : 1; m <= delta; ++m)
      offsets.push_back(-m);
  } else {
    for (int64_t m = -delta; m <= delta; ++m)
      if (m != 0 || includeSelf)
        offsets.push_back(m);
  }
  if (offsets.empty()) {
    mb.error(mb.config.path + ": kwargs.nbhd_delta: the neighbourhood is "
                              "empty");
    return {};
  }
  // (Batch and length may be dynamic: sizes are taken from x.)
  OpFoldResult B = mb.dimOf(x, 0), L = mb.dimOf(x, 1);
  int64_t nb = offsets.size();
  Value q = mb.splitHeads(mb.linear(x, name("q_proj"), d, true), relHeads);
  Value k = mb.splitHeads(mb.linear(x, name("k_proj"), d, true), relHeads);
  if (mb.failed())
    return {};
  // N[i,m] = clamp(i + offset_m, 0, L-1), from the [Δ] offsets (computed in
  // the loop, so nothing here grows with L).
  auto offsetsTy = RankedTensorType::get({nb}, mb.b.getIndexType());
  Value nbhd = arith::ConstantOp::create(
      mb.b, mb.loc,
      DenseElementsAttr::get(offsetsTy, ArrayRef<int64_t>(offsets)));
  // R[b,i,m,h] = Σ_c q[b,i,h,c] · k[b,N[i,m],h,c]   (loops b, i, m, h, c)
  MLIRContext *ctx = mb.b.getContext();
  AffineExpr b, i, m, h, c;
  bindDims(ctx, b, i, m, h, c);
  SmallVector<OpFoldResult> rShape = {B, L, mb.b.getIndexAttr(nb),
                                      mb.b.getIndexAttr(relHeads)};
  Value last = arith::SubIOp::create(
      mb.b, mb.loc, mlir::getValueOrCreateConstantIndexOp(mb.b, mb.loc, L),
      arith::ConstantIndexOp::create(mb.b, mb.loc, 1));
  Value zero = arith::ConstantOp::create(mb.b, mb.loc, mb.b.getF32FloatAttr(0));
  Value rInit = linalg::FillOp::create(mb.b, mb.loc, zero, mb.emptyLike(rShape))
                    .getResult(0);
  using IT = utils::IteratorType;
  Value rel =
      linalg::GenericOp::create(
          mb.b, mb.loc, rInit.getType(), ValueRange{q, nbhd}, ValueRange{rInit},
          ArrayRef<AffineMap>{AffineMap::get(5, 0, {b, i, h, c}, ctx),
                              AffineMap::get(5, 0, {m}, ctx),
                              AffineMap::get(5, 0, {b, i, m, h}, ctx)},
          ArrayRef<IT>{IT::parallel, IT::parallel, IT::parallel, IT::parallel,
                       IT::reduction},
          [&](OpBuilder &nb2, Location nl, ValueRange args) {
            Value bi = linalg::IndexOp::create(nb2, nl, 0);
            Value ii = linalg::IndexOp::create(nb2, nl, 1);
            Value hi = linalg::IndexOp::create(nb2, nl, 3);
            Value ci = linalg::IndexOp::create(nb2, nl, 4);
            Value j = arith::AddIOp::create(nb2, nl, ii, args[1]);
            j = arith::MaxSIOp::create(
                nb2, nl, j, arith::ConstantIndexOp::create(nb2, nl, 0));
            j = arith::MinSIOp::create(nb2, nl, j, last);
            Value kv = tensor::ExtractOp::create(nb2, nl, k,
                                                 ValueRange{bi, j, hi, ci});
            Value p = arith::MulFOp::create(nb2, nl, args[0], kv);
            linalg::YieldOp::create(
                nb2, nl, Value(arith::AddFOp::create(nb2, nl, args[2], p)));
          })
          .getResult(0);
  if (normalize) {
    double scale = relScale.value_or(1.0 / std::sqrt(double(d) / relHeads));
    Value sv = arith::ConstantOp::create(
        mb.b, mb.loc, mb.b.getF32FloatAttr(static_cast<float>(scale)));
    AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
    rel =
        linalg::GenericOp::create(
            mb.b, mb.loc, rel.getType(), ValueRange{}, ValueRange{rel},
            ArrayRef<AffineMap>{id}, SmallVector<IT>(4, IT::parallel),
            [&](OpBuilder &nb2, Location nl, ValueRange args) {
              linalg::YieldOp::create(
                  nb2, nl, Value(arith::MulFOp::create(nb2, nl, args[0], sv)));
            })
            .getResult(0);
    rel = mlir::dat::softmaxAlong(mb.b, mb.loc, rel, 2);
  }
  // z[b,i, m·Hr + h]: offset-major, head-minor.
  Value z = tensor::CollapseShapeOp::create(
      mb.b, mb.loc, rel, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  Value projected = mb.linear(z, name("model_dim_proj"), d, true);
  return emitSymbolicAttention(mb, name("symbolic_attention."), projected, d,
                               symHeads, symbols, dropout, symScale);
}

void buildRelationalSymbolicAttentionModule(ModelBuilder &mb) {
  mb.output("symbols", emitRelationalSymbolicAttentionFromKwargs(
                           mb, "", mb.input("x", 3)));
}

Value emitPositionalSymbols(ModelBuilder &mb, StringRef prefix, Value x) {
  int64_t dim = mb.intArg("symbol_dim");
  int64_t maxLength = mb.intArg("max_length");
  mb.boolArg("sinusoidal", false); // stored but unused by the reference
  if (mb.failed() || !x)
    return {};
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t L = mb.largestSize(x, 1);
  if (L > maxLength) {
    mb.error(mb.config.path + ": inputs.x: sequence length " + Twine(L) +
             " exceeds kwargs.max_length " + Twine(maxLength));
    return {};
  }
  Value table =
      mb.weight((prefix + "symbol_library.weight").str(), {maxLength, dim});
  if (mb.failed())
    return {};
  // Positions [first, first + L): 0.., or a decode step's position.
  OpFoldResult first = mb.decoding() ? OpFoldResult(mb.decodePosition())
                                     : OpFoldResult(mb.b.getIndexAttr(0));
  Value rows = tensor::ExtractSliceOp::create(
      mb.b, mb.loc,
      RankedTensorType::get({xt.getDimSize(1), dim}, mb.b.getF32Type()), table,
      ArrayRef<OpFoldResult>{first, mb.b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{mb.dimOf(x, 1), mb.b.getIndexAttr(dim)},
      ArrayRef<OpFoldResult>{mb.b.getIndexAttr(1), mb.b.getIndexAttr(1)});
  return broadcastBatch(mb, rows, mb.dimOf(x, 0));
}

void buildPositionalSymbolRetrieverModule(ModelBuilder &mb) {
  Value x = mb.input("x", 3);
  if (mb.failed() || !x)
    return;
  mb.output("symbols", emitPositionalSymbols(mb, "", x));
}

Value emitRelativeSymbolTable(ModelBuilder &mb, StringRef prefix) {
  int64_t dim = mb.intArg("symbol_dim");
  int64_t maxRel = mb.intArg("max_rel_pos");
  if (mb.failed())
    return {};
  return mb.weight((prefix + "rel_pos_enc.rel_pos_embeddings").str(),
                   {2 * maxRel + 1, dim});
}

Value emitRelativeSymbols(ModelBuilder &mb, StringRef prefix, OpFoldResult L) {
  Value table = emitRelativeSymbolTable(mb, prefix);
  if (mb.failed())
    return {};
  // s[i,j,:] = E[clamp(j − i, −M, M) + M]: the retriever's own output. The
  // models keep the table (relational attention gathers from it).
  int64_t rows = cast<RankedTensorType>(table.getType()).getDimSize(0);
  int64_t dim = cast<RankedTensorType>(table.getType()).getDimSize(1);
  int64_t maxRel = (rows - 1) / 2;
  MLIRContext *ctx = mb.b.getContext();
  Value init = mb.emptyLike({L, L, mb.b.getIndexAttr(dim)});
  return linalg::GenericOp::create(
             mb.b, mb.loc, init.getType(), ValueRange{}, ValueRange{init},
             ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(3, ctx)},
             SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange) {
               Value i = linalg::IndexOp::create(nb, nl, 0);
               Value j = linalg::IndexOp::create(nb, nl, 1);
               Value c = linalg::IndexOp::create(nb, nl, 2);
               Value m = arith::ConstantIndexOp::create(nb, nl, maxRel);
               // clamp(j − i, −M, M) + M = clamp(j + M − i, 0, 2M), in index
               // arithmetic without negative values: max(j + M, i) − i.
               Value jm = arith::AddIOp::create(nb, nl, j, m);
               Value lo = arith::MaxUIOp::create(nb, nl, jm, i);
               Value off = arith::SubIOp::create(nb, nl, lo, i);
               Value twoM = arith::ConstantIndexOp::create(nb, nl, 2 * maxRel);
               Value row = arith::MinUIOp::create(nb, nl, off, twoM);
               Value v =
                   tensor::ExtractOp::create(nb, nl, table, ValueRange{row, c});
               linalg::YieldOp::create(nb, nl, v);
             })
      .getResult(0);
}

void buildPositionRelativeSymbolRetrieverModule(ModelBuilder &mb) {
  Value x = mb.input("x", 3);
  if (mb.failed() || !x)
    return;
  mb.output("symbols", emitRelativeSymbols(mb, "", mb.dimOf(x, 1)));
}

bool checkSymbolRetrieval(ModelBuilder &mb, StringRef kind,
                          bool allowRelSymAttn) {
  SmallVector<StringRef> known = {"symbolic_attention", "positional_symbols",
                                  "position_relative"};
  if (allowRelSymAttn)
    known.push_back("rel_sym_attn");
  if (llvm::is_contained(known, kind))
    return true;
  mb.error(mb.config.path + ": kwargs.symbol_retrieval: '" + kind + "' (" +
           llvm::join(known, ", ") + ")");
  return false;
}

Value emitSymbolRetriever(ModelBuilder &mb, StringRef kind, StringRef prefix,
                          Value x) {
  if (mb.failed() || !x)
    return {};
  if (kind == "symbolic_attention")
    return emitSymbolicAttentionFromKwargs(mb, prefix, x);
  if (kind == "rel_sym_attn")
    return emitRelationalSymbolicAttentionFromKwargs(mb, prefix, x);
  if (kind == "positional_symbols")
    return emitPositionalSymbols(mb, prefix, x);
  return emitRelativeSymbolTable(mb, prefix);
}

} // namespace dat
