//===- MapTilesToBlocks.cpp - flash tiles → one GPU block each ------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// A flash tile loop becomes one kernel: the blocks take the (batch, query
// block) iterations, the threads of a block share each linalg op of the
// tile's body (its parallel iterations linearized and strided by the block
// size, reductions innermost in the thread), and a barrier separates the
// ops. Tile buffers go to shared memory while it lasts, then to a per-block
// slice of one scratch buffer. The same rewrite with sequential loops for
// blocks and threads (`emulate`) runs on the CPU, where the golden cases
// check the index arithmetic and the buffer layout.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"
#include "dat/Conversion/WarpMma.h"
#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Pass/OptionChecks.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dat {

#define GEN_PASS_DEF_DATGPUMAPTILES
#include "dat/Conversion/Passes.h.inc"

namespace {

/// Where a tile buffer lives: `offset` bytes into the block's slice of
/// shared memory or of the scratch buffer.
struct TileBuffer {
  memref::AllocOp alloc;
  int64_t offset = 0;
  bool shared = false;
};

constexpr int64_t kAlignment = 64;

int64_t alignUp(int64_t n) {
  return (n + kAlignment - 1) / kAlignment * kAlignment;
}

} // namespace

/// Bytes of the largest buffer of `type` (identity layout) with
/// `dynamicSizes`, which are bounded through the tile loop's bounds (tile
/// sizes are affine.min of the tile and what is left).
static FailureOr<int64_t> boundBytes(MemRefType type, ValueRange dynamicSizes) {
  Type elem = type.getElementType();
  if (!type.getLayout().isIdentity() || !elem.isIntOrFloat() ||
      type.getMemorySpace())
    return failure();
  int64_t count = 1;
  unsigned next = 0;
  for (int64_t size : type.getShape()) {
    if (ShapedType::isDynamic(size)) {
      FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
          presburger::BoundType::UB,
          ValueBoundsConstraintSet::Variable(dynamicSizes[next++]),
          /*stopCondition=*/nullptr, /*closedUB=*/true);
      if (failed(bound) || *bound < 0)
        return failure();
      size = *bound;
    }
    count *= size;
  }
  return alignUp(count * ((elem.getIntOrFloatBitWidth() + 7) / 8));
}

static FailureOr<int64_t> boundBytes(memref::AllocOp alloc) {
  return boundBytes(alloc.getType(), alloc.getDynamicSizes());
}

/// Whether the threads can share `op` without a race: each output element
/// is written by one parallel iteration (projected-permutation output maps)
/// and an input that may be the same buffer as an output is read at the
/// element the same iteration writes.
static bool isRaceFree(linalg::LinalgOp op) {
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap written = op.getMatchingIndexingMap(&init);
    if (!written.isProjectedPermutation())
      return false;
    for (OpOperand *input : op.getDpsInputOperands())
      if (isa<MemRefType>(input->get().getType()) &&
          rootBuffer(input->get()) == rootBuffer(init.get()) &&
          (op.getMatchingIndexingMap(input) != written ||
           input->get() != init.get()))
        return false;
  }
  return true;
}

/// The first op in the body of `forall` this mapping does not handle, or
/// null where it handles all: race-free linalg on buffers, views,
/// allocation, scalar index and arithmetic, loops.
static Operation *findUnmappableOp(scf::ForallOp forall) {
  if (forall.getNumResults() != 0 || forall.getMapping())
    return forall;
  Operation *unmappable = nullptr;
  forall.getBody()->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (linalgOp.hasPureBufferSemantics() && isRaceFree(linalgOp))
        return WalkResult::skip();
    } else if (isa<memref::AllocOp, memref::DeallocOp, memref::SubViewOp,
                   memref::ExpandShapeOp, memref::CollapseShapeOp,
                   memref::CastOp, memref::CopyOp, memref::DimOp,
                   memref::ReinterpretCastOp, affine::AffineApplyOp,
                   affine::AffineMinOp, affine::AffineMaxOp, scf::ForOp,
                   scf::IfOp, scf::YieldOp, scf::InParallelOp>(op) ||
               (isa<arith::ArithDialect, index::IndexDialect>(
                    op->getDialect()) &&
                isPure(op))) {
      return WalkResult::advance();
    }
    unmappable = op;
    return WalkResult::interrupt();
  });
  return unmappable;
}

/// for (l = tid; l < Π counts; l += blockDim): the loop, the insertion point
/// at the start of its body, and l delinearized over `counts` (the last
/// fastest).
static SmallVector<Value> spreadOverThreads(RewriterBase &rewriter,
                                            Location loc,
                                            ArrayRef<Value> counts, Value tid,
                                            Value blockDim) {
  Value total = arith::ConstantIndexOp::create(rewriter, loc, 1);
  for (Value count : counts)
    total = arith::MulIOp::create(rewriter, loc, total, count);
  auto strided = scf::ForOp::create(rewriter, loc, tid, total, blockDim);
  rewriter.setInsertionPointToStart(strided.getBody());
  SmallVector<Value> positions(counts.size());
  Value rest = strided.getInductionVar();
  for (int64_t d = counts.size() - 1; d >= 0; --d) {
    positions[d] =
        d == 0 ? rest : arith::RemUIOp::create(rewriter, loc, rest, counts[d]);
    if (d > 0)
      rest = arith::DivUIOp::create(rewriter, loc, rest, counts[d]);
  }
  return positions;
}

/// Spreads the linalg op `op` over the threads `tid` (of `blockDim`): the
/// parallel iterations, linearized, go to threads in strides of the block
/// size; reductions run innermost in the thread. An op without parallel
/// iterations runs in thread 0.
static LogicalResult distribute(RewriterBase &rewriter, linalg::LinalgOp op,
                                Value tid, Value blockDim) {
  Location loc = op.getLoc();
  // Parallel dims first, so that one scf.parallel holds them all.
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation())) {
    SmallVector<unsigned> order;
    for (auto [i, it] : llvm::enumerate(generic.getIteratorTypesArray()))
      if (it == utils::IteratorType::parallel)
        order.push_back(i);
    for (auto [i, it] : llvm::enumerate(generic.getIteratorTypesArray()))
      if (it != utils::IteratorType::parallel)
        order.push_back(i);
    if (!llvm::equal(order, llvm::seq<unsigned>(0, order.size()))) {
      FailureOr<linalg::GenericOp> moved =
          linalg::interchangeGenericOp(rewriter, generic, order);
      if (failed(moved))
        return failure();
      op = cast<linalg::LinalgOp>(moved->getOperation());
    }
  }
  rewriter.setInsertionPoint(op);
  if (op.getNumParallelLoops() == 0) {
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        tid, zero);
    auto ifOp = scf::IfOp::create(rewriter, loc, first, /*withElse=*/false);
    rewriter.moveOpBefore(op, ifOp.thenBlock()->getTerminator());
    rewriter.setInsertionPoint(op);
    if (failed(linalg::linalgOpToLoops(rewriter, op)))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
  FailureOr<linalg::LinalgLoops> loops =
      linalg::linalgOpToParallelLoops(rewriter, op);
  if (failed(loops) || loops->empty())
    return failure();
  rewriter.eraseOp(op);
  auto parallel = dyn_cast<scf::ParallelOp>(loops->front());
  if (!parallel)
    return failure();

  // for (l = tid; l < Π counts; l += blockDim) ivs = delinearize(l)
  rewriter.setInsertionPoint(parallel);
  SmallVector<Value> counts;
  for (auto [lb, ub, step] :
       llvm::zip(parallel.getLowerBound(), parallel.getUpperBound(),
                 parallel.getStep())) {
    Value extent = arith::SubIOp::create(rewriter, loc, ub, lb);
    counts.push_back(arith::CeilDivUIOp::create(rewriter, loc, extent, step));
  }
  SmallVector<Value> ivs =
      spreadOverThreads(rewriter, loc, counts, tid, blockDim);
  for (auto [iv, lb, step] :
       llvm::zip(ivs, parallel.getLowerBound(), parallel.getStep()))
    iv = arith::AddIOp::create(rewriter, loc, lb,
                               arith::MulIOp::create(rewriter, loc, iv, step));
  Block *body = parallel.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(
      body, rewriter.getInsertionBlock()->getTerminator(), ivs);
  rewriter.eraseOp(parallel);
  return success();
}

/// Bytes a thread moves at once in a vectorized copy (LDG.128 / STS.128).
static constexpr int64_t kCopyVectorBytes = 16;

/// Whether whole vectors of `lanes` elements of `type`, starting at
/// multiples of `lanes` along its contiguous innermost dim, start at
/// multiples of `lanes` elements from its first (strides of the other dims
/// multiples of `lanes`).
static bool stridesAllowVectors(MemRefType type, int64_t lanes) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1)
    return false;
  // (Identity layout: every stride a multiple of the innermost size.)
  if (type.getLayout().isIdentity())
    return true;
  return llvm::all_of(ArrayRef<int64_t>(strides).drop_back(), [&](int64_t s) {
    return !ShapedType::isDynamic(s) && s % lanes == 0;
  });
}

/// Whether `memref`'s first element is `bytes`-aligned, at run time.
static Value isAligned(OpBuilder &b, Location loc, Value memref,
                       int64_t bytes) {
  auto type = cast<MemRefType>(memref.getType());
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value pointer =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value offset =
      arith::MulIOp::create(b, loc, metadata.getOffset(),
                            arith::ConstantIndexOp::create(
                                b, loc, type.getElementTypeBitWidth() / 8));
  Value address = arith::AddIOp::create(b, loc, pointer, offset);
  Value rest = arith::RemUIOp::create(
      b, loc, address, arith::ConstantIndexOp::create(b, loc, bytes));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rest,
                               arith::ConstantIndexOp::create(b, loc, 0));
}

/// Whether `op` only copies its one input to its one output, through
/// permutation maps (linalg.copy, or a transpose: a tile staged with its
/// heads moved).
static bool isPermutedCopy(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() || op.getNumLoops() == 0)
    return false;
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  return body->getOperations().size() == 1 && yield.getValues().size() == 1 &&
         yield.getValues()[0] == body->getArgument(0) &&
         llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isPermutation(); });
}

/// Spreads `op`, a copy (linalg.copy, or a generic that only yields its
/// input through permutation maps: a tile staged with its heads moved)
/// over the threads `tid` (of `blockDim`) 16 bytes at a time (one vector
/// load and store each, LDG.128 and STS.128 on the GPU, where the scalar
/// copy moves 2 bytes per instruction for bf16), where input and output
/// are both contiguous along the same innermost loop, of whole vectors,
/// and, checked at run time, 16-byte aligned; the scalar copy otherwise.
/// With `async`, into shared memory, each vector is a cp.async (global →
/// shared without the thread's registers), committed as one group for a
/// later wait. None, changing nothing, where `op` does not have that form.
static std::optional<LogicalResult>
distributeVectorCopy(RewriterBase &rewriter, linalg::LinalgOp op, Value tid,
                     Value blockDim, bool async) {
  if (!isPermutedCopy(op))
    return std::nullopt;
  Value source = op.getDpsInputs()[0], target = op.getDpsInits()[0];
  auto sourceType = dyn_cast<MemRefType>(source.getType());
  auto targetType = dyn_cast<MemRefType>(target.getType());
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!sourceType || !targetType ||
      sourceType.getElementType() != targetType.getElementType() ||
      !sourceType.getElementType().isIntOrFloat() ||
      maps[0].getResults().back() != maps[1].getResults().back())
    return std::nullopt;
  unsigned rank = op.getNumLoops();
  unsigned inner =
      cast<AffineDimExpr>(maps[0].getResults().back()).getPosition();
  int64_t elementBytes = sourceType.getElementTypeBitWidth() / 8;
  if (elementBytes == 0 || kCopyVectorBytes % elementBytes != 0)
    return std::nullopt;
  int64_t lanes = kCopyVectorBytes / elementBytes;
  int64_t extent = op.getStaticLoopRanges()[inner];
  if (ShapedType::isDynamic(extent) || extent % lanes != 0 ||
      !stridesAllowVectors(sourceType, lanes) ||
      !stridesAllowVectors(targetType, lanes))
    return std::nullopt;

  Location loc = op.getLoc();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, v);
  };
  rewriter.setInsertionPoint(op);
  Value aligned = arith::AndIOp::create(
      rewriter, loc, isAligned(rewriter, loc, source, kCopyVectorBytes),
      isAligned(rewriter, loc, target, kCopyVectorBytes));
  auto branch = scf::IfOp::create(rewriter, loc, aligned,
                                  /*withElseRegion=*/true);
  // for (l = tid; l < Π extents / lanes; l += blockDim): one vector each,
  // the innermost loop fastest.
  rewriter.setInsertionPointToStart(branch.thenBlock());
  SmallVector<Range> ranges = op.createLoopRanges(rewriter, loc);
  SmallVector<unsigned> order;
  for (unsigned d = 0; d < rank; ++d)
    if (d != inner)
      order.push_back(d);
  order.push_back(inner);
  SmallVector<Value> counts;
  for (unsigned d : order)
    counts.push_back(d == inner ? index(extent / lanes)
                                : getValueOrCreateConstantIndexOp(
                                      rewriter, loc, ranges[d].size));
  SmallVector<Value> positions =
      spreadOverThreads(rewriter, loc, counts, tid, blockDim);
  SmallVector<Value> ivs(rank);
  for (auto [d, position] : llvm::zip(order, positions))
    ivs[d] = position;
  ivs[inner] = arith::MulIOp::create(rewriter, loc, ivs[inner], index(lanes));
  auto at = [&](AffineMap map) {
    SmallVector<Value> indices;
    for (AffineExpr e : map.getResults())
      indices.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
    return indices;
  };
  auto shared = target.getDefiningOp<memref::MemorySpaceCastOp>();
  if (async && shared) {
    // (cp.async.cg: 16 bytes, around L1: each element is read once.)
    nvgpu::DeviceAsyncCopyOp::create(
        rewriter, loc, shared.getSource(), at(maps[1]), source, at(maps[0]),
        rewriter.getIndexAttr(lanes), /*srcElements=*/Value(),
        rewriter.getUnitAttr());
    rewriter.setInsertionPointAfter(branch);
    NVVM::CpAsyncCommitGroupOp::create(rewriter, loc);
  } else {
    auto vectorType = VectorType::get({lanes}, sourceType.getElementType());
    Value vector = vector::LoadOp::create(rewriter, loc, vectorType, source,
                                          at(maps[0]), /*nontemporal=*/false,
                                          llvm::MaybeAlign(kCopyVectorBytes));
    vector::StoreOp::create(rewriter, loc, vector, target, at(maps[1]),
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(kCopyVectorBytes));
  }
  // Else the scalar copy.
  rewriter.setInsertionPointToStart(branch.elseBlock());
  auto scalar = cast<linalg::LinalgOp>(rewriter.clone(*op));
  rewriter.eraseOp(op);
  return distribute(rewriter, scalar, tid, blockDim);
}

/// Stages the blocks of global buffers that the tile's contractions read —
/// the query tile, the key and value blocks, the rows a projection reads —
/// into tile buffers, copied once where their view is made (once per tile,
/// or per key block inside the key loop), while they fit in `budget` bytes.
/// A contraction reads each element many times; from shared memory instead
/// of global. Returns the staging buffers.
static SmallPtrSet<Operation *, 8>
stageOperands(RewriterBase &rewriter, scf::ForallOp forall, int64_t budget) {
  SmallVector<OpOperand *> reads;
  forall.getBody()->walk([&](linalg::LinalgOp op) {
    if (op.getNumReductionLoops() == 0)
      return;
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto view = input->get().getDefiningOp<memref::SubViewOp>();
      if (!view || view.getType().getRank() != view.getSourceType().getRank())
        continue;
      // Already a tile buffer (a fused prologue's result): nothing to gain.
      Operation *root = rootBuffer(view).getDefiningOp();
      if (root && forall->isAncestor(root))
        continue;
      reads.push_back(input);
    }
  });
  SmallPtrSet<Operation *, 8> staged;
  DenseMap<Value, Value> copies;
  int64_t used = 0;
  for (OpOperand *input : reads) {
    Value source = input->get();
    auto it = copies.find(source);
    if (it == copies.end()) {
      auto view = source.getDefiningOp<memref::SubViewOp>();
      MemRefType type = view.getType();
      auto local = MemRefType::get(type.getShape(), type.getElementType());
      SmallVector<Value> sizes;
      for (OpFoldResult size : view.getMixedSizes())
        if (auto v = dyn_cast<Value>(size))
          sizes.push_back(v);
      FailureOr<int64_t> bytes = boundBytes(local, sizes);
      if (failed(bytes) || used + *bytes > budget)
        continue;
      used += *bytes;
      rewriter.setInsertionPointAfter(view);
      auto buffer =
          memref::AllocOp::create(rewriter, view.getLoc(), local, sizes);
      linalg::CopyOp::create(rewriter, view.getLoc(), source,
                             buffer.getResult());
      staged.insert(buffer);
      it = copies.try_emplace(source, buffer.getResult()).first;
    }
    rewriter.modifyOpInPlace(input->getOwner(),
                             [&] { input->set(it->second); });
  }
  return staged;
}

/// Rewrites one tile loop (see the pass description).
/// The kernel a tile loop becomes, named after its function and what it
/// computes ("forward_relational_attention_tile"), so that profiles and
/// kernel reports say which kernel is which. Kernel outlining makes the names
/// unique.
static std::string kernelName(scf::ForallOp forall) {
  std::string name;
  if (auto fn = forall->getParentOfType<FunctionOpInterface>())
    name = fn.getName().str() + "_";
  StringRef origin = forall->getAttrOfType<StringAttr>(kOriginAttr).getValue();
  origin.consume_front("dat.");
  bool separator = false;
  for (char c : origin) {
    if (llvm::isAlnum(c)) {
      if (separator && !name.empty() && name.back() != '_')
        name += '_';
      name += c;
      separator = false;
    } else {
      separator = true;
    }
  }
  return name + "_tile";
}

/// The zero fill of `op`'s output just before it, which a warp MMA
/// contraction takes in (its accumulators start at zero); null if none.
static linalg::FillOp zeroFillBefore(linalg::LinalgOp op) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (!fill || fill.getDpsInits()[0] != op.getDpsInits()[0] ||
      !matchPattern(fill.value(), m_PosZeroFloat()))
    return nullptr;
  return fill;
}

static LogicalResult mapTileLoop(RewriterBase &rewriter, scf::ForallOp forall,
                                 int64_t blockSize, int64_t sharedLimit,
                                 int64_t wholeSMSharedLimit, bool emulate,
                                 bool mma, bool warpRows, bool vectorCopies,
                                 bool wideTiles, bool asyncCopies,
                                 bool sharedOverScratch) {
  Location loc = forall.getLoc();
  MLIRContext *ctx = rewriter.getContext();

  // Every alloc must be bounded before anything changes.
  WalkResult bounded = forall.getBody()->walk([&](memref::AllocOp alloc) {
    return failed(boundBytes(alloc)) ? WalkResult::interrupt()
                                     : WalkResult::advance();
  });
  if (bounded.wasInterrupted())
    return failure();
  // A warp-row program whose registers fill the SM (7 or 8 warps) is
  // alone on it: its buffers may take the SM's shared memory.
  if (mma && warpRows) {
    FailureOr<int64_t> warps = countWarpRowWarps(forall);
    if (succeeded(warps) && rowsInRegistersBlocksPerSM(*warps * kWarpSize) == 1)
      sharedLimit = std::max(sharedLimit, wholeSMSharedLimit);
  }
  // A warp MMA contraction from zeros whose output buffer is otherwise only
  // read by a narrowing copy (HYLA's value network rounded to bf16) writes
  // the copy's buffer itself: its own is never laid out, and goes. (Found
  // first, moved after: the walk must not see the moves.)
  bool warpMma = mma && blockSize % kWarpSize == 0;
  DenseMap<Operation *, linalg::GenericOp> narrowings;
  SmallPtrSet<Operation *, 4> unplaced;
  SmallVector<std::pair<Operation *, Operation *>> moves;
  forall.getBody()->walk([&](linalg::LinalgOp op) {
    if (!warpMma || !isWarpMmaContraction(op))
      return;
    auto alloc = op.getDpsInits()[0].getDefiningOp<memref::AllocOp>();
    linalg::FillOp fill = zeroFillBefore(op);
    if (!alloc || !fill)
      return;
    SmallVector<linalg::GenericOp> epilogue = collectWarpMmaEpilogue(op);
    Operation *last = epilogue.empty() ? op.getOperation() : epilogue.back();
    // (Past the allocation of the copy's buffer.)
    Operation *next = last->getNextNode();
    while (isa_and_nonnull<memref::AllocOp>(next))
      next = next->getNextNode();
    auto copy = dyn_cast_or_null<linalg::GenericOp>(next);
    if (!copy || !isWarpMmaNarrowing(op, copy))
      return;
    // The copy's buffer, which the contraction's writes will need: a tile
    // buffer whose sizes are known before the fill.
    auto target = copy.getDpsInits()[0].getDefiningOp<memref::AllocOp>();
    if (!target || target->getBlock() != fill->getBlock() ||
        !llvm::all_of(target->getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return !def || def->getBlock() != fill->getBlock() ||
                 def->isBeforeInBlock(fill);
        }))
      return;
    SmallPtrSet<Operation *, 8> known = {fill, op, copy};
    for (linalg::GenericOp generic : epilogue)
      known.insert(generic);
    if (!llvm::all_of(alloc->getUsers(), [&](Operation *user) {
          return known.contains(user) || isa<memref::DeallocOp>(user);
        }))
      return;
    narrowings[op] = copy;
    unplaced.insert(alloc);
    if (fill->isBeforeInBlock(target))
      moves.push_back({target, fill});
  });
  for (auto [op, before] : moves)
    rewriter.moveOpBefore(op, before);

  // A tile whose own buffers would spill into global scratch takes the SM's
  // shared memory if that holds them: its buffers are read and written at
  // every key block, a round trip through L2 or HBM each time, which costs
  // more than the second block per SM the larger request gives up.
  if (sharedOverScratch && wholeSMSharedLimit > sharedLimit) {
    int64_t own = 0;
    forall.getBody()->walk([&](memref::AllocOp alloc) {
      if (!unplaced.contains(alloc))
        own += *boundBytes(alloc);
    });
    if (own > sharedLimit && own <= wholeSMSharedLimit)
      sharedLimit = wholeSMSharedLimit;
  }
  SmallPtrSet<Operation *, 8> staged =
      stageOperands(rewriter, forall, sharedLimit);
  bool warpRowProgram = false;
  // FlashAttention-2's structure where the body takes it: a warp per 16
  // rows, which hold their rows in registers; what is left are the staging
  // copies.
  if (mma && warpRows) {
    FailureOr<int64_t> warps = buildWarpRowProgram(rewriter, forall, emulate);
    warpRowProgram = succeeded(warps);
    if (succeeded(warps)) {
      blockSize = *warps * kWarpSize;
      // (Its contractions are register tiles now.)
      narrowings.clear();
      unplaced.clear();
    }
  }

  // Lay out the tile buffers: shared memory for the staged operands first,
  // then for the others in order while it lasts, the rest in scratch.
  SmallVector<memref::AllocOp> allocs;
  forall.getBody()->walk([&](memref::AllocOp alloc) {
    if (staged.contains(alloc))
      allocs.push_back(alloc);
  });
  forall.getBody()->walk([&](memref::AllocOp alloc) {
    if (!staged.contains(alloc) && !unplaced.contains(alloc))
      allocs.push_back(alloc);
  });
  SmallVector<TileBuffer> buffers;
  int64_t sharedBytes = 0, scratchBytes = 0;
  for (memref::AllocOp alloc : allocs) {
    FailureOr<int64_t> bytes = boundBytes(alloc);
    if (failed(bytes))
      return failure();
    TileBuffer buffer{alloc};
    if (sharedBytes + *bytes <= sharedLimit) {
      buffer.shared = true;
      buffer.offset = sharedBytes;
      sharedBytes += *bytes;
    } else {
      buffer.offset = scratchBytes;
      scratchBytes += *bytes;
    }
    buffers.push_back(buffer);
  }

  // Blocks: the forall's iterations, linearized (last dim fastest).
  rewriter.setInsertionPoint(forall);
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
  };
  SmallVector<Value> lbs = forall.getLowerBound(rewriter);
  SmallVector<Value> ubs = forall.getUpperBound(rewriter);
  SmallVector<Value> steps = forall.getStep(rewriter);
  SmallVector<Value> counts;
  Value grid = index(1);
  for (auto [lb, ub, step] : llvm::zip(lbs, ubs, steps)) {
    Value extent = arith::SubIOp::create(rewriter, loc, ub, lb);
    counts.push_back(arith::CeilDivUIOp::create(rewriter, loc, extent, step));
    grid = arith::MulIOp::create(rewriter, loc, grid, counts.back());
  }
  Value blockDim = index(blockSize);
  Value scratch;
  if (scratchBytes > 0) {
    Value bytes =
        arith::MulIOp::create(rewriter, loc, grid, index(scratchBytes));
    scratch = memref::AllocOp::create(
        rewriter, loc,
        MemRefType::get({ShapedType::kDynamic}, rewriter.getI8Type()),
        ValueRange{bytes}, rewriter.getI64IntegerAttr(kAlignment));
  }

  Block *target;
  Value blockId, threadId, shared;
  Operation *kernel;
  Value emulatedShared;
  if (emulate) {
    // Shared memory is one buffer that the (sequential) blocks reuse.
    if (sharedBytes > 0)
      emulatedShared = memref::AllocOp::create(
          rewriter, loc, MemRefType::get({sharedBytes}, rewriter.getI8Type()),
          ValueRange{}, rewriter.getI64IntegerAttr(kAlignment));
    auto blocks = scf::ForOp::create(rewriter, loc, index(0), grid, index(1));
    kernel = blocks;
    target = blocks.getBody();
    blockId = blocks.getInductionVar();
    shared = emulatedShared;
  } else {
    // Dynamic shared memory: its symbol is 16-byte aligned (a workgroup
    // attribution of i8 would be byte-aligned), and it may exceed 48 KiB.
    Value one = index(1);
    Value sharedSize;
    if (sharedBytes > 0)
      // (+16: the symbol may sit before the dynamic part, see NVPTX's
      // lowering of a zero-sized shared array.)
      sharedSize =
          arith::ConstantIntOp::create(rewriter, loc, sharedBytes + 16, 32);
    auto launch = gpu::LaunchOp::create(rewriter, loc, grid, one, one, blockDim,
                                        one, one, sharedSize);
    launch.setFunctionAttr(FlatSymbolRefAttr::get(ctx, kernelName(forall)));
    kernel = launch;
    target = &launch.getBody().front();
    rewriter.setInsertionPointToEnd(target);
    gpu::TerminatorOp::create(rewriter, loc);
    blockId = launch.getBlockIds().x;
    threadId = launch.getThreadIds().x;
    if (sharedBytes > 0) {
      rewriter.setInsertionPointToStart(target);
      auto workgroup =
          gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
      shared = gpu::DynamicSharedMemoryOp::create(
          rewriter, loc,
          MemRefType::get({ShapedType::kDynamic}, rewriter.getI8Type(),
                          MemRefLayoutAttrInterface{}, workgroup));
    }
  }

  // The block's iteration of the forall.
  if (shared && !emulate)
    rewriter.setInsertionPointAfterValue(shared);
  else
    rewriter.setInsertionPointToStart(target);
  SmallVector<Value> ivs(counts.size());
  Value rest = blockId;
  for (int64_t d = counts.size() - 1; d >= 0; --d) {
    Value i =
        d == 0 ? rest : arith::RemUIOp::create(rewriter, loc, rest, counts[d]);
    ivs[d] = arith::AddIOp::create(
        rewriter, loc, lbs[d],
        arith::MulIOp::create(rewriter, loc, i, steps[d]));
    if (d > 0)
      rest = arith::DivUIOp::create(rewriter, loc, rest, counts[d]);
  }
  Value scratchBase;
  if (scratch)
    scratchBase =
        arith::MulIOp::create(rewriter, loc, blockId, index(scratchBytes));
  Block *body = forall.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, target->getTerminator(), ivs);

  // Tile buffers → views of shared memory or of the block's scratch slice.
  DenseSet<Value> sharedViews;
  for (TileBuffer &buffer : buffers) {
    memref::AllocOp alloc = buffer.alloc;
    rewriter.setInsertionPoint(alloc);
    MemRefType type = alloc.getType();
    Value view;
    if (buffer.shared && emulate) {
      view =
          memref::ViewOp::create(rewriter, alloc.getLoc(), type, shared,
                                 index(buffer.offset), alloc.getDynamicSizes());
    } else if (buffer.shared) {
      auto sharedType = MemRefType::get(
          type.getShape(), type.getElementType(), MemRefLayoutAttrInterface{},
          cast<MemRefType>(shared.getType()).getMemorySpace());
      Value v =
          memref::ViewOp::create(rewriter, alloc.getLoc(), sharedType, shared,
                                 index(buffer.offset), alloc.getDynamicSizes());
      // A block-wide tile spreads its contractions' batch and reduction
      // dims over warps and lanes (HYLA's value network contracts over
      // heads): its buffers' swizzle takes their outer dims too. (A warp-row
      // program's warps read one head's rows at a time.)
      if (!warpRowProgram && type.getRank() > 2)
        v.getDefiningOp()->setAttr(kSwizzleOuterDimsAttr,
                                   rewriter.getUnitAttr());
      view =
          memref::MemorySpaceCastOp::create(rewriter, alloc.getLoc(), type, v);
    } else {
      Value shift = arith::AddIOp::create(rewriter, alloc.getLoc(), scratchBase,
                                          index(buffer.offset));
      view = memref::ViewOp::create(rewriter, alloc.getLoc(), type, scratch,
                                    shift, alloc.getDynamicSizes());
    }
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        rewriter.eraseOp(user);
    rewriter.replaceOp(alloc, view);
    if (buffer.shared)
      sharedViews.insert(view);
  }

  // memref.copy → linalg.copy, then every linalg op over the threads.
  SmallVector<memref::CopyOp> copies;
  target->walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies) {
    rewriter.setInsertionPoint(copy);
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                copy.getTarget());
  }
  // The key loop's staging copies issued as early as their buffers are
  // free, cp.async on the GPU.
  StagingPipeline pipeline;
  if (asyncCopies)
    pipeline = pipelineStagingCopies(
        rewriter, kernel,
        [&](linalg::LinalgOp op) {
          if (!isPermutedCopy(op))
            return false;
          Operation *source = rootBuffer(op.getDpsInputs()[0]).getDefiningOp();
          return sharedViews.contains(op.getDpsInits()[0]) &&
                 (!source || !kernel->isAncestor(source));
        },
        /*asyncCopies=*/!emulate);

  SmallVector<linalg::LinalgOp> ops;
  target->walk([&](linalg::LinalgOp op) { ops.push_back(op); });
  // A warp MMA contraction takes in the zero fill of its output just before
  // it (its accumulators start at zero) and the in-place elementwise ops
  // just after it (a scale, an activation: applied to its accumulators
  // before they are written): a pass over the buffer and a barrier each.
  DenseMap<Operation *, SmallVector<linalg::GenericOp>> epilogues;
  DenseSet<Operation *> zeroFilled, fusedFills, fusedEpilogues;
  for (linalg::LinalgOp op : warpMma ? ops : ArrayRef<linalg::LinalgOp>{}) {
    if (!isWarpMmaContraction(op))
      continue;
    if (linalg::FillOp fill = zeroFillBefore(op)) {
      zeroFilled.insert(op);
      fusedFills.insert(fill);
    }
    for (linalg::GenericOp next : collectWarpMmaEpilogue(op)) {
      epilogues[op].push_back(next);
      fusedEpilogues.insert(next);
    }
    if (linalg::GenericOp copy = narrowings.lookup(op))
      fusedEpilogues.insert(copy);
  }
  for (linalg::LinalgOp op : ops) {
    // (The epilogues are gone with their contractions: not dereferenced.)
    if (fusedEpilogues.contains(op))
      continue;
    if (fusedFills.contains(op)) {
      rewriter.eraseOp(op);
      continue;
    }
    Location opLoc = op.getLoc();
    Operation *next = op->getNextNode();
    // bf16 contractions on the warps' tensor cores.
    if (warpMma && isWarpMmaContraction(op)) {
      SmallVector<linalg::GenericOp> epilogue = epilogues.lookup(op);
      linalg::GenericOp narrowing = narrowings.lookup(op);
      if (narrowing)
        next = narrowing->getNextNode();
      else if (!epilogue.empty())
        next = epilogue.back()->getNextNode();
      Value warp;
      rewriter.setInsertionPoint(op);
      if (!emulate)
        warp =
            arith::DivUIOp::create(rewriter, opLoc, threadId, index(kWarpSize));
      if (failed(buildWarpMmaContraction(
              rewriter, op, warp, blockSize / kWarpSize, wideTiles,
              zeroFilled.contains(op), epilogue, narrowing)))
        return failure();
      if (!emulate) {
        rewriter.setInsertionPoint(next);
        gpu::BarrierOp::create(rewriter, opLoc);
      }
      continue;
    }
    Value tid = threadId;
    if (emulate) {
      // Threads one after another: each op is complete before the next.
      rewriter.setInsertionPoint(op);
      auto threads =
          scf::ForOp::create(rewriter, opLoc, index(0), blockDim, index(1));
      rewriter.moveOpBefore(op, threads.getBody()->getTerminator());
      tid = threads.getInductionVar();
    }
    bool issued = pipeline.issued.contains(op);
    std::optional<LogicalResult> vectors;
    if (vectorCopies)
      vectors =
          distributeVectorCopy(rewriter, op, tid, blockDim, issued && !emulate);
    if (vectors ? failed(*vectors)
                : failed(distribute(rewriter, op, tid, blockDim)))
      return failure();
    // (An issued copy's barrier is where it was: pipelineStagingCopies.)
    if (!emulate && !issued) {
      rewriter.setInsertionPoint(next);
      gpu::BarrierOp::create(rewriter, opLoc);
    }
  }

  // The narrowed contractions' own buffers, no longer used.
  for (Operation *alloc : unplaced) {
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        rewriter.eraseOp(user);
    if (!alloc->use_empty())
      return failure();
    rewriter.eraseOp(alloc);
  }
  // (The emulation's threads run one after another: no barriers.)
  if (emulate)
    for (Operation *barrier : pipeline.readyBarriers)
      rewriter.eraseOp(barrier);
  rewriter.eraseOp(forall);
  rewriter.setInsertionPointAfter(kernel);
  for (Value buffer : {scratch, emulatedShared})
    if (buffer)
      memref::DeallocOp::create(rewriter, loc, buffer);
  return success();
}

namespace {
struct GPUMapTilesPass final : impl::DatGPUMapTilesBase<GPUMapTilesPass> {
  using Base::Base;
  void runOnOperation() override {
    // Past the hardware's limit the launch would fail at run time, in
    // cuFuncSetAttribute: refuse it here.
    if (failed(checkOptionRange(getOperation(), getArgument(), "block-size",
                                blockSize, 1, 1024)) ||
        failed(checkOptionRange(
            getOperation(), getArgument(), "shared-memory", sharedMemory, 0,
            kMaxTileSharedMemory,
            " bytes (sm_90's 227 KiB per block, less the 16 the kernels "
            "add)")) ||
        failed(checkOptionRange(getOperation(), getArgument(),
                                "whole-sm-shared-memory", wholeSMSharedMemory,
                                0, kMaxTileSharedMemory, " bytes")))
      return signalPassFailure();
    // A key block made static (dat's addStaticKeyBlocks) leaves casts back
    // to its dynamic type on the copies into its buffer, which the staging
    // takes only as copies of an allocation: fold them (the shapes agree).
    getOperation()->walk([](Operation *op) {
      if (isa<linalg::TransposeOp, linalg::CopyOp>(op) &&
          op->getParentOfType<scf::ForallOp>())
        (void)memref::foldMemRefCast(op);
    });
    // The tile loops the dat tiling passes made (marked dat.origin) and no
    // other loop: each must be mappable.
    SmallVector<scf::ForallOp> loops;
    WalkResult walk = getOperation()->walk([&](scf::ForallOp forall) {
      if (!isTileLoop(forall) || forall->getParentOfType<scf::ForallOp>() ||
          forall->getParentOfType<gpu::LaunchOp>())
        return WalkResult::advance();
      if (Operation *op = findUnmappableOp(forall)) {
        InFlightDiagnostic diag =
            forall.emitError("dat-gpu-map-tiles: the tile loop of ")
            << forall->getAttr(kOriginAttr)
            << " holds an op the block mapping does not take";
        if (op != forall.getOperation())
          diag.attachNote(op->getLoc()) << "this '" << op->getName() << "'";
        return WalkResult::interrupt();
      }
      loops.push_back(forall);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    for (scf::ForallOp forall : loops)
      if (failed(mapTileLoop(rewriter, forall, blockSize, sharedMemory,
                             wholeSMSharedMemory, emulate, mma, warpRows,
                             vectorCopies, wideTiles, asyncCopies,
                             sharedOverScratch))) {
        forall.emitError("dat-gpu-map-tiles: cannot map this tile loop");
        return signalPassFailure();
      }
    // On the CPU, the warps' row reductions as the vector ops LLVM's
    // lowering takes (on the device, dat-gpu-warp-mma-to-nvvm distributes
    // them over the lanes instead).
    if (emulate) {
      RewritePatternSet patterns(&getContext());
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerReduction);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
  }
};
} // namespace
} // namespace mlir::dat
