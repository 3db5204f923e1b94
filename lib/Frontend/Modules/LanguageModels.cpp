//===- LanguageModels.cpp - frontends of the language models --------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// TransformerLM (spec §7.2): token embedding (no scaling), learned positions
// or RoPE, causal encoder blocks, final norm, head tied to the embedding.
//
//===----------------------------------------------------------------------===//

#include "Modules.h"

#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace llvm;
using namespace mlir;

namespace dat {

Value embedTokens(ModelBuilder &mb, Value idx, Value table) {
  auto tt = cast<RankedTensorType>(table.getType());
  // (Batch and length may be dynamic: the ids' own sizes.)
  Value init = mb.emptyLike({mb.dimOf(idx, 0), mb.dimOf(idx, 1),
                             mb.b.getIndexAttr(tt.getDimSize(1))});
  MLIRContext *ctx = mb.b.getContext();
  AffineExpr b, t, d;
  bindDims(ctx, b, t, d);
  return linalg::GenericOp::create(
             mb.b, mb.loc, init.getType(), ValueRange{idx}, ValueRange{init},
             ArrayRef<AffineMap>{AffineMap::get(3, 0, {b, t}, ctx),
                                 AffineMap::getMultiDimIdentityMap(3, ctx)},
             SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value row = arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                                      args[0]);
               Value v = tensor::ExtractOp::create(
                   nb, nl, table,
                   ValueRange{row, linalg::IndexOp::create(nb, nl, 2)});
               linalg::YieldOp::create(nb, nl, v);
             })
      .getResult(0);
}

/// The RoPE tables [T, dim/2] of precompute_freqs_cis(dim, ·)[:T], built in
/// float32 with the reference's operation order (spec §1.4, §10), as
/// compile-time derived weights.
static std::pair<Value, Value> ropeTables(ModelBuilder &mb, int64_t dim,
                                          int64_t len) {
  std::vector<int64_t> shape = {len, dim / 2};
  auto table = [dim, len](bool isCos) {
    return [dim, len, isCos](const std::vector<const float *> &, float *out) {
      for (int64_t k = 0; k < dim / 2; ++k) {
        float e = static_cast<float>(2 * k) / static_cast<float>(dim);
        float w = 1.0f / std::pow(10000.0f, e);
        for (int64_t t = 0; t < len; ++t) {
          float a = static_cast<float>(t) * w;
          out[t * (dim / 2) + k] = isCos ? std::cos(a) : std::sin(a);
        }
      }
    };
  };
  return {mb.derivedWeight("rope.freqs_cos", shape, {}, table(true)),
          mb.derivedWeight("rope.freqs_sin", shape, {}, table(false))};
}

Value addPositions(ModelBuilder &mb, Value x, Value table, float scale) {
  auto xt = cast<RankedTensorType>(x.getType());
  MLIRContext *ctx = mb.b.getContext();
  AffineExpr b, t, d;
  bindDims(ctx, b, t, d);
  return linalg::GenericOp::create(
             mb.b, mb.loc, xt, ValueRange{x, table},
             ValueRange{mlir::dat::emptyTensorLike(mb.b, mb.loc, xt, x)},
             ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(3, ctx),
                                 AffineMap::get(3, 0, {t, d}, ctx),
                                 AffineMap::getMultiDimIdentityMap(3, ctx)},
             SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value x = args[0];
               if (scale != 1.0f)
                 x = arith::MulFOp::create(
                     nb, nl, x,
                     arith::ConstantOp::create(nb, nl,
                                               nb.getF32FloatAttr(scale)));
               linalg::YieldOp::create(
                   nb, nl, Value(arith::AddFOp::create(nb, nl, x, args[1])));
             })
      .getResult(0);
}

namespace {
struct LMStream {
  Value x, cos, sin;
};
} // namespace

bool languageModelHasDecodeStep(const ModelConfig &config) {
  // Softmax relations are normalized over every key, future ones included
  // (spec §3.3): token t's output depends on later tokens, so there is no
  // causal decode step to build.
  if (const json::Object *ra = config.kwargs.getObject("ra_kwargs"))
    if (ra->getString("rel_activation") == "softmax")
      return false;
  return config.findInput("idx") && config.wantsOutput("logits");
}

/// Token ids → embeddings (+ learned positions), or the RoPE tables of
/// width `ropeDim`; shared by both LMs (spec §7.1).
static std::optional<LMStream> lmInput(ModelBuilder &mb, int64_t vocab,
                                       int64_t d, int64_t maxLen,
                                       StringRef posEnc, int64_t ropeDim) {
  Value idx = mb.input("idx", 2, "int64");
  if (mb.failed() || !idx)
    return std::nullopt;
  if (vocab < 1 || d < 1 || maxLen < 1) {
    mb.error(mb.config.path + ": kwargs: vocab_size, d_model and "
                              "max_block_size must be positive");
    return std::nullopt;
  }
  auto it = cast<RankedTensorType>(idx.getType());
  if (!it.getElementType().isInteger(64) || it.getRank() != 2) {
    mb.error(mb.config.path + ": inputs.idx: expected int64 token ids [B, T]");
    return std::nullopt;
  }
  int64_t T = mb.largestSize(idx, 1);
  if (mb.decoding() && T != 1) {
    mb.error(mb.config.path + ": inputs.idx: a decode step takes one token");
    return std::nullopt;
  }
  if (T > maxLen) {
    mb.error(mb.config.path + ": inputs.idx: sequence length " + Twine(T) +
             " exceeds kwargs.max_block_size " + Twine(maxLen));
    return std::nullopt;
  }
  if (posEnc != "pos_emb" && posEnc != "RoPE") {
    mb.error(mb.config.path + ": kwargs.pos_enc_type: '" + posEnc +
             "' (pos_emb or RoPE)");
    return std::nullopt;
  }
  mb.inputRange("idx", 0, vocab - 1);
  if (mb.decoding())
    mb.startDecoding(maxLen);
  // The head is the embedding (tied): either key may hold it.
  mb.aliasWeight("layers.final_out.weight", "layers.token_embedder.weight");
  LMStream s;
  s.x = embedTokens(mb, idx,
                    mb.weight("layers.token_embedder.weight", {vocab, d}));
  // Rows [first, first + T) of a [maxLen, ·] table: the positions of this
  // pass (0.., or the decode step's position).
  auto rows = [&](Value table) -> Value {
    if (!table)
      return {};
    int64_t w = cast<RankedTensorType>(table.getType()).getDimSize(1);
    OpFoldResult first = mb.decoding() ? OpFoldResult(mb.decodePosition())
                                       : OpFoldResult(mb.b.getIndexAttr(0));
    return tensor::ExtractSliceOp::create(
        mb.b, mb.loc,
        RankedTensorType::get({it.getDimSize(1), w}, mb.b.getF32Type()), table,
        ArrayRef<OpFoldResult>{first, mb.b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{mb.dimOf(idx, 1), mb.b.getIndexAttr(w)},
        ArrayRef<OpFoldResult>{mb.b.getIndexAttr(1), mb.b.getIndexAttr(1)});
  };
  if (posEnc == "pos_emb") {
    s.x = addPositions(
        mb, s.x,
        rows(mb.weight("layers.positional_embedder.weight", {maxLen, d})));
  } else {
    auto [cos, sin] = ropeTables(mb, ropeDim, maxLen);
    s.cos = rows(cos);
    s.sin = rows(sin);
  }
  return s;
}

void buildTransformerLM(ModelBuilder &mb) {
  int64_t vocab = mb.intArg("vocab_size");
  int64_t layers = mb.layersArg("n_layers");
  int64_t heads = mb.intArg("n_heads");
  int64_t maxLen = mb.intArg("max_block_size");
  std::string posEnc = mb.stringArg("pos_enc_type", "pos_emb");
  mb.boolArg("use_flash_attention", true); // same math either way
  BlockCommon c = readBlockCommon(mb, true);
  c.causal = true; // the LM's blocks are always causal
  AttentionParams p;
  mb.withKwargs("block_kwargs", "EncoderBlock", [&] {
    // EncoderBlock forwards attn_kwargs to Attention; add_bias_out is the
    // block's bias, kv heads and kv biases are fixed.
    mb.withKwargs("attn_kwargs", "Attention",
                  [&] { p = makeAttentionParams(mb, c.dModel, heads, heads); });
  });
  p.biasOut = c.bias;
  p.kvHeads = heads;
  p.biasKV = false;
  if (mb.failed() || heads == 0)
    return;
  std::optional<LMStream> s =
      lmInput(mb, vocab, c.dModel, maxLen, posEnc, c.dModel / heads);
  if (!s)
    return;
  Value x = mb.stack("block", layers, s->x, [&](int64_t l, Value x) {
    return encoderBlock(mb, c, p, "layers.blocks." + std::to_string(l) + ".", x,
                        s->cos, s->sin);
  });
  x = blockNorm(mb, c, x, "layers.norm");
  mb.output("logits", mb.linear(x, "layers.token_embedder", vocab, false));
}

void buildDualAttnTransformerLM(ModelBuilder &mb) {
  int64_t vocab = mb.intArg("vocab_size");
  int64_t layers = mb.layersArg("n_layers");
  int64_t maxLen = mb.intArg("max_block_size");
  std::string posEnc = mb.stringArg("pos_enc_type", "pos_emb");
  std::string retrieval =
      mb.stringArg("symbol_retrieval", "symbolic_attention");
  mb.boolArg("bias", true); // stored but not forwarded (spec §7.1)
  BlockCommon c = readBlockCommon(mb, true);
  c.causal = true;
  c.bias = true; // the FFN always has biases
  bool shared = true, tieLibrary = false;
  mb.withKwargs("symbol_retriever_config", "symbol_retriever_config", [&] {
    shared = mb.boolArg("shared_symbol_retriever", true);
    tieLibrary = mb.boolArg("weight_tie_symbol_library", false);
  });
  int64_t heads = mb.intArg("n_heads_sa") + mb.intArg("n_heads_ra");
  if (mb.failed())
    return;
  if (heads == 0) {
    mb.error(mb.config.path + ": kwargs.n_heads_sa: no attention heads");
    return;
  }
  // The reference's LM does not accept rel_sym_attn (spec §7.1).
  if (!checkSymbolRetrieval(mb, retrieval, false))
    return;
  std::optional<LMStream> s =
      lmInput(mb, vocab, c.dModel, maxLen, posEnc, c.dModel / heads);
  if (!s)
    return;
  // Layer l: retrieve symbols from the stream entering it, then the block.
  auto dualAttnLayer = [&](int64_t l, Value x) -> Value {
    // A shared retriever appears under every layer's key (aliases of 0);
    // otherwise each layer has its own, optionally with a tied library.
    std::string own = "layers.symbol_retrievers." + std::to_string(l) + ".";
    std::string first = "layers.symbol_retrievers.0.";
    std::string prefix = shared ? first : own;
    Value symbols;
    mb.withKwargs("symbol_retrieval_kwargs", retrieval, [&] {
      if (retrieval == "symbolic_attention") {
        if (l > 0 && shared)
          for (const char *w : {"template_features", "symbol_library",
                                "q_proj.weight", "q_proj.bias"})
            mb.aliasWeight(own + w, first + w);
        if (l > 0 && !shared && tieLibrary)
          mb.aliasWeight(own + "symbol_library", first + "symbol_library");
        symbols = emitSymbolicAttentionFromKwargs(mb, prefix, x);
      } else if (retrieval == "positional_symbols") {
        if (l > 0 && (shared || tieLibrary))
          mb.aliasWeight(own + "symbol_library.weight",
                         first + "symbol_library.weight");
        symbols =
            emitPositionalSymbols(mb, shared || tieLibrary ? first : own, x);
      } else {
        if (l > 0 && shared)
          mb.aliasWeight(own + "rel_pos_enc.rel_pos_embeddings",
                         first + "rel_pos_enc.rel_pos_embeddings");
        symbols = emitRelativeSymbolTable(mb, prefix);
      }
    });
    return dualEncoderBlock(mb, c, "layers.blocks." + std::to_string(l) + ".",
                            x, symbols, s->cos, s->sin);
  };
  Value x = mb.stack("layer", layers, s->x, dualAttnLayer);
  x = blockNorm(mb, c, x, "layers.norm");
  mb.output("logits", mb.linear(x, "layers.token_embedder", vocab, false));
}

} // namespace dat
