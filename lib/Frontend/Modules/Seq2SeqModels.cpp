//===- Seq2SeqModels.cpp - frontends of the seq2seq models ----------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Seq2SeqTransformer and Seq2SeqDualAttnTransformer (spec §7.4): source and
// target embedders (token tables or a Linear for vectors), sinusoidal
// positions from the state_dict's `pe` buffers with the embedding scaled by
// sqrt(d_model), an encoder stack, a decoder stack reading the encoder's
// output, no final norm, and `final_out` (with bias). The DAT variant shares
// one symbol retriever, applied to each stack's own stream before every
// block, and builds n_layers_enc decoder blocks (the reference's quirk).
//
//===----------------------------------------------------------------------===//

#include "Modules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace llvm;
using namespace mlir;

namespace dat {

namespace {
struct Seq2SeqCommon {
  int64_t dModel = 0, outDim = 0, layersEnc = 0, layersDec = 0;
  int64_t inBlock = 0, outBlock = 0;
};
} // namespace

/// The embedder of `spec` ({"type": "token", "vocab_size": V} or {"type":
/// "vector", "dim": k}) applied to input `name`, scaled by sqrt(d), plus
/// the sinusoidal table `posName` [maxLen, d].
static Value embedSequence(ModelBuilder &mb, StringRef specKey,
                           StringRef inputName, StringRef embedder,
                           StringRef posName, int64_t d, int64_t maxLen) {
  std::string type;
  int64_t size = 0;
  mb.withKwargs(specKey, specKey, [&] {
    type = mb.stringArg("type", "token");
    if (type == "token")
      size = mb.intArg("vocab_size");
    else if (type == "vector")
      size = mb.intArg("dim");
    else
      mb.error(mb.config.path + ": kwargs." + specKey + ".type: '" + type +
               "' (token or vector)");
    if (!mb.failed() && size < 1)
      mb.error(mb.config.path + ": kwargs." + specKey + ": " +
               (type == "token" ? "vocab_size" : "dim") + " must be positive");
  });
  Value in = mb.input(inputName);
  if (mb.failed() || !in)
    return {};
  auto it = cast<RankedTensorType>(in.getType());
  Value x;
  if (type == "token") {
    if (!it.getElementType().isInteger(64) || it.getRank() != 2) {
      mb.error(mb.config.path + ": inputs." + inputName +
               ": expected int64 token ids [B, L] (" + specKey +
               " is a token spec)");
      return {};
    }
    mb.inputRange(inputName, 0, size - 1);
    x = embedTokens(mb, in, mb.weight((embedder + ".weight").str(), {size, d}));
  } else {
    if (!it.getElementType().isF32() || it.getRank() != 3 ||
        it.getDimSize(2) != size) {
      mb.error(mb.config.path + ": inputs." + inputName +
               ": expected float32 [B, L, " + Twine(size) + "] (" + specKey +
               " is a vector spec)");
      return {};
    }
    x = mb.linear(in, embedder, d, true);
  }
  int64_t L = mb.largestSize(in, 1);
  if (L > maxLen) {
    mb.error(mb.config.path + ": inputs." + inputName + ": sequence length " +
             Twine(L) + " exceeds the block size " + Twine(maxLen));
    return {};
  }
  // SinusoidalPositionalEncoding(scale=True): sqrt(d)·x + pe[:L].
  Value pe = mb.weight(posName, {maxLen, d});
  if (mb.failed())
    return {};
  Value rows = tensor::ExtractSliceOp::create(
      mb.b, mb.loc,
      RankedTensorType::get({it.getDimSize(1), d}, mb.b.getF32Type()), pe,
      ArrayRef<OpFoldResult>{mb.b.getIndexAttr(0), mb.b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{mb.dimOf(in, 1), mb.b.getIndexAttr(d)},
      ArrayRef<OpFoldResult>{mb.b.getIndexAttr(1), mb.b.getIndexAttr(1)});
  float scale = std::sqrt(static_cast<float>(d));
  return addPositions(mb, x, rows, scale);
}

/// "layers.<stack>_blocks.<l>.", the prefix of a block's weights.
static std::string blockName(StringRef stack, int64_t l) {
  return ("layers." + stack + "_blocks." + Twine(l) + ".").str();
}

/// The source and target streams: inputs x and y, embedded.
static std::pair<Value, Value> embedStreams(ModelBuilder &mb,
                                            const Seq2SeqCommon &s) {
  Value x = embedSequence(mb, "input_spec", "x", "layers.source_embedder",
                          "layers.source_pos_embedder.pe", s.dModel, s.inBlock);
  Value y =
      embedSequence(mb, "output_spec", "y", "layers.target_embedder",
                    "layers.target_pos_embedder.pe", s.dModel, s.outBlock);
  return {x, y};
}

static std::optional<Seq2SeqCommon> readSeq2SeqCommon(ModelBuilder &mb) {
  Seq2SeqCommon s;
  s.dModel = mb.intArg("d_model");
  s.outDim = mb.intArg("out_dim");
  s.layersEnc = mb.layersArg("n_layers_enc");
  s.layersDec = mb.layersArg("n_layers_dec");
  s.inBlock = mb.intArg("in_block_size");
  s.outBlock = mb.intArg("out_block_size");
  mb.boolArg("tie_weights", true);  // ties nothing (spec §7.4 quirk a)
  mb.intArg("loss_ignore_idx", -1); // training only
  if (mb.failed())
    return std::nullopt;
  if (s.dModel < 1 || s.outDim < 1 || s.inBlock < 1 || s.outBlock < 1) {
    mb.error(mb.config.path + ": kwargs: d_model, out_dim and the block "
                              "sizes must be positive");
    return std::nullopt;
  }
  // `tie_weights` registers final_out under the target embedder too.
  mb.aliasWeight("layers.target_embedder.weights.weight",
                 "layers.final_out.weight");
  mb.aliasWeight("layers.target_embedder.weights.bias",
                 "layers.final_out.bias");
  return s;
}

/// final_out on the decoder's output: every position, or (an output of one
/// position) the last one, as the reference without targets.
static void seq2seqHead(ModelBuilder &mb, const Seq2SeqCommon &s, Value y) {
  if (mb.failed() || !y)
    return;
  auto yt = cast<RankedTensorType>(y.getType());
  const TensorSpec *want = nullptr;
  for (const TensorSpec &out : mb.config.outputs)
    if (out.name == "logits")
      want = &out;
  // (The target length may be dynamic: the last position of the call's.)
  if (want && want->shape.size() == 3 && want->shape[1] == 1 &&
      yt.getDimSize(1) != 1) {
    Value last = arith::SubIOp::create(
        mb.b, mb.loc,
        getValueOrCreateConstantIndexOp(mb.b, mb.loc, mb.dimOf(y, 1)),
        arith::ConstantIndexOp::create(mb.b, mb.loc, 1));
    OpFoldResult one = mb.b.getIndexAttr(1), zero = mb.b.getIndexAttr(0);
    y = tensor::ExtractSliceOp::create(
        mb.b, mb.loc,
        RankedTensorType::get({yt.getDimSize(0), 1, s.dModel},
                              yt.getElementType()),
        y, ArrayRef<OpFoldResult>{zero, last, zero},
        ArrayRef<OpFoldResult>{mb.dimOf(y, 0), one,
                               mb.b.getIndexAttr(s.dModel)},
        ArrayRef<OpFoldResult>{one, one, one});
  }
  mb.output("logits", mb.linear(y, "layers.final_out", s.outDim, true));
}

void buildSeq2SeqTransformer(ModelBuilder &mb) {
  std::optional<Seq2SeqCommon> s = readSeq2SeqCommon(mb);
  if (!s)
    return;
  EncoderParams enc;
  DecoderParams dec;
  mb.withKwargs("encoder_kwargs", "EncoderBlock",
                [&] { enc = readEncoderParams(mb, s->dModel); });
  mb.withKwargs("decoder_kwargs", "DecoderBlock",
                [&] { dec = readDecoderParams(mb, s->dModel); });
  if (mb.failed())
    return;
  auto [x, y] = embedStreams(mb, *s);
  Value context = mb.stack("encoder", s->layersEnc, x, [&](int64_t l, Value x) {
    return encoderBlock(mb, enc.c, enc.attn, blockName("encoder", l), x, {},
                        {});
  });
  y = mb.stack("decoder", s->layersDec, y, [&](int64_t l, Value y) {
    return decoderBlock(mb, dec, blockName("decoder", l), y, context);
  });
  seq2seqHead(mb, *s, y);
}

void buildSeq2SeqDualAttnTransformer(ModelBuilder &mb) {
  std::optional<Seq2SeqCommon> s = readSeq2SeqCommon(mb);
  if (!s)
    return;
  std::string retrieval =
      mb.stringArg("symbol_retrieval", "symbolic_attention");
  if (!checkSymbolRetrieval(mb, retrieval, true))
    return;
  auto [x, y] = embedStreams(mb, *s);
  // Each layer reads its block's kwargs (and the retriever's) in one scope,
  // as the dual attention reads n_heads_sa, sa_kwargs, ... from it.
  auto symbolsOf = [&](Value stream) {
    Value symbols;
    mb.withKwargs("symbol_retrieval_kwargs", retrieval, [&] {
      symbols = emitSymbolRetriever(mb, retrieval, "layers.symbol_retriever.",
                                    stream);
    });
    return symbols;
  };
  Value context = mb.stack("encoder", s->layersEnc, x, [&](int64_t l, Value x) {
    Value out, symbols = symbolsOf(x);
    mb.withKwargs("encoder_kwargs", "DualAttnEncoderBlock", [&] {
      BlockCommon c = readBlockCommon(mb, false, s->dModel);
      out =
          dualEncoderBlock(mb, c, blockName("encoder", l), x, symbols, {}, {});
    });
    return out;
  });
  // The reference builds n_layers_enc decoder blocks (spec §7.4 quirk b).
  y = mb.stack("decoder", s->layersEnc, y, [&](int64_t l, Value y) {
    Value out, symbols = symbolsOf(y);
    mb.withKwargs("decoder_kwargs", "DualAttnDecoderBlock", [&] {
      DualDecoderParams d = readDualDecoderParams(mb, s->dModel);
      out =
          dualDecoderBlock(mb, d, blockName("decoder", l), y, context, symbols);
    });
    return out;
  });
  seq2seqHead(mb, *s, y);
}

} // namespace dat
