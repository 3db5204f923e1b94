// RUN: dat-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// #dat.program_value says what each argument and result of an entry
// function is; it prints as it parses (optional range omitted when absent).
// CHECK-LABEL: func.func @forward
// CHECK-SAME: {dat.program_value = #dat.program_value<kind = input, name = "idx", min = 0, max = 96>}
// CHECK-SAME: {dat.program_value = #dat.program_value<kind = weight, name = "layers.token_embedder.weight">}
// CHECK-SAME: {dat.program_value = #dat.program_value<kind = cache, name = "cache.k">}
// CHECK-SAME: -> (tensor<1x1x97xf32> {dat.program_value = #dat.program_value<kind = output, name = "logits">}
func.func @forward(
    %idx: tensor<1x1xi64> {dat.program_value = #dat.program_value<kind = input, name = "idx", min = 0, max = 96>},
    %w: tensor<97x8xf32> {dat.program_value = #dat.program_value<kind = weight, name = "layers.token_embedder.weight">},
    %k: tensor<1x4x8xf32> {dat.program_value = #dat.program_value<kind = cache, name = "cache.k">})
    -> (tensor<1x1x97xf32> {dat.program_value = #dat.program_value<kind = output, name = "logits">}) {
  %0 = tensor.empty() : tensor<1x1x97xf32>
  return %0 : tensor<1x1x97xf32>
}

// -----

// expected-error @+1 {{result 0 ('x'): results are outputs}}
func.func @f() -> (tensor<2xf32> {dat.program_value = #dat.program_value<kind = input, name = "x">}) {
  %0 = tensor.empty() : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expected-error @+1 {{argument 0 ('y'): arguments are inputs, weights or caches}}
func.func @f(%a: tensor<2xf32> {dat.program_value = #dat.program_value<kind = output, name = "y">}) {
  return
}

// -----

// expected-error @+1 {{'dat.program_value' of argument 0 must be a #dat.program_value}}
func.func @f(%a: tensor<2xf32> {dat.program_value = "x"}) {
  return
}

// -----

// expected-error @+1 {{unknown dat attribute 'dat.role' on argument 0}}
func.func @f(%a: tensor<2xf32> {dat.role = 1}) {
  return
}

// -----

// expected-error @+1 {{'w': only inputs carry a range of accepted values}}
func.func @f(%a: tensor<2xf32> {dat.program_value = #dat.program_value<kind = weight, name = "w", min = 0, max = 1>}) {
  return
}

// -----

// expected-error @+1 {{'idx': empty range [5, 4]}}
func.func @f(%a: tensor<2xi64> {dat.program_value = #dat.program_value<kind = input, name = "idx", min = 5, max = 4>}) {
  return
}

// -----

// expected-error @+1 {{'idx': min and max come together}}
func.func @f(%a: tensor<2xi64> {dat.program_value = #dat.program_value<kind = input, name = "idx", min = 5>}) {
  return
}

// -----

// expected-error @+1 {{a program value needs a non-empty name}}
func.func @f(%a: tensor<2xi64> {dat.program_value = #dat.program_value<kind = input, name = "">}) {
  return
}

// -----

// A packed weight (dat-pack-weights) says how it was transposed.
// CHECK-LABEL: func.func @packed
// CHECK-SAME: #dat.program_value<kind = weight, name = "w", permutation = 1, 0>
func.func @packed(%w: tensor<8x4xf32> {dat.program_value = #dat.program_value<kind = weight, name = "w", permutation = 1, 0>}) {
  return
}

// -----

// A weight blocked by register panels also says the shape its file keeps.
// CHECK-LABEL: func.func @blocked
// CHECK-SAME: #dat.program_value<kind = weight, name = "w", reference_shape = [64, 16], permutation = 0, 2, 1>
func.func @blocked(%w: tensor<2x16x32xf32> {dat.program_value = #dat.program_value<kind = weight, name = "w", reference_shape = [64, 16], permutation = 0, 2, 1>}) {
  return
}

// -----

// expected-error @+1 {{'w': a reference shape without a permutation}}
func.func @f(%a: tensor<2x3xf32> {dat.program_value = #dat.program_value<kind = weight, name = "w", reference_shape = [3, 2]>}) {
  return
}

// -----

// expected-error @+1 {{argument 0 ('w'): the reference shape holds 8 elements, the argument 6}}
func.func @f(%a: tensor<2x3xf32> {dat.program_value = #dat.program_value<kind = weight, name = "w", reference_shape = [4, 2], permutation = 1, 0>}) {
  return
}

// -----

// expected-error @+1 {{'x': only weights carry a permutation}}
func.func @f(%a: tensor<2x3xf32> {dat.program_value = #dat.program_value<kind = input, name = "x", permutation = 1, 0>}) {
  return
}

// -----

// expected-error @+1 {{'w': permutation is not one}}
func.func @f(%a: tensor<2x3xf32> {dat.program_value = #dat.program_value<kind = weight, name = "w", permutation = 1, 1>}) {
  return
}

// -----

// expected-error @+1 {{argument 0 ('w'): the permutation's size is not the argument's rank}}
func.func @f(%a: tensor<2x3xf32> {dat.program_value = #dat.program_value<kind = weight, name = "w", permutation = 2, 0, 1>}) {
  return
}
