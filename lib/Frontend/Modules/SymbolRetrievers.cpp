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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace llvm;
using namespace mlir;

namespace dat {

Value broadcastBatch(ModelBuilder &mb, Value x, int64_t batch) {
  if (mb.failed() || !x)
    return {};
  auto t = cast<RankedTensorType>(x.getType());
  MLIRContext *ctx = mb.b.getContext();
  AffineExpr b, i, d;
  bindDims(ctx, b, i, d);
  SmallVector<int64_t> shape = {batch, t.getDimSize(0), t.getDimSize(1)};
  return linalg::GenericOp::create(
             mb.b, mb.loc, RankedTensorType::get(shape, t.getElementType()),
             ValueRange{x}, ValueRange{mb.emptyLike(shape)},
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
static Value streamInput(ModelBuilder &mb) { return mb.input("x"); }

void buildSymbolicAttentionModule(ModelBuilder &mb) {
  int64_t d = mb.intArg("d_model");
  int64_t heads = mb.intArg("n_heads");
  int64_t symbols = mb.intArg("n_symbols");
  double dropout = mb.floatArg("dropout", 0.0);
  std::optional<double> scale = mb.optFloatArg("scale");
  mb.boolArg("trainable_symbols", true); // only toggles requires_grad
  if (mb.failed())
    return;
  if (dropout != 0.0) {
    // The reference passes dropout_p to SDPA even in eval mode (spec §4.1):
    // its output is random, so no compiled program can match it.
    mb.error(mb.config.path + ": kwargs.dropout: SymbolicAttention applies "
                              "dropout even at inference in the reference; "
                              "only 0 gives a deterministic model");
    return;
  }
  if (heads == 0 || symbols == 0 || d % heads != 0) {
    mb.error(mb.config.path + ": kwargs.d_model: " + Twine(d) +
             " must be divisible by n_heads " + Twine(heads) +
             " (and n_symbols positive)");
    return;
  }
  Value x = streamInput(mb);
  if (!x)
    return;
  auto xt = cast<RankedTensorType>(x.getType());
  if (xt.getRank() != 3 || xt.getDimSize(2) != d) {
    mb.error(mb.config.path + ": inputs.x: expected [B, L, " + Twine(d) + "]");
    return;
  }
  int64_t B = xt.getDimSize(0), L = xt.getDimSize(1), dh = d / heads;
  Value templates = mb.weight("template_features", {symbols, d});
  Value library = mb.weight("symbol_library", {symbols, d});
  Value q =
      mb.swapSeqHeads(mb.splitHeads(mb.linear(x, "q_proj", d, true), heads));
  Value k =
      mb.swapSeqHeads(mb.splitHeads(broadcastBatch(mb, templates, B), heads));
  Value v =
      mb.swapSeqHeads(mb.splitHeads(broadcastBatch(mb, library, B), heads));
  if (mb.failed())
    return;
  float c = scale ? static_cast<float>(*scale)
                  : 1.0f / std::sqrt(static_cast<float>(dh));
  Value o = mlir::dat::AttentionOp::create(mb.b, mb.loc, q, k, v,
                                           mb.emptyLike({B, heads, L, dh}), c,
                                           /*causal=*/false);
  mb.output("symbols", mb.mergeHeads(o));
}

void buildPositionalSymbolRetrieverModule(ModelBuilder &mb) {
  int64_t dim = mb.intArg("symbol_dim");
  int64_t maxLength = mb.intArg("max_length");
  mb.boolArg("sinusoidal", false); // stored but unused by the reference
  Value x = streamInput(mb);
  if (mb.failed() || !x)
    return;
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t B = xt.getDimSize(0), L = xt.getDimSize(1);
  if (L > maxLength) {
    mb.error(mb.config.path + ": inputs.x: sequence length " + Twine(L) +
             " exceeds kwargs.max_length " + Twine(maxLength));
    return;
  }
  Value table = mb.weight("symbol_library.weight", {maxLength, dim});
  if (mb.failed())
    return;
  Value rows = tensor::ExtractSliceOp::create(
      mb.b, mb.loc, RankedTensorType::get({L, dim}, mb.b.getF32Type()), table,
      ValueRange{}, ValueRange{}, ValueRange{},
      mb.b.getDenseI64ArrayAttr({0, 0}), mb.b.getDenseI64ArrayAttr({L, dim}),
      mb.b.getDenseI64ArrayAttr({1, 1}));
  mb.output("symbols", broadcastBatch(mb, rows, B));
}

void buildPositionRelativeSymbolRetrieverModule(ModelBuilder &mb) {
  int64_t dim = mb.intArg("symbol_dim");
  int64_t maxRel = mb.intArg("max_rel_pos");
  Value x = streamInput(mb);
  if (mb.failed() || !x)
    return;
  int64_t L = cast<RankedTensorType>(x.getType()).getDimSize(1);
  Value table =
      mb.weight("rel_pos_enc.rel_pos_embeddings", {2 * maxRel + 1, dim});
  if (mb.failed())
    return;
  // s[i,j,:] = E[clamp(j − i, −M, M) + M]
  MLIRContext *ctx = mb.b.getContext();
  SmallVector<int64_t> shape = {L, L, dim};
  Value out =
      linalg::GenericOp::create(
          mb.b, mb.loc, RankedTensorType::get(shape, mb.b.getF32Type()),
          ValueRange{}, ValueRange{mb.emptyLike(shape)},
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
  mb.output("symbols", out);
}

} // namespace dat
