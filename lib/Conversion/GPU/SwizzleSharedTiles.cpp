//===- SwizzleSharedTiles.cpp - XOR-swizzled tile buffers in shared memory ===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// A staged tile buffer whose rows are 128 bytes (64 bf16) or a multiple of
// them puts every row's start in the same four banks: the 8 rows an
// ldmatrix matrix reads, 16 bytes each, are an 8-way bank conflict. XOR
// -swizzling each row's 16-byte chunks by the row's index mod 8 (chunk c of
// row r lives at chunk c ^ (r mod 8)) spreads those 8 rows over all 32
// banks. Rows of 64 bytes (32 bf16) share a 128-byte line two by two: 8
// rows are 4 lines, a 4-way conflict; chunk c of row r lives at chunk
// c ^ ((r / 2) mod 4), so that (r mod 2, chunk) differs for the 8 rows
// (and rows of 32 bytes, four to a line, likewise with (r / 4) mod 2). A
// block-wide tile's buffer of more than two dims (dat.swizzle_outer_dims)
// adds its outer indices to the row's key, so that rows at the same index
// of different heads differ too. The
// swizzle permutes the chunks of each row, so it is correct for any access
// pattern as long as every access to the buffer takes it: a buffer is
// swizzled only where every use is an element load or store, a vector load
// or store or cp.async inside one chunk, an ldmatrix (whose lanes address
// whole chunks) or a size or address query.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Divisibility.h"
#include "dat/Conversion/Passes.h"
#include "dat/Dialect/Dat/IR/DatDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <map>

namespace mlir::dat {

#define GEN_PASS_DEF_DATGPUSWIZZLESHAREDTILES
#include "dat/Conversion/Passes.h.inc"

namespace {

/// 16-byte chunks per 128-byte line of the 32 banks.
constexpr int64_t kSwizzleChunks = 8;
constexpr int64_t kChunkBytes = 16;

/// How a buffer's rows are swizzled: chunk c of row r lives at chunk
/// c ^ ((r / rowsPerLine) mod period).
struct SwizzleShape {
  int64_t rowsPerLine; // rows sharing one 128-byte line
  int64_t period;      // distinct keys: the line's chunks per row, at most 8
  int64_t chunk;       // elements per 16-byte chunk
};

/// The swizzle of a buffer of `type`, or none where its rows are not 32 or
/// 64 bytes or a multiple of 128, or its elements do not divide a chunk.
std::optional<SwizzleShape> swizzleShape(MemRefType type) {
  int64_t rank = type.getRank();
  if (!type.getElementType().isIntOrFloat() || rank < 2 ||
      type.isDynamicDim(rank - 1))
    return std::nullopt;
  // (Elements of a power of two of bytes, at most a chunk: each stays
  // inside its chunk.)
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  if (elementBytes == 0 || !llvm::isPowerOf2_64(elementBytes) ||
      elementBytes > kChunkBytes)
    return std::nullopt;
  int64_t rowBytes = type.getDimSize(rank - 1) * elementBytes;
  int64_t chunk = kChunkBytes / elementBytes;
  if (rowBytes % (kSwizzleChunks * kChunkBytes) == 0)
    return SwizzleShape{1, kSwizzleChunks, chunk};
  if (rowBytes == 4 * kChunkBytes || rowBytes == 2 * kChunkBytes) {
    int64_t chunksPerRow = rowBytes / kChunkBytes;
    return SwizzleShape{kSwizzleChunks / chunksPerRow, chunksPerRow, chunk};
  }
  return std::nullopt;
}

/// The index operands of an access the swizzle rewrites, or null where
/// `op` is a use it does not know.
std::optional<MutableOperandRange> accessIndices(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return load.getIndicesMutable();
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return store.getIndicesMutable();
  if (auto matrix = dyn_cast<nvgpu::LdMatrixOp>(op))
    return matrix.getIndicesMutable();
  if (auto load = dyn_cast<vector::LoadOp>(op))
    return load.getIndicesMutable();
  if (auto store = dyn_cast<vector::StoreOp>(op))
    return store.getIndicesMutable();
  if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op))
    return copy.getDstIndicesMutable();
  return std::nullopt;
}

/// Whether `count` elements from `column` stay inside one chunk of `chunk`
/// elements: a power of two of them, at most a chunk, from a column known
/// to be a multiple of it (a chunk is a multiple of it too).
bool fitsChunk(int64_t count, Value column, int64_t chunk) {
  return count > 0 && llvm::isPowerOf2_64(count) && count <= chunk &&
         isKnownMultipleOf(column, count);
}

/// Whether the access `op` stays inside one chunk of `chunk` elements (an
/// element, an ldmatrix row, a 1-D vector or a cp.async, see fitsChunk), so
/// that permuting chunks keeps it whole. (The mma fragments' paired loads,
/// 2 elements from an even column, are such vectors.)
bool withinChunk(Operation *op, Value column, int64_t chunk) {
  if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op))
    return fitsChunk(copy.getDstElements().getSExtValue(), column, chunk);
  VectorType type;
  if (auto load = dyn_cast<vector::LoadOp>(op))
    type = load.getVectorType();
  else if (auto store = dyn_cast<vector::StoreOp>(op))
    type = store.getVectorType();
  else
    return true;
  return type.getRank() == 1 && fitsChunk(type.getNumElements(), column, chunk);
}

} // namespace

/// Every access of the shared-memory tile buffer `view` the swizzle
/// rewrites, or failure where it cannot take the buffer (see
/// swizzleSharedTileBuffers).
static FailureOr<SmallVector<Operation *>>
swizzledAccesses(memref::ViewOp view) {
  auto type = view.getType();
  int64_t rank = type.getRank();
  std::optional<SwizzleShape> shape = swizzleShape(type);
  if (!shape || !view.getSource().getDefiningOp<gpu::DynamicSharedMemoryOp>())
    return failure();
  // Every access, directly or through casts (to the generic address space,
  // or between static and dynamic sizes: the pipelined key loop's first
  // block is copied through one).
  SmallVector<Operation *> accesses;
  SmallVector<Value> uses = {view.getResult()};
  for (unsigned i = 0; i < uses.size(); ++i)
    for (Operation *user : uses[i].getUsers()) {
      // (Casts that keep the element layout: the same rows, the same
      // indices.)
      if (isa<memref::MemorySpaceCastOp, memref::CastOp>(user)) {
        auto to = dyn_cast<MemRefType>(user->getResult(0).getType());
        if (!to || to.getRank() != rank || to.getLayout() != type.getLayout())
          return failure();
        uses.push_back(user->getResult(0));
        continue;
      }
      // (Sizes and addresses: the vectorized copies' alignment checks.)
      if (isa<memref::DimOp, memref::ExtractStridedMetadataOp,
              memref::ExtractAlignedPointerAsIndexOp>(user))
        continue;
      std::optional<MutableOperandRange> indices = accessIndices(user);
      if (!indices ||
          !withinChunk(user, (*indices)[rank - 1].get(), shape->chunk))
        return failure();
      // (The buffer itself stored somewhere would escape; a cp.async reads
      // global memory.)
      if (user->getOperand(0) == uses[i] &&
          isa<memref::StoreOp, vector::StoreOp>(user))
        return failure();
      if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(user);
          copy && copy.getDst() != uses[i])
        return failure();
      accesses.push_back(user);
    }
  return accesses;
}

LogicalResult swizzleSharedTileBuffers(RewriterBase &rewriter,
                                       ArrayRef<memref::ViewOp> views) {
  SmallVector<Operation *> accesses;
  for (memref::ViewOp view : views) {
    FailureOr<SmallVector<Operation *>> found = swizzledAccesses(view);
    if (failed(found))
      return failure();
    llvm::append_range(accesses, *found);
  }
  if (views.empty())
    return success();
  MemRefType type = memref::ViewOp(views.front()).getType();
  int64_t rank = type.getRank();
  SwizzleShape shape = *swizzleShape(type);
  bool outerDims = llvm::any_of(views, [](memref::ViewOp view) {
    return view->hasAttr(kSwizzleOuterDimsAttr);
  });
  for (Operation *access : accesses) {
    MutableOperandRange indices = *accessIndices(access);
    Location loc = access->getLoc();
    rewriter.setInsertionPoint(access);
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, v);
    };
    // column ^ (((row / rowsPerLine + outer) mod period) · chunk): the row's
    // chunks permuted, each element kept at its offset within its chunk.
    Value row = indices[rank - 2].get();
    Value column = indices[rank - 1].get();
    if (shape.rowsPerLine > 1)
      row =
          arith::DivUIOp::create(rewriter, loc, row, index(shape.rowsPerLine));
    // In a block-wide tile (dat.swizzle_outer_dims) the outer indices join
    // the key: a head-major [.., heads, keys, d] block read along its heads
    // (HYLA's value network contracts over them) has every row at the same
    // key otherwise, 8 ldmatrix rows in one bank group, since each head's
    // rows are a multiple of 8 lines apart. (Every view of the buffer takes
    // the same key: dat-gpu-map-tiles writes and reads a block's bytes
    // through views of the same sizes. A dim of one adds its index, 0, to
    // nothing. Warp-row programs read a head at a time, and the adds would
    // cost their registers.)
    for (int64_t d = 0; outerDims && d + 2 < rank; ++d)
      if (type.getDimSize(d) != 1 && !isConstantIntValue(indices[d].get(), 0))
        row = arith::AddIOp::create(rewriter, loc, row, indices[d].get());
    Value key = arith::MulIOp::create(
        rewriter, loc,
        arith::RemUIOp::create(rewriter, loc, row, index(shape.period)),
        index(shape.chunk));
    Value swizzled = arith::XOrIOp::create(rewriter, loc, column, key);
    rewriter.modifyOpInPlace(access,
                             [&] { indices[rank - 1].assign(swizzled); });
  }
  return success();
}

namespace {

/// The views of `fn`'s dynamic shared memory by buffer, where buffers are
/// disjoint (each starts at a constant byte past the previous one's static
/// end): a buffer's swizzle must not be seen through another view of its
/// bytes. Views at the same byte are one buffer where their rows agree (the
/// key loop's view of a block and the view its next block is copied
/// through, dat-gpu-map-tiles' pipelined staging copies). Empty where
/// anything else uses the memory or two buffers may overlap. (A view of a
/// dynamic size is taken to end where the next begins: dat-gpu-map-tiles
/// places each buffer at its largest size.)
SmallVector<SmallVector<memref::ViewOp>>
disjointSharedBuffers(FunctionOpInterface fn) {
  std::map<int64_t, SmallVector<memref::ViewOp>> byShift;
  bool other = false;
  fn->walk([&](gpu::DynamicSharedMemoryOp shared) {
    for (Operation *user : shared->getUsers()) {
      auto view = dyn_cast<memref::ViewOp>(user);
      std::optional<int64_t> shift =
          view ? getConstantIntValue(view.getByteShift()) : std::nullopt;
      if (!shift) {
        other = true;
        continue;
      }
      byShift[*shift].push_back(view);
    }
  });
  if (other)
    return {};
  SmallVector<SmallVector<memref::ViewOp>> buffers;
  for (auto it = byShift.begin(); it != byShift.end(); ++it) {
    auto &[shift, views] = *it;
    MemRefType first = views.front().getType();
    int64_t rank = first.getRank();
    for (memref::ViewOp view : views) {
      MemRefType type = view.getType();
      if (type.getElementType() != first.getElementType() ||
          type.getRank() != rank ||
          (rank > 0 && type.getDimSize(rank - 1) != first.getDimSize(rank - 1)))
        return {};
      if (std::next(it) != byShift.end() && type.hasStaticShape() &&
          shift + type.getNumElements() * type.getElementTypeBitWidth() / 8 >
              std::next(it)->first)
        return {};
    }
    buffers.push_back(views);
  }
  return buffers;
}

/// The view of dynamic shared memory `ldmatrix` reads, through casts and
/// other views (a subview, which the swizzle does not take), or null.
memref::ViewOp sourceView(nvgpu::LdMatrixOp ldmatrix) {
  Value source = ldmatrix.getSrcMemref();
  while (Operation *def = source.getDefiningOp()) {
    auto view = dyn_cast<memref::ViewOp>(def);
    if (view && view.getSource().getDefiningOp<gpu::DynamicSharedMemoryOp>())
      return view;
    auto viewLike = dyn_cast<ViewLikeOpInterface>(def);
    if (!viewLike)
      return {};
    source = viewLike.getViewSource();
  }
  return {};
}

struct GPUSwizzleSharedTilesPass final
    : impl::DatGPUSwizzleSharedTilesBase<GPUSwizzleSharedTilesPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    llvm::SmallPtrSet<Operation *, 8> swizzled;
    getOperation()->walk([&](FunctionOpInterface fn) {
      for (ArrayRef<memref::ViewOp> views : disjointSharedBuffers(fn))
        if (succeeded(swizzleSharedTileBuffers(rewriter, views)))
          for (memref::ViewOp view : views)
            swizzled.insert(view);
    });
    if (!reportConflicts)
      return;
    // The views ldmatrix reads with bank conflicts: rows the swizzle would
    // take, not swizzled.
    llvm::SmallPtrSet<Operation *, 8> reported;
    getOperation()->walk([&](nvgpu::LdMatrixOp ldmatrix) {
      memref::ViewOp view = sourceView(ldmatrix);
      if (!view || swizzled.contains(view) || !reported.insert(view).second)
        return;
      std::optional<SwizzleShape> shape = swizzleShape(view.getType());
      if (!shape)
        return;
      // (A matrix's 8 rows at one chunk share banks `period` ways: 8 for
      // rows of 128 bytes, 4 for 64, 2 for 32.)
      InFlightDiagnostic remark = view.emitRemark();
      remark << "ldmatrix reads this shared buffer unswizzled: "
             << shape->period
             << "-way bank conflicts (a use the swizzle does not take, or an "
                "overlapping view)";
      remark.attachNote(ldmatrix.getLoc()) << "read here";
    });
  }
};
} // namespace

} // namespace mlir::dat
