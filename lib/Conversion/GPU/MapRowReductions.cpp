//===- MapRowReductions.cpp - a warp per output element of a reduction ----===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// A reduction along the innermost dimension (a norm's row statistics) as a
// kernel whose warps each fold one output element's row: lanes stride the
// row, so a warp's loads are contiguous, the partial results stay in
// registers, and the lanes combine with shuffles.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"
#include "dat/Pass/OptionChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/TypeSwitch.h"

#include <limits>

namespace mlir::dat {

#define GEN_PASS_DEF_DATGPUMAPROWREDUCTIONS
#include "dat/Conversion/Passes.h.inc"

namespace {
constexpr int64_t kWarpsPerBlock = 8;

/// The body's combining op: `yield combine(acc, value)` where `acc` (the
/// output's block argument) has no other use.
struct RowReduction {
  linalg::LinalgOp op;
  Operation *combine;
  /// The combine's operand that is not the accumulator.
  unsigned valueOperand;
  /// The combine's identity, each lane's first accumulator.
  float identity;
};
} // namespace

/// The identity of `combine` on f32 (signed zeros and NaNs included), or
/// nothing for another op. (No product: reassociated, it can overflow
/// where the sequential one does not.)
static std::optional<float> identityOf(Operation *combine) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  constexpr float nan = std::numeric_limits<float>::quiet_NaN();
  // An infinity or NaN identity would be poison under these flags.
  if (auto fm = dyn_cast<arith::ArithFastMathInterface>(combine))
    if (bitEnumContainsAny(fm.getFastMathFlagsAttr().getValue(),
                           arith::FastMathFlags::ninf |
                               arith::FastMathFlags::nnan))
      return std::nullopt;
  return llvm::TypeSwitch<Operation *, std::optional<float>>(combine)
      .Case([](arith::AddFOp) { return -0.0f; })
      .Case([&](arith::MaximumFOp) { return -inf; })
      .Case([&](arith::MinimumFOp) { return inf; })
      .Case<arith::MaxNumFOp, arith::MinNumFOp>([&](auto) { return nan; })
      .Default([](Operation *) { return std::nullopt; });
}

/// The buffer a view is of.
static Value rootOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

static std::optional<RowReduction> matchRowReduction(linalg::LinalgOp op,
                                                     int64_t minLength) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() < 1 || op.getNumReductionLoops() != 1 ||
      op.getNumLoops() < 2 ||
      !linalg::isReductionIterator(op.getIteratorTypesArray().back()))
    return std::nullopt;
  unsigned reduced = op.getNumLoops() - 1;
  AffineExpr k = getAffineDimExpr(reduced, op.getContext());
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation())
      return std::nullopt;
  // The lanes' loads are contiguous only where every input that the
  // reduced dim indexes has it innermost (not a matmul's B), and the first
  // one does.
  OpOperand *init = op.getDpsInitOperand(0);
  Value root = rootOf(init->get());
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (!isa<MemRefType>(in->get().getType()) || rootOf(in->get()) == root)
      return std::nullopt;
    AffineMap map = op.getMatchingIndexingMap(in);
    if (map.isFunctionOfDim(reduced) && map.getResults().back() != k)
      return std::nullopt;
  }
  if (!op.getMatchingIndexingMap(op.getDpsInputOperand(0))
           .isFunctionOfDim(reduced))
    return std::nullopt;
  if (!cast<MemRefType>(init->get().getType()).getElementType().isF32())
    return std::nullopt;
  if (op.getMatchingIndexingMap(init).isFunctionOfDim(reduced))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (!ShapedType::isDynamic(ranges.back()) && ranges.back() < minLength)
    return std::nullopt;

  Block *body = op.getBlock();
  BlockArgument acc = op.getMatchingBlockArgument(init);
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  Operation *combine = yield.getValues()[0].getDefiningOp();
  // (One use: the accumulator is not both operands.)
  std::optional<float> identity = combine ? identityOf(combine) : std::nullopt;
  if (!identity || !acc.hasOneUse() || *acc.getUsers().begin() != combine)
    return std::nullopt;
  // Nothing but the loads the pass makes: no index ops, no nested regions,
  // no side effects (32 lanes run the body at once).
  for (Operation &inner : body->without_terminator())
    if (isa<linalg::IndexOp>(inner) || inner.getNumRegions() > 0 ||
        !isMemoryEffectFree(&inner))
      return std::nullopt;
  unsigned valueOperand = combine->getOperand(0) == acc ? 1 : 0;
  return RowReduction{op, combine, valueOperand, *identity};
}

/// The index values of `map`'s results given the loops' induction values.
static SmallVector<Value> indicesOf(AffineMap map, ArrayRef<Value> ivs) {
  SmallVector<Value> indices;
  for (AffineExpr e : map.getResults())
    indices.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
  return indices;
}

static void rewriteRowReduction(RewriterBase &rewriter, RowReduction &r,
                                int64_t ordinal) {
  linalg::LinalgOp op = r.op;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
  };
  SmallVector<Range> ranges = op.createLoopRanges(rewriter, loc);
  SmallVector<Value> extents;
  for (Range &range : ranges)
    extents.push_back(
        getValueOrCreateConstantIndexOp(rewriter, loc, range.size));
  unsigned reduced = extents.size() - 1;
  Value rows = index(1);
  for (unsigned d = 0; d < reduced; ++d)
    rows = arith::MulIOp::create(rewriter, loc, rows, extents[d]);
  Value grid =
      arith::CeilDivUIOp::create(rewriter, loc, rows, index(kWarpsPerBlock));
  Value one = index(1);
  auto launch =
      gpu::LaunchOp::create(rewriter, loc, grid, one, one,
                            index(kWarpSize * kWarpsPerBlock), one, one);
  // Named like the tile kernels ("forward_row_reduction", then
  // "forward_row_reduction_1", ...) for profiles.
  std::string name = "row_reduction";
  if (auto fn = op->getParentOfType<FunctionOpInterface>())
    name = (fn.getName() + "_" + name).str();
  if (ordinal > 0)
    name += "_" + std::to_string(ordinal);
  launch.setFunctionAttr(FlatSymbolRefAttr::get(rewriter.getContext(), name));
  rewriter.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(rewriter, loc);
  rewriter.setInsertionPointToStart(&launch.getBody().front());

  // This warp's output element, and its lane.
  Value tid = launch.getThreadIds().x;
  Value lane = arith::RemUIOp::create(rewriter, loc, tid, index(kWarpSize));
  Value warp = arith::DivUIOp::create(rewriter, loc, tid, index(kWarpSize));
  Value row = arith::AddIOp::create(
      rewriter, loc,
      arith::MulIOp::create(rewriter, loc, launch.getBlockIds().x,
                            index(kWarpsPerBlock)),
      warp);
  Value valid = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                                      row, rows);
  SmallVector<Value> ivs(extents.size());
  Value rest = row;
  for (int64_t d = reduced - 1; d >= 0; --d) {
    Value i =
        d == 0 ? rest : arith::RemUIOp::create(rewriter, loc, rest, extents[d]);
    ivs[d] = arith::AddIOp::create(
        rewriter, loc,
        getValueOrCreateConstantIndexOp(rewriter, loc, ranges[d].offset), i);
    if (d > 0)
      rest = arith::DivUIOp::create(rewriter, loc, rest, extents[d]);
  }

  // Each lane folds every 32nd element of the row (none past the last
  // output element: its warp's lanes still shuffle).
  Type f32 = rewriter.getF32Type();
  Value identity = arith::ConstantOp::create(
      rewriter, loc, rewriter.getFloatAttr(f32, r.identity));
  Value end =
      arith::SelectOp::create(rewriter, loc, valid, extents[reduced], index(0));
  Block *body = op.getBlock();
  BlockArgument acc = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  auto loop = scf::ForOp::create(
      rewriter, loc, lane, end, index(kWarpSize), ValueRange{identity},
      [&](OpBuilder &b, Location l, Value k, ValueRange iter) {
        SmallVector<Value> all(ivs);
        all[reduced] = k;
        IRMapping map;
        for (OpOperand *in : op.getDpsInputOperands()) {
          Value v = memref::LoadOp::create(
              b, l, in->get(), indicesOf(op.getMatchingIndexingMap(in), all));
          map.map(op.getMatchingBlockArgument(in), v);
        }
        map.map(acc, iter[0]);
        for (Operation &inner : body->without_terminator())
          b.clone(inner, map);
        scf::YieldOp::create(b, l, map.lookup(r.combine->getResult(0)));
      });
  auto combineWith = [&](OpBuilder &b, Value acc, Value value) {
    IRMapping map;
    map.map(r.combine->getOperand(1 - r.valueOperand), acc);
    map.map(r.combine->getOperand(r.valueOperand), value);
    return b.clone(*r.combine, map)->getResult(0);
  };
  Value total = loop.getResult(0);
  Value width = arith::ConstantIntOp::create(rewriter, loc, kWarpSize, 32);
  for (int64_t offset = kWarpSize / 2; offset >= 1; offset /= 2) {
    Value o = arith::ConstantIntOp::create(rewriter, loc, offset, 32);
    Value other = gpu::ShuffleOp::create(rewriter, loc, total, o, width,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    total = combineWith(rewriter, total, other);
  }

  // Lane 0 combines the row's total with the output's value, once.
  Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                      lane, index(0));
  Value store = arith::AndIOp::create(rewriter, loc, valid, first);
  scf::IfOp::create(rewriter, loc, store, [&](OpBuilder &b, Location l) {
    OpOperand *init = op.getDpsInitOperand(0);
    SmallVector<Value> at = indicesOf(op.getMatchingIndexingMap(init), ivs);
    Value old = memref::LoadOp::create(b, l, init->get(), at);
    Value result = combineWith(b, old, total);
    memref::StoreOp::create(b, l, result, init->get(), at);
    scf::YieldOp::create(b, l);
  });
  rewriter.eraseOp(op);
}

namespace {
struct GPUMapRowReductionsPass final
    : impl::DatGPUMapRowReductionsBase<GPUMapRowReductionsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(checkOptionRange(getOperation(), getArgument(), "min-length",
                                minLength, 1)))
      return signalPassFailure();
    SmallVector<RowReduction> found;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!isOnHost(op) || op->getParentOfType<scf::ParallelOp>() ||
          op->getParentOfType<scf::ForallOp>())
        return;
      if (std::optional<RowReduction> r = matchRowReduction(op, minLength))
        found.push_back(*r);
    });
    IRRewriter rewriter(&getContext());
    for (auto [i, r] : llvm::enumerate(found))
      rewriteRowReduction(rewriter, r, i);
  }
};
} // namespace
} // namespace mlir::dat
