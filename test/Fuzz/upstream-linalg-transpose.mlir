// MLIR 22's linalg.transpose parser can crash on a malformed permutation (it
// stores the null attribute a failed DenseI64ArrayAttr parse returns)
// instead of stopping at the error; upstream mlir-opt 22 crashes the same
// way in the release build (the ASan build happens to survive it). Found by
// the IR fuzzer (dat-fuzz-ir); dat-opt inherits it, dat's own ops and datc
// do not. This test only checks that the error is reported before that:
// when the LLVM packages have the fix, make it `not dat-opt` (no crash).
// RUN: (dat-opt %s 2>&1 || true) | FileCheck %s
// CHECK: error: custom op 'linalg.transpose' expected integer value
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = [1, x]
  return %t : tensor<3x2xf32>
}
