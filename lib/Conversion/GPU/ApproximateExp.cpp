//===- ApproximateExp.cpp - kernels' exponentials as ex2.approx.ftz ------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// exp(x) = 2^(x · log2 e): one multiplication and the SFU's ex2, flushing
// subnormals (CUDA's __expf under -ftz, 2 SASS instructions). An online
// softmax's exp(s - m) becomes 2^(s · log2 e - m · log2 e), one fused
// multiply-add per score and a multiplication per row (FlashAttention-2's
// form). Vectors are unrolled to their elements (static positions: the
// GPU's LLVM lowering has no n-D shape_cast), as convert-gpu-to-nvvm does
// for libdevice calls.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dat {
#define GEN_PASS_DEF_DATGPUAPPROXIMATEEXP
#include "dat/Conversion/Passes.h.inc"

namespace {
constexpr float kLog2e = 1.44269504088896340736f;

Value f32Constant(OpBuilder &b, Location loc, float v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

/// 2^(x · log2 e) for one f32 x; with `y`, 2^(x · log2 e - y · log2 e) for
/// exp(x - y).
Value approximateExp(OpBuilder &b, Location loc, Value x, Value y) {
  Value scaled =
      y ? math::FmaOp::create(
              b, loc, x, f32Constant(b, loc, kLog2e),
              arith::MulFOp::create(b, loc, y, f32Constant(b, loc, -kLog2e)))
              .getResult()
        : arith::MulFOp::create(b, loc, x, f32Constant(b, loc, kLog2e))
              .getResult();
  return LLVM::CallIntrinsicOp::create(
             b, loc, b.getF32Type(),
             b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"),
             ValueRange{scaled})
      .getResult(0);
}

struct DatGPUApproximateExp
    : public impl::DatGPUApproximateExpBase<DatGPUApproximateExp> {
  void runOnOperation() override {
    SmallVector<math::ExpOp> exps;
    getOperation().walk([&](math::ExpOp op) {
      if (getElementTypeOrSelf(op.getType()).isF32())
        exps.push_back(op);
    });
    IRRewriter b(&getContext());
    for (math::ExpOp op : exps) {
      auto vectorType = dyn_cast<VectorType>(op.getType());
      if (vectorType && vectorType.isScalable())
        continue;
      b.setInsertionPoint(op);
      Location loc = op.getLoc();
      // exp(x - y): the subtraction goes into the scaling.
      Value x = op.getOperand(), y;
      if (auto sub = x.getDefiningOp<arith::SubFOp>()) {
        x = sub.getLhs();
        y = sub.getRhs();
      }
      if (!vectorType) {
        b.replaceOp(op, approximateExp(b, loc, x, y));
        continue;
      }
      // Element by element, at each static position.
      ArrayRef<int64_t> shape = vectorType.getShape();
      Value out = arith::ConstantOp::create(
          b, loc, vectorType,
          DenseElementsAttr::get(vectorType, b.getF32FloatAttr(0)));
      SmallVector<int64_t> position(shape.size(), 0);
      for (int64_t i = 0, n = vectorType.getNumElements(); i < n; ++i) {
        for (int64_t d = shape.size() - 1, rest = i; d >= 0; --d) {
          position[d] = rest % shape[d];
          rest /= shape[d];
        }
        Value xi = vector::ExtractOp::create(b, loc, x, position);
        Value yi = y ? vector::ExtractOp::create(b, loc, y, position) : Value();
        out = vector::InsertOp::create(b, loc, approximateExp(b, loc, xi, yi),
                                       out, position);
      }
      b.replaceOp(op, out);
    }
  }
};
} // namespace
} // namespace mlir::dat
