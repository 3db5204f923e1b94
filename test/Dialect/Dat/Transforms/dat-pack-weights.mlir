// RUN: dat-opt %s --split-input-file --dat-pack-weights | FileCheck %s

// A weight the entry function reads only transposed takes the transposed
// type; its #dat.program_value records the permutation (the runtime
// applies it once, when it binds the weights).
// CHECK-LABEL: func.func @forward
// CHECK-SAME: %[[W:.+]]: tensor<64x32xf32> {dat.program_value = #dat.program_value<kind = weight, name = "w", permutation = 1, 0>}
// CHECK-SAME: %[[B:.+]]: tensor<32x64xf32> {dat.program_value = #dat.program_value<kind = weight, name = "b">}
// CHECK-NOT: linalg.transpose ins(%[[W]]
// CHECK: return %[[W]], %{{.+}}
func.func @forward(
    %w: tensor<32x64xf32> {dat.program_value = #dat.program_value<kind = weight, name = "w">},
    %b: tensor<32x64xf32> {dat.program_value = #dat.program_value<kind = weight, name = "b">})
    -> (tensor<64x32xf32> {dat.program_value = #dat.program_value<kind = output, name = "wt">},
        tensor<64x32xf32> {dat.program_value = #dat.program_value<kind = output, name = "bt">}) {
  %e = tensor.empty() : tensor<64x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x64xf32>) outs(%e : tensor<64x32xf32>) permutation = [1, 0]
  %bt = linalg.transpose ins(%b : tensor<32x64xf32>) outs(%e : tensor<64x32xf32>) permutation = [1, 0]
  // `b` is also read as it is: it stays.
  %u = tensor.empty() : tensor<32x64xf32>
  %c = linalg.copy ins(%b : tensor<32x64xf32>) outs(%u : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %wt, %bt : tensor<64x32xf32>, tensor<64x32xf32>
}

// -----

// An outlined layer reads its weight transposed: the transpose moves to the
// call sites, then into the entry function's signature.
// CHECK-LABEL: func.func private @layer
// CHECK-SAME: (%[[W:.+]]: tensor<64x32xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return %[[W]]
// CHECK-LABEL: func.func @forward
// CHECK-SAME: tensor<64x32xf32> {dat.program_value = #dat.program_value<kind = weight, name = "layers.0.w", permutation = 1, 0>}
// CHECK-SAME: tensor<64x32xf32> {dat.program_value = #dat.program_value<kind = weight, name = "layers.1.w", permutation = 1, 0>}
// CHECK-NOT: linalg.transpose
func.func private @layer(%w: tensor<32x64xf32>) -> tensor<64x32xf32> {
  %e = tensor.empty() : tensor<64x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x64xf32>) outs(%e : tensor<64x32xf32>) permutation = [1, 0]
  return %wt : tensor<64x32xf32>
}
func.func @forward(
    %w0: tensor<32x64xf32> {dat.program_value = #dat.program_value<kind = weight, name = "layers.0.w">},
    %w1: tensor<32x64xf32> {dat.program_value = #dat.program_value<kind = weight, name = "layers.1.w">})
    -> (tensor<64x32xf32> {dat.program_value = #dat.program_value<kind = output, name = "y0">},
        tensor<64x32xf32> {dat.program_value = #dat.program_value<kind = output, name = "y1">}) {
  %a = call @layer(%w0) : (tensor<32x64xf32>) -> tensor<64x32xf32>
  %b = call @layer(%w1) : (tensor<32x64xf32>) -> tensor<64x32xf32>
  return %a, %b : tensor<64x32xf32>, tensor<64x32xf32>
}

// -----

// A weight read in register panels (dat-register-tiles' blocked layout:
// [out, in] reshaped to [out/32, 32, in] and transposed to [out/32, in,
// 32]) takes the blocked type; its #dat.program_value records the
// permutation and the reference shape the file keeps. Through an outlined
// layer, the reshape and the transpose move to the call sites first.
// CHECK-LABEL: func.func private @blocked_layer
// CHECK-SAME: (%[[W:.+]]: tensor<2x64x32xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: linalg.transpose
// CHECK: return %[[W]]
// CHECK-LABEL: func.func @forward
// CHECK-SAME: tensor<2x64x32xf32> {dat.program_value = #dat.program_value<kind = weight, name = "w", reference_shape = [64, 64], permutation = 0, 2, 1>}
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: linalg.transpose
func.func private @blocked_layer(%w: tensor<64x64xf32>) -> tensor<2x64x32xf32> {
  %x = tensor.expand_shape %w [[0, 1], [2]] output_shape [2, 32, 64] : tensor<64x64xf32> into tensor<2x32x64xf32>
  %e = tensor.empty() : tensor<2x64x32xf32>
  %t = linalg.transpose ins(%x : tensor<2x32x64xf32>) outs(%e : tensor<2x64x32xf32>) permutation = [0, 2, 1]
  return %t : tensor<2x64x32xf32>
}
func.func @forward(
    %w: tensor<64x64xf32> {dat.program_value = #dat.program_value<kind = weight, name = "w">})
    -> (tensor<2x64x32xf32> {dat.program_value = #dat.program_value<kind = output, name = "y">}) {
  %y = call @blocked_layer(%w) : (tensor<64x64xf32>) -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}
