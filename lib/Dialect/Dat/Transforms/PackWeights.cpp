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

/// The permutation every use of `arg` transposes it by, if every use is a
/// `linalg.transpose` of it and they agree.
std::optional<SmallVector<int64_t>> commonTranspose(BlockArgument arg) {
  std::optional<SmallVector<int64_t>> perm;
  for (Operation *user : arg.getUsers()) {
    auto transpose = dyn_cast<linalg::TransposeOp>(user);
    if (!transpose || transpose.getInput() != arg)
      return std::nullopt;
    if (perm && ArrayRef<int64_t>(*perm) != transpose.getPermutation())
      return std::nullopt;
    perm = llvm::to_vector(transpose.getPermutation());
  }
  return perm;
}

/// Gives argument `index` of `fn` the transposed type and lets its
/// transposes' users read it directly.
void retypeArgument(func::FuncOp fn, unsigned index, ArrayRef<int64_t> perm) {
  BlockArgument arg = fn.getArgument(index);
  auto type = cast<RankedTensorType>(arg.getType());
  arg.setType(RankedTensorType::get(applyPermutation(type.getShape(), perm),
                                    type.getElementType()));
  for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
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
        std::optional<SmallVector<int64_t>> perm = commonTranspose(arg);
        if (!perm)
          continue;
        if (auto value = fn.getArgAttrOfType<ProgramValueAttr>(
                i, DatDialect::kProgramValueAttrName)) {
          if (value.getKind() != ProgramValueKind::Weight ||
              !value.getPermutation().empty())
            continue;
          retypeArgument(fn, i, *perm);
          fn.setArgAttr(i, DatDialect::kProgramValueAttrName,
                        ProgramValueAttr::get(fn.getContext(), value.getKind(),
                                              value.getName(), std::nullopt,
                                              std::nullopt, *perm));
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
          call->setOperand(
              i, buildTranspose(b, call.getLoc(), call.getOperand(i), *perm));
        }
        retypeArgument(fn, i, *perm);
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
