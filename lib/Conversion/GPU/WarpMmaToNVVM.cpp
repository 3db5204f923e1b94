//===- WarpMmaToNVVM.cpp - warp MMA vector tiles → nvvm.mma.sync ----------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Distributes the vector tiles of buildWarpMmaContraction over the 32 lanes
// of a warp, in the fragment layout of PTX's mma.m16n8k16 with bf16
// operands (PTX ISA, "Matrix Fragments for mma.m16n8k16"): with g = lane/4
// and t = lane%4, a lane holds
//   A (16×16): (g, 2t..2t+1), (g+8, 2t..), (g, 2t+8..), (g+8, 2t+8..)
//   B (n×k, 8×16): (g, 2t..2t+1), (g, 2t+8..)
//   C (16×8): (g, 2t..2t+1), (g+8, 2t..)
// Upstream's vector → nvgpu.mma.sync conversion is the route for f16 and
// tf32; LLVM 22 has no bf16 case in it (nor in nvgpu → NVVM), hence these
// patterns for bf16, to nvvm.mma.sync directly. Operand tiles in shared
// memory are read with one ldmatrix each (nvgpu.ldmatrix); others, and
// accumulator tiles, with the lane's scalar loads and stores.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Divisibility.h"
#include "dat/Conversion/Passes.h"
#include "dat/Conversion/WarpMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::dat {

#define GEN_PASS_DEF_DATGPUWARPMMATONVVM
#include "dat/Conversion/Passes.h.inc"

namespace {

/// Which MMA operand a vector tile is, by its shape; or a row vector of a
/// 16-row accumulator tile (one value per row).
enum class Role { A, B, C, Row };

std::optional<Role> roleOf(Type type) {
  auto vector = dyn_cast<VectorType>(type);
  if (!vector || vector.isScalable())
    return std::nullopt;
  ArrayRef<int64_t> shape = vector.getShape();
  if (shape == ArrayRef<int64_t>{kWarpMmaM} ||
      shape == ArrayRef<int64_t>{kWarpMmaM, 1})
    return Role::Row;
  if (vector.getRank() != 2)
    return std::nullopt;
  if (shape[0] == kWarpMmaM && shape[1] == kWarpMmaK)
    return Role::A;
  if (shape[0] == kWarpMmaN && shape[1] == kWarpMmaK)
    return Role::B;
  if (shape[0] == kWarpMmaM && shape[1] == kWarpMmaN)
    return Role::C;
  return std::nullopt;
}

int64_t fragmentSize(Role role) {
  switch (role) {
  case Role::A:
    return 8;
  case Role::Row:
    return 2;
  default:
    return 4;
  }
}

/// Marks an A-shaped (16×16) read whose only users split it into two B
/// tiles (readWarpMmaBTiles), and those splits: its fragment is then made
/// in B-pair order, each B tile's two registers side by side, which mma.sync
/// takes as they come out of ldmatrix. (In the A order a tile's registers
/// are 0 and 2: ptxas moved four registers per read into aligned pairs,
/// 128 of the 874 instructions of K1's key loop.)
constexpr StringLiteral kBPairOrderAttr = "dat.b_pair_order";

/// Whether `op` takes rows 0-7 or 8-15 of a 16×16 tile as an 8×16 B tile.
bool isBHalf(vector::ExtractStridedSliceOp op) {
  auto offsets = extractFromIntegerArrayAttr<int64_t>(op.getOffsets());
  auto strides = extractFromIntegerArrayAttr<int64_t>(op.getStrides());
  return roleOf(op.getSourceVectorType()) == Role::A &&
         roleOf(op.getType()) == Role::B && offsets.size() == 2 &&
         (offsets[0] == 0 || offsets[0] == kWarpMmaN) && offsets[1] == 0 &&
         strides == SmallVector<int64_t>{1, 1};
}

void markBPairReads(Operation *root) {
  root->walk([](vector::TransferReadOp read) {
    if (roleOf(read.getVectorType()) != Role::A || read->use_empty())
      return;
    for (Operation *user : read->getUsers()) {
      auto half = dyn_cast<vector::ExtractStridedSliceOp>(user);
      if (!half || !isBHalf(half))
        return;
    }
    UnitAttr mark = UnitAttr::get(read.getContext());
    read->setAttr(kBPairOrderAttr, mark);
    for (Operation *user : read->getUsers())
      user->setAttr(kBPairOrderAttr, mark);
  });
}

/// The (row, column) in its tile of each element of the lane's fragment.
SmallVector<std::pair<Value, Value>>
fragmentCoordinates(OpBuilder &b, Location loc, Role role) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value lane = gpu::LaneIdOp::create(b, loc, /*upperBound=*/nullptr);
  Value g = arith::DivUIOp::create(b, loc, lane, index(4));
  Value t2 = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, index(4)), index(2));
  auto plus = [&](Value v, int64_t c) -> Value {
    return c ? arith::AddIOp::create(b, loc, v, index(c)).getResult() : v;
  };
  SmallVector<std::pair<Value, Value>> coordinates;
  for (int64_t e = 0, size = fragmentSize(role); e < size; ++e) {
    int64_t reg = e / 2, half = e % 2;
    switch (role) {
    case Role::A:
      coordinates.emplace_back(plus(g, 8 * (reg % 2)),
                               plus(t2, half + 8 * (reg / 2)));
      break;
    case Role::B:
      coordinates.emplace_back(g, plus(t2, half + 8 * reg));
      break;
    case Role::C:
      coordinates.emplace_back(plus(g, 8 * reg), plus(t2, half));
      break;
    case Role::Row:
      coordinates.emplace_back(plus(g, 8 * e), index(0));
      break;
    }
  }
  return coordinates;
}

/// A tile element's memref indices in a transfer, and whether it lies
/// within the memref (null where the transfer is in bounds).
struct ElementAccess {
  SmallVector<Value> indices;
  Value valid;
};

/// The extent of the memref dim each vector dim of `op` runs along, where
/// the transfer may run past it (null where it is in bounds).
SmallVector<Value, 2> boundsOf(OpBuilder &b, Location loc,
                               VectorTransferOpInterface op, Value base) {
  SmallVector<Value, 2> bounds;
  for (auto [i, result] : llvm::enumerate(op.getPermutationMap().getResults()))
    bounds.push_back(
        op.isDimInBounds(i)
            ? Value()
            : memref::DimOp::create(b, loc, base,
                                    cast<AffineDimExpr>(result).getPosition())
                  .getResult());
  return bounds;
}

/// Where the tile element (row, column) of `op` is, given its `bounds`
/// (boundsOf), and whether it lies inside them.
ElementAccess elementAccess(OpBuilder &b, Location loc,
                            VectorTransferOpInterface op, ValueRange indices,
                            ArrayRef<Value> bounds, Value row, Value column) {
  ElementAccess access{SmallVector<Value>(indices.begin(), indices.end()), {}};
  Value offsets[] = {row, column};
  for (auto [i, result] :
       llvm::enumerate(op.getPermutationMap().getResults())) {
    unsigned dim = cast<AffineDimExpr>(result).getPosition();
    Value &at = access.indices[dim];
    at = isZeroInteger(at) ? offsets[i]
                           : arith::AddIOp::create(b, loc, at, offsets[i]);
    Value size = bounds[i];
    if (!size)
      continue;
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, at, size);
    access.valid = access.valid
                       ? arith::AndIOp::create(b, loc, access.valid, inside)
                       : inside;
  }
  return access;
}

/// Transfers qualify without masks, from memrefs, with a permutation of two
/// memref dims.
bool isPlainTransfer(VectorTransferOpInterface op) {
  return !op.getMask() && isa<MemRefType>(op.getShapedType()) &&
         op.getPermutationMap().getNumResults() == 2 &&
         llvm::all_of(op.getPermutationMap().getResults(),
                      [](AffineExpr e) { return isa<AffineDimExpr>(e); });
}

/// The elements of a fragment.
SmallVector<Value> elementsOf(OpBuilder &b, Location loc, Value fragment) {
  SmallVector<Value> elements;
  for (int64_t i = 0, e = cast<VectorType>(fragment.getType()).getNumElements();
       i < e; ++i)
    elements.push_back(vector::ExtractOp::create(b, loc, fragment, i));
  return elements;
}

/// Rows of 8 bf16 (16 bytes) that `ldmatrix` can read a tile from: the
/// shared-memory memref `op` reads (through the cast to the generic address
/// space the tile buffers are used through), whether the tile's first
/// vector dim is the memref's contiguous one (`.trans`), and the condition
/// (null: always) under which the whole tile lies inside the memref.
/// Failure where `ldmatrix` cannot read it: not bf16, not in shared memory
/// at a 16-byte aligned place, no contiguous dim among the tile's, or a
/// row start not provably 16-byte aligned.
struct MatrixSource {
  Value shared;
  bool transpose;
  Value inside;
};

FailureOr<MatrixSource> matrixSource(OpBuilder &b, vector::TransferReadOp op,
                                     Value base, ValueRange indices,
                                     Role role) {
  auto spaceCast = base.getDefiningOp<memref::MemorySpaceCastOp>();
  if ((role != Role::A && role != Role::B) || !spaceCast ||
      !op.getVectorType().getElementType().isBF16())
    return failure();
  Value shared = spaceCast.getSource();
  auto type = dyn_cast<MemRefType>(shared.getType());
  auto space =
      type ? dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace())
           : nullptr;
  if (!space || space.getValue() != gpu::AddressSpace::Workgroup ||
      !type.getElementType().isBF16() || !type.getLayout().isIdentity())
    return failure();
  // A view of the dynamic shared memory (16-byte aligned) at a multiple of
  // 16 bytes.
  auto view = shared.getDefiningOp<memref::ViewOp>();
  if (!view || !view.getSource().getDefiningOp<gpu::DynamicSharedMemoryOp>() ||
      !isKnownMultipleOf(view.getByteShift(), 16))
    return failure();
  // Identity layout: the last dim is contiguous, every other dim's stride
  // a multiple of its size; rows start 16-byte aligned where that size is a
  // multiple of 8 and the tile's offset along it is too.
  int64_t last = type.getRank() - 1;
  if (ShapedType::isDynamic(type.getDimSize(last)) ||
      type.getDimSize(last) % 8 != 0 || !isKnownMultipleOf(indices[last], 8))
    return failure();
  AffineMap map = op.getPermutationMap();
  unsigned rowDim = cast<AffineDimExpr>(map.getResult(0)).getPosition();
  unsigned columnDim = cast<AffineDimExpr>(map.getResult(1)).getPosition();
  if (rowDim != last && columnDim != last)
    return failure();
  // Dims the transfer may run past: the whole tile inside them, or the
  // scalar loads.
  Location loc = op.getLoc();
  Value inside;
  ArrayRef<int64_t> shape = op.getVectorType().getShape();
  unsigned tileDims[] = {rowDim, columnDim};
  for (auto [i, dim] : llvm::enumerate(tileDims)) {
    if (op.isDimInBounds(i))
      continue;
    Value end = arith::AddIOp::create(
        b, loc, indices[dim], arith::ConstantIndexOp::create(b, loc, shape[i]));
    Value fits = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ule, end,
        memref::DimOp::create(b, loc, shared, dim).getResult());
    inside = inside ? arith::AndIOp::create(b, loc, inside, fits) : fits;
  }
  return MatrixSource{shared, rowDim == last, inside};
}

/// An A (16×16) or B (8×16) bf16 tile's fragment read by one `ldmatrix`
/// (.x4 or .x2) from `source`. Its 8×8 matrices are the fragment's
/// registers in order: A's (rows, columns) (0, 0), (8, 0), (0, 8), (8, 8),
/// or in B-pair order (0, 0), (0, 8), (8, 0), (8, 8); B's (0, 0), (0, 8).
/// Lane l gives the address of row l % 8 of matrix l / 8: a row of 8 tile
/// columns, or with `.trans` (the tile's rows contiguous in memory) of 8
/// tile rows, which the instruction transposes. Either way register j of
/// lane 4g + t holds the tile's elements (R_j + g, C_j + 2t) and
/// (R_j + g, C_j + 2t + 1): the mma fragment's.
Value loadMatrixFragment(OpBuilder &b, vector::TransferReadOp op,
                         ValueRange tileIndices, const MatrixSource &source,
                         Role role, VectorType fragment, bool pairOrder) {
  Location loc = op.getLoc();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  int64_t matrices = role == Role::A ? 4 : 2;
  Value lane = gpu::LaneIdOp::create(b, loc, /*upperBound=*/nullptr);
  Value r = arith::RemUIOp::create(b, loc, lane, index(8));
  // (Lanes 16-31 of an .x2 give addresses too: the first two matrices'.)
  Value matrix = arith::RemUIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, lane, index(8)), index(matrices));
  Value rowOffset, columnOffset;
  if (role == Role::A) {
    Value low = arith::RemUIOp::create(b, loc, matrix, index(2));
    Value high = arith::DivUIOp::create(b, loc, matrix, index(2));
    rowOffset = arith::MulIOp::create(b, loc, pairOrder ? high : low, index(8));
    columnOffset =
        arith::MulIOp::create(b, loc, pairOrder ? low : high, index(8));
  } else {
    rowOffset = index(0);
    columnOffset = arith::MulIOp::create(b, loc, matrix, index(8));
  }
  if (source.transpose)
    columnOffset = arith::AddIOp::create(b, loc, columnOffset, r);
  else
    rowOffset = arith::AddIOp::create(b, loc, rowOffset, r);
  AffineMap map = op.getPermutationMap();
  SmallVector<Value> indices(tileIndices);
  Value offsets[] = {rowOffset, columnOffset};
  for (auto [i, result] : llvm::enumerate(map.getResults())) {
    unsigned dim = cast<AffineDimExpr>(result).getPosition();
    indices[dim] = arith::AddIOp::create(b, loc, indices[dim], offsets[i]);
  }
  Type bf16 = b.getBF16Type();
  Value loaded = nvgpu::LdMatrixOp::create(
      b, loc, VectorType::get({matrices, 2}, bf16), source.shared, indices,
      source.transpose, matrices);
  SmallVector<Value> elements;
  for (int64_t j = 0; j < matrices; ++j)
    for (int64_t h = 0; h < 2; ++h)
      elements.push_back(
          vector::ExtractOp::create(b, loc, loaded, ArrayRef<int64_t>{j, h}));
  return vector::FromElementsOp::create(b, loc, fragment, elements);
}

/// The bytes of a pair of `element`s: the alignment a paired access needs.
int64_t pairBytes(Type element) {
  return 2 * element.getIntOrFloatBitWidth() / 8;
}

/// Whether a lane's fragment elements of the transfer `op` (on `base` at
/// `indices`) can be loaded or stored two at a time, as one access of
/// twice the width (a 32-bit load of two bf16): the elements 2i and 2i + 1
/// of an A, B or C fragment are neighbours along the tile's columns, at an
/// even column of the tile. That needs the columns to run along the
/// memref's contiguous dim, and the pair's first element at an even offset
/// from a first element aligned to the pair. nullopt where the layout rules
/// it out; else the warp-uniform run-time condition that the memref's
/// first element is so aligned, the tile's origin at an even
/// offset, every other stride even and, where the transfer may run past
/// the columns' end, their extent even (so that a pair is inside where
/// its first element is).
std::optional<Value> pairedAccess(OpBuilder &b, VectorTransferOpInterface op,
                                  Value base, ValueRange indices) {
  std::optional<Role> role = roleOf(op.getVectorType());
  auto type = dyn_cast<MemRefType>(base.getType());
  if (!role || role == Role::Row || !type ||
      !type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() % 8 != 0)
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1)
    return std::nullopt;
  unsigned last = type.getRank() - 1;
  unsigned columnDim =
      cast<AffineDimExpr>(op.getPermutationMap().getResult(1)).getPosition();
  if (columnDim != last)
    return std::nullopt;
  Location loc = op.getLoc();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, base);
  // The tile origin's offset in elements from the aligned pointer, and the
  // quantities that must be even.
  SmallVector<Value> even{metadata.getOffset()};
  for (unsigned d = 0; d < last; ++d)
    even.push_back(metadata.getStrides()[d]);
  even.push_back(indices[last]);
  if (!op.isDimInBounds(1))
    even.push_back(metadata.getSizes()[last]);
  Value odd = arith::RemUIOp::create(
      b, loc, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, base),
      index(pairBytes(type.getElementType())));
  for (Value v : even)
    if (!isKnownMultipleOf(v, 2))
      odd = arith::OrIOp::create(b, loc, odd,
                                 arith::AndIOp::create(b, loc, v, index(1)));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, odd, index(0))
      .getResult();
}

struct ReadFragment final : OpConversionPattern<vector::TransferReadOp> {
  ReadFragment(const TypeConverter &converter, MLIRContext *ctx, bool ldmatrix,
               bool pairs)
      : OpConversionPattern(converter, ctx), ldmatrix(ldmatrix), pairs(pairs) {}

  LogicalResult
  matchAndRewrite(vector::TransferReadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<Role> role = roleOf(op.getVectorType());
    if (!role || !isPlainTransfer(op))
      return rewriter.notifyMatchFailure(op, "not an MMA operand tile");
    Location loc = op.getLoc();
    auto fragment =
        cast<VectorType>(getTypeConverter()->convertType(op.getVectorType()));
    bool pairOrder = op->hasAttr(kBPairOrderAttr);
    // The lanes' own loads give the A order: permuted to the pairs'.
    auto scalarFragment = [&]() -> Value {
      Value f = readScalarFragment(rewriter, op, adaptor, *role, fragment);
      if (!pairOrder)
        return f;
      return vector::ShuffleOp::create(
          rewriter, loc, f, f, ArrayRef<int64_t>{0, 1, 4, 5, 2, 3, 6, 7});
    };
    // From shared memory, one ldmatrix (under a warp-uniform check where
    // the tile may run past the buffer's end: the scalar loads otherwise).
    FailureOr<MatrixSource> source = failure();
    if (ldmatrix)
      source = matrixSource(rewriter, op, adaptor.getBase(),
                            adaptor.getIndices(), *role);
    if (failed(source)) {
      rewriter.replaceOp(op, scalarFragment());
      return success();
    }
    ValueRange indices = adaptor.getIndices();
    if (!source->inside) {
      rewriter.replaceOp(op, loadMatrixFragment(rewriter, op, indices, *source,
                                                *role, fragment, pairOrder));
      return success();
    }
    auto inside = scf::IfOp::create(rewriter, loc, fragment, source->inside,
                                    /*withElseRegion=*/true);
    rewriter.setInsertionPointToStart(inside.thenBlock());
    scf::YieldOp::create(rewriter, loc,
                         loadMatrixFragment(rewriter, op, indices, *source,
                                            *role, fragment, pairOrder));
    rewriter.setInsertionPointToStart(inside.elseBlock());
    scf::YieldOp::create(rewriter, loc, scalarFragment());
    rewriter.replaceOp(op, inside.getResult(0));
    return success();
  }

private:
  /// The fragment by the lane's own loads, two elements at a time where
  /// pairedAccess allows (under its warp-uniform run-time condition), else
  /// element by element.
  Value readScalarFragment(ConversionPatternRewriter &rewriter,
                           vector::TransferReadOp op, OpAdaptor adaptor,
                           Role role, VectorType fragment) const {
    Location loc = op.getLoc();
    std::optional<Value> paired;
    if (pairs)
      paired =
          pairedAccess(rewriter, op, adaptor.getBase(), adaptor.getIndices());
    if (!paired)
      return readElements(rewriter, op, adaptor, role, fragment, false);
    auto branch = scf::IfOp::create(rewriter, loc, fragment, *paired,
                                    /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(branch.thenBlock());
    scf::YieldOp::create(
        rewriter, loc,
        readElements(rewriter, op, adaptor, role, fragment, true));
    rewriter.setInsertionPointToStart(branch.elseBlock());
    scf::YieldOp::create(
        rewriter, loc,
        readElements(rewriter, op, adaptor, role, fragment, false));
    return branch.getResult(0);
  }

  /// The fragment's elements (two at a time with `pairs`: elements 2i and
  /// 2i + 1, neighbours along the tile's columns), each load checked
  /// against the memref's bounds where the transfer may run past them.
  Value readElements(ConversionPatternRewriter &rewriter,
                     vector::TransferReadOp op, OpAdaptor adaptor, Role role,
                     VectorType fragment, bool pairs) const {
    Location loc = op.getLoc();
    Value base = adaptor.getBase();
    Type element = adaptor.getPadding().getType();
    int64_t width = pairs ? 2 : 1;
    auto pairType = VectorType::get({2}, element);
    Type loadedType = pairs ? Type(pairType) : element;
    auto load = [&](ValueRange indices) -> Value {
      if (!pairs)
        return memref::LoadOp::create(rewriter, loc, base, indices);
      return vector::LoadOp::create(rewriter, loc, pairType, base, indices,
                                    /*nontemporal=*/false,
                                    llvm::MaybeAlign(pairBytes(element)));
    };
    SmallVector<Value, 2> bounds = boundsOf(rewriter, loc, op, base);
    SmallVector<Value> elements;
    auto coordinates = fragmentCoordinates(rewriter, loc, role);
    for (size_t e = 0; e < coordinates.size(); e += width) {
      auto [row, column] = coordinates[e];
      ElementAccess access = elementAccess(
          rewriter, loc, op, adaptor.getIndices(), bounds, row, column);
      Value loaded;
      if (!access.valid) {
        loaded = load(access.indices);
      } else {
        // Past the end, the padding, and no load: a load at a clamped
        // index would read an element another lane of the warp writes (the
        // accumulators), which compute-sanitizer's racecheck reports. (A
        // pair lies inside where its first element does: pairedAccess.)
        auto inside = scf::IfOp::create(rewriter, loc, loadedType, access.valid,
                                        /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointToStart(inside.thenBlock());
        scf::YieldOp::create(rewriter, loc, load(access.indices));
        rewriter.setInsertionPointToStart(inside.elseBlock());
        Value padding = adaptor.getPadding();
        if (pairs)
          padding =
              vector::BroadcastOp::create(rewriter, loc, pairType, padding);
        scf::YieldOp::create(rewriter, loc, padding);
        loaded = inside.getResult(0);
      }
      if (!pairs) {
        elements.push_back(loaded);
        continue;
      }
      for (int64_t i = 0; i < 2; ++i)
        elements.push_back(vector::ExtractOp::create(rewriter, loc, loaded, i));
    }
    return vector::FromElementsOp::create(rewriter, loc, fragment, elements);
  }

  bool ldmatrix;
  bool pairs;
};

struct WriteFragment final : OpConversionPattern<vector::TransferWriteOp> {
  WriteFragment(const TypeConverter &converter, MLIRContext *ctx, bool pairs)
      : OpConversionPattern(converter, ctx), pairs(pairs) {}
  LogicalResult
  matchAndRewrite(vector::TransferWriteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<Role> role = roleOf(op.getVectorType());
    if (role != Role::C || !isPlainTransfer(op))
      return rewriter.notifyMatchFailure(op, "not an MMA accumulator tile");
    Location loc = op.getLoc();
    // Two elements a store where pairedAccess allows (under its run-time
    // condition), else one.
    std::optional<Value> paired;
    if (pairs)
      paired =
          pairedAccess(rewriter, op, adaptor.getBase(), adaptor.getIndices());
    if (paired) {
      auto branch = scf::IfOp::create(rewriter, loc, *paired,
                                      /*withElseRegion=*/true);
      rewriter.setInsertionPoint(branch.thenBlock()->getTerminator());
      writeElements(rewriter, op, adaptor, *role, /*pairs=*/true);
      rewriter.setInsertionPoint(branch.elseBlock()->getTerminator());
    }
    writeElements(rewriter, op, adaptor, *role, /*pairs=*/false);
    rewriter.eraseOp(op);
    return success();
  }

private:
  void writeElements(ConversionPatternRewriter &rewriter,
                     vector::TransferWriteOp op, OpAdaptor adaptor, Role role,
                     bool pairs) const {
    Location loc = op.getLoc();
    Value base = adaptor.getBase();
    SmallVector<Value, 2> bounds = boundsOf(rewriter, loc, op, base);
    SmallVector<Value> elements =
        elementsOf(rewriter, loc, adaptor.getValueToStore());
    auto coordinates = fragmentCoordinates(rewriter, loc, role);
    int64_t width = pairs ? 2 : 1;
    for (size_t e = 0; e < coordinates.size(); e += width) {
      auto [row, column] = coordinates[e];
      ElementAccess access = elementAccess(
          rewriter, loc, op, adaptor.getIndices(), bounds, row, column);
      OpBuilder::InsertionGuard guard(rewriter);
      if (access.valid) {
        auto inside = scf::IfOp::create(rewriter, loc, access.valid,
                                        /*withElseRegion=*/false);
        rewriter.setInsertionPoint(inside.thenBlock()->getTerminator());
      }
      if (!pairs) {
        memref::StoreOp::create(rewriter, loc, elements[e], base,
                                access.indices);
        continue;
      }
      Type element = elements[e].getType();
      Value pair = vector::FromElementsOp::create(
          rewriter, loc, VectorType::get({2}, element),
          ValueRange{elements[e], elements[e + 1]});
      vector::StoreOp::create(rewriter, loc, pair, base, access.indices,
                              /*nontemporal=*/false,
                              llvm::MaybeAlign(pairBytes(element)));
    }
  }

  bool pairs;
};

/// arith.extf / arith.truncf act on fragments element by element.
template <typename Op>
struct ConvertFragmentCast final : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = this->getTypeConverter()->convertType(op.getType());
    if (!type || type == op.getType())
      return failure();
    rewriter.replaceOpWithNewOp<Op>(op, type, adaptor.getIn());
    return success();
  }
};

/// The fragment's bf16 values, as the i32 registers mma.sync takes.
SmallVector<Value> bf16Registers(OpBuilder &b, Location loc, Value fragment) {
  auto type = cast<VectorType>(fragment.getType());
  if (!type.getElementType().isBF16()) {
    // f32: the bf16 it was widened from, else rounded to bf16.
    auto ext = fragment.getDefiningOp<arith::ExtFOp>();
    if (ext && getElementTypeOrSelf(ext.getIn().getType()).isBF16())
      fragment = ext.getIn();
    else
      fragment = arith::TruncFOp::create(b, loc, type.clone(b.getBF16Type()),
                                         fragment);
  }
  int64_t count = type.getNumElements() / 2;
  return elementsOf(
      b, loc,
      vector::BitCastOp::create(
          b, loc, VectorType::get({count}, b.getI32Type()), fragment));
}

struct ContractToMmaSync final : OpConversionPattern<vector::ContractionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::ContractionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = op.getContext();
    if (roleOf(op.getLhsType()) != Role::A ||
        roleOf(op.getRhsType()) != Role::B ||
        roleOf(op.getResultType()) != Role::C ||
        op.getKind() != vector::CombiningKind::ADD ||
        op.getIndexingMapsArray() != warpMmaIndexingMaps(ctx) ||
        !llvm::all_of(TypeRange{op.getLhsType(), op.getRhsType()},
                      [](Type t) {
                        Type e = getElementTypeOrSelf(t);
                        return e.isBF16() || e.isF32();
                      }) ||
        !getElementTypeOrSelf(op.getResultType()).isF32())
      return rewriter.notifyMatchFailure(op, "not an m16n8k16 contraction");
    Location loc = op.getLoc();
    SmallVector<Value> a = bf16Registers(rewriter, loc, adaptor.getLhs());
    SmallVector<Value> b = bf16Registers(rewriter, loc, adaptor.getRhs());
    SmallVector<Value> c = elementsOf(rewriter, loc, adaptor.getAcc());
    Type f32 = rewriter.getF32Type();
    auto result = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
    auto mma = NVVM::MmaOp::create(
        rewriter, loc, result, a, b, c,
        ArrayRef<int64_t>{kWarpMmaM, kWarpMmaN, kWarpMmaK},
        /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
        std::array{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
        std::array{NVVM::MMALayout::row, NVVM::MMALayout::col});
    SmallVector<Value> d;
    for (int64_t i = 0; i < 4; ++i)
      d.push_back(LLVM::ExtractValueOp::create(rewriter, loc, mma, i));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(
        op, VectorType::get({4}, f32), d);
    return success();
  }
};

/// An elementwise arith or math op on tiles (buildWarpRowProgram's softmax
/// updates) acts on the lane's elements, one scalar op each.
struct ScalarizeFragmentOp final : ConversionPattern {
  ScalarizeFragmentOp(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
        !op->hasTrait<OpTrait::Elementwise>() || op->getNumResults() != 1 ||
        op->getNumRegions() || isa<arith::ExtFOp, arith::TruncFOp>(op))
      return failure();
    Type original = op->getResult(0).getType();
    auto fragment =
        dyn_cast_or_null<VectorType>(getTypeConverter()->convertType(original));
    if (!fragment || fragment == original)
      return failure();
    Location loc = op->getLoc();
    SmallVector<SmallVector<Value>> inputs;
    for (Value operand : operands) {
      if (!isa<VectorType>(operand.getType()))
        return rewriter.notifyMatchFailure(op, "a scalar operand");
      inputs.push_back(elementsOf(rewriter, loc, operand));
      if (static_cast<int64_t>(inputs.back().size()) !=
          fragment.getNumElements())
        return rewriter.notifyMatchFailure(op, "fragments of other sizes");
    }
    SmallVector<Value> results;
    for (int64_t e = 0; e < fragment.getNumElements(); ++e) {
      OperationState state(loc, op->getName());
      for (const SmallVector<Value> &input : inputs)
        state.addOperands(input[e]);
      state.addAttributes(op->getAttrs());
      state.addTypes(fragment.getElementType());
      results.push_back(rewriter.create(state)->getResult(0));
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, fragment, results);
    return success();
  }
};

/// A splat constant tile: the splat fragment.
struct FragmentConstant final : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast_or_null<VectorType>(
        getTypeConverter()->convertType(op.getType()));
    auto splat = dyn_cast<SplatElementsAttr>(op.getValue());
    if (!type || type == op.getType() || !splat)
      return failure();
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, SplatElementsAttr::get(type, splat.getSplatValue<Attribute>()));
    return success();
  }
};

/// Broadcasts to a tile or row vector: of a scalar (every element), of a row
/// vector to a 16×8 tile (the lane's rows g and g + 8), of the column
/// indices (vector.step of 8) to a tile (the lane's columns 2t, 2t + 1).
struct FragmentBroadcast final : OpConversionPattern<vector::BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<Role> role = roleOf(op.getResultVectorType());
    if (!role)
      return failure();
    auto fragment =
        cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    Location loc = op.getLoc();
    Value source = adaptor.getSource();
    SmallVector<Value> elements;
    if (!isa<VectorType>(source.getType())) {
      elements.assign(fragment.getNumElements(), source);
    } else if (*role == Role::C && roleOf(op.getSourceType()) == Role::Row) {
      SmallVector<Value> rows = elementsOf(rewriter, loc, source);
      elements = {rows[0], rows[0], rows[1], rows[1]};
    } else if (*role == Role::C &&
               op.getSource().getDefiningOp<vector::StepOp>() &&
               cast<VectorType>(op.getSourceType()).getShape() ==
                   ArrayRef<int64_t>{kWarpMmaN}) {
      SmallVector<std::pair<Value, Value>> coordinates =
          fragmentCoordinates(rewriter, loc, Role::C);
      for (auto [row, column] : coordinates)
        elements.push_back(column);
    } else {
      return rewriter.notifyMatchFailure(op, "not a broadcast of fragments");
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, fragment, elements);
    return success();
  }
};

/// vector<16xT> <-> vector<16x1xT>: the same fragment.
struct FragmentShapeCast final : OpConversionPattern<vector::ShapeCastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::ShapeCastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (roleOf(op.getSourceVectorType()) != Role::Row ||
        roleOf(op.getResultVectorType()) != Role::Row)
      return failure();
    rewriter.replaceOp(op, adaptor.getSource());
    return success();
  }
};

/// The row indices 0..15: the lane's rows g and g + 8.
struct FragmentStep final : OpConversionPattern<vector::StepOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::StepOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (roleOf(op.getType()) != Role::Row)
      return failure();
    SmallVector<Value> rows;
    for (auto [row, column] :
         fragmentCoordinates(rewriter, op.getLoc(), Role::Row))
      rows.push_back(row);
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(
        op, getTypeConverter()->convertType(op.getType()), rows);
    return success();
  }
};

/// The lane's elements of a mask of the first `rows` rows and `columns`
/// columns of a tile.
Value maskFragment(OpBuilder &b, Location loc, Role role, Type fragment,
                   Value rows, Value columns) {
  SmallVector<Value> elements;
  for (auto [row, column] : fragmentCoordinates(b, loc, role)) {
    Value inRows =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row, rows);
    Value inColumns = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                            column, columns);
    elements.push_back(arith::AndIOp::create(b, loc, inRows, inColumns));
  }
  return vector::FromElementsOp::create(b, loc, cast<VectorType>(fragment),
                                        elements);
}

/// A mask of the first rows and columns of a tile: the lane's elements in it.
struct FragmentCreateMask final : OpConversionPattern<vector::CreateMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::CreateMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<Role> role = roleOf(op.getType());
    if (!role || *role == Role::Row)
      return failure();
    rewriter.replaceOp(
        op, maskFragment(rewriter, op.getLoc(), *role,
                         getTypeConverter()->convertType(op.getType()),
                         adaptor.getOperands()[0], adaptor.getOperands()[1]));
    return success();
  }
};

/// A constant mask (a create_mask folded): likewise.
struct FragmentConstantMask final
    : OpConversionPattern<vector::ConstantMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::ConstantMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<Role> role = roleOf(op.getType());
    if (!role || *role == Role::Row)
      return failure();
    Location loc = op.getLoc();
    ArrayRef<int64_t> sizes = op.getMaskDimSizes();
    rewriter.replaceOp(
        op,
        maskFragment(rewriter, loc, *role,
                     getTypeConverter()->convertType(op.getType()),
                     arith::ConstantIndexOp::create(rewriter, loc, sizes[0]),
                     arith::ConstantIndexOp::create(rewriter, loc, sizes[1])));
    return success();
  }
};

/// A 16×8 tile's row reduction: the lane's two elements of each of its rows,
/// then the other three lanes of the row (lanes 4g..4g+3: shuffles across
/// lane bits 0 and 1), then the accumulator.
struct FragmentRowReduction final
    : OpConversionPattern<vector::MultiDimReductionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::MultiDimReductionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (roleOf(op.getSourceVectorType()) != Role::C ||
        roleOf(op.getType()) != Role::Row ||
        op.getReductionMask() != ArrayRef<bool>{false, true})
      return failure();
    Location loc = op.getLoc();
    vector::CombiningKind kind = op.getKind();
    SmallVector<Value> x = elementsOf(rewriter, loc, adaptor.getSource());
    SmallVector<Value> acc = elementsOf(rewriter, loc, adaptor.getAcc());
    SmallVector<Value> rows;
    for (int64_t r = 0; r < 2; ++r) {
      Value v = vector::makeArithReduction(rewriter, loc, kind, x[2 * r],
                                           x[2 * r + 1]);
      for (int32_t offset : {1, 2}) {
        Value other = gpu::ShuffleOp::create(rewriter, loc, v, offset,
                                             kWarpSize, gpu::ShuffleMode::XOR)
                          .getShuffleResult();
        v = vector::makeArithReduction(rewriter, loc, kind, v, other);
      }
      rows.push_back(
          vector::makeArithReduction(rewriter, loc, kind, v, acc[r]));
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(
        op, getTypeConverter()->convertType(op.getType()), rows);
    return success();
  }
};

/// Two 16×8 tiles as the column halves of a 16×16 A tile: the A fragment's
/// first four elements are the left C fragment's, the last four the right's.
struct FragmentInsertHalf final
    : OpConversionPattern<vector::InsertStridedSliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::InsertStridedSliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto offsets = extractFromIntegerArrayAttr<int64_t>(op.getOffsets());
    auto strides = extractFromIntegerArrayAttr<int64_t>(op.getStrides());
    if (roleOf(op.getSourceVectorType()) != Role::C ||
        roleOf(op.getDestVectorType()) != Role::A || offsets[0] != 0 ||
        (offsets[1] != 0 && offsets[1] != kWarpMmaN) ||
        strides != SmallVector<int64_t>{1, 1})
      return failure();
    Location loc = op.getLoc();
    SmallVector<Value> dest = elementsOf(rewriter, loc, adaptor.getDest());
    SmallVector<Value> half =
        elementsOf(rewriter, loc, adaptor.getValueToStore());
    int64_t first = offsets[1] == 0 ? 0 : 4;
    for (int64_t e = 0; e < 4; ++e)
      dest[first + e] = half[e];
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(
        op, getTypeConverter()->convertType(op.getDestVectorType()), dest);
    return success();
  }
};

/// The two n-halves of a 16×16 tile read as A (two B tiles side by side,
/// readWarpMmaBTiles): rows 0-7 are the A fragment's registers 0 and 2,
/// rows 8-15 its registers 1 and 3 (elements (g, 2t..), (g, 2t+8..) of
/// each half, the B fragment's); of a fragment read in B-pair order,
/// registers 0 and 1, and 2 and 3.
struct FragmentExtractHalf final
    : OpConversionPattern<vector::ExtractStridedSliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(vector::ExtractStridedSliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isBHalf(op))
      return failure();
    auto offsets = extractFromIntegerArrayAttr<int64_t>(op.getOffsets());
    Location loc = op.getLoc();
    SmallVector<Value> a = elementsOf(rewriter, loc, adaptor.getSource());
    SmallVector<Value> half;
    if (op->hasAttr(kBPairOrderAttr)) {
      int64_t first = offsets[0] == 0 ? 0 : 4;
      half.assign(a.begin() + first, a.begin() + first + 4);
    } else {
      int64_t first = offsets[0] == 0 ? 0 : 2;
      half = {a[first], a[first + 1], a[first + 4], a[first + 5]};
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(
        op, getTypeConverter()->convertType(op.getType()), half);
    return success();
  }
};

} // namespace

void populateWarpMmaTypeConversions(TypeConverter &converter) {
  converter.addConversion([](Type type) { return type; });
  converter.addConversion([](VectorType type) -> Type {
    std::optional<Role> role = roleOf(type);
    if (!role)
      return type;
    return VectorType::get({fragmentSize(*role)}, type.getElementType());
  });
}

void populateWarpMmaToNVVMPatterns(const TypeConverter &converter,
                                   RewritePatternSet &patterns, bool ldmatrix,
                                   bool pairs) {
  patterns.add<ReadFragment>(converter, patterns.getContext(), ldmatrix, pairs);
  patterns.add<WriteFragment>(converter, patterns.getContext(), pairs);
  patterns.add<ContractToMmaSync, ConvertFragmentCast<arith::ExtFOp>,
               ConvertFragmentCast<arith::TruncFOp>, ScalarizeFragmentOp,
               FragmentConstant, FragmentBroadcast, FragmentShapeCast,
               FragmentStep, FragmentCreateMask, FragmentConstantMask,
               FragmentRowReduction, FragmentInsertHalf, FragmentExtractHalf>(
      converter, patterns.getContext());
}

namespace {
struct GPUWarpMmaToNVVMPass final
    : impl::DatGPUWarpMmaToNVVMBase<GPUWarpMmaToNVVMPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    if (ldmatrix && bPairOrder)
      markBPairReads(getOperation());
    TypeConverter converter;
    populateWarpMmaTypeConversions(converter);
    RewritePatternSet patterns(ctx);
    populateWarpMmaToNVVMPatterns(converter, patterns, ldmatrix, pairs);
    ConversionTarget target(*ctx);
    // Every op on tiles or row vectors becomes one on fragments.
    target.markUnknownOpDynamicallyLegal(
        [&](Operation *op) { return converter.isLegal(op); });
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

} // namespace mlir::dat
