//===- VisionModels.cpp - frontends of the vision models ------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// VisionTransformer and VisionDualAttnTransformer (spec §7.3): patches in
// (row, col, channel) order → LayerNorm → Linear → LayerNorm, a prepended
// cls token, learned positions, non-causal blocks, no final norm, cls or mean
// pooling, a linear head.
//
//===----------------------------------------------------------------------===//

#include "Modules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace llvm;
using namespace mlir;

namespace dat {

namespace {
struct VisionStream {
  Value x; // [B, n+1, D]
  int64_t batch = 0, tokens = 0;
};
} // namespace

/// Patch embedding, cls token and positions (the front of both models).
static std::optional<VisionStream> visionInput(ModelBuilder &mb, int64_t d) {
  // image_shape and patch_size are (C, S1, S2) and (P1, P2) lists.
  SmallVector<int64_t> image = mb.intListArg("image_shape", 3);
  SmallVector<int64_t> patch = mb.intListArg("patch_size", 2);
  Value img = mb.input("image", 4);
  if (mb.failed() || !img)
    return std::nullopt;
  auto it = cast<RankedTensorType>(img.getType());
  int64_t B = it.getDimSize(0), C = image[0], H = image[1], W = image[2];
  if (it.getRank() != 4 || it.getDimSize(1) != C || it.getDimSize(2) != H ||
      it.getDimSize(3) != W) {
    mb.error(mb.config.path + ": inputs.image: expected [B, " + Twine(C) +
             ", " + Twine(H) + ", " + Twine(W) + "] (kwargs.image_shape)");
    return std::nullopt;
  }
  // Axis 2 is cut into blocks of patch_size[1], axis 3 of patch_size[0]
  // (the reference's names are swapped).
  int64_t ph = patch[1], pw = patch[0];
  if (H % ph || W % pw) {
    mb.error(mb.config.path + ": kwargs.patch_size: the image " + Twine(H) +
             "×" + Twine(W) + " is not divisible into " + Twine(ph) + "×" +
             Twine(pw) + " patches");
    return std::nullopt;
  }
  int64_t nh = H / ph, nw = W / pw, n = nh * nw, pdim = ph * pw * C;
  // (The batch may be dynamic: the image's own size.)
  OpFoldResult batch = mb.dimOf(img, 0);
  auto index = [&](int64_t v) { return OpFoldResult(mb.b.getIndexAttr(v)); };
  // [B,C,H,W] -> [B,C,nh,ph,nw,pw] -> [B,nh,nw,ph,pw,C] -> [B,n,ph·pw·C]
  Value e = tensor::ExpandShapeOp::create(
      mb.b, mb.loc,
      RankedTensorType::get({B, C, nh, ph, nw, pw}, mb.b.getF32Type()), img,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}, {4, 5}});
  Value t = linalg::TransposeOp::create(
                mb.b, mb.loc, e,
                mb.emptyLike({batch, index(nh), index(nw), index(ph), index(pw),
                              index(C)}),
                ArrayRef<int64_t>{0, 2, 4, 3, 5, 1})
                .getResult()[0];
  Value patches = tensor::CollapseShapeOp::create(
      mb.b, mb.loc, RankedTensorType::get({B, n, pdim}, mb.b.getF32Type()), t,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3, 4, 5}});
  Value x = mb.layerNorm(patches, "to_patch_embedding.1", 1e-5);
  x = mb.linear(x, "to_patch_embedding.2", d, true);
  x = mb.layerNorm(x, "to_patch_embedding.3", 1e-5);
  Value cls = mb.weight("cls_token", {1, 1, d});
  Value pos = mb.weight("pos_embedding", {1, n + 1, d});
  if (mb.failed())
    return std::nullopt;
  // [cls; patches] + positions, in one generic: token 0 reads the cls token.
  MLIRContext *ctx = mb.b.getContext();
  Value streamInit = mb.emptyLike({batch, index(n + 1), index(d)});
  Value stream =
      linalg::GenericOp::create(
          mb.b, mb.loc, streamInit.getType(), ValueRange{pos},
          ValueRange{streamInit},
          ArrayRef<AffineMap>{AffineMap::get(3, 0,
                                             {getAffineConstantExpr(0, ctx),
                                              getAffineDimExpr(1, ctx),
                                              getAffineDimExpr(2, ctx)},
                                             ctx),
                              AffineMap::getMultiDimIdentityMap(3, ctx)},
          SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value b = linalg::IndexOp::create(nb, nl, 0);
            Value tk = linalg::IndexOp::create(nb, nl, 1);
            Value c = linalg::IndexOp::create(nb, nl, 2);
            Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
            Value one = arith::ConstantIndexOp::create(nb, nl, 1);
            Value isCls = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::eq, tk, zero);
            // Both reads stay in bounds; the select picks the right one.
            Value prev = arith::SelectOp::create(
                nb, nl, isCls, zero, arith::SubIOp::create(nb, nl, tk, one));
            Value fromPatch =
                tensor::ExtractOp::create(nb, nl, x, ValueRange{b, prev, c});
            Value fromCls = tensor::ExtractOp::create(
                nb, nl, cls, ValueRange{zero, zero, c});
            Value v =
                arith::SelectOp::create(nb, nl, isCls, fromCls, fromPatch);
            linalg::YieldOp::create(
                nb, nl, Value(arith::AddFOp::create(nb, nl, v, args[0])));
          })
          .getResult(0);
  return VisionStream{stream, B, n + 1};
}

/// kwargs.pool, checked before any layer is built: "cls" or "mean".
static std::string readPool(ModelBuilder &mb) {
  std::string pool = mb.stringArg("pool", "cls");
  if (!mb.failed() && pool != "cls" && pool != "mean")
    mb.error(mb.config.path + ": kwargs.pool: '" + pool + "' (cls or mean)");
  return pool;
}

/// cls (token 0) or mean pooling, then the head.
static void visionHead(ModelBuilder &mb, const VisionStream &s, Value x,
                       int64_t d, StringRef pool) {
  int64_t classes = mb.intArg("num_classes");
  if (mb.failed() || !x)
    return;
  MLIRContext *ctx = mb.b.getContext();
  // (The batch may be dynamic: the stream's own size.)
  OpFoldResult batch = mb.dimOf(x, 0);
  Value pooled;
  if (pool == "cls") {
    Value tok = tensor::ExtractSliceOp::create(
        mb.b, mb.loc, RankedTensorType::get({s.batch, 1, d}, mb.b.getF32Type()),
        x,
        ArrayRef<OpFoldResult>{mb.b.getIndexAttr(0), mb.b.getIndexAttr(0),
                               mb.b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{batch, mb.b.getIndexAttr(1),
                               mb.b.getIndexAttr(d)},
        ArrayRef<OpFoldResult>{mb.b.getIndexAttr(1), mb.b.getIndexAttr(1),
                               mb.b.getIndexAttr(1)});
    pooled = tensor::CollapseShapeOp::create(
        mb.b, mb.loc, RankedTensorType::get({s.batch, d}, mb.b.getF32Type()),
        tok, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  } else if (pool == "mean") {
    Value zero =
        arith::ConstantOp::create(mb.b, mb.loc, mb.b.getF32FloatAttr(0));
    Value init =
        linalg::FillOp::create(mb.b, mb.loc, zero,
                               mb.emptyLike({batch, mb.b.getIndexAttr(d)}))
            .getResult(0);
    float inv = 1.0f / static_cast<float>(s.tokens);
    AffineExpr b, t, c;
    bindDims(ctx, b, t, c);
    pooled =
        linalg::GenericOp::create(
            mb.b, mb.loc, init.getType(), ValueRange{x}, ValueRange{init},
            ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(3, ctx),
                                AffineMap::get(3, 0, {b, c}, ctx)},
            ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                          utils::IteratorType::reduction,
                                          utils::IteratorType::parallel},
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value w = arith::MulFOp::create(
                  nb, nl, args[0],
                  arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(inv)));
              linalg::YieldOp::create(
                  nb, nl, Value(arith::AddFOp::create(nb, nl, args[1], w)));
            })
            .getResult(0);
  } else {
    return; // readPool reported it
  }
  mb.output("logits", mb.linear(pooled, "final_out", classes, true));
}

void buildVisionTransformer(ModelBuilder &mb) {
  int64_t layers = mb.layersArg("n_layers");
  int64_t heads = mb.intArg("n_heads");
  std::string pool = readPool(mb);
  BlockCommon c = readBlockCommon(mb, false);
  c.causal = false;
  if (mb.failed())
    return;
  AttentionParams p = makeAttentionParams(mb, c.dModel, heads, heads);
  p.biasOut = c.bias;
  p.kvHeads = heads;
  p.biasKV = false;
  std::optional<VisionStream> s = visionInput(mb, c.dModel);
  if (!s)
    return;
  Value x = mb.stack("block", layers, s->x, [&](int64_t l, Value x) {
    return encoderBlock(mb, c, p, "encoder_blocks." + std::to_string(l) + ".",
                        x, {}, {});
  });
  visionHead(mb, *s, x, c.dModel, pool);
}

void buildVisionDualAttnTransformer(ModelBuilder &mb) {
  int64_t layers = mb.layersArg("n_layers");
  std::string pool = readPool(mb);
  std::string retrieval =
      mb.stringArg("symbol_retrieval", "symbolic_attention");
  BlockCommon c = readBlockCommon(mb, false);
  c.causal = false;
  if (mb.failed())
    return;
  if (!checkSymbolRetrieval(mb, retrieval, true))
    return;
  std::optional<VisionStream> s = visionInput(mb, c.dModel);
  if (!s)
    return;
  // One retriever shared by every layer, re-applied to the current stream.
  auto layer = [&](int64_t l, Value x) -> Value {
    Value symbols;
    mb.withKwargs("symbol_retrieval_kwargs", retrieval, [&] {
      symbols = emitSymbolRetriever(mb, retrieval, "symbol_retriever.", x);
    });
    return dualEncoderBlock(mb, c, "encoder_blocks." + std::to_string(l) + ".",
                            x, symbols, {}, {});
  };
  Value x = mb.stack("layer", layers, s->x, layer);
  visionHead(mb, *s, x, c.dModel, pool);
}

} // namespace dat
