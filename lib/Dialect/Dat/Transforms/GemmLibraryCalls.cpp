//===- GemmLibraryCalls.cpp - projections as calls to a GEMM library ------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// A projection y[..., o] += Σ_i x[..., i] · W[o, i] on contiguous buffers is
// one GEMM, y[M, N] = x[M, K] · W[N, K]ᵀ + β·y with M the product of the
// leading dims. This pass calls the program's runtime for it (cuBLAS on the
// GPU, tensor cores for bf16; OpenBLAS on the CPU), instead of generating the
// loops: the "library" side of the GEMM strategy.
//
// The library takes the projection's epilogue where it can, because on the
// GPU each op around the call is a kernel that streams y through memory: a
// zero fill of y just before the call is dropped (β = 0), and where y's only
// reader is its copy to bf16 (bf16 storage), the library writes the bf16
// buffer itself — y's initial value (a broadcast bias) then goes to that
// buffer, which is exact for a bf16 bias — and y is gone.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dat {

#define GEN_PASS_DEF_DATGEMMLIBRARYCALLS
#include "dat/Dialect/Dat/Transforms/Passes.h.inc"

/// `v`, or what it was widened from.
static Value unwidened(Value v) {
  if (auto ext = v.getDefiningOp<arith::ExtFOp>())
    return ext.getIn();
  return v;
}

/// Whether the body is `yield out + a·b` with {a, b} the two inputs (each
/// possibly widened).
static bool isMulAddBody(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add || body.getOperations().size() > 6)
    return false;
  Value out = body.getArgument(2), product;
  if (add.getLhs() == out)
    product = add.getRhs();
  else if (add.getRhs() == out)
    product = add.getLhs();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  Value a = unwidened(mul.getLhs()), b = unwidened(mul.getRhs());
  Value x = body.getArgument(0), w = body.getArgument(1);
  return (a == x && b == w) || (a == w && b == x);
}

static bool isContiguous(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.hasStaticShape() && t.getLayout().isIdentity() &&
         !t.getMemorySpace();
}

bool hasProjectionGemmForm(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return false;
  unsigned n = op.getNumLoops();
  auto iters = op.getIteratorTypesArray();
  if (n < 3 || iters.back() != utils::IteratorType::reduction ||
      op.getNumReductionLoops() != 1)
    return false;
  MLIRContext *ctx = op.getContext();
  // x: (leading..., i), W: (o, i), y: (leading..., o); o = n-2, i = n-1.
  SmallVector<AffineExpr> lead;
  for (unsigned d = 0; d + 2 < n; ++d)
    lead.push_back(getAffineDimExpr(d, ctx));
  auto expr = [&](unsigned d) { return getAffineDimExpr(d, ctx); };
  SmallVector<AffineExpr> xe(lead), ye(lead);
  xe.push_back(expr(n - 1));
  ye.push_back(expr(n - 2));
  SmallVector<AffineMap> want = {
      AffineMap::get(n, 0, xe, ctx),
      AffineMap::get(n, 0, {expr(n - 2), expr(n - 1)}, ctx),
      AffineMap::get(n, 0, ye, ctx)};
  if (op.getIndexingMapsArray() != ArrayRef<AffineMap>(want) ||
      !isMulAddBody(op))
    return false;
  Type et = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  return getElementTypeOrSelf(op.getDpsInputs()[1].getType()) == et &&
         getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32() &&
         (et.isF32() || et.isBF16());
}

/// The GEMM `op` is, as (x, w, y) operands, or failure.
static FailureOr<std::array<Value, 3>> matchProjection(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() ||
      op->getParentOfType<LoopLikeOpInterface>() ||
      op->getParentOfType<gpu::LaunchOp>() || !hasProjectionGemmForm(op))
    return failure();
  Value x = op.getDpsInputs()[0], w = op.getDpsInputs()[1],
        y = op.getDpsInits()[0];
  if (!isContiguous(x) || !isContiguous(w) || !isContiguous(y))
    return failure();
  return std::array<Value, 3>{x, w, y};
}

/// A 2-D view [Π leading dims, last dim] of a contiguous buffer.
static Value asMatrix(OpBuilder &b, Location loc, Value v) {
  auto t = cast<MemRefType>(v.getType());
  if (t.getRank() == 2)
    return v;
  ReassociationIndices lead;
  for (int64_t d = 0; d + 1 < t.getRank(); ++d)
    lead.push_back(d);
  return memref::CollapseShapeOp::create(
      b, loc, v, ArrayRef<ReassociationIndices>{lead, {t.getRank() - 1}});
}

/// What the library call takes over around a projection `gemm` whose output
/// is the allocation `y`.
struct Epilogue {
  /// y's zero fill just before the GEMM, dropped (β = 0).
  linalg::FillOp zeroFill;
  /// y's copy to bf16, after the GEMM: the call writes its output instead.
  linalg::GenericOp narrowCopy;
  /// With `narrowCopy` and no zero fill: y's initial value, the broadcast of
  /// a bf16 operand, written to the narrow buffer instead.
  linalg::GenericOp init;
};

/// Whether the ops strictly between `from` and `to` (same block) leave
/// memory alone (or only allocate).
static bool nothingTouchesMemoryBetween(Operation *from, Operation *to) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode())
    if (!isMemoryEffectFree(op) && !isa<memref::AllocOp>(op))
      return false;
  return true;
}

static bool isElementwise(linalg::GenericOp op) {
  return op.getNumReductionLoops() == 0 &&
         llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); });
}

/// The cast `OpTy` of a block argument that `op` yields, or null.
template <typename OpTy> static OpTy yieldedCast(Operation *op) {
  Block &body = op->getRegion(0).front();
  auto cast = body.getTerminator()->getOperand(0).getDefiningOp<OpTy>();
  auto arg = cast ? dyn_cast<BlockArgument>(cast.getIn()) : BlockArgument();
  return arg && arg.getOwner() == &body ? cast : OpTy();
}

/// The block argument that `op` yields through a cast `OpTy`, or null.
template <typename OpTy> static BlockArgument yieldedArgument(Operation *op) {
  OpTy castOp = yieldedCast<OpTy>(op);
  return castOp ? cast<BlockArgument>(castOp.getIn()) : BlockArgument();
}

/// y's copy to a fresh contiguous bf16 buffer by `truncf` — elementwise,
/// after `gemm` with nothing between them touching memory — or null.
static linalg::GenericOp matchNarrowCopy(Operation *user,
                                         linalg::GenericOp gemm, Value y) {
  auto copy = dyn_cast<linalg::GenericOp>(user);
  if (!copy || copy->getBlock() != gemm->getBlock() ||
      !gemm->isBeforeInBlock(copy) || copy.getNumDpsInputs() != 1 ||
      copy.getNumDpsInits() != 1 || copy.getDpsInputs()[0] != y ||
      !isElementwise(copy) || copy.getBody()->getOperations().size() != 2)
    return {};
  // Rounded as the copy would (to nearest even), by the library; of y, not
  // of the copy's own output.
  auto trunc = yieldedCast<arith::TruncFOp>(copy);
  if (!trunc || trunc.getRoundingmodeAttr() ||
      cast<BlockArgument>(trunc.getIn()).getArgNumber() != 0)
    return {};
  Value z = copy.getDpsInits()[0];
  auto zType = cast<MemRefType>(z.getType());
  auto alloc = z.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != copy->getBlock() ||
      !zType.getElementType().isBF16() || !zType.hasStaticShape() ||
      !zType.getLayout().isIdentity() ||
      zType.getShape() != cast<MemRefType>(y.getType()).getShape() ||
      !nothingTouchesMemoryBetween(gemm, copy))
    return {};
  // z holds nothing before the copy: every other use of it comes after.
  for (Operation *u : z.getUsers())
    if (u != copy && u != alloc) {
      Operation *top = copy->getBlock()->findAncestorOpInBlock(*u);
      if (!top || !copy->isBeforeInBlock(top))
        return {};
    }
  return copy;
}

/// y's initial value written elementwise by `user` as the widening of a
/// bf16 input (a broadcast bias), before `gemm` with nothing between them
/// touching memory, or null.
static linalg::GenericOp matchBf16Init(Operation *user, linalg::GenericOp gemm,
                                       Value y) {
  auto init = dyn_cast<linalg::GenericOp>(user);
  if (!init || init->getBlock() != gemm->getBlock() ||
      !init->isBeforeInBlock(gemm) || init.getNumDpsInits() != 1 ||
      init.getDpsInits()[0] != y || init.getNumReductionLoops() != 0 ||
      !init.getMatchingIndexingMap(init.getDpsInitOperand(0)).isIdentity() ||
      init.getBody()->getOperations().size() != 2 ||
      !nothingTouchesMemoryBetween(init, gemm))
    return {};
  BlockArgument in = yieldedArgument<arith::ExtFOp>(init);
  if (!in || in.getArgNumber() >= init.getNumDpsInputs() ||
      !in.getType().isBF16())
    return {};
  return init;
}

static Epilogue matchEpilogue(linalg::GenericOp gemm) {
  Value y = gemm.getDpsInits()[0];
  auto alloc = y.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != gemm->getBlock())
    return {};
  Epilogue e;
  linalg::GenericOp init;
  bool others = false;
  for (Operation *user : y.getUsers()) {
    if (user == gemm)
      continue;
    if (auto fill = dyn_cast<linalg::FillOp>(user);
        fill && fill.getOutputs()[0] == y &&
        fill->getBlock() == gemm->getBlock() && fill->isBeforeInBlock(gemm) &&
        matchPattern(fill.getInputs()[0], m_PosZeroFloat()) &&
        nothingTouchesMemoryBetween(fill, gemm)) {
      e.zeroFill = fill;
    } else if (linalg::GenericOp copy = matchNarrowCopy(user, gemm, y);
               copy && !e.narrowCopy) {
      e.narrowCopy = copy;
    } else if (linalg::GenericOp i = matchBf16Init(user, gemm, y); i && !init) {
      init = i;
    } else {
      others = true;
    }
  }
  // Narrow only bf16 GEMMs, where y is then dead and its initial value
  // known.
  bool bf16 = getElementTypeOrSelf(gemm.getDpsInputs()[0].getType()).isBF16();
  if (e.narrowCopy &&
      (!bf16 || others || (!e.zeroFill && !init) || (e.zeroFill && init)))
    e.narrowCopy = {};
  if (e.narrowCopy && !e.zeroFill)
    e.init = init;
  return e;
}

/// The runtime's GEMM for operands of element type `et` (f32 or bf16) and
/// output `out` (f32, or bf16 for bf16 operands), declared once with a C
/// interface; an error if the name is taken.
static FailureOr<func::FuncOp> gemmDeclaration(ModuleOp module, Type et,
                                               Type out, Operation *user) {
  std::string name = !et.isBF16()   ? "dat_gemm_f32"
                     : out.isBF16() ? "dat_gemm_bf16_to_bf16"
                                    : "dat_gemm_bf16";
  auto matrix = [](Type t) {
    return MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, t);
  };
  Type f32 = Float32Type::get(module.getContext());
  SmallVector<Type> types = {matrix(et), matrix(et), matrix(out), f32};
  Operation *existing = module.lookupSymbol(name);
  auto fn = dyn_cast_or_null<func::FuncOp>(existing);
  if (existing && !fn)
    return user->emitOpError("dat-gemm-library-calls: symbol @")
           << name << " is not a function";
  if (fn && fn.getFunctionType().getInputs() != ArrayRef<Type>(types))
    return user->emitOpError("dat-gemm-library-calls: @")
           << name << " exists with another type";
  if (!fn) {
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    fn = func::FuncOp::create(top, module.getLoc(), name,
                              top.getFunctionType(types, {}));
    fn.setPrivate();
    fn->setAttr("llvm.emit_c_interface", top.getUnitAttr());
  }
  return fn;
}

/// `init` writing `z` instead of y: its bf16 input as it is.
static void retargetInit(OpBuilder &b, linalg::GenericOp init, Value z) {
  b.setInsertionPoint(init);
  BlockArgument in = yieldedArgument<arith::ExtFOp>(init);
  SmallVector<AffineMap> maps = init.getIndexingMapsArray();
  linalg::GenericOp::create(b, init.getLoc(), TypeRange{}, init.getDpsInputs(),
                            ValueRange{z}, maps, init.getIteratorTypesArray(),
                            [&](OpBuilder &nb, Location loc, ValueRange args) {
                              linalg::YieldOp::create(nb, loc,
                                                      args[in.getArgNumber()]);
                            });
  init.erase();
}

FailureOr<int64_t> outlineProjectionGemms(ModuleOp module, bool epilogues) {
  SmallVector<std::pair<linalg::GenericOp, std::array<Value, 3>>> found;
  module.walk([&](linalg::GenericOp op) {
    if (FailureOr<std::array<Value, 3>> m = matchProjection(op); succeeded(m))
      found.push_back({op, *m});
  });
  OpBuilder b(module.getContext());
  for (auto &[op, operands] : found) {
    Epilogue e = epilogues ? matchEpilogue(op) : Epilogue();
    Value out = operands[2];
    if (e.narrowCopy) {
      out = e.narrowCopy.getDpsInits()[0];
      // The bf16 buffer, made where y is (before its initial value).
      out.getDefiningOp()->moveAfter(operands[2].getDefiningOp());
    }
    FailureOr<func::FuncOp> fn =
        gemmDeclaration(module, getElementTypeOrSelf(operands[0].getType()),
                        getElementTypeOrSelf(out.getType()), op);
    if (failed(fn))
      return failure();
    Location loc = op.getLoc();
    b.setInsertionPoint(op);
    SmallVector<Value> matrices = {asMatrix(b, loc, operands[0]), operands[1],
                                   asMatrix(b, loc, out)};
    SmallVector<Value> args;
    for (auto [v, t] : llvm::zip(matrices, fn->getFunctionType().getInputs()))
      args.push_back(memref::CastOp::create(b, loc, t, v));
    args.push_back(arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(e.zeroFill ? 0.0f : 1.0f)));
    func::CallOp::create(b, loc, *fn, args);
    op.erase();
    if (e.zeroFill)
      e.zeroFill.erase();
    if (e.init)
      retargetInit(b, e.init, out);
    if (e.narrowCopy) {
      e.narrowCopy.erase();
      Operation *y = operands[2].getDefiningOp();
      if (y->use_empty())
        y->erase();
    }
  }
  return static_cast<int64_t>(found.size());
}

namespace {
struct GemmLibraryCallsPass final
    : impl::DatGemmLibraryCallsBase<GemmLibraryCallsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(outlineProjectionGemms(getOperation(), epilogues)))
      signalPassFailure();
  }
};
} // namespace
} // namespace mlir::dat
