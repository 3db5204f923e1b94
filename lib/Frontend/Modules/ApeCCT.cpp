//===- ApeCCT.cpp - APE's image models: AlgebraicCCT, AlgebraicSeqCCT -----===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// ape's eval/models/image/cct.py (spec §9.5): a convolutional front end,
// grid or raster positions whose maps and distance decay the program
// computes, ape's post-norm Encoder, sequence pooling.
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

/// A named linalg op made generic (the later passes, bf16 narrowing among
/// them, work on generics).
static Value generalized(ModelBuilder &mb, linalg::LinalgOp op) {
  IRRewriter rewriter(mb.b);
  FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
  return succeeded(g) ? g->getResult(0) : op->getResult(0);
}

/// The CCT front end (spec §9.5): Conv2d(C, dim, k, stride 1, no bias) →
/// ReLU → MaxPool2d(k), tokens in raster order [B, h·w, dim].
static Value cctPatches(ModelBuilder &mb, Value image, int64_t dim, int64_t k,
                        int64_t &h, int64_t &w) {
  auto it = cast<RankedTensorType>(image.getType());
  int64_t B = it.getDimSize(0), C = it.getDimSize(1), H = it.getDimSize(2),
          W = it.getDimSize(3);
  int64_t ch = H - k + 1, cw = W - k + 1;
  h = ch / k;
  w = cw / k;
  if (ch < k || cw < k) {
    mb.error(mb.config.path + ": inputs.pixel_values: the image [" + Twine(H) +
             " × " + Twine(W) + "] is too small for kernel_size " + Twine(k));
    return {};
  }
  Value filter = mb.weight("patch_embed.0.weight", {dim, C, k, k});
  if (mb.failed())
    return {};
  Type f32 = mb.b.getF32Type();
  // (The batch may be dynamic: the image's.)
  OpFoldResult batch = mb.dimOf(image, 0);
  auto fill = [&](ArrayRef<int64_t> shape, float v) {
    SmallVector<OpFoldResult> sizes = {batch};
    for (int64_t size : shape.drop_front())
      sizes.push_back(mb.b.getIndexAttr(size));
    Value c = arith::ConstantFloatOp::create(mb.b, mb.loc, cast<FloatType>(f32),
                                             APFloat(v));
    return linalg::FillOp::create(mb.b, mb.loc, c,
                                  ValueRange{mb.emptyLike(sizes)})
        .getResult(0);
  };
  auto conv = linalg::Conv2DNchwFchwOp::create(
      mb.b, mb.loc, TypeRange{RankedTensorType::get({B, dim, ch, cw}, f32)},
      ValueRange{image, filter}, ValueRange{fill({B, dim, ch, cw}, 0.0f)},
      mb.b.getI64VectorAttr({1, 1}), mb.b.getI64VectorAttr({1, 1}));
  Value x = mb.activation(generalized(mb, conv), "relu");
  Value window =
      tensor::EmptyOp::create(mb.b, mb.loc, ArrayRef<int64_t>{k, k}, f32);
  auto pool = linalg::PoolingNchwMaxOp::create(
      mb.b, mb.loc, TypeRange{RankedTensorType::get({B, dim, h, w}, f32)},
      ValueRange{x, window},
      ValueRange{fill({B, dim, h, w}, -std::numeric_limits<float>::infinity())},
      mb.b.getI64VectorAttr({k, k}), mb.b.getI64VectorAttr({1, 1}));
  Value pooled = generalized(mb, pool);
  Value t = mlir::dat::buildTranspose(mb.b, mb.loc, pooled, {0, 2, 3, 1});
  return tensor::CollapseShapeOp::create(
      mb.b, mb.loc, t, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}});
}

/// Sequence pooling: Σ_l softmax_l(pooler(x))[l] · x[l] → fc.
static Value cctHead(ModelBuilder &mb, Value x, int64_t dim, int64_t classes) {
  Type f32 = mb.b.getF32Type();
  MLIRContext *ctx = mb.b.getContext();
  Value g = tensor::CollapseShapeOp::create(
      mb.b, mb.loc, mb.linear(x, "pooler", 1, true),
      ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  // The gate: softmax over the sequence; then Σ_l gate[b,l] · x[b,l,c].
  Value gate = mlir::dat::softmaxAlong(mb.b, mb.loc, g, 1);
  AffineExpr b, l, c;
  bindDims(ctx, b, l, c);
  Value zeros = mlir::dat::filledTensor(
      mb.b, mb.loc, {mb.dimOf(x, 0), mb.b.getIndexAttr(dim)}, f32,
      mb.b.getF32FloatAttr(0));
  Value aggr = mlir::dat::buildMulAcc(
      mb.b, mb.loc, gate, x, zeros,
      {AffineMap::get(3, 0, {b, l}, ctx), AffineMap::get(3, 0, {b, l, c}, ctx),
       AffineMap::get(3, 0, {b, c}, ctx)},
      {mlir::dat::kPar, mlir::dat::kRed, mlir::dat::kPar});
  return mb.linear(aggr, "fc", classes, true);
}

/// AlgebraicCCT (`grid`: Grid maps of each token's row and column, the
/// floor of their Euclidean distance) and AlgebraicSeqCCT (Sequential maps
/// of the raster index, |i - j|): a convolutional front end, ape's
/// post-norm Encoder with exact-GELU FFNs, sequence pooling.
static void buildApeCCT(ModelBuilder &mb, bool grid) {
  int64_t dim = mb.intArg("dim"), heads = mb.intArg("num_heads"),
          channels = mb.intArg("in_channels"),
          classes = mb.intArg("num_classes"), ratio = mb.intArg("mlp_ratio");
  int64_t layers = mb.layersArg("num_layers");
  SmallVector<int64_t> kernel = mb.intListArg("kernel_size", 2);
  if (mb.failed())
    return;
  int64_t axes = grid ? 2 : 1;
  if (heads < 1 || dim < heads * axes || dim % (heads * axes) || classes < 1 ||
      ratio < 1 || ratio > 64 || kernel[0] != kernel[1] || kernel[0] < 1) {
    mb.error(mb.config.path + ": kwargs: expected num_heads" +
             (grid ? " × 2" : "") +
             " dividing dim (dim >= 1), num_classes >= 1, mlp_ratio in "
             "[1, 64] and a square kernel_size");
    return;
  }
  std::optional<double> base = readDistanceDecay(mb, 0.98);
  Value image = mb.input("pixel_values", 4);
  if (!base || mb.failed())
    return;
  auto it = cast<RankedTensorType>(image.getType());
  if (it.getDimSize(1) != channels) {
    mb.error(mb.config.path + ": inputs.pixel_values: expected [B, " +
             Twine(channels) + " (in_channels), H, W]");
    return;
  }
  int64_t h = 0, w = 0;
  Value x = cctPatches(mb, image, dim, kernel[0], h, w);
  if (mb.failed())
    return;
  if (grid && h != w) {
    mb.error(mb.config.path +
             ": inputs.pixel_values: AlgebraicCCT reads the "
             "width from the height (the reference's "
             "square-only quirk): the pooled feature map is " +
             Twine(h) + " × " + Twine(w));
    return;
  }
  int64_t L = h * w, d = dim / heads / axes;
  int64_t size = grid ? std::max(h, w) : L;
  if ((size + 1) * axes * heads * d * d > (int64_t(1) << 24)) {
    mb.error(mb.config.path + ": the maps table exceeds 2^24 floats");
    return;
  }
  Value table = mb.derivedWeight(
      "positional_encoder.maps_table", {size + 1, axes * heads, d, d},
      {{"positional_encoder._primitives", {axes * heads, d, d}}},
      [count = axes * heads, d, size](const std::vector<const float *> &in,
                                      float *out) {
        orthogonalPowerTable(in[0], count, d, size, out);
      });
  ApeAttention att;
  ApeDecay decay;
  decay.base = *base;
  if (grid) {
    Value xs = rasterPositions(mb, mb.b.getIndexAttr(L), w, false),
          ys = rasterPositions(mb, mb.b.getIndexAttr(L), w, true);
    att.qMaps = att.kMaps =
        gatherAtPositions(mb, table, xs, size, 0, heads, false);
    att.qMapsY = att.kMapsY =
        gatherAtPositions(mb, table, ys, size, heads, heads, false);
    decay.kind = ApeDistance::Grid;
    decay.qPositions = decay.kPositions = {xs, ys};
  } else {
    Value ps = rasterPositions(mb, mb.b.getIndexAttr(L), 0, true); // 0 .. L-1
    att.qMaps = att.kMaps =
        gatherAtPositions(mb, table, ps, size, 0, heads, false);
    decay.kind = ApeDistance::Sequence;
    decay.qPositions = decay.kPositions = {ps};
  }
  x = mb.stack("encoder_layer", layers, x, [&](int64_t l, Value x) {
    std::string p = "encoder.encoder_layers." + std::to_string(l) + ".";
    ApeAttention a = att;
    a.scoreScale = decay.decayAt(mb);
    x = mb.layerNorm(
        mb.add(x, apeMHA(mb, p + "mha.", false, x, x, heads, dim, a)),
        p + "mha_ln", 1e-5);
    return apeFFN(mb, p, x, dim, ratio, "gelu_erf");
  });
  if (mb.failed())
    return;
  mb.output("logits", cctHead(mb, x, dim, classes));
}

void buildApeAlgebraicCCT(ModelBuilder &mb) { buildApeCCT(mb, true); }
void buildApeAlgebraicSeqCCT(ModelBuilder &mb) { buildApeCCT(mb, false); }

} // namespace dat
