//===- ApeModels.cpp - APE's evaluation models, whole ---------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// `TreeAlgebraic` (spec §9.4-9.5, ape's eval/models/tree/algebraic.py): a
// post-norm encoder-decoder over tree-positioned tokens. One Branching
// positional module shared by every layer; the maps of the encoder's and
// the decoder's nodes computed from their positions at run time; every
// attention (encoder self, decoder self, decoder→encoder cross) scales its
// logits by 0.98^steps, the paths of both sides padded together; the
// embedding is scaled by sqrt(dim) and tied to the output.
//
//===----------------------------------------------------------------------===//

#include "ApePositions.h"
#include "Modules.h"

#include "dat/Dialect/Dat/IR/DatOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace llvm;
using namespace mlir;

namespace dat {

namespace {
/// What one APE attention reads besides its inputs.
struct ApeAttention {
  Value qMaps, kMaps; // [B, L, 1, d, d]
  Value scoreScale;   // [B, Lq, Lk]
  Value mask;         // [Lq, Lk] i1, or null
  Value keyMask;      // [B, Lk] i1, or null
  bool causal = false;
};
} // namespace

/// SelfMHA (`prefix`linear: q | k | v) or, with `cross`, CrossMHA
/// (`prefix`lin_q and lin_kv: k | v) from `xq` to `xkv`, head-minor heads,
/// the maps on queries and keys, masked logits -1e10 (spec §9.3-9.4).
static Value apeMHA(ModelBuilder &mb, StringRef prefix, bool cross, Value xq,
                    Value xkv, int64_t heads, int64_t dim,
                    const ApeAttention &in) {
  if (mb.failed() || !xq || !xkv)
    return {};
  auto name = [&](StringRef n) { return (prefix + n).str(); };
  Value q, k, v;
  if (cross) {
    q = mb.linear(xq, name("lin_q"), dim, true);
    Value kv = mb.linear(xkv, name("lin_kv"), 2 * dim, true);
    if (mb.failed())
      return {};
    k = sliceLast(mb, kv, 0, dim);
    v = sliceLast(mb, kv, dim, dim);
  } else {
    Value lin = mb.linear(xq, name("linear"), 3 * dim, true);
    if (mb.failed())
      return {};
    q = sliceLast(mb, lin, 0, dim);
    k = sliceLast(mb, lin, dim, dim);
    v = sliceLast(mb, lin, 2 * dim, dim);
  }
  auto map = [&](Value x, Value maps) -> Value {
    x = headMinorSplit(mb, x, heads);
    return mlir::dat::OrthogonalMapOp::create(
        mb.b, mb.loc, x.getType(), x, maps,
        mb.emptyLike(cast<RankedTensorType>(x.getType()).getShape()));
  };
  q = map(q, in.qMaps);
  k = map(k, in.kMaps);
  v = headMinorSplit(mb, v, heads);
  auto qt = cast<RankedTensorType>(q.getType());
  int64_t dh = dim / heads;
  Value init = mb.emptyLike(qt.getShape());
  Value o = mlir::dat::AttentionOp::create(
      mb.b, mb.loc, init.getType(), q, k, v, in.mask, in.keyMask, in.scoreScale,
      /*query_offset=*/Value(), init,
      mb.b.getF32FloatAttr(1.0f / std::sqrt(static_cast<float>(dh))),
      mb.b.getF32FloatAttr(-1e10f), in.causal);
  return mb.linear(headMinorMerge(mb, o), name("out"), dim, true);
}

/// The FFN of ape's layers: Linear → ReLU → Linear, then the post-norm.
static Value apeFFN(ModelBuilder &mb, const std::string &p, Value x,
                    int64_t dim) {
  Value h = mb.activation(mb.linear(x, p + "ffn.0", 4 * dim, true), "relu");
  return mb.layerNorm(mb.add(x, mb.linear(h, p + "ffn.2", dim, true)),
                      p + "ffn_ln", 1e-5);
}

/// InvertibleEmbedding.embed: weight[max(id, 0)] · sqrt(dim).
static Value embedScaled(ModelBuilder &mb, Value ids, Value table,
                         int64_t dim) {
  auto it = cast<RankedTensorType>(ids.getType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(2, mb.b.getContext());
  Value clamped =
      linalg::GenericOp::create(
          mb.b, mb.loc, it, ValueRange{ids},
          ValueRange{tensor::EmptyOp::create(mb.b, mb.loc, it.getShape(),
                                             it.getElementType())},
          ArrayRef<AffineMap>{id, id},
          SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
          [](OpBuilder &b, Location l, ValueRange args) {
            Value zero = arith::ConstantIntOp::create(b, l, 0, 64);
            linalg::YieldOp::create(
                b, l, arith::MaxSIOp::create(b, l, args[0], zero).getResult());
          })
          .getResult(0);
  Value e = embedTokens(mb, clamped, table);
  auto et = cast<RankedTensorType>(e.getType());
  AffineMap id3 = AffineMap::getMultiDimIdentityMap(3, mb.b.getContext());
  float scale = std::sqrt(static_cast<float>(dim));
  return linalg::GenericOp::create(
             mb.b, mb.loc, et, ValueRange{e},
             ValueRange{mb.emptyLike(et.getShape())},
             ArrayRef<AffineMap>{id3, id3},
             SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
             [&](OpBuilder &b, Location l, ValueRange args) {
               Value s = arith::ConstantFloatOp::create(b, l, b.getF32Type(),
                                                        APFloat(scale));
               linalg::YieldOp::create(
                   b, l, arith::MulFOp::create(b, l, args[0], s).getResult());
             })
      .getResult(0);
}

void buildApeTreeAlgebraic(ModelBuilder &mb) {
  int64_t vocab = mb.intArg("vocab_size"), dim = mb.intArg("dim"),
          heads = mb.intArg("num_heads"),
          branching = mb.intArg("branching_factor");
  SmallVector<int64_t> layers = mb.intListArg("num_layers", 2);
  if (mb.failed())
    return;
  if (heads < 1 || dim % heads || dim / heads > 4096 || vocab < 1 ||
      branching < 1 || branching > 1024 || layers[0] > mb.kMaxLayers ||
      layers[1] > mb.kMaxLayers) {
    mb.error(mb.config.path +
             ": kwargs: expected num_heads dividing dim "
             "(at most 4096 per head), vocab_size >= 1, "
             "branching_factor in [1, 1024] and at most " +
             Twine(ModelBuilder::kMaxLayers) + " layers each");
    return;
  }
  int64_t d = dim / heads;
  double decay = 0.98; // the model's mediator base
  if (const json::Value *dv = mb.config.call.get("distance_decay")) {
    std::optional<double> v = dv->getAsNumber();
    if (!v || !(*v > 0 && *v <= 1)) {
      mb.error(mb.config.path + ": call.distance_decay: expected a number in "
                                "(0, 1] (the model's 0.98)");
      return;
    }
    decay = *v;
  }

  Value encIds = mb.input("encoder_ids", 2, "int64");
  Value decIds = mb.input("decoder_ids", 2, "int64");
  Value encPos = mb.input("encoder_pos", 2, "int64");
  Value decPos = mb.input("decoder_pos", 2, "int64");
  if (mb.failed())
    return;
  auto et = cast<RankedTensorType>(encIds.getType());
  auto dt = cast<RankedTensorType>(decIds.getType());
  int64_t B = et.getDimSize(0), Le = et.getDimSize(1), Ld = dt.getDimSize(1);
  if (dt.getDimSize(0) != B ||
      cast<RankedTensorType>(encPos.getType()).getShape() != et.getShape() ||
      cast<RankedTensorType>(decPos.getType()).getShape() != dt.getShape()) {
    mb.error(mb.config.path + ": inputs: encoder_ids/encoder_pos [B, Le] and "
                              "decoder_ids/decoder_pos [B, Ld], one batch");
    return;
  }
  int64_t lowest = std::numeric_limits<int64_t>::min();
  // Ids below 0 (padding) embed as id 0, like the reference's clamp.
  mb.inputRange("encoder_ids", lowest, vocab - 1);
  mb.inputRange("decoder_ids", lowest, vocab - 1);
  mb.inputRange("encoder_pos", lowest, maxTreeNode(branching));
  mb.inputRange("decoder_pos", lowest, maxTreeNode(branching));
  Value encMask = mb.boolInput("encoder_mask", {B, Le});
  Value crossMask = mb.boolInput("cross_mask", {B, Le});
  // The decoder's mask: one [Ld, Ld] for the batch, or with
  // call.causal_decoder the causal mask itself (no N×N input).
  Value decMask;
  bool causalDecoder = mb.boolCall("causal_decoder", false);
  if (causalDecoder && mb.config.findInput("decoder_mask")) {
    mb.error(mb.config.path + ": call.causal_decoder: the config also "
                              "declares inputs.decoder_mask; give one of them");
  } else if (causalDecoder) {
    // dat.attention's own causal masking.
  } else if (const TensorSpec *spec = mb.config.findInput("decoder_mask")) {
    if (spec->shape.size() == 3 && spec->shape[0] == 1) {
      Value m = mb.boolInput("decoder_mask", {1, Ld, Ld});
      if (m)
        decMask = tensor::CollapseShapeOp::create(
            mb.b, mb.loc, RankedTensorType::get({Ld, Ld}, mb.b.getI1Type()), m,
            ArrayRef<ReassociationIndices>{{0, 1}, {2}});
    } else if (spec->shape.size() == 2) {
      decMask = mb.boolInput("decoder_mask", {Ld, Ld});
    } else {
      mb.error(mb.config.path + ": inputs.decoder_mask: expected int64 [" +
               Twine(Ld) + ", " + Twine(Ld) + "] or [1, " + Twine(Ld) + ", " +
               Twine(Ld) + "] (one mask for the batch; nonzero = may attend)");
    }
  } else {
    mb.error(mb.config.path + ": inputs.decoder_mask: TreeAlgebraic needs this "
                              "input (or call.causal_decoder: true), but the "
                              "config does not declare it");
  }
  if (mb.failed())
    return;

  Value table = mb.weight("embedding.weight", {vocab, dim});
  Value x = embedScaled(mb, encIds, table, dim);
  Value y = embedScaled(mb, decIds, table, dim);
  // In a function: the loop's second buffer is freed when it returns.
  auto maps = [&](Value pos, StringRef name) {
    return mb.outlined(
        name, [&] { return treeMapsAtRunTime(mb, pos, branching, heads, d); });
  };
  Value encMaps = maps(encPos, "encoder_tree_maps"),
        decMaps = maps(decPos, "decoder_tree_maps");
  if (mb.failed())
    return;
  SmallVector<Value> every = {encPos, decPos};
  ApeDecay encDecay =
      ApeDecay::makeTree(mb, decay, encPos, encPos, every, branching);
  ApeDecay decDecay =
      ApeDecay::makeTree(mb, decay, decPos, decPos, every, branching);
  ApeDecay crossDecay =
      ApeDecay::makeTree(mb, decay, decPos, encPos, every, branching);

  // Layers as functions (identical ones shared): each frees its own
  // temporaries when it returns.
  x = mb.stack("encoder_layer", layers[0], x, [&](int64_t l, Value x) {
    std::string p = "encoder.encoder_layers." + std::to_string(l) + ".";
    Value a = apeMHA(mb, p + "mha.", false, x, x, heads, dim,
                     {encMaps, encMaps, encDecay.decayAt(mb), {}, encMask});
    x = mb.layerNorm(mb.add(x, a), p + "mha_ln", 1e-5);
    return apeFFN(mb, p, x, dim);
  });
  y = mb.stack("decoder_layer", layers[1], y, [&](int64_t l, Value y) {
    std::string p = "decoder.decoder_layers." + std::to_string(l) + ".";
    Value a = apeMHA(
        mb, p + "self_mha.", false, y, y, heads, dim,
        {decMaps, decMaps, decDecay.decayAt(mb), decMask, {}, causalDecoder});
    y = mb.layerNorm(mb.add(y, a), p + "self_mha_ln", 1e-5);
    Value c = apeMHA(mb, p + "cross_mha.", true, y, x, heads, dim,
                     {decMaps, encMaps, crossDecay.decayAt(mb), {}, crossMask});
    y = mb.layerNorm(mb.add(y, c), p + "cross_mha_ln", 1e-5);
    return apeFFN(mb, p, y, dim);
  });
  // The Branching module's state: its identity and primitives (the maps'
  // inputs) are read by treeMapsAtRunTime; the output is tied to the
  // embedding.
  mb.output("logits", mb.linear(y, "embedding", vocab, false));
}

} // namespace dat
