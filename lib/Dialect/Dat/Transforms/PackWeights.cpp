//===- PackWeights.cpp - the dat-pack-weights pass ------------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//
//
// Weights that a program reads only transposed (the vector layer packs a
// projection's weight so that its output dimension is contiguous) are
// transposed once, when the program binds its weights, instead of on every
// call: the transpose moves from the function bodies into the entry
// function's signature, as a `permutation` of the weight's
// #dat.program_value that the runtime applies.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatAttrs.h"
#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::dat {
#define GEN_PASS_DEF_DATPACKWEIGHTS
#include "dat/Dialect/Dat/Transforms/Passes.h.inc"

namespace {

/// How every use of an argument reads it: through one transpose by `perm`,
/// of the argument itself or (a blocked layout) of its reshape by `expand`
/// (one of the argument's expand_shapes, all alike).
struct CommonTranspose {
  SmallVector<int64_t> perm;
  tensor::ExpandShapeOp expand;
};

/// The transpose every use of `arg` reads it through (directly, or behind
/// one kind of expand_shape), if they agree.
std::optional<CommonTranspose> commonTranspose(BlockArgument arg) {
  std::optional<CommonTranspose> common;
  auto agree = [&](linalg::TransposeOp transpose,
                   tensor::ExpandShapeOp expand) {
    CommonTranspose c{llvm::to_vector(transpose.getPermutation()), expand};
    auto typeOf = [](tensor::ExpandShapeOp e) {
      return e ? e.getResultType() : RankedTensorType();
    };
    if (common &&
        (common->perm != c.perm || typeOf(common->expand) != typeOf(expand)))
      return false;
    common = c;
    return true;
  };
  for (Operation *user : arg.getUsers()) {
    if (auto transpose = dyn_cast<linalg::TransposeOp>(user)) {
      if (transpose.getInput() != arg || !agree(transpose, {}))
        return std::nullopt;
      continue;
    }
    auto expand = dyn_cast<tensor::ExpandShapeOp>(user);
    if (!expand || expand.getResult().use_empty())
      return std::nullopt;
    for (Operation *u : expand->getUsers()) {
      auto transpose = dyn_cast<linalg::TransposeOp>(u);
      if (!transpose || !agree(transpose, expand))
        return std::nullopt;
    }
  }
  return common;
}

/// Gives argument `index` of `fn` the transposed type and lets its
/// transposes' users read it directly.
void retypeArgument(func::FuncOp fn, unsigned index,
                    const CommonTranspose &common) {
  BlockArgument arg = fn.getArgument(index);
  tensor::ExpandShapeOp blocked = common.expand; // (handles are not const)
  auto type =
      blocked ? blocked.getResultType() : cast<RankedTensorType>(arg.getType());
  arg.setType(RankedTensorType::get(
      applyPermutation(type.getShape(), common.perm), type.getElementType()));
  for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user)) {
      for (Operation *u : llvm::make_early_inc_range(expand->getUsers())) {
        u->getResult(0).replaceAllUsesWith(arg);
        u->erase();
      }
      expand->erase();
      continue;
    }
    auto transpose = cast<linalg::TransposeOp>(user);
    transpose->getResult(0).replaceAllUsesWith(arg);
    transpose->erase();
  }
  SmallVector<Type> inputs(fn.getArgumentTypes());
  inputs[index] = arg.getType();
  fn.setFunctionType(
      FunctionType::get(fn.getContext(), inputs, fn.getResultTypes()));
}

} // namespace

void packTransposedWeights(ModuleOp module) {
  OpBuilder b(module.getContext());
  // Outward, one call level per round: a private function's transposed
  // argument becomes a transpose at its call sites, until it reaches an
  // entry function's weight.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
        BlockArgument arg = fn.getArgument(i);
        if (arg.use_empty() || !isa<RankedTensorType>(arg.getType()))
          continue;
        std::optional<CommonTranspose> common = commonTranspose(arg);
        if (!common)
          continue;
        auto argType = cast<RankedTensorType>(arg.getType());
        if (auto value = fn.getArgAttrOfType<ProgramValueAttr>(
                i, DatDialect::kProgramValueAttrName)) {
          if (value.getKind() != ProgramValueKind::Weight ||
              !value.getPermutation().empty())
            continue;
          retypeArgument(fn, i, *common);
          DenseI64ArrayAttr referenceShape;
          if (common->expand)
            referenceShape =
                DenseI64ArrayAttr::get(fn.getContext(), argType.getShape());
          fn.setArgAttr(i, DatDialect::kProgramValueAttrName,
                        ProgramValueAttr::get(
                            fn.getContext(), value.getKind(), value.getName(),
                            std::nullopt, std::nullopt, referenceShape,
                            /*dims=*/nullptr,
                            /*max_shape=*/nullptr, common->perm));
          changed = true;
          continue;
        }
        if (!fn.isPrivate())
          continue;
        std::optional<SymbolTable::UseRange> uses =
            SymbolTable::getSymbolUses(fn, module);
        if (!uses || llvm::any_of(*uses, [](const SymbolTable::SymbolUse &u) {
              return !isa<func::CallOp>(u.getUser());
            }))
          continue;
        for (const SymbolTable::SymbolUse &use : *uses) {
          auto call = cast<func::CallOp>(use.getUser());
          b.setInsertionPoint(call);
          Value operand = call.getOperand(i);
          if (common->expand) // the callee's expand_shape, at the call
            operand = tensor::ExpandShapeOp::create(
                b, call.getLoc(), common->expand.getResultType(), operand,
                common->expand.getReassociationIndices());
          call->setOperand(
              i, buildTranspose(b, call.getLoc(), operand, common->perm));
        }
        retypeArgument(fn, i, *common);
        changed = true;
      }
    }
  }
}

namespace {
struct PackWeightsPass final : impl::DatPackWeightsBase<PackWeightsPass> {
  void runOnOperation() override { packTransposedWeights(getOperation()); }
};
} // namespace
} // namespace mlir::dat
