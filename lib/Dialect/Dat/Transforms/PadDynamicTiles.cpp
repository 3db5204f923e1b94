//===- PadDynamicTiles.cpp - the dat-pad-dynamic-tiles pass ---------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//
//
// The vector layer (dat-register-tiles) needs static shapes. Over a dynamic
// length, the last tile of a tile loop (peeled by dat-peel-tile-loops) and
// the last key block of a key loop have a dynamic size, bounded by the
// tile: each linalg op on them is computed on its operands padded to that
// bound (`tensor.pad`) and its results are sliced back, so the register
// tiles apply to it as to a full tile. A dimension the op reduces over is
// padded with the reduction's neutral element (0 for sums and products'
// sums, -inf for maxima), so padded elements add nothing to a result; an op
// whose body does not show that its reduction's input is the padded
// element itself (or a product of two) is left as it is (scalar loops).
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

namespace mlir::dat {
#define GEN_PASS_DEF_DATPADDYNAMICTILES
#include "dat/Dialect/Dat/Transforms/Passes.h.inc"

namespace {

/// The value each input of `op` is padded with where the padded dimensions
/// include a reduction: the neutral element of the reduction, where each
/// input reaches it directly (`out ⊕ in`) or as a product (`out + a·b`).
/// Null where that cannot be shown.
FailureOr<SmallVector<Attribute>> reductionPadding(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1)
    return failure();
  Block *body = op.getBody();
  SmallVector<Operation *> combiners;
  Value reduced =
      matchReduction(op.getRegionOutputArgs(), /*redPos=*/0, combiners);
  if (!reduced || combiners.size() != 1)
    return failure();
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiners[0]);
  if (!neutral)
    return failure();
  auto isInput = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == body &&
           arg.getArgNumber() < op.getNumDpsInputs();
  };
  // `out ⊕ in`: the input padded with the neutral element.
  if (isInput(reduced))
    return SmallVector<Attribute>(op->getNumOperands(), *neutral);
  // `out + a·b`: both padded with zero.
  auto mul = reduced.getDefiningOp<arith::MulFOp>();
  if (mul && isa<arith::AddFOp>(combiners[0]) && isInput(mul.getLhs()) &&
      isInput(mul.getRhs()))
    return SmallVector<Attribute>(op->getNumOperands(), *neutral);
  return failure();
}

} // namespace

FailureOr<linalg::GenericOp> padDynamicTile(RewriterBase &rewriter,
                                            linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() ||
      !op->getParentOfType<LoopLikeOpInterface>())
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> dynamicDims;
  for (auto [d, r] : llvm::enumerate(ranges))
    if (ShapedType::isDynamic(r))
      dynamicDims.push_back(d);
  if (dynamicDims.empty())
    return failure();
  // Every dynamic loop range bounded by a constant (its tile), and each
  // operand padded to the loops' sizes (projected permutations only).
  SmallVector<int64_t> sizes(ranges);
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!type || !map.isProjectedPermutation())
      return failure();
    for (int64_t k = 0; k < type.getRank(); ++k) {
      unsigned d = map.getDimPosition(k);
      if (!type.isDynamicDim(k) || !ShapedType::isDynamic(sizes[d]))
        continue;
      FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
          presburger::BoundType::UB, {operand.get(), k},
          /*stopCondition=*/nullptr, /*closedUB=*/true);
      if (failed(bound) || *bound < 1)
        return failure();
      sizes[d] = *bound;
    }
  }
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return failure();
  SmallVector<SmallVector<int64_t>> shapes;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<int64_t> shape;
    for (unsigned k = 0; k < map.getNumResults(); ++k)
      shape.push_back(sizes[map.getDimPosition(k)]);
    shapes.push_back(shape);
  }
  bool reduces = llvm::any_of(dynamicDims, [&](int64_t d) {
    return op.getIteratorTypesArray()[d] == utils::IteratorType::reduction;
  });
  SmallVector<Attribute> padding;
  if (reduces) {
    FailureOr<SmallVector<Attribute>> values = reductionPadding(op);
    if (failed(values))
      return failure();
    padding = *values;
  } else {
    for (OpOperand &operand : op->getOpOperands())
      padding.push_back(
          rewriter.getZeroAttr(getElementTypeOrSelf(operand.get().getType())));
  }

  // The operands padded at their ends to the bounds.
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> operands;
  for (auto [operand, shape, value] :
       llvm::zip(op->getOpOperands(), shapes, padding)) {
    auto type = cast<RankedTensorType>(operand.get().getType());
    if (type.getShape() == ArrayRef<int64_t>(shape)) {
      operands.push_back(operand.get());
      continue;
    }
    Value pad =
        arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(value));
    operands.push_back(tensor::createPadHighOp(
        RankedTensorType::get(shape, type.getElementType()), operand.get(), pad,
        /*nofold=*/false, loc, rewriter));
  }
  // The op on them; its results sliced back to the unpadded sizes and
  // copied into its own destinations (linalg.copy: an accumulator a key
  // loop carries stays in place where bufferization can keep it there).
  unsigned inits = op.getNumDpsInits();
  auto padded = mlir::clone(
      rewriter, op, ValueRange(operands).take_back(inits).getTypes(), operands);
  SmallVector<Value> replacements;
  for (auto [result, init, paddedInit] :
       llvm::zip(padded->getResults(), op.getDpsInits(),
                 ValueRange(operands).take_back(inits))) {
    // (A destination of static shape was computed in place.)
    if (paddedInit == init) {
      replacements.push_back(result);
      continue;
    }
    int64_t rank = cast<RankedTensorType>(init.getType()).getRank();
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, loc, result,
        SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(0)),
        tensor::getMixedSizes(rewriter, loc, init),
        SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1)));
    replacements.push_back(
        linalg::CopyOp::create(rewriter, loc, slice, init).getResult(0));
  }
  rewriter.replaceOp(op, replacements);
  return padded;
}

namespace {
struct PadDynamicTilesPass final
    : impl::DatPadDynamicTilesBase<PadDynamicTilesPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    // Only functions over dynamic lengths: a static function's dynamic
    // tiles (a decode step's key loop up to its position) stay as they were.
    getOperation()->walk([&](FunctionOpInterface fn) {
      if (llvm::none_of(fn.getArgumentTypes(), [](Type t) {
            auto shaped = dyn_cast<ShapedType>(t);
            return shaped && !shaped.hasStaticShape();
          }))
        return;
      fn.walk([&](linalg::GenericOp op) { ops.push_back(op); });
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops)
      (void)padDynamicTile(rewriter, op);
  }
};
} // namespace
} // namespace mlir::dat
