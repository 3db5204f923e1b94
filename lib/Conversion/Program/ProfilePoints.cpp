//===- ProfilePoints.cpp - the dat-profile-points pass --------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"
#include "dat/Dialect/Dat/IR/DatDialect.h"
#include "dat/Runtime/ProgramABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/JSON.h"

namespace mlir::dat {
#define GEN_PASS_DEF_DATPROFILEPOINTS
#include "dat/Conversion/Passes.h.inc"

/// Bytes of a statically shaped tensor or memref (0 otherwise).
static int64_t bytesOf(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape() ||
      !shaped.getElementType().isIntOrFloat())
    return 0;
  return shaped.getNumElements() *
         ((shaped.getElementType().getIntOrFloatBitWidth() + 7) / 8);
}

/// Whether `op`, directly in a function body, is a unit of the program's
/// work worth timing.
static bool isWork(Operation *op) {
  return isa<scf::ForallOp, scf::IfOp, linalg::LinalgOp>(op) ||
         isa<DatDialect>(op->getDialect());
}

/// The origin of a tile loop, or of the loops an `scf.if` chooses between
/// (dat-peel-tile-loops versions a dynamic length's).
static StringAttr originOf(Operation *op) {
  if (auto origin = op->getAttrOfType<StringAttr>(kOriginAttr))
    return origin;
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    for (Operation &inner : ifOp.thenBlock()->getOperations())
      if (auto origin = inner.getAttrOfType<StringAttr>(kOriginAttr))
        return origin;
  return {};
}

namespace {
struct DatProfilePoints : public impl::DatProfilePointsBase<DatProfilePoints> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    Type i64 = b.getI64Type();
    auto declare = [&](StringRef name) {
      if (auto fn = module.lookupSymbol<func::FuncOp>(name))
        return fn;
      b.setInsertionPointToStart(module.getBody());
      auto fn = func::FuncOp::create(b, module.getLoc(), name,
                                     b.getFunctionType({i64}, {}));
      fn.setPrivate();
      return fn;
    };
    func::FuncOp begin = declare(DAT_PROFILE_BEGIN_SYMBOL);
    func::FuncOp end = declare(DAT_PROFILE_END_SYMBOL);

    llvm::json::Array points;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      for (Block &block : fn.getBody())
        for (Operation &op : llvm::make_early_inc_range(block)) {
          if (!isWork(&op))
            continue;
          int64_t bytes = 0;
          for (Type t : op.getOperandTypes())
            bytes += bytesOf(t);
          for (Type t : op.getResultTypes())
            bytes += bytesOf(t);
          // A tile loop reads the tensors its body uses from above.
          if (op.getNumRegions()) {
            llvm::SetVector<Value> above;
            getUsedValuesDefinedAbove(op.getRegions(), above);
            for (Value v : above)
              bytes += bytesOf(v.getType());
          }
          std::string name = op.getName().getStringRef().str();
          if (StringAttr origin = originOf(&op))
            name += " [" + origin.str() + "]";
          if (op.getNumResults()) {
            llvm::raw_string_ostream os(name);
            os << " -> " << op.getResult(0).getType();
          }
          name += " in @" + fn.getSymName().str();
          int64_t id = points.size();
          points.push_back(
              llvm::json::Object{{"name", name}, {"bytes", bytes}});
          b.setInsertionPoint(&op);
          Value idValue = arith::ConstantIntOp::create(b, op.getLoc(), id, 64);
          func::CallOp::create(b, op.getLoc(), begin, ValueRange{idValue});
          b.setInsertionPointAfter(&op);
          func::CallOp::create(b, op.getLoc(), end, ValueRange{idValue});
        }
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::json::Value(std::move(points));
    text.push_back('\0');
    b.setInsertionPointToEnd(module.getBody());
    LLVM::GlobalOp::create(b, module.getLoc(),
                           LLVM::LLVMArrayType::get(b.getI8Type(), text.size()),
                           /*isConstant=*/true, LLVM::Linkage::External,
                           DAT_PROFILE_POINTS_SYMBOL, b.getStringAttr(text));
  }
};
} // namespace
} // namespace mlir::dat
