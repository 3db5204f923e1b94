//===- VectorizableLoops.cpp - the dat-vectorizable-loops pass ------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/Transforms/Passes.h"
#include "dat/Dialect/Dat/Transforms/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dat {
#define GEN_PASS_DEF_DATVECTORIZABLELOOPS
#include "dat/Dialect/Dat/Transforms/Passes.h.inc"

namespace {
struct VectorizableLoopsPass final
    : impl::DatVectorizableLoopsBase<VectorizableLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    auto flags = arith::FastMathFlags::reassoc | arith::FastMathFlags::contract;
    getOperation()->walk([&](linalg::GenericOp generic) {
      if (generic.getNumReductionLoops() == 0)
        return;
      // The adds and multiplies (FMA candidates); not comparisons or
      // min/max, whose LLVM forms have no fast-math flags to take them.
      generic.getBody()->walk([&](arith::ArithFastMathInterface op) {
        if (!isa<arith::AddFOp, arith::SubFOp, arith::MulFOp>(op))
          return;
        arith::FastMathFlags own = op.getFastMathFlagsAttr()
                                       ? op.getFastMathFlagsAttr().getValue()
                                       : arith::FastMathFlags::none;
        op->setAttr(op.getFastMathAttrName(),
                    arith::FastMathFlagsAttr::get(ctx, own | flags));
      });
    });
    if (!polynomialExp)
      return;
    RewritePatternSet patterns(ctx);
    // exp (the softmax) and tanh (the tanh-form GELU): vector libm calls
    // would be scalarized. f32 exp takes dat's shorter form; upstream's
    // covers the other types.
    populateExpApproximationPatterns(patterns, /*benefit=*/2);
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return llvm::is_contained({"exp", "math.exp", "tanh", "math.tanh"}, name);
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
} // namespace mlir::dat
