// RUN: dat-opt %s --dat-cpu-pipeline | FileCheck %s
// RUN: dat-opt %s --dat-cpu-pipeline="c-interface=false" | FileCheck %s --check-prefix=NOCIFACE
// RUN: dat-opt %s --dat-cpu-pipeline | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR
// RUN: dat-opt %s --dat-cpu-pipeline="vectorizable-loops=false" | FileCheck %s --check-prefix=LIBM

// The CPU pipeline takes dat on tensors all the way to the LLVM dialect.
// CHECK-NOT: dat.
// CHECK-NOT: linalg.
// CHECK-NOT: memref.
// CHECK-NOT: scf.
// CHECK-NOT: tensor.
// The softmax's exp is a polynomial (dat-vectorizable-loops), which LLVM's
// loop vectorizer can widen; with vectorizable-loops=false it is the
// intrinsic (a libm call).
// CHECK-LABEL: llvm.func @attention(
// CHECK-NOT: llvm.intr.exp
// CHECK: fastmathFlags = #llvm.fastmath<contract, reassoc>
// CHECK-NOT: llvm.intr.exp
// CHECK-LABEL: llvm.func @_mlir_ciface_attention(
// CHECK-SAME: !llvm.ptr

// NOCIFACE-LABEL: llvm.func @attention(
// NOCIFACE-NOT: _mlir_ciface_

// LLVMIR-LABEL: define { ptr, ptr, i64, [4 x i64], [4 x i64] } @attention(
// LLVMIR: fadd reassoc contract float
// LLVMIR-NOT: @llvm.exp.f32
// LIBM-LABEL: llvm.func @attention(
// LIBM: llvm.intr.exp
// LLVMIR-LABEL: define void @_mlir_ciface_attention(
func.func @attention(%q: tensor<1x2x4x8xf32>, %k: tensor<1x1x6x8xf32>,
                     %v: tensor<1x1x6x8xf32>) -> tensor<1x2x4x8xf32> {
  %o = tensor.empty() : tensor<1x2x4x8xf32>
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x1x6x8xf32>,
                         tensor<1x1x6x8xf32>)
                     outs(%o : tensor<1x2x4x8xf32>) scale = 0.353553385 causal
                     -> tensor<1x2x4x8xf32>
  return %r : tensor<1x2x4x8xf32>
}
