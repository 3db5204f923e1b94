//===- ApeModels.cpp - APE's encoder-decoders and their layers ------------===//
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

#include "ApeLayers.h"
#include "ApePositions.h"
#include "Modules.h"

#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"
#include "dat/Frontend/OrthogonalMaps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace llvm;
using namespace mlir;

namespace dat {

/// SelfMHA (`prefix`linear: q | k | v) or, with `cross`, CrossMHA
/// (`prefix`lin_q and lin_kv: k | v) from `xq` to `xkv`, head-minor heads,
/// the maps on queries and keys, masked logits -1e10 (spec §9.3-9.4).
Value apeMHA(ModelBuilder &mb, StringRef prefix, bool cross, Value xq,
             Value xkv, int64_t heads, int64_t dim, const ApeAttention &in) {
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
  auto apply = [&](Value x, Value maps) -> Value {
    return mlir::dat::OrthogonalMapOp::create(
        mb.b, mb.loc, x.getType(), x, maps,
        mb.emptyLike(tensor::getMixedSizes(mb.b, mb.loc, x)));
  };
  auto map = [&](Value x, Value maps, Value mapsY) -> Value {
    x = headMinorSplit(mb, x, heads);
    if (!mapsY)
      return apply(x, maps);
    // Grid: the x axis maps each head's first half, the y axis the second.
    int64_t half = dim / heads / 2;
    return concatLast(mb, apply(sliceLast(mb, x, 0, half), maps),
                      apply(sliceLast(mb, x, half, half), mapsY));
  };
  q = map(q, in.qMaps, in.qMapsY);
  k = map(k, in.kMaps, in.kMapsY);
  v = headMinorSplit(mb, v, heads);
  int64_t dh = dim / heads;
  Value init = mb.emptyLike(tensor::getMixedSizes(mb.b, mb.loc, q));
  Value o = mlir::dat::AttentionOp::create(
      mb.b, mb.loc, init.getType(), q, k, v, in.mask, in.keyMask, in.scoreScale,
      /*query_offset=*/Value(), init,
      mb.b.getF32FloatAttr(1.0f / std::sqrt(static_cast<float>(dh))),
      mb.b.getF32FloatAttr(-1e10f), in.causal);
  return mb.linear(headMinorMerge(mb, o), name("out"), dim, true);
}

/// The FFN of ape's layers: Linear → ReLU → Linear, then the post-norm.
Value apeFFN(ModelBuilder &mb, const std::string &p, Value x, int64_t dim,
             int64_t ratio, StringRef activation) {
  Value h =
      mb.activation(mb.linear(x, p + "ffn.0", ratio * dim, true), activation);
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
          ValueRange{mlir::dat::emptyTensorLike(mb.b, mb.loc, it, ids)},
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
             ValueRange{mb.emptyLike(tensor::getMixedSizes(mb.b, mb.loc, e))},
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

/// The decoder's self-attention mask input `name`: one [Ld, Ld] for the
/// batch ([Ld, Ld] or [1, Ld, Ld], nonzero = may attend), or with
/// call.causal_decoder none (`causal` set: dat.attention's own causal
/// masking, no N×N input).
static Value decoderMask(ModelBuilder &mb, StringRef name, Value ids,
                         bool &causal) {
  causal = mb.boolCall("causal_decoder", false);
  const TensorSpec *spec = mb.config.findInput(name);
  if (causal && spec) {
    mb.error(mb.config.path +
             ": call.causal_decoder: the config also "
             "declares inputs." +
             name + "; give one of them");
    return {};
  }
  if (causal)
    return {};
  if (!spec) {
    mb.error(mb.config.path + ": inputs." + name + ": " + mb.config.module +
             " needs this input (or call.causal_decoder: true), but the "
             "config does not declare it");
    return {};
  }
  if (spec->shape.size() == 3 && spec->shape[0] == 1) {
    Value m = mb.boolInput(name, ids, {ModelBuilder::kUnitDim, 1, 1});
    if (!m)
      return {};
    return tensor::CollapseShapeOp::create(
        mb.b, mb.loc, m, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  }
  if (spec->shape.size() == 2)
    return mb.boolInput(name, ids, {1, 1});
  std::string Ld = mb.sizeText(ids, 1);
  mb.error(mb.config.path + ": inputs." + name + ": expected int64 [" + Ld +
           ", " + Ld + "] or [1, " + Ld + ", " + Ld +
           "] (one mask for the batch; nonzero = may attend)");
  return {};
}

/// What an encoder-decoder's attentions read: maps per side and the
/// decays of the encoder, decoder and cross attentions.
struct ApeSeq2Seq {
  int64_t heads, dim;
  SmallVector<int64_t> layers;
  Value encMaps, decMaps;
  ApeDecay encDecay, decDecay, crossDecay;
  Value encMask, crossMask, decMask;
  bool causalDecoder = false;
};

/// ape's Encoder over `x` and Decoder over `y` (post-norm, ReLU FFNs),
/// layers as functions (identical ones shared, each freeing its own
/// temporaries when it returns); returns the decoder's output.
static Value apeEncoderDecoder(ModelBuilder &mb, const ApeSeq2Seq &m, Value x,
                               Value y) {
  int64_t heads = m.heads, dim = m.dim;
  x = mb.stack("encoder_layer", m.layers[0], x, [&](int64_t l, Value x) {
    std::string p = "encoder.encoder_layers." + std::to_string(l) + ".";
    Value a = apeMHA(
        mb, p + "mha.", false, x, x, heads, dim,
        {m.encMaps, m.encMaps, {}, {}, m.encDecay.decayAt(mb), {}, m.encMask});
    x = mb.layerNorm(mb.add(x, a), p + "mha_ln", 1e-5);
    return apeFFN(mb, p, x, dim);
  });
  return mb.stack("decoder_layer", m.layers[1], y, [&](int64_t l, Value y) {
    std::string p = "decoder.decoder_layers." + std::to_string(l) + ".";
    Value a = apeMHA(mb, p + "self_mha.", false, y, y, heads, dim,
                     {m.decMaps,
                      m.decMaps,
                      {},
                      {},
                      m.decDecay.decayAt(mb),
                      m.decMask,
                      {},
                      m.causalDecoder});
    y = mb.layerNorm(mb.add(y, a), p + "self_mha_ln", 1e-5);
    Value c = apeMHA(mb, p + "cross_mha.", true, y, x, heads, dim,
                     {m.decMaps,
                      m.encMaps,
                      {},
                      {},
                      m.crossDecay.decayAt(mb),
                      {},
                      m.crossMask});
    y = mb.layerNorm(mb.add(y, c), p + "cross_mha_ln", 1e-5);
    return apeFFN(mb, p, y, dim);
  });
}

/// The kwargs both encoder-decoders take: vocab_size, dim, num_heads,
/// num_layers [encoder, decoder]; false after an error.
static bool readEncoderDecoderKwargs(ModelBuilder &mb, int64_t &vocab,
                                     int64_t &dim, int64_t &heads,
                                     SmallVector<int64_t> &layers) {
  vocab = mb.intArg("vocab_size");
  dim = mb.intArg("dim");
  heads = mb.intArg("num_heads");
  layers = mb.intListArg("num_layers", 2);
  if (mb.failed())
    return false;
  if (heads < 1 || dim < heads || dim % heads || dim / heads > 4096 ||
      vocab < 1 || layers[0] > ModelBuilder::kMaxLayers ||
      layers[1] > ModelBuilder::kMaxLayers) {
    mb.error(mb.config.path +
             ": kwargs: expected num_heads dividing dim "
             "(1 to 4096 per head), vocab_size >= 1 and "
             "at most " +
             Twine(ModelBuilder::kMaxLayers) + " layers each");
    return false;
  }
  return true;
}

void buildApeTreeAlgebraic(ModelBuilder &mb) {
  int64_t vocab = 0, dim = 0, heads = 0;
  SmallVector<int64_t> layers;
  int64_t branching = mb.intArg("branching_factor");
  if (!readEncoderDecoderKwargs(mb, vocab, dim, heads, layers))
    return;
  if (branching < 1 || branching > 1024) {
    mb.error(mb.config.path + ": kwargs.branching_factor: expected an "
                              "integer in [1, 1024]");
    return;
  }
  int64_t d = dim / heads;
  std::optional<double> base = readDistanceDecay(mb, 0.98);
  if (!base)
    return;
  double decay = *base;

  Value encIds = mb.input("encoder_ids", 2, "int64");
  Value decIds = mb.input("decoder_ids", 2, "int64");
  Value encPos = mb.input("encoder_pos", 2, "int64");
  Value decPos = mb.input("decoder_pos", 2, "int64");
  if (mb.failed())
    return;
  // (Batch and lengths may be dynamic: named dimensions must agree.)
  if (!mb.sameDim(decIds, 0, encIds, 0) || !mb.sameDim(encPos, 0, encIds, 0) ||
      !mb.sameDim(encPos, 1, encIds, 1) || !mb.sameDim(decPos, 0, decIds, 0) ||
      !mb.sameDim(decPos, 1, decIds, 1)) {
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
  Value encMask = mb.boolInput("encoder_mask", encIds, {0, 1});
  Value crossMask = mb.boolInput("cross_mask", encIds, {0, 1});
  bool causalDecoder = false;
  Value decMask = decoderMask(mb, "decoder_mask", decIds, causalDecoder);
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
  // Each side's nodes and ancestors, and T over both, once for the three
  // attentions.
  ApeDecay::TreeSide enc = ApeDecay::treeSide(mb, encPos, branching),
                     dec = ApeDecay::treeSide(mb, decPos, branching);
  Value longest = ApeDecay::longestPath(mb, {encPos, decPos}, branching);
  ApeDecay encDecay = ApeDecay::makeTree(decay, enc, enc, longest, branching);
  ApeDecay decDecay = ApeDecay::makeTree(decay, dec, dec, longest, branching);
  ApeDecay crossDecay = ApeDecay::makeTree(decay, dec, enc, longest, branching);

  ApeSeq2Seq m{heads,   dim,       layers,   encMaps,
               decMaps, encDecay,  decDecay, crossDecay,
               encMask, crossMask, decMask,  causalDecoder};
  Value y2 = apeEncoderDecoder(mb, m, x, y);
  // The Branching module's state: its identity and primitives (the maps'
  // inputs) are read by treeMapsAtRunTime; the output is tied to the
  // embedding.
  mb.output("logits", mb.linear(y2, "embedding", vocab, false));
}

} // namespace dat

namespace dat {

void buildApeMTAlgebraic(ModelBuilder &mb) {
  int64_t vocab = 0, dim = 0, heads = 0;
  SmallVector<int64_t> layers;
  // Beam search's tokens: not part of forward_train's logits.
  mb.intArg("sos_token_id");
  mb.intArg("eos_token_id");
  if (!readEncoderDecoderKwargs(mb, vocab, dim, heads, layers))
    return;
  int64_t d = dim / heads;
  std::optional<double> base = readDistanceDecay(mb, 0.98);
  Value srcIds = mb.input("source_ids", 2, "int64");
  Value tgtIds = mb.input("target_ids", 2, "int64");
  if (!base || mb.failed())
    return;
  // (Batch and lengths may be dynamic: the table covers their maxima.)
  int64_t Ls = mb.largestSize(srcIds, 1), Lt = mb.largestSize(tgtIds, 1);
  if (!mb.sameDim(tgtIds, 0, srcIds, 0)) {
    mb.error(mb.config.path + ": inputs: source_ids [B, Ls] and target_ids "
                              "[B, Lt], one batch");
    return;
  }
  int64_t size = std::max(Ls, Lt);
  if ((size + 1) * heads * d * d > (int64_t(1) << 24)) {
    mb.error(mb.config.path + ": the maps of " + Twine(size) + " positions × " +
             Twine(heads) + " heads of " + Twine(d) + "×" + Twine(d) +
             " exceed 2^24 floats");
    return;
  }
  int64_t lowest = std::numeric_limits<int64_t>::min();
  mb.inputRange("source_ids", lowest, vocab - 1);
  mb.inputRange("target_ids", lowest, vocab - 1);
  ApeSeq2Seq m{heads, dim, layers, {}, {}, {}, {}, {}, {}, {}, {}};
  m.encMask = mb.boolInput("source_mask", srcIds, {0, 1});
  m.crossMask = m.encMask;
  m.decMask = decoderMask(mb, "target_mask", tgtIds, m.causalDecoder);
  if (mb.failed())
    return;

  // The maps W^p of positions 0..max(Ls, Lt) per head, as the reference
  // precomputes them (repeated doubling), sliced for each side.
  Value table = mb.derivedWeight(
      "positional_encoder.maps_table", {size + 1, heads, d, d},
      {{"positional_encoder._primitives", {heads, d, d}}},
      [heads, d, size](const std::vector<const float *> &in, float *out) {
        orthogonalPowerTable(in[0], heads, d, size, out);
      });
  auto mapsOf = [&](Value ids) -> Value {
    int64_t L = cast<RankedTensorType>(ids.getType()).getDimSize(1);
    OpFoldResult zero = mb.b.getIndexAttr(0), one = mb.b.getIndexAttr(1),
                 h = mb.b.getIndexAttr(heads), dd = mb.b.getIndexAttr(d);
    Value s = tensor::ExtractSliceOp::create(
        mb.b, mb.loc,
        RankedTensorType::get({L, heads, d, d}, mb.b.getF32Type()), table,
        ArrayRef<OpFoldResult>{zero, zero, zero, zero},
        ArrayRef<OpFoldResult>{mb.dimOf(ids, 1), h, dd, dd},
        ArrayRef<OpFoldResult>{one, one, one, one});
    return tensor::ExpandShapeOp::create(
        mb.b, mb.loc,
        RankedTensorType::get({1, L, heads, d, d}, mb.b.getF32Type()), s,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}, {4}},
        ArrayRef<OpFoldResult>{one, mb.dimOf(ids, 1), h, dd, dd});
  };
  m.encMaps = mapsOf(srcIds);
  m.decMaps = mapsOf(tgtIds);
  // |i - j| over the token indices, target against source for the cross
  // attention.
  Value srcPos = rasterPositions(mb, mb.dimOf(srcIds, 1), 0, true),
        tgtPos = rasterPositions(mb, mb.dimOf(tgtIds, 1), 0, true);
  auto decay = [&](Value q, Value k) {
    ApeDecay a;
    a.kind = ApeDistance::Sequence;
    a.base = *base;
    a.qPositions = {q};
    a.kPositions = {k};
    return a;
  };
  m.encDecay = decay(srcPos, srcPos);
  m.decDecay = decay(tgtPos, tgtPos);
  m.crossDecay = decay(tgtPos, srcPos);

  Value embedding = mb.weight("embedding.weight", {vocab, dim});
  Value x = embedScaled(mb, srcIds, embedding, dim);
  Value y = embedScaled(mb, tgtIds, embedding, dim);
  Value out = apeEncoderDecoder(mb, m, x, y);
  mb.output("logits", mb.linear(out, "embedding", vocab, false));
}

} // namespace dat
