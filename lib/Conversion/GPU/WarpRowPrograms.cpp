//===- WarpRowPrograms.cpp - a flash tile's rows in warp registers --------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// FlashAttention-2's structure for a flash tile loop: each warp owns 16 rows
// of the tile, and its rows of every per-row tile buffer (the scores and
// probabilities, the online softmax's row maxima and sums, the output
// accumulator) stay in registers for the whole key loop: 16×8 MMA
// accumulator tiles (vector<16x8xT>) and row vectors (vector<16xT>). The
// bf16 contractions are mma tiles whose A operand is either staged in shared
// memory (the query tile) or the probabilities in registers; elementwise ops
// act on the tiles; row reductions reduce them. The only linalg ops left are
// the staging copies of the blocks every warp reads (query tile, key and
// value blocks), each followed by the block's one barrier.
//
// The program is ordinary vector IR: with `emulate` the warps run one after
// another on the CPU (the golden cases check it there), and
// dat-gpu-warp-mma-to-nvvm distributes it over the lanes on the device.
//
// The rewrite takes a body or leaves it alone: every op touching a per-row
// buffer must be one of the forms below (a fill, an MMA contraction, an
// elementwise or row-reduction linalg.generic of arith and math ops, the
// final write of the output), or the tile keeps the block-wide mapping.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"
#include "dat/Conversion/WarpMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::dat {

namespace {

/// At most this many 16×8 tiles per row strip of one buffer (128 columns):
/// the registers a lane holds for it (4 per tile) must fit with the rest.
constexpr int64_t kMaxColumnTiles = 16;
/// Contractions whose reduction is longer are not unrolled.
constexpr int64_t kMaxReductionSteps = 16;

/// A per-row tile buffer: [1, .., G, R] (a row vector per warp) or
/// [1, .., G, R, C] (`columnTiles` 16×8 tiles per warp), G the query heads
/// of the tile.
struct RowBuffer {
  bool tile = false;
  int64_t columnTiles = 1;
  /// The buffer's columns (tile buffers): the valid part of the last tile.
  OpFoldResult columns;
};

struct Analysis {
  /// The row dim's position in every per-row buffer.
  unsigned rowDim = 0;
  /// Upper bound of the rows.
  int64_t rows = 0;
  /// Query heads the tile holds (grouped-query attention: the heads that
  /// share a key/value head), the dim before the rows; 0 until a buffer
  /// says. Each head's rows have their own warps.
  int64_t groups = 0;
  llvm::MapVector<Value, RowBuffer> buffers;
  /// Contractions and generics to rewrite.
  SmallPtrSet<Operation *, 16> ops;
};

/// Upper bound of dim `dim` of the buffer or view `shaped`: its size, or the
/// bound of the size its allocation or view was made with (tile sizes are
/// affine.min of the tile and what is left).
std::optional<int64_t> upperBound(Value shaped, int64_t dim) {
  auto type = cast<MemRefType>(shaped.getType());
  if (!type.isDynamicDim(dim))
    return type.getDimSize(dim);
  Value size;
  if (auto alloc = shaped.getDefiningOp<memref::AllocOp>())
    size = alloc.getDynamicSizes()[type.getDynamicDimIndex(dim)];
  else if (auto view = shaped.getDefiningOp<memref::SubViewOp>())
    size = dyn_cast<Value>(view.getMixedSizes()[dim]);
  if (!size)
    return std::nullopt;
  FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::UB, ValueBoundsConstraintSet::Variable(size),
      /*stopCondition=*/nullptr, /*closedUB=*/true);
  if (failed(bound) || *bound < 1)
    return std::nullopt;
  return *bound;
}

/// Upper bound of the reduction loop `k` of `op`, from the dim of `operand`
/// that it indexes.
std::optional<int64_t> reductionBound(linalg::LinalgOp op, OpOperand &operand,
                                      unsigned k) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  for (auto [i, expr] : llvm::enumerate(map.getResults()))
    if (expr == getAffineDimExpr(k, op.getContext()))
      return upperBound(operand.get(), i);
  return std::nullopt;
}

/// The combining kind of a reduction body `combine(x, out)` and x, where
/// `out` (the accumulator) is used there only.
std::optional<std::pair<vector::CombiningKind, Value>>
reductionCombiner(linalg::GenericOp op) {
  Block *body = op.getBody();
  BlockArgument out = body->getArguments().back();
  Operation *combine = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!combine || combine->getNumOperands() != 2 || !out.hasOneUse() ||
      combine->getBlock() != body)
    return std::nullopt;
  Value x = combine->getOperand(0) == out   ? combine->getOperand(1)
            : combine->getOperand(1) == out ? combine->getOperand(0)
                                            : Value();
  if (!x)
    return std::nullopt;
  std::optional<vector::CombiningKind> kind =
      TypeSwitch<Operation *, std::optional<vector::CombiningKind>>(combine)
          .Case([](arith::AddFOp) { return vector::CombiningKind::ADD; })
          .Case([](arith::MulFOp) { return vector::CombiningKind::MUL; })
          .Case(
              [](arith::MaximumFOp) { return vector::CombiningKind::MAXIMUMF; })
          .Case(
              [](arith::MinimumFOp) { return vector::CombiningKind::MINIMUMF; })
          .Case([](arith::MaxNumFOp) { return vector::CombiningKind::MAXNUMF; })
          .Case([](arith::MinNumFOp) { return vector::CombiningKind::MINNUMF; })
          .Default([](Operation *) { return std::nullopt; });
  if (!kind)
    return std::nullopt;
  return std::make_pair(*kind, x);
}

/// The identity of a combining kind, as a float attribute of `type`.
TypedAttr reductionIdentity(vector::CombiningKind kind, FloatType type) {
  const llvm::fltSemantics &sem = type.getFloatSemantics();
  switch (kind) {
  case vector::CombiningKind::ADD:
    return FloatAttr::get(type, 0.0);
  case vector::CombiningKind::MUL:
    return FloatAttr::get(type, 1.0);
  case vector::CombiningKind::MAXIMUMF:
  case vector::CombiningKind::MAXNUMF:
    return FloatAttr::get(type, APFloat::getInf(sem, /*Negative=*/true));
  default:
    return FloatAttr::get(type, APFloat::getInf(sem, /*Negative=*/false));
  }
}

class Analyzer {
public:
  Analyzer(scf::ForallOp forall) : forall(forall) {}

  /// Fills `an`; fails where the body is not of the form the rewrite takes.
  LogicalResult run(Analysis &an);

private:
  bool isTileBuffer(Value v) {
    auto alloc = v.getDefiningOp<memref::AllocOp>();
    return alloc && forall->isAncestor(alloc);
  }
  /// Whether `input` of `op` (over [.., G, R, C]) is a term in memory
  /// outside the tile that each warp can read as its 16×8 tiles: a view
  /// indexed by the rows and the columns, perhaps the head, and constants.
  bool isTermRead(Analysis &an, linalg::GenericOp op, OpOperand *input);
  LogicalResult addBuffer(Analysis &an, memref::AllocOp alloc);
  LogicalResult checkContraction(Analysis &an, linalg::LinalgOp op);
  LogicalResult checkGeneric(Analysis &an, linalg::GenericOp op);
  LogicalResult checkRowContraction(Analysis &an, linalg::GenericOp op);
  void stageCrossGroupReads(Analysis &an, ArrayRef<memref::AllocOp> allocs,
                            DenseSet<Value> &staged);

  scf::ForallOp forall;
};

/// Whether the dims of `type` before the rows are 1s and then the tile's
/// head group (the first buffer asked sets its size).
static bool leadingDimsFit(Analysis &an, MemRefType type) {
  for (int64_t d = 0; d + 1 < an.rowDim; ++d)
    if (type.getDimSize(d) != 1)
      return false;
  if (an.rowDim == 0)
    return true;
  int64_t groups = type.getDimSize(an.rowDim - 1);
  if (ShapedType::isDynamic(groups) || (an.groups && groups != an.groups))
    return false;
  an.groups = groups;
  return true;
}

LogicalResult Analyzer::addBuffer(Analysis &an, memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  int64_t rank = type.getRank();
  if (!type.getLayout().isIdentity() || type.getMemorySpace() ||
      !type.getElementType().isIntOrFloat() ||
      (rank != an.rowDim + 1 && rank != an.rowDim + 2) ||
      !leadingDimsFit(an, type))
    return failure();
  std::optional<int64_t> rows = upperBound(alloc, an.rowDim);
  if (!rows || *rows != an.rows)
    return failure();
  // Directly in the tile body or in a loop of it (whose iterations carry the
  // registers), not under a condition.
  for (Operation *p = alloc->getParentOp(); p != forall; p = p->getParentOp())
    if (!isa<scf::ForOp>(p))
      return failure();
  RowBuffer buffer;
  if (rank == an.rowDim + 2) {
    std::optional<int64_t> columns = upperBound(alloc, an.rowDim + 1);
    if (!columns)
      return failure();
    buffer.tile = true;
    buffer.columnTiles = llvm::divideCeil(*columns, kWarpMmaN);
    if (buffer.columnTiles > kMaxColumnTiles)
      return failure();
    if (type.isDynamicDim(an.rowDim + 1))
      buffer.columns =
          alloc.getDynamicSizes()[type.getDynamicDimIndex(an.rowDim + 1)];
    else
      buffer.columns = OpBuilder(alloc).getIndexAttr(type.getDimSize(rank - 1));
  }
  an.buffers.insert({alloc.getResult(), buffer});
  return success();
}

LogicalResult Analyzer::checkContraction(Analysis &an, linalg::LinalgOp op) {
  std::optional<linalg::ContractionDimensions> dims = warpMmaDims(op);
  if (!dims)
    return failure();
  unsigned m = dims->m.front(), n = dims->n.front(), k = dims->k.front();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto resultIs = [&](OpOperand &operand, unsigned position, unsigned loop) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    return position < map.getNumResults() &&
           map.getResult(position) == getAffineDimExpr(loop, op.getContext());
  };
  // Batch loops of one iteration, but the head group's (the output's dim
  // before the rows).
  for (unsigned batch : dims->batch)
    if (ranges[batch] != 1 &&
        !(an.rowDim > 0 && ranges[batch] == an.groups &&
          resultIs(op->getOpOperand(2), an.rowDim - 1, batch)))
      return failure();
  OpOperand &lhs = op->getOpOperand(0), &rhs = op->getOpOperand(1),
            &out = op->getOpOperand(2);
  auto outBuffer = an.buffers.find(out.get());
  if (outBuffer == an.buffers.end() || !outBuffer->second.tile ||
      !resultIs(out, an.rowDim, m) || !resultIs(out, an.rowDim + 1, n))
    return failure();
  // B is staged (read by all warps); A is staged or a per-row tile buffer.
  if (an.buffers.contains(rhs.get()))
    return failure();
  auto lhsBuffer = an.buffers.find(lhs.get());
  if (lhsBuffer != an.buffers.end()) {
    AffineMap outMap = op.getMatchingIndexingMap(&out);
    if (!lhsBuffer->second.tile || !resultIs(lhs, an.rowDim, m) ||
        !resultIs(lhs, an.rowDim + 1, k) ||
        (an.rowDim > 0 &&
         op.getMatchingIndexingMap(&lhs).getResult(an.rowDim - 1) !=
             outMap.getResult(an.rowDim - 1)) ||
        llvm::divideCeil(lhsBuffer->second.columnTiles, 2) > kMaxReductionSteps)
      return failure();
  } else {
    std::optional<int64_t> depth = reductionBound(op, lhs, k);
    if (!depth || llvm::divideCeil(*depth, kWarpMmaK) > kMaxReductionSteps)
      return failure();
  }
  an.ops.insert(op);
  return success();
}

LogicalResult Analyzer::checkGeneric(Analysis &an, linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 ||
      !hasScalarElementwiseBody(op, /*allowIndex=*/true))
    return failure();
  unsigned loops = op.getNumLoops();
  if (loops == an.rowDim + 3)
    return checkRowContraction(an, op);
  bool columns = loops == an.rowDim + 2;
  if (!columns && loops != an.rowDim + 1)
    return failure();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned i = 0; i + 1 < loops; ++i)
    if (iterators[i] != utils::IteratorType::parallel)
      return failure();
  bool reduction = iterators.back() == utils::IteratorType::reduction;
  if (reduction && (!columns || !reductionCombiner(op)))
    return failure();
  MLIRContext *ctx = op.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(loops, ctx);
  AffineMap rowsOnly = identity.dropResult(loops - 1);
  int64_t columnTiles = 0;
  auto sameColumns = [&](int64_t tiles) {
    if (columnTiles && columnTiles != tiles)
      return false;
    columnTiles = tiles;
    return true;
  };
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto buffer = an.buffers.find(input->get());
    if (buffer == an.buffers.end()) {
      // A score term in memory ([.., N, N]: APE's, an attention bias).
      if (!columns || !isTermRead(an, op, input))
        return failure();
      continue;
    }
    AffineMap map = op.getMatchingIndexingMap(input);
    if (buffer->second.tile) {
      if (!columns || map != identity ||
          !sameColumns(buffer->second.columnTiles))
        return failure();
    } else if (map != (columns ? rowsOnly : identity)) {
      return failure();
    }
  }
  OpOperand &out = *op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(&out);
  auto buffer = an.buffers.find(out.get());
  if (buffer != an.buffers.end()) {
    if (reduction) {
      if (buffer->second.tile || outMap != rowsOnly)
        return failure();
    } else if (outMap != identity ||
               (buffer->second.tile &&
                !sameColumns(buffer->second.columnTiles))) {
      return failure();
    }
  } else {
    // The result, written to a view of global memory: [1, .., 1, R, C]
    // without reading it.
    auto type = dyn_cast<MemRefType>(out.get().getType());
    if (reduction || !columns || outMap != identity || !type ||
        isTileBuffer(out.get()) ||
        !op.getMatchingBlockArgument(&out).use_empty() ||
        !leadingDimsFit(an, type))
      return failure();
    std::optional<int64_t> rows = upperBound(out.get(), an.rowDim);
    std::optional<int64_t> cols = upperBound(out.get(), an.rowDim + 1);
    if (!rows || *rows > an.rows || !cols ||
        !sameColumns(llvm::divideCeil(*cols, kWarpMmaN)))
      return failure();
  }
  if (columns && !columnTiles)
    return failure();
  an.ops.insert(op);
  return success();
}

bool Analyzer::isTermRead(Analysis &an, linalg::GenericOp op,
                          OpOperand *input) {
  auto type = dyn_cast<MemRefType>(input->get().getType());
  if (!type || !type.getElementType().isIntOrFloat())
    return false;
  Operation *root = rootBuffer(input->get()).getDefiningOp();
  if (root && forall->isAncestor(root))
    return false;
  unsigned rows = 0, cols = 0;
  for (AffineExpr expr : op.getMatchingIndexingMap(input).getResults()) {
    if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
      if (constant.getValue() != 0)
        return false;
      continue;
    }
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      return false;
    rows += dim.getPosition() == an.rowDim;
    cols += dim.getPosition() == an.rowDim + 1;
  }
  // (The other loops are the head group's and leading ones of one
  // iteration: the output is a per-row tile.)
  return rows == 1 && cols == 1;
}

/// out[.., g, i, c] (+)= Σ_j f(A[.., g, i, j], .., B[.., c, i, j], ..): per
/// row, a reduction over the columns of per-row tiles A and of staged tiles
/// B whose group is the output's column (relational attention's
/// Σ_j α[h, i, j] · r[ℓ, i, j] for every relation ℓ: each head's warps read
/// every relation's tile, which the block computed into shared memory).
LogicalResult Analyzer::checkRowContraction(Analysis &an,
                                            linalg::GenericOp op) {
  unsigned loops = op.getNumLoops();
  if (an.rowDim == 0)
    return failure();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned i = 0; i + 1 < loops; ++i)
    if (iterators[i] != utils::IteratorType::parallel)
      return failure();
  if (iterators.back() != utils::IteratorType::reduction ||
      !reductionCombiner(op) ||
      !hasScalarElementwiseBody(op, /*allowIndex=*/false))
    return failure();
  MLIRContext *ctx = op.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(loops, ctx);
  AffineMap outMap = identity.dropResult(loops - 1);
  AffineMap rowMap = identity.dropResult(loops - 2);
  SmallVector<AffineExpr> crossed(outMap.getResults());
  crossed[an.rowDim - 1] = getAffineDimExpr(an.rowDim + 1, ctx);
  crossed.back() = getAffineDimExpr(loops - 1, ctx);
  AffineMap crossMap = AffineMap::get(loops, 0, crossed, ctx);

  OpOperand &out = *op.getDpsInitOperand(0);
  auto outBuffer = an.buffers.find(out.get());
  auto outType = cast<MemRefType>(out.get().getType());
  if (outBuffer == an.buffers.end() || !outBuffer->second.tile ||
      op.getMatchingIndexingMap(&out) != outMap ||
      outType.isDynamicDim(an.rowDim + 1))
    return failure();
  int64_t columnTiles = 0;
  bool crossing = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    auto buffer = an.buffers.find(input->get());
    if (buffer != an.buffers.end()) {
      if (!buffer->second.tile || map != rowMap ||
          (columnTiles && columnTiles != buffer->second.columnTiles))
        return failure();
      columnTiles = buffer->second.columnTiles;
      continue;
    }
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type || !isTileBuffer(input->get()) || map != crossMap)
      return failure();
    crossing = true;
  }
  if (!columnTiles || !crossing)
    return failure();
  an.ops.insert(op);
  return success();
}

/// A tile buffer read at another group than the one its reader writes
/// (relational attention's relation tile [.., ℓ, i, j], which every head
/// reads) cannot live in one warp's registers: it is staged (computed by the
/// whole block into memory, MMA contractions included) where everything
/// that writes it reads only staged buffers, memory outside the tile, or
/// the buffer itself.
void Analyzer::stageCrossGroupReads(Analysis &an,
                                    ArrayRef<memref::AllocOp> allocs,
                                    DenseSet<Value> &staged) {
  if (an.rowDim == 0)
    return;
  unsigned group = an.rowDim - 1;
  for (memref::AllocOp alloc : allocs) {
    Value buffer = alloc.getResult();
    if (staged.contains(buffer))
      continue;
    bool crossed = false, written = false, stageable = true;
    for (OpOperand &use : buffer.getUses()) {
      auto op = dyn_cast<linalg::LinalgOp>(use.getOwner());
      if (!op || op.getNumDpsInits() != 1)
        continue;
      if (op.isDpsInit(&use)) {
        written = true;
        stageable &= llvm::all_of(op.getDpsInputs(), [&](Value in) {
          return in == buffer || !isa<MemRefType>(in.getType()) ||
                 !isTileBuffer(in) || staged.contains(in);
        });
        continue;
      }
      AffineMap in = op.getMatchingIndexingMap(&use);
      AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
      crossed |= in.getNumResults() > group && out.getNumResults() > group &&
                 in.getResult(group) != out.getResult(group);
    }
    if (crossed && written && stageable)
      staged.insert(buffer);
  }
}

LogicalResult Analyzer::run(Analysis &an) {
  if (forall.getNumResults() || forall.getRank() < 1)
    return failure();
  Block *body = forall.getBody();
  // The staged buffers, which the whole block writes and every warp reads:
  // allocations that only linalg ops other than MMA contractions write,
  // from memory outside the tile or other staged buffers (the query tile,
  // key and value blocks, with a fused prologue such as RoPE). Every other
  // tile buffer is a candidate for registers.
  SmallVector<memref::AllocOp> allocs;
  body->walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
  DenseSet<Value> staged;
  for (bool grew = true; grew;) {
    grew = false;
    for (memref::AllocOp alloc : allocs) {
      if (staged.contains(alloc))
        continue;
      bool blockWide = true, written = false;
      for (Operation *user : alloc->getUsers()) {
        auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
        if (!linalgOp ||
            !llvm::is_contained(linalgOp.getDpsInits(), alloc.getResult()))
          continue;
        written = true;
        blockWide &= !isWarpMmaContraction(linalgOp) &&
                     llvm::all_of(linalgOp.getDpsInputs(), [&](Value in) {
                       return !isa<MemRefType>(in.getType()) ||
                              !isTileBuffer(in) || staged.contains(in);
                     });
      }
      if (written && blockWide) {
        staged.insert(alloc);
        grew = true;
      }
    }
  }
  // The row dim: where the first contraction into a tile buffer puts its m.
  body->walk([&](linalg::LinalgOp op) {
    if (!isWarpMmaContraction(op) || !isTileBuffer(op.getDpsInits()[0]) ||
        staged.contains(op.getDpsInits()[0]))
      return WalkResult::advance();
    std::optional<linalg::ContractionDimensions> dims = warpMmaDims(op);
    AffineMap out = op.getIndexingMapsArray()[2];
    std::optional<unsigned> position = out.getResultPosition(
        getAffineDimExpr(dims->m.front(), op.getContext()));
    if (position) {
      an.rowDim = *position;
      an.rows = upperBound(op.getDpsInits()[0], *position).value_or(0);
    }
    return WalkResult::interrupt();
  });
  if (an.rows < 1 || an.rows > kWarpMmaM * kMaxWarpRowWarps)
    return failure();
  stageCrossGroupReads(an, allocs, staged);
  for (memref::AllocOp alloc : allocs)
    if (!staged.contains(alloc) && failed(addBuffer(an, alloc)))
      return failure();

  // Every op that touches a per-row buffer is one the rewrite takes.
  WalkResult walk = body->walk([&](Operation *op) {
    bool touches = llvm::any_of(
        op->getOperands(), [&](Value v) { return an.buffers.contains(v); });
    if (isa<memref::AllocOp>(op))
      return WalkResult::advance();
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (!linalgOp.hasPureBufferSemantics())
        return WalkResult::interrupt();
      Value init =
          linalgOp.getNumDpsInits() == 1 ? linalgOp.getDpsInits()[0] : Value();
      if (!touches)
        return WalkResult::advance();
      // Above a per-row op, only loops.
      for (Operation *p = op->getParentOp(); p != forall; p = p->getParentOp())
        if (!isa<scf::ForOp>(p))
          return WalkResult::interrupt();
      if (auto fill = dyn_cast<linalg::FillOp>(op)) {
        if (!an.buffers.contains(init) ||
            !fill.value().getType().isIntOrIndexOrFloat())
          return WalkResult::interrupt();
        an.ops.insert(op);
        return WalkResult::advance();
      }
      if (isWarpMmaContraction(linalgOp))
        return failed(checkContraction(an, linalgOp)) ? WalkResult::interrupt()
                                                      : WalkResult::advance();
      if (auto generic = dyn_cast<linalg::GenericOp>(op))
        return failed(checkGeneric(an, generic)) ? WalkResult::interrupt()
                                                 : WalkResult::advance();
      return WalkResult::interrupt();
    }
    if (touches && !isa<memref::DeallocOp>(op))
      return WalkResult::interrupt();
    if (auto loop = dyn_cast<scf::ForOp>(op); loop && loop.getNumResults())
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted() || an.ops.empty())
    return failure();
  // Nothing else reads a per-row buffer: every op that does is in an.ops or
  // a deallocation.
  return success();
}

/// Builds the warp's program in place of the per-row ops.
class Builder {
public:
  Builder(RewriterBase &rewriter, Analysis &an, Value group, Value rowStart)
      : rw(rewriter), an(an), group(group), rowStart(rowStart) {}

  LogicalResult rewriteBlock(Block *block);

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(rw, at, v); }
  VectorType tileType(Type element) {
    return VectorType::get({kWarpMmaM, kWarpMmaN}, element);
  }
  VectorType rowType(Type element) {
    return VectorType::get({kWarpMmaM}, element);
  }
  Value splat(VectorType type, TypedAttr value) {
    return arith::ConstantOp::create(rw, at,
                                     SplatElementsAttr::get(type, value));
  }
  Value zeros(VectorType type) {
    return splat(type, cast<TypedAttr>(rw.getZeroAttr(type.getElementType())));
  }
  /// The warp's current values of `buffer` (zeros before any write).
  SmallVector<Value> valuesOf(Value buffer);
  /// A row vector as a tile: each row's value in all 8 columns.
  Value rowsAsTile(Value rows);
  /// Tile `j` of a buffer with `columns` columns: which elements are in it.
  Value columnMask(OpFoldResult columns, int64_t j);
  Value rowIndices(bool tile);
  Value columnIndices(int64_t j);

  void rewriteFill(linalg::FillOp op);
  void rewriteContraction(linalg::LinalgOp op);
  void rewriteGeneric(linalg::GenericOp op);
  void rewriteRowContraction(linalg::GenericOp op);
  /// Where the warp's rows of tile `tile` (of `tiles` per row strip) of
  /// `group` lie in `buffer` [.., G, R, C], and which dims are in bounds.
  struct TileAccess {
    SmallVector<Value> indices;
    AffineMap permutation;
    SmallVector<bool, 2> inBounds;
  };
  TileAccess tileAccess(Value buffer, Value group, int64_t tile, int64_t tiles);
  /// The warp's rows of that tile.
  Value readTile(Value buffer, Value group, int64_t tile, int64_t tiles);
  /// The tile `access` says, zeros past the buffer's end.
  Value read(Value buffer, const TileAccess &access);
  /// The warp's rows of tile `tile` of the term `input` of `op`
  /// (Analyzer::isTermRead), zeros past its end.
  Value readTerm(linalg::GenericOp op, OpOperand *input, int64_t tile);
  LogicalResult rewriteLoop(scf::ForOp loop);

  RewriterBase &rw;
  Analysis &an;
  /// The warp's query head in the tile's group, and its first row.
  Value group, rowStart;
  Location at = UnknownLoc::get(rw.getContext());
  DenseMap<Value, SmallVector<Value>> values;
};

SmallVector<Value> Builder::valuesOf(Value buffer) {
  auto it = values.find(buffer);
  if (it != values.end())
    return it->second;
  const RowBuffer &info = an.buffers.lookup(buffer);
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  if (!info.tile)
    return {zeros(rowType(element))};
  return SmallVector<Value>(info.columnTiles, zeros(tileType(element)));
}

Value Builder::rowsAsTile(Value rows) {
  auto type = cast<VectorType>(rows.getType());
  Value column = vector::ShapeCastOp::create(
      rw, at, VectorType::get({kWarpMmaM, 1}, type.getElementType()), rows);
  return vector::BroadcastOp::create(rw, at, tileType(type.getElementType()),
                                     column);
}

Value Builder::columnMask(OpFoldResult columns, int64_t j) {
  Value count = getValueOrCreateConstantIndexOp(rw, at, columns);
  Value left = arith::SubIOp::create(rw, at, count, index(j * kWarpMmaN));
  left = arith::MaxSIOp::create(rw, at, left, index(0));
  return vector::CreateMaskOp::create(
      rw, at, VectorType::get({kWarpMmaM, kWarpMmaN}, rw.getI1Type()),
      ValueRange{index(kWarpMmaM), left});
}

Value Builder::rowIndices(bool tile) {
  Value step = vector::StepOp::create(rw, at, rowType(rw.getIndexType()));
  Value start =
      vector::BroadcastOp::create(rw, at, rowType(rw.getIndexType()), rowStart);
  Value rows = arith::AddIOp::create(rw, at, step, start);
  return tile ? rowsAsTile(rows) : rows;
}

Value Builder::columnIndices(int64_t j) {
  Value step = vector::StepOp::create(
      rw, at, VectorType::get({kWarpMmaN}, rw.getIndexType()));
  Value tile =
      vector::BroadcastOp::create(rw, at, tileType(rw.getIndexType()), step);
  Value start = vector::BroadcastOp::create(rw, at, tileType(rw.getIndexType()),
                                            index(j * kWarpMmaN));
  return arith::AddIOp::create(rw, at, tile, start);
}

void Builder::rewriteFill(linalg::FillOp op) {
  Value buffer = op.getDpsInits()[0];
  const RowBuffer &info = an.buffers.lookup(buffer);
  Value scalar = op.value();
  VectorType type =
      info.tile ? tileType(scalar.getType()) : rowType(scalar.getType());
  Value value = vector::BroadcastOp::create(rw, at, type, scalar);
  values[buffer] = SmallVector<Value>(info.tile ? info.columnTiles : 1, value);
}

void Builder::rewriteContraction(linalg::LinalgOp op) {
  linalg::ContractionDimensions dims = *warpMmaDims(op);
  unsigned m = dims.m.front(), n = dims.n.front(), k = dims.k.front();
  OpOperand &lhs = op->getOpOperand(0), &rhs = op->getOpOperand(1);
  Value out = op.getDpsInits()[0];
  SmallVector<Value> accs = valuesOf(out);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto whole = [&](unsigned loop, int64_t size) {
    return !ShapedType::isDynamic(ranges[loop]) && ranges[loop] % size == 0;
  };
  bool rowsWhole = whole(m, kWarpMmaM) && ranges[m] == an.rows;
  bool colsWhole = whole(n, kWarpMmaN) &&
                   ranges[n] == static_cast<int64_t>(accs.size()) * kWarpMmaN;
  bool depthWhole = whole(k, kWarpMmaK);
  SmallVector<Value> ivs(op.getNumLoops(), index(0));
  ivs[m] = rowStart;
  if (an.rowDim > 0) {
    AffineExpr head = op.getMatchingIndexingMap(op.getDpsInitOperand(0))
                          .getResult(an.rowDim - 1);
    ivs[cast<AffineDimExpr>(head).getPosition()] = group;
  }

  auto lhsBuffer = an.buffers.find(lhs.get());
  int64_t steps;
  SmallVector<Value> lhsTiles;
  OpFoldResult lhsColumns;
  if (lhsBuffer != an.buffers.end()) {
    lhsTiles = valuesOf(lhs.get());
    lhsColumns = lhsBuffer->second.columns;
    steps = llvm::divideCeil(lhsTiles.size(), 2);
  } else {
    steps = llvm::divideCeil(*reductionBound(op, lhs, k), kWarpMmaK);
  }
  Type bf16 = rw.getBF16Type();
  for (int64_t s = 0; s < steps; ++s) {
    Value a;
    if (!lhsTiles.empty()) {
      // The probabilities in registers: two 16×8 accumulator tiles are the
      // two column halves of a 16×16 A tile (in the lanes' fragments too).
      // Columns past the buffer's end are zeros.
      a = zeros(VectorType::get({kWarpMmaM, kWarpMmaK}, bf16));
      for (int64_t half = 0; half < 2; ++half) {
        int64_t j = 2 * s + half;
        if (j >= static_cast<int64_t>(lhsTiles.size()))
          break;
        Value tile = lhsTiles[j];
        auto type = cast<VectorType>(tile.getType());
        tile = arith::SelectOp::create(rw, at, columnMask(lhsColumns, j), tile,
                                       zeros(type));
        if (!type.getElementType().isBF16())
          tile = arith::TruncFOp::create(rw, at, type.clone(bf16), tile);
        a = vector::InsertStridedSliceOp::create(
            rw, at, tile, a, ArrayRef<int64_t>{0, half * kWarpMmaN},
            ArrayRef<int64_t>{1, 1});
      }
    } else {
      ivs[k] = index(s * kWarpMmaK);
      a = readWarpMmaTile(rw, at, op, lhs, ivs, m, k, {kWarpMmaM, kWarpMmaK},
                          {rowsWhole, depthWhole});
    }
    a = warpMmaOperand(rw, at, a);
    ivs[k] = index(s * kWarpMmaK);
    for (int64_t j = 0, e = accs.size(); j < e; j += 2) {
      ivs[n] = index(j * kWarpMmaN);
      // (Two B tiles at once: one ldmatrix.x4 for both.)
      SmallVector<Value> bs = readWarpMmaBTiles(rw, at, op, rhs, ivs, n, k,
                                                std::min<int64_t>(2, e - j),
                                                {colsWhole, depthWhole});
      for (auto [i, b] : llvm::enumerate(bs))
        accs[j + i] = buildWarpMmaContract(rw, at, a, warpMmaOperand(rw, at, b),
                                           accs[j + i]);
    }
  }
  values[out] = accs;
}

void Builder::rewriteGeneric(linalg::GenericOp op) {
  unsigned loops = op.getNumLoops();
  bool columns = loops == an.rowDim + 2;
  bool reduction =
      op.getIteratorTypesArray().back() == utils::IteratorType::reduction;
  OpOperand &out = *op.getDpsInitOperand(0);
  auto outBuffer = an.buffers.find(out.get());
  bool toRegisters = outBuffer != an.buffers.end();
  Block *body = op.getBody();

  // Tiles per row strip: any tile operand's (the analysis checked they
  // agree), else the global output's.
  int64_t tiles = 1;
  OpFoldResult tileColumns;
  if (columns) {
    for (OpOperand &operand : op->getOpOperands()) {
      auto buffer = an.buffers.find(operand.get());
      if (buffer != an.buffers.end() && buffer->second.tile) {
        tiles = buffer->second.columnTiles;
        tileColumns = buffer->second.columns;
        break;
      }
    }
    if (!tileColumns)
      tiles =
          llvm::divideCeil(*upperBound(out.get(), an.rowDim + 1), kWarpMmaN);
  }
  std::optional<std::pair<vector::CombiningKind, Value>> combiner;
  Operation *combineOp = nullptr;
  if (reduction) {
    combiner = reductionCombiner(op);
    combineOp = body->getTerminator()->getOperand(0).getDefiningOp();
  }
  SmallVector<Value> outValues;
  if (toRegisters)
    outValues = valuesOf(out.get());
  Value acc = reduction ? outValues.front() : Value();

  SmallVector<Value> results;
  Value partial;
  for (int64_t j = 0; j < tiles; ++j) {
    IRMapping map;
    for (OpOperand *input : op.getDpsInputOperands()) {
      if (!an.buffers.contains(input->get())) {
        map.map(op.getMatchingBlockArgument(input), readTerm(op, input, j));
        continue;
      }
      const RowBuffer &info = an.buffers.lookup(input->get());
      SmallVector<Value> current = valuesOf(input->get());
      Value v = info.tile ? current[j]
                : columns ? rowsAsTile(current.front())
                          : current.front();
      map.map(op.getMatchingBlockArgument(input), v);
    }
    if (toRegisters && !reduction)
      map.map(op.getMatchingBlockArgument(&out),
              outBuffer->second.tile ? outValues[j] : outValues.front());
    SmallVector<int64_t> shape =
        columns ? SmallVector<int64_t>{kWarpMmaM, kWarpMmaN}
                : SmallVector<int64_t>{kWarpMmaM};
    for (Operation &inner : body->without_terminator()) {
      if (&inner == combineOp)
        continue;
      Value result;
      if (auto idx = dyn_cast<linalg::IndexOp>(inner)) {
        if (idx.getDim() == an.rowDim)
          result = rowIndices(columns);
        else if (columns && idx.getDim() == an.rowDim + 1)
          result = columnIndices(j);
        else if (an.rowDim > 0 && idx.getDim() == an.rowDim - 1)
          result = vector::BroadcastOp::create(
              rw, at, VectorType::get(shape, rw.getIndexType()), group);
        else
          result = zeros(VectorType::get(shape, rw.getIndexType()));
        map.map(inner.getResult(0), result);
      } else {
        vectorizeScalarOp(rw, at, inner, map, shape);
      }
    }
    if (reduction) {
      // Columns past the buffer's end (the last key block's padding) must
      // not count: the identity there. The tiles combine elementwise first,
      // so that only one reduction crosses the lanes.
      Value x = map.lookup(combiner->second);
      auto type = cast<VectorType>(x.getType());
      auto element = cast<FloatType>(type.getElementType());
      x = arith::SelectOp::create(
          rw, at, columnMask(tileColumns, j), x,
          splat(type, reductionIdentity(combiner->first, element)));
      partial = partial ? vector::makeArithReduction(rw, at, combiner->first,
                                                     partial, x)
                        : x;
      continue;
    }
    results.push_back(map.lookup(body->getTerminator()->getOperand(0)));
  }

  if (reduction) {
    values[out.get()] = {vector::MultiDimReductionOp::create(
        rw, at, partial, acc, ArrayRef<bool>{false, true}, combiner->first)};
  } else if (toRegisters) {
    values[out.get()] = results;
  } else {
    // The tile's result rows to global memory; rows and columns past the
    // view's end are not written.
    for (auto [j, tile] : llvm::enumerate(results)) {
      TileAccess access = tileAccess(out.get(), group, j, tiles);
      vector::TransferWriteOp::create(rw, at, tile, out.get(), access.indices,
                                      AffineMapAttr::get(access.permutation),
                                      /*mask=*/Value(),
                                      rw.getBoolArrayAttr(access.inBounds));
    }
  }
}

Builder::TileAccess Builder::tileAccess(Value buffer, Value group, int64_t tile,
                                        int64_t tiles) {
  auto type = cast<MemRefType>(buffer.getType());
  MLIRContext *ctx = rw.getContext();
  unsigned rank = type.getRank();
  TileAccess access;
  access.indices.assign(rank, index(0));
  if (an.rowDim > 0)
    access.indices[an.rowDim - 1] = group;
  access.indices[an.rowDim] = rowStart;
  access.indices[an.rowDim + 1] = index(tile * kWarpMmaN);
  access.permutation = AffineMap::get(
      rank, 0,
      {getAffineDimExpr(an.rowDim, ctx), getAffineDimExpr(an.rowDim + 1, ctx)},
      ctx);
  access.inBounds = {!type.isDynamicDim(an.rowDim) &&
                         type.getDimSize(an.rowDim) == an.rows &&
                         an.rows % kWarpMmaM == 0,
                     !type.isDynamicDim(an.rowDim + 1) &&
                         type.getDimSize(an.rowDim + 1) == tiles * kWarpMmaN};
  return access;
}

Value Builder::readTerm(linalg::GenericOp op, OpOperand *input, int64_t tile) {
  Value term = input->get();
  auto type = cast<MemRefType>(term.getType());
  MLIRContext *ctx = rw.getContext();
  SmallVector<Value> indices(type.getRank(), index(0));
  SmallVector<AffineExpr> dims(2);
  for (auto [position, expr] :
       llvm::enumerate(op.getMatchingIndexingMap(input).getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      continue;
    if (dim.getPosition() == an.rowDim) {
      indices[position] = rowStart;
      dims[0] = getAffineDimExpr(position, ctx);
    } else if (dim.getPosition() == an.rowDim + 1) {
      indices[position] = index(tile * kWarpMmaN);
      dims[1] = getAffineDimExpr(position, ctx);
    } else if (an.rowDim > 0 && dim.getPosition() == an.rowDim - 1) {
      indices[position] = group;
    }
  }
  // (Rows and columns past the term's end read zeros: columns past the key
  // block are masked where they would count, rows past the tile are not
  // written.)
  return read(term, TileAccess{indices,
                               AffineMap::get(type.getRank(), 0, dims, ctx),
                               {false, false}});
}

Value Builder::readTile(Value buffer, Value group, int64_t tile,
                        int64_t tiles) {
  return read(buffer, tileAccess(buffer, group, tile, tiles));
}

Value Builder::read(Value buffer, const TileAccess &access) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  Value padding = arith::ConstantOp::create(
      rw, at, element, cast<TypedAttr>(rw.getZeroAttr(element)));
  return vector::TransferReadOp::create(rw, at, tileType(element), buffer,
                                        access.indices, padding,
                                        access.permutation, access.inBounds);
}

void Builder::rewriteRowContraction(linalg::GenericOp op) {
  OpOperand &out = *op.getDpsInitOperand(0);
  SmallVector<Value> outTiles = valuesOf(out.get());
  int64_t columns =
      cast<MemRefType>(out.get().getType()).getDimSize(an.rowDim + 1);
  auto [kind, combined] = *reductionCombiner(op);
  Block *body = op.getBody();
  Operation *combineOp = body->getTerminator()->getOperand(0).getDefiningOp();
  // The per-row operands' tiles (the analysis checked they agree).
  int64_t tiles = 0;
  OpFoldResult tileColumns;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto buffer = an.buffers.find(input->get());
    if (buffer != an.buffers.end()) {
      tiles = buffer->second.columnTiles;
      tileColumns = buffer->second.columns;
    }
  }
  auto element =
      cast<FloatType>(cast<MemRefType>(out.get().getType()).getElementType());
  TypedAttr identity = reductionIdentity(kind, element);
  for (int64_t c = 0; c < columns; ++c) {
    // Σ_j over the tiles elementwise, then across the row's lanes once.
    Value partial;
    for (int64_t j = 0; j < tiles; ++j) {
      IRMapping map;
      for (OpOperand *input : op.getDpsInputOperands()) {
        Value v = an.buffers.contains(input->get())
                      ? valuesOf(input->get())[j]
                      : readTile(input->get(), index(c), j, tiles);
        map.map(op.getMatchingBlockArgument(input), v);
      }
      for (Operation &inner : body->without_terminator())
        if (&inner != combineOp)
          vectorizeScalarOp(rw, at, inner, map, {kWarpMmaM, kWarpMmaN});
      Value x = map.lookup(combined);
      x = arith::SelectOp::create(
          rw, at, columnMask(tileColumns, j), x,
          splat(cast<VectorType>(x.getType()), identity));
      partial =
          partial ? vector::makeArithReduction(rw, at, kind, partial, x) : x;
    }
    Value row = vector::MultiDimReductionOp::create(
        rw, at, partial, splat(rowType(element), identity),
        ArrayRef<bool>{false, true}, kind);
    // Into column c of the output: the other columns keep their values.
    int64_t t = c / kWarpMmaN;
    Value isColumn = arith::CmpIOp::create(
        rw, at, arith::CmpIPredicate::eq, columnIndices(t),
        vector::BroadcastOp::create(rw, at, tileType(rw.getIndexType()),
                                    index(c)));
    Value updated =
        vector::makeArithReduction(rw, at, kind, outTiles[t], rowsAsTile(row));
    outTiles[t] =
        arith::SelectOp::create(rw, at, isColumn, updated, outTiles[t]);
  }
  values[out.get()] = outTiles;
}

LogicalResult Builder::rewriteLoop(scf::ForOp loop) {
  // The buffers with values that the loop uses carry their registers
  // through its iterations.
  SmallVector<Value> carried;
  for (auto &[buffer, info] : an.buffers) {
    if (!values.contains(buffer))
      continue;
    bool used = false;
    loop.getBody()->walk([&](Operation *op) {
      used |= llvm::is_contained(op->getOperands(), buffer);
    });
    if (used)
      carried.push_back(buffer);
  }
  if (carried.empty())
    return rewriteBlock(loop.getBody());

  SmallVector<Value> init;
  SmallVector<int64_t> counts;
  for (Value buffer : carried) {
    SmallVector<Value> current = valuesOf(buffer);
    counts.push_back(current.size());
    llvm::append_range(init, current);
  }
  auto unflatten = [&](ValueRange flat) {
    unsigned next = 0;
    for (auto [buffer, count] : llvm::zip(carried, counts)) {
      values[buffer] = SmallVector<Value>(flat.slice(next, count));
      next += count;
    }
  };
  rw.setInsertionPoint(loop);
  auto carrying =
      scf::ForOp::create(rw, loop.getLoc(), loop.getLowerBound(),
                         loop.getUpperBound(), loop.getStep(), init);
  Block *body = carrying.getBody();
  rw.mergeBlocks(loop.getBody(), body, {carrying.getInductionVar()});
  rw.eraseOp(loop);
  unflatten(carrying.getRegionIterArgs());
  if (failed(rewriteBlock(body)))
    return failure();
  SmallVector<Value> yielded;
  for (Value buffer : carried)
    llvm::append_range(yielded, values.lookup(buffer));
  Operation *yield = body->getTerminator();
  rw.setInsertionPoint(yield);
  rw.replaceOpWithNewOp<scf::YieldOp>(yield, yielded);
  // The buffers the loop allocates are gone after it.
  for (auto &[buffer, info] : an.buffers)
    if (carrying->isProperAncestor(buffer.getDefiningOp()))
      values.erase(buffer);
  unflatten(carrying.getResults());
  return success();
}

LogicalResult Builder::rewriteBlock(Block *block) {
  for (Operation &op :
       llvm::make_early_inc_range(block->without_terminator())) {
    rw.setInsertionPoint(&op);
    at = op.getLoc();
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      if (an.buffers.contains(dealloc.getMemref()))
        rw.eraseOp(dealloc);
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      if (failed(rewriteLoop(loop)))
        return failure();
      continue;
    }
    if (!an.ops.contains(&op))
      continue;
    if (auto fill = dyn_cast<linalg::FillOp>(op))
      rewriteFill(fill);
    else if (auto generic = dyn_cast<linalg::GenericOp>(op);
             generic && generic.getNumLoops() == an.rowDim + 3 &&
             !isWarpMmaContraction(generic))
      rewriteRowContraction(generic);
    else if (auto generic = dyn_cast<linalg::GenericOp>(op);
             generic && !isWarpMmaContraction(generic))
      rewriteGeneric(generic);
    else
      rewriteContraction(cast<linalg::LinalgOp>(op));
    rw.eraseOp(&op);
  }
  return success();
}

/// Whether the next iteration of `loop` could overwrite a staged buffer
/// that a warp still reads: dat-gpu-map-tiles puts a barrier after each
/// staging op (each linalg op left), so a staging op that writes buffer X
/// is safe where, going round the loop from it, a staging op (its barrier)
/// comes between the last op reading X and the next write of X.
bool needsIterationBarrier(scf::ForOp loop) {
  SmallVector<Operation *> ops;
  for (Operation &op : loop.getBody()->without_terminator())
    ops.push_back(&op);
  auto isStaging = [](Operation *op) { return isa<linalg::LinalgOp>(op); };
  // Buffers by their allocation: ops read and write them through views.
  auto reads = [](Operation *op, Value buffer) {
    auto readsRoot = [&](ValueRange values) {
      return llvm::any_of(values,
                          [&](Value v) { return rootBuffer(v) == buffer; });
    };
    bool found = false;
    op->walk([&](Operation *inner) {
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(inner)) {
        found |= readsRoot(linalgOp.getDpsInputs());
        return;
      }
      // (Deallocations of tile buffers go away with the buffers; views are
      // followed to their reads.)
      if (!isa<memref::DeallocOp>(inner) && !isa<ViewLikeOpInterface>(inner))
        found |= readsRoot(inner->getOperands());
    });
    return found;
  };
  int64_t n = ops.size();
  for (int64_t w = 0; w < n; ++w) {
    auto writer = dyn_cast<linalg::LinalgOp>(ops[w]);
    if (!writer)
      continue;
    for (Value written : writer.getDpsInits()) {
      Value buffer = rootBuffer(written);
      // Round the loop from the writer: a barrier (after a staging op)
      // must follow the last read before the writer comes again.
      bool covered = true;
      for (int64_t step = 1; step < n; ++step) {
        Operation *op = ops[(w + step) % n];
        if (reads(op, buffer))
          covered = false;
        if (isStaging(op))
          covered = true;
      }
      if (!covered)
        return true;
    }
  }
  return false;
}

} // namespace

/// The warps of the analysed tile's program: a warp per 16 rows of each
/// head of the group.
static int64_t warpsOf(const Analysis &an) {
  return std::max<int64_t>(an.groups, 1) * llvm::divideCeil(an.rows, kWarpMmaM);
}

FailureOr<int64_t> countWarpRowWarps(scf::ForallOp forall) {
  Analysis an;
  if (failed(Analyzer(forall).run(an)) || warpsOf(an) > kMaxWarpRowWarps)
    return failure();
  return warpsOf(an);
}

FailureOr<int64_t> buildWarpRowProgram(RewriterBase &rewriter,
                                       scf::ForallOp forall, bool emulate) {
  Analysis an;
  if (failed(Analyzer(forall).run(an)))
    return failure();
  int64_t strips = llvm::divideCeil(an.rows, kWarpMmaM);
  int64_t warps = warpsOf(an);
  if (warps > kMaxWarpRowWarps)
    return failure();
  Block *body = forall.getBody();
  Location loc = forall.getLoc();
  rewriter.setInsertionPointToStart(body);
  Value strip;
  if (emulate) {
    // The warps one after another, each through the whole body (the staging
    // copies again: they write the same values).
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value count = arith::ConstantIndexOp::create(rewriter, loc, warps);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto sequential = scf::ForOp::create(rewriter, loc, zero, count, one);
    Block *inner = sequential.getBody();
    while (sequential->getNextNode() != body->getTerminator())
      rewriter.moveOpBefore(sequential->getNextNode(), inner->getTerminator());
    strip = sequential.getInductionVar();
    body = inner;
    rewriter.setInsertionPointToStart(inner);
  } else {
    Value thread = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
    strip = arith::DivUIOp::create(
        rewriter, loc, thread,
        arith::ConstantIndexOp::create(rewriter, loc, kWarpSize));
  }
  // Warp w: head w / strips of the group, rows 16 (w % strips) onwards.
  Value perHead = arith::ConstantIndexOp::create(rewriter, loc, strips);
  Value group = arith::DivUIOp::create(rewriter, loc, strip, perHead);
  Value rowStart = arith::MulIOp::create(
      rewriter, loc, arith::RemUIOp::create(rewriter, loc, strip, perHead),
      arith::ConstantIndexOp::create(rewriter, loc, kWarpMmaM));
  Builder builder(rewriter, an, group, rowStart);
  if (failed(builder.rewriteBlock(body)))
    return failure();
  // A loop whose staging ops alone do not separate the warps' last reads of
  // a staged buffer from its next write gets a barrier per iteration.
  if (!emulate) {
    SmallVector<scf::ForOp> loops;
    body->walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      if (!needsIterationBarrier(loop))
        continue;
      rewriter.setInsertionPointToStart(loop.getBody());
      gpu::BarrierOp::create(rewriter, loop.getLoc());
    }
  }
  for (auto &[buffer, info] : an.buffers) {
    if (!buffer.use_empty())
      return forall.emitError("dat-gpu-map-tiles: a per-row tile buffer is "
                              "still used after the warp rewrite"),
             failure();
    rewriter.eraseOp(buffer.getDefiningOp());
  }
  return warps;
}

} // namespace mlir::dat
