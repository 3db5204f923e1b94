//===- GemmLibraryCalls.cpp - projections as calls to a GEMM library ------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// A projection y[..., o] += Σ_i x[..., i] · W[o, i] on contiguous buffers is
// one GEMM, y[M, N] += x[M, K] · W[N, K]ᵀ with M the product of the leading
// dims. This pass calls the program's runtime for it (cuBLAS on the GPU,
// tensor cores for bf16; a loop nest on the CPU, which checks the call),
// instead of generating the loops: the "library" side of the GEMM strategy.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

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

/// The runtime's GEMM for operands of element type `et` (f32 or bf16),
/// declared once with a C interface; an error if the name is taken.
static FailureOr<func::FuncOp> gemmDeclaration(ModuleOp module, Type et,
                                               Operation *user) {
  std::string name = et.isBF16() ? "dat_gemm_bf16" : "dat_gemm_f32";
  auto matrix = [](Type t) {
    return MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, t);
  };
  Type f32 = Float32Type::get(module.getContext());
  SmallVector<Type> types = {matrix(et), matrix(et), matrix(f32)};
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

FailureOr<int64_t> outlineProjectionGemms(ModuleOp module) {
  SmallVector<std::pair<linalg::GenericOp, std::array<Value, 3>>> found;
  module.walk([&](linalg::GenericOp op) {
    if (FailureOr<std::array<Value, 3>> m = matchProjection(op); succeeded(m))
      found.push_back({op, *m});
  });
  OpBuilder b(module.getContext());
  for (auto &[op, operands] : found) {
    FailureOr<func::FuncOp> fn = gemmDeclaration(
        module, getElementTypeOrSelf(operands[0].getType()), op);
    if (failed(fn))
      return failure();
    Location loc = op.getLoc();
    b.setInsertionPoint(op);
    SmallVector<Value> matrices = {asMatrix(b, loc, operands[0]), operands[1],
                                   asMatrix(b, loc, operands[2])};
    SmallVector<Value> args;
    for (auto [v, t] : llvm::zip(matrices, fn->getFunctionType().getInputs()))
      args.push_back(memref::CastOp::create(b, loc, t, v));
    func::CallOp::create(b, loc, *fn, args);
    op.erase();
  }
  return static_cast<int64_t>(found.size());
}

namespace {
struct GemmLibraryCallsPass final
    : impl::DatGemmLibraryCallsBase<GemmLibraryCallsPass> {
  void runOnOperation() override {
    if (failed(outlineProjectionGemms(getOperation())))
      signalPassFailure();
  }
};
} // namespace
} // namespace mlir::dat
