//===- PadTileBuffers.cpp - the dat-pad-tile-buffers pass -----------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//
//
// A flash tile's per-head buffers are [.., H, rows, keys]: with 64 keys and
// 32 or 64 rows, one head's plane is 8 or 16 KiB, a multiple of the 4 KiB
// after which an L1 data cache's set index repeats (64 sets of 64-byte
// lines, on Intel and AMD alike). A loop over the heads at one query row and
// key — the relational tile's Σ_j p[h,i,j]·r[l,i,j], whose register tile
// broadcasts p[h,i,j] for 16 heads — then reads 16 lines of one set, which
// holds 8 or 12: each read misses L1. One more row per plane moves each
// head's lines to other sets.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::dat {
#define GEN_PASS_DEF_DATPADTILEBUFFERS
#include "dat/Dialect/Dat/Transforms/Passes.h.inc"

namespace {

/// The period of an L1 data cache's set index (64 sets × 64-byte lines).
constexpr int64_t kSetPeriodBytes = 4096;
/// Planes below this many share a set's ways with room to spare (8-way).
constexpr int64_t kMinPlanes = 4;

/// Whether `op` is inside a flash tile loop: the innermost tile loop
/// around it is an attention family's.
bool inAttentionTile(Operation *op) {
  for (auto loop = op->getParentOfType<scf::ForallOp>(); loop;
       loop = loop->getParentOfType<scf::ForallOp>())
    if (isTileLoop(loop))
      return isAttentionTileLoop(loop);
  return false;
}

struct PadTileBuffersPass final
    : impl::DatPadTileBuffersBase<PadTileBuffersPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> empties;
    getOperation()->walk([&](tensor::EmptyOp empty) {
      RankedTensorType type = empty.getType();
      int64_t rank = type.getRank();
      if (!inAttentionTile(empty) || rank < 3 || !type.hasStaticShape() ||
          !type.getElementType().isIntOrFloat() ||
          type.getElementTypeBitWidth() % 8 != 0)
        return;
      int64_t plane = type.getDimSize(rank - 2) * type.getDimSize(rank - 1) *
                      type.getElementTypeBitWidth() / 8;
      if (type.getDimSize(rank - 3) >= kMinPlanes &&
          plane % kSetPeriodBytes == 0)
        empties.push_back(empty);
    });
    for (tensor::EmptyOp empty : empties) {
      RankedTensorType type = empty.getType();
      SmallVector<int64_t> padded(type.getShape());
      ++padded[type.getRank() - 2];
      OpBuilder b(empty);
      Location loc = empty.getLoc();
      Value buffer =
          tensor::EmptyOp::create(b, loc, padded, type.getElementType());
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)),
          strides(type.getRank(), b.getIndexAttr(1));
      SmallVector<OpFoldResult> sizes =
          getAsIndexOpFoldResult(b.getContext(), type.getShape());
      Value slice = tensor::ExtractSliceOp::create(b, loc, type, buffer,
                                                   offsets, sizes, strides);
      empty.replaceAllUsesWith(slice);
      empty.erase();
    }
  }
};

} // namespace
} // namespace mlir::dat
