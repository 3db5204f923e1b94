//===- NarrowStorage.cpp - bf16/f16 storage, f32 arithmetic ---------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Mixed precision the way the GPU wants it: every float tensor that reaches
// memory (arguments, results, activations between ops) is stored narrow,
// while arithmetic stays f32. Elementwise bodies widen what they read and
// narrow what they write; contractions and reductions accumulate in f32 and
// their results stay f32 where an elementwise consumer reads them (fused
// into one tile by dat-fuse-epilogues, that f32 never reaches memory) and
// are narrowed once for every other consumer. The dat ops already accumulate
// in f32 for narrow operands.
//
// The frontend's IR is a flat sequence of dat, linalg, tensor and func ops
// per function; anything with a region other than linalg.generic, fill and
// transpose is refused rather than guessed at, as are declarations whose
// f32 tensors belong to another library's ABI.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/IR/DatOps.h"
#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "dat/Dialect/Dat/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::dat {

#define GEN_PASS_DEF_DATNARROWSTORAGE
#include "dat/Dialect/Dat/Transforms/Passes.h.inc"

namespace {

class Narrower {
public:
  Narrower(FloatType narrow)
      : narrow(narrow), wide(Float32Type::get(narrow.getContext())) {}

  LogicalResult run(ModuleOp module);

private:
  /// `type` with f32 (elements) made narrow; other types unchanged.
  Type narrowType(Type type) const {
    if (type == wide)
      return narrow;
    if (auto t = dyn_cast<TensorType>(type); t && t.getElementType() == wide)
      return t.clone(narrow);
    return type;
  }
  bool isWideTensor(Value v) const {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.getElementType() == wide;
  }

  /// A narrow copy of the f32 tensor `v`, made once, right after `v`.
  Value narrowed(Value v);
  /// An f32 tensor of `like`'s shape to accumulate into: a fresh
  /// tensor.empty when `like` is one, else `like` widened.
  Value wideInit(OpBuilder &b, Value like);
  /// Elementwise cast of tensor `v` to element type `to`.
  Value castTensor(OpBuilder &b, Location loc, Value v, FloatType to);

  LogicalResult visit(Operation *op);
  LogicalResult visitGeneric(linalg::GenericOp op);
  LogicalResult visitLoop(scf::ForOp loop);
  void visitGenericBody(linalg::GenericOp op);

  FloatType narrow, wide;
  /// f32 results that stay f32: reduction results, and the fills and
  /// elementwise ops that produce a reduction's accumulator.
  DenseSet<Value> keepWide;
  DenseMap<Value, Value> narrowCopies;
};

} // namespace

Value Narrower::castTensor(OpBuilder &b, Location loc, Value v, FloatType to) {
  Value empty =
      tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, v), to);
  return convertInto(b, loc, v, empty);
}

Value Narrower::narrowed(Value v) {
  Value &copy = narrowCopies[v];
  if (!copy) {
    OpBuilder b(v.getContext());
    b.setInsertionPointAfterValue(v);
    copy = castTensor(b, v.getLoc(), v, narrow);
  }
  return copy;
}

Value Narrower::wideInit(OpBuilder &b, Value like) {
  Location loc = like.getLoc();
  if (auto empty = like.getDefiningOp<tensor::EmptyOp>())
    return tensor::EmptyOp::create(b, loc, empty.getMixedSizes(), wide);
  return castTensor(b, loc, like, wide);
}

void Narrower::visitGenericBody(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  OpBuilder b(op.getContext());
  b.setInsertionPointToStart(&body);
  // Block arguments take their operand's element type; narrow ones are
  // widened once at the top of the body.
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    Type et = getElementTypeOrSelf(operand.get().getType());
    if (arg.getType() == et)
      continue;
    arg.setType(et);
    if (arg.use_empty())
      continue;
    Value w = arith::ExtFOp::create(b, arg.getLoc(), wide, arg);
    arg.replaceAllUsesExcept(w, w.getDefiningOp());
  }
  // Scalars read from narrow tensors (gathers) are widened where read.
  body.walk([&](tensor::ExtractOp extract) {
    Type et = extract.getTensor().getType().getElementType();
    if (extract.getType() == et)
      return;
    extract.getResult().setType(et);
    b.setInsertionPointAfter(extract);
    Value w =
        arith::ExtFOp::create(b, extract.getLoc(), wide, extract.getResult());
    extract.getResult().replaceAllUsesExcept(w, w.getDefiningOp());
  });
  // Narrow outputs are written narrow.
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  b.setInsertionPoint(yield);
  for (auto [i, value] : llvm::enumerate(yield.getValues())) {
    Type et = getElementTypeOrSelf(op.getDpsInits()[i].getType());
    if (value.getType() != et && et == narrow)
      yield->setOperand(
          i, arith::TruncFOp::create(b, yield.getLoc(), narrow, value));
  }
}

LogicalResult Narrower::visitGeneric(linalg::GenericOp op) {
  bool reduces = op.getNumReductionLoops() > 0;
  OpBuilder b(op);
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    Value result = op->getResult(i);
    if (!isWideTensor(result))
      continue;
    if (reduces || keepWide.contains(result)) {
      // Accumulate in f32: the init must be f32 too.
      if (!isWideTensor(init.get()))
        init.set(wideInit(b, init.get()));
      keepWide.insert(result);
      continue;
    }
    if (isWideTensor(init.get()))
      init.set(narrowed(init.get()));
    result.setType(narrowType(result.getType()));
  }
  visitGenericBody(op);
  return success();
}

LogicalResult Narrower::visit(Operation *op) {
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
    if (!dense || !isWideTensor(constant.getResult()))
      return success();
    const llvm::fltSemantics &sem = narrow.getFloatSemantics();
    auto values = dense.mapValues(narrow, [&](const APFloat &v) {
      APFloat n = v;
      bool lost;
      n.convert(sem, APFloat::rmNearestTiesToEven, &lost);
      return n.bitcastToAPInt();
    });
    OpBuilder b(op);
    Value c = arith::ConstantOp::create(b, op->getLoc(), values);
    constant.replaceAllUsesWith(c);
    constant.erase();
    return success();
  }
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return visitGeneric(generic);

  // Every other consumer reads narrow tensors (the f32 values left are the
  // kept-wide ones).
  for (OpOperand &operand : op->getOpOperands())
    if (keepWide.contains(operand.get()))
      operand.set(narrowed(operand.get()));

  // The named linalg ops the frontend emits are rebuilt: their bodies are
  // implicit in their types.
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    Value result = fill.getResult(0), init = fill.getOutputs()[0];
    if (!isWideTensor(result))
      return success();
    OpBuilder b(op);
    Value scalar = fill.getInputs()[0];
    bool accumulator = keepWide.erase(result);
    if (accumulator)
      init = wideInit(b, init);
    else
      scalar = castFloat(b, op->getLoc(), scalar, narrow);
    Value filled =
        linalg::FillOp::create(b, op->getLoc(), scalar, init).getResult(0);
    if (accumulator)
      keepWide.insert(filled);
    result.replaceAllUsesWith(filled);
    op->erase();
    return success();
  }
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
    if (!isWideTensor(transpose->getResult(0)))
      return success();
    OpBuilder b(op);
    auto rebuilt = linalg::TransposeOp::create(
        b, op->getLoc(), transpose.getInput(), transpose.getInit(),
        transpose.getPermutation());
    op->getResult(0).replaceAllUsesWith(rebuilt->getResult(0));
    op->erase();
    return success();
  }
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return visitLoop(loop);
  // Integer work (e.g. a linalg.reduce of tree depths) stays as it is.
  auto isFloat = [&](Type t) {
    Type et = getElementTypeOrSelf(t);
    return et == wide || et == narrow;
  };
  if (llvm::none_of(op->getOperandTypes(), isFloat) &&
      llvm::none_of(op->getResultTypes(), isFloat))
    return success();
  if (op->getNumRegions() != 0)
    return op->emitOpError("dat-narrow-storage: unexpected op with regions "
                           "(the pass handles the frontend's flat IR and "
                           "scf.for)");
  if (auto call = dyn_cast<func::CallOp>(op)) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        op, call.getCalleeAttr());
    for (auto [r, t] :
         llvm::zip(call.getResults(), callee.getFunctionType().getResults()))
      r.setType(t);
    return success();
  }
  for (OpResult r : op->getResults()) {
    if (r.getType() == wide)
      return op->emitOpError("dat-narrow-storage: unexpected f32 scalar "
                             "result outside a linalg body");
    r.setType(narrowType(r.getType()));
  }
  return success();
}

LogicalResult Narrower::visitLoop(scf::ForOp loop) {
  // A loop (APE's tree maps) computes in f32 as it is: the narrow tensors it
  // reads, as operands or from above, are widened before it, and its
  // results stay f32 (narrowed where a consumer reads them).
  OpBuilder b(loop);
  DenseMap<Value, Value> widened;
  auto widen = [&](OpOperand &use) {
    auto t = dyn_cast<RankedTensorType>(use.get().getType());
    if (!t || t.getElementType() != narrow)
      return;
    Value &w = widened[use.get()];
    if (!w)
      w = castTensor(b, loop.getLoc(), use.get(), wide);
    use.set(w);
  };
  for (OpOperand &use : loop->getOpOperands())
    widen(use);
  loop->walk([&](Operation *inner) {
    for (OpOperand &use : inner->getOpOperands())
      if (!loop->isAncestor(use.get().getParentRegion()->getParentOp()))
        widen(use);
  });
  for (Value r : loop.getResults())
    if (isWideTensor(r))
      keepWide.insert(r);
  return success();
}

LogicalResult Narrower::run(ModuleOp module) {
  // Accumulators: a reduction's init and the fill or elementwise op that
  // makes it, when nothing else reads it.
  module.walk([&](linalg::LinalgOp op) {
    if (op.getNumReductionLoops() == 0)
      return;
    for (Value init : op.getDpsInits()) {
      auto producer = init.getDefiningOp<linalg::LinalgOp>();
      // Only f32 accumulators: an integer reduction (e.g. a max of tree
      // depths) has nothing to narrow.
      if (producer && init.hasOneUse() && isWideTensor(init) &&
          producer.getNumReductionLoops() == 0 &&
          (isa<linalg::FillOp>(producer) || isa<linalg::GenericOp>(producer)))
        keepWide.insert(init);
    }
  });
  // Signatures first, so that calls see their callee's new types. A
  // declaration's signature is someone else's ABI: not ours to change.
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto narrowed = [&](TypeRange types) {
      return llvm::map_to_vector(types, [&](Type t) { return narrowType(t); });
    };
    FunctionType type =
        FunctionType::get(module.getContext(), narrowed(fn.getArgumentTypes()),
                          narrowed(fn.getResultTypes()));
    if (type == fn.getFunctionType())
      continue;
    if (fn.isExternal())
      return fn.emitOpError("dat-narrow-storage: the external function's f32 "
                            "tensors would change its ABI");
    fn.setType(type);
    for (BlockArgument arg : fn.getArguments())
      arg.setType(narrowType(arg.getType()));
  }
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    if (!fn.getBody().hasOneBlock())
      return fn.emitOpError("dat-narrow-storage: expected a single block");
    for (Operation &op :
         llvm::make_early_inc_range(fn.getBody().front().getOperations()))
      if (failed(visit(&op)))
        return failure();
  }
  // The narrow inits that accumulators were given f32 twins of.
  module.walk([](tensor::EmptyOp empty) {
    if (empty->use_empty())
      empty->erase();
  });
  return success();
}

LogicalResult narrowFloatStorage(ModuleOp module, FloatType storage) {
  return Narrower(storage).run(module);
}

namespace {
struct DatNarrowStoragePass
    : public impl::DatNarrowStorageBase<DatNarrowStoragePass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    FloatType storage;
    if (elementType == "bf16")
      storage = BFloat16Type::get(ctx);
    else if (elementType == "f16")
      storage = Float16Type::get(ctx);
    else {
      mlir::emitError(getOperation().getLoc(),
                      "dat-narrow-storage: element-type must be bf16 or f16, "
                      "got '")
          << elementType << "'";
      return signalPassFailure();
    }
    if (failed(narrowFloatStorage(getOperation(), storage)))
      signalPassFailure();
  }
};
} // namespace

} // namespace mlir::dat
