//===- Passes.td - dat dialect transformation passes -------*- tablegen -*-===//

#ifndef DAT_DIALECT_DAT_TRANSFORMS_PASSES_TD
#define DAT_DIALECT_DAT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DatDecomposeToLinalg : Pass<"dat-decompose-to-linalg"> {
  let summary = "Lower dat ops to their reference linalg/tensor form";
  let description = [{
    Rewrites every dat op into linalg.generic/linalg.fill and tensor ops that
    compute exactly the op's documented math, step by step (for attention:
    scores, masking, a numerically stable softmax and the weighted sum). This
    is the simple, obviously-correct path: it materializes the full score
    tensor and exists to check the fused, tiled kernels against.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def DatExpandMath : Pass<"dat-expand-math"> {
  let summary = "Expand math ops that have no LLVM lowering";
  let description = [{
    `convert-to-llvm` has no lowering for `math.erf` (used by the exact,
    erf-based GELU of the APE models). This pass rewrites it into its
    polynomial approximation (upstream's, accurate to a few ulp in f32),
    leaving every other math op to LLVM's intrinsics.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // DAT_DIALECT_DAT_TRANSFORMS_PASSES_TD
