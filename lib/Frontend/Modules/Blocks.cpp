//===- Blocks.cpp - frontends of the transformer blocks -------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// EncoderBlock, DecoderBlock, DualAttnEncoderBlock, DualAttnDecoderBlock
// (spec §6): pre-norm `x ← x + Sub(norm(x))` or post-norm
// `x ← norm(x + Sub(x))` around each sublayer.
//
//===----------------------------------------------------------------------===//

#include "Modules.h"

using namespace llvm;
using namespace mlir;

namespace dat {

BlockCommon readBlockCommon(ModelBuilder &mb, bool causalDefault,
                            std::optional<int64_t> dModel) {
  BlockCommon c;
  c.dModel = dModel ? *dModel : mb.intArg("d_model");
  c.dff = mb.optIntArg("dff");
  mb.floatArg("dropout_rate", 0.0); // the identity at inference
  c.activation = mb.stringArg("activation", "relu");
  c.normFirst = mb.boolArg("norm_first", false);
  c.normType = mb.stringArg("norm_type", "layernorm");
  c.bias = mb.boolArg("bias", true);
  c.causal = mb.boolArg("causal", causalDefault);
  if (!llvm::is_contained({"layernorm", "rmsnorm", "none"}, c.normType))
    mb.error(mb.config.path + ": kwargs.norm_type: unknown '" + c.normType +
             "' (layernorm, rmsnorm, none)");
  if (!llvm::is_contained(
          {"relu", "gelu", "swiglu", "silu", "sigmoid", "tanh", "identity"},
          c.activation))
    mb.error(mb.config.path + ": kwargs.activation: unknown '" + c.activation +
             "'");
  return c;
}

Value blockNorm(ModelBuilder &mb, const BlockCommon &c, Value x,
                StringRef name) {
  if (c.normType == "none")
    return x;
  if (c.normType == "rmsnorm")
    return mb.rmsNorm(x, name, 1e-5);
  return mb.layerNorm(x, name, 1e-5);
}

namespace {
/// FeedForwardBlock (spec §1.3) under `<prefix>ff_block.`.
Value feedForward(ModelBuilder &mb, const BlockCommon &c, Value x,
                  StringRef prefix = "") {
  bool swiglu = c.activation == "swiglu";
  // dff=None: int(2/3 · 4 · d) for swiglu (left to right, in double), else 4d.
  int64_t dff = c.dff    ? *c.dff
                : swiglu ? static_cast<int64_t>(2.0 / 3.0 * 4.0 * c.dModel)
                         : 4 * c.dModel;
  std::string ff = (prefix + "ff_block.").str();
  Value h = mb.linear(x, ff + "linear1", dff, c.bias);
  if (swiglu)
    h = mb.mul(mb.activation(h, "silu"),
               mb.linear(x, ff + "linear3", dff, c.bias));
  else
    h = mb.activation(h, c.activation);
  return mb.linear(h, ff + "linear2", c.dModel, c.bias);
}

/// One residual sublayer with the block's norm placement.
Value residual(ModelBuilder &mb, const BlockCommon &c, Value x,
               StringRef normName, llvm::function_ref<Value(Value)> sublayer) {
  if (mb.failed())
    return {};
  if (c.normFirst)
    return mb.add(x, sublayer(blockNorm(mb, c, x, normName)));
  return blockNorm(mb, c, mb.add(x, sublayer(x)), normName);
}

/// Attention(d, heads, **kwargs) with some arguments fixed by the block;
/// those may not appear in `kwargsKey` too (the reference would raise).
AttentionParams blockAttention(ModelBuilder &mb, StringRef kwargsKey, int64_t d,
                               int64_t heads, std::optional<bool> biasOut,
                               bool fixesKvHeads) {
  AttentionParams p;
  mb.withKwargs(kwargsKey, "Attention",
                [&] { p = makeAttentionParams(mb, d, heads, heads); });
  if (biasOut)
    p.biasOut = *biasOut;
  if (fixesKvHeads) {
    p.kvHeads = heads;
    p.biasKV = false;
  }
  return p;
}
} // namespace

/// The decoders' tail: cross-attention to `context` (norm2), then the FFN
/// (norm3).
static Value crossAttentionAndFeedForward(ModelBuilder &mb,
                                          const BlockCommon &c,
                                          const AttentionParams &cross,
                                          StringRef prefix, Value x,
                                          Value context) {
  std::string pre = prefix.str();
  x = residual(mb, c, x, pre + "norm2", [&](Value h) {
    return emitAttention(mb, cross, pre + "cross_attn.", h, context, context,
                         {}, {}, false, false)
        .out;
  });
  return residual(mb, c, x, pre + "norm3",
                  [&](Value h) { return feedForward(mb, c, h, pre); });
}

Value encoderBlock(ModelBuilder &mb, const BlockCommon &c,
                   const AttentionParams &p, StringRef prefix, Value x,
                   Value cos, Value sin) {
  std::string pre = prefix.str();
  x = residual(mb, c, x, pre + "norm1", [&](Value h) {
    return emitAttention(mb, p, pre + "self_attn.", h, h, h, cos, sin, c.causal,
                         false)
        .out;
  });
  return residual(mb, c, x, pre + "norm2",
                  [&](Value h) { return feedForward(mb, c, h, pre); });
}

Value dualEncoderBlock(ModelBuilder &mb, const BlockCommon &c, StringRef prefix,
                       Value x, Value symbols, Value cos, Value sin) {
  std::string pre = prefix.str();
  x = residual(mb, c, x, pre + "norm1", [&](Value h) {
    return emitDualAttention(mb, pre + "dual_attn.", h, symbols, cos, sin,
                             c.causal, false, "dropout_rate")
        .out;
  });
  return residual(mb, c, x, pre + "norm2",
                  [&](Value h) { return feedForward(mb, c, h, pre); });
}

EncoderParams readEncoderParams(ModelBuilder &mb,
                                std::optional<int64_t> dModel) {
  EncoderParams e;
  e.c = readBlockCommon(mb, false, dModel);
  int64_t heads = mb.intArg("n_heads");
  if (!mb.failed())
    e.attn =
        blockAttention(mb, "attn_kwargs", e.c.dModel, heads, e.c.bias, true);
  return e;
}

DecoderParams readDecoderParams(ModelBuilder &mb,
                                std::optional<int64_t> dModel) {
  DecoderParams d;
  d.c = readBlockCommon(mb, false, dModel);
  int64_t heads = mb.intArg("n_heads");
  mb.intArg("n_heads_cross"); // ignored by the reference (spec §6.1)
  if (mb.failed())
    return d;
  d.self = makeAttentionParams(mb, d.c.dModel, heads, heads);
  d.self.biasOut = d.c.bias;
  d.cross = d.self; // built with n_heads, not n_heads_cross
  return d;
}

Value decoderBlock(ModelBuilder &mb, const DecoderParams &d, StringRef prefix,
                   Value x, Value context) {
  std::string pre = prefix.str();
  x = residual(mb, d.c, x, pre + "norm1", [&](Value h) {
    return emitAttention(mb, d.self, pre + "self_attn.", h, h, h, {}, {},
                         d.c.causal, false)
        .out;
  });
  return crossAttentionAndFeedForward(mb, d.c, d.cross, prefix, x, context);
}

DualDecoderParams readDualDecoderParams(ModelBuilder &mb,
                                        std::optional<int64_t> dModel) {
  DualDecoderParams d;
  d.c = readBlockCommon(mb, true, dModel);
  int64_t crossHeads = mb.intArg("n_heads_cross");
  if (!mb.failed())
    d.cross = blockAttention(mb, "cross_kwargs", d.c.dModel, crossHeads,
                             std::nullopt, false);
  return d;
}

Value dualDecoderBlock(ModelBuilder &mb, const DualDecoderParams &d,
                       StringRef prefix, Value x, Value context,
                       Value symbols) {
  std::string pre = prefix.str();
  // The dual self-attention of the decoder takes no RoPE (spec §6.2).
  x = residual(mb, d.c, x, pre + "norm1", [&](Value h) {
    return emitDualAttention(mb, pre + "dual_attn.", h, symbols, {}, {},
                             d.c.causal, false, "dropout_rate")
        .out;
  });
  return crossAttentionAndFeedForward(mb, d.c, d.cross, prefix, x, context);
}

void buildEncoderBlock(ModelBuilder &mb) {
  EncoderParams e = readEncoderParams(mb);
  if (mb.failed())
    return;
  mb.boolCall("need_weights", false);
  auto [cos, sin] = ropeInputs(mb);
  mb.output("y",
            encoderBlock(mb, e.c, e.attn, "",
                         mb.streamInput("x", e.c.dModel, "d_model"), cos, sin));
}

void buildDecoderBlock(ModelBuilder &mb) {
  DecoderParams d = readDecoderParams(mb);
  if (mb.failed())
    return;
  mb.output("y",
            decoderBlock(mb, d, "", mb.streamInput("x", d.c.dModel, "d_model"),
                         mb.streamInput("context", d.c.dModel, "d_model")));
}

void buildDualAttnEncoderBlock(ModelBuilder &mb) {
  BlockCommon c = readBlockCommon(mb, false);
  Value x = mb.streamInput("x", c.dModel, "d_model"),
        symbols = mb.input("symbols", 3);
  auto [cos, sin] = ropeInputs(mb);
  mb.output("y", dualEncoderBlock(mb, c, "", x, symbols, cos, sin));
}

void buildDualAttnDecoderBlock(ModelBuilder &mb) {
  DualDecoderParams d = readDualDecoderParams(mb);
  Value x = mb.streamInput("x", d.c.dModel, "d_model"),
        context = mb.streamInput("context", d.c.dModel, "d_model"),
        symbols = mb.input("symbols", 3);
  if (mb.failed())
    return;
  mb.output("y", dualDecoderBlock(mb, d, "", x, context, symbols));
}

} // namespace dat
