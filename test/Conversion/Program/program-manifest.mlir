// RUN: dat-opt %s --split-input-file --verify-diagnostics --dat-program-manifest | FileCheck %s

// The manifest the runtime reads: forward's and step's arguments (with
// their kind and an integer input's range) and results, with dtypes and
// shapes from the functions' types (bf16 after dat-narrow-storage).
// CHECK: llvm.mlir.global external constant @dat_manifest("{\22args\22:[{\22dtype\22:\22I64\22,\22kind\22:\22input\22,\22name\22:\22idx\22,\22range\22:[0,96],\22shape\22:[1,4]},{\22dtype\22:\22BF16\22,\22kind\22:\22weight\22,\22name\22:\22emb.weight\22,\22shape\22:[97,8]}],\22results\22:[{\22dtype\22:\22BF16\22,\22name\22:\22logits\22,\22shape\22:[1,4,97]}],\22step\22:{\22args\22:[{\22dtype\22:\22I64\22,\22kind\22:\22input\22,\22name\22:\22idx\22,\22shape\22:[1,1]},{\22dtype\22:\22F32\22,\22kind\22:\22cache\22,\22name\22:\22cache.k\22,\22shape\22:[1,8,8]}],\22results\22:[{\22dtype\22:\22F32\22,\22name\22:\22cache.k\22,\22shape\22:[1,8,8]}]}}\00")
func.func @forward(
    %idx: tensor<1x4xi64> {dat.program_value = #dat.program_value<kind = input, name = "idx", min = 0, max = 96>},
    %w: tensor<97x8xbf16> {dat.program_value = #dat.program_value<kind = weight, name = "emb.weight">})
    -> (tensor<1x4x97xbf16> {dat.program_value = #dat.program_value<kind = output, name = "logits">}) {
  %0 = tensor.empty() : tensor<1x4x97xbf16>
  return %0 : tensor<1x4x97xbf16>
}
func.func @step(
    %idx: tensor<1x1xi64> {dat.program_value = #dat.program_value<kind = input, name = "idx">},
    %k: memref<1x8x8xf32> {dat.program_value = #dat.program_value<kind = cache, name = "cache.k">})
    -> (memref<1x8x8xf32> {dat.program_value = #dat.program_value<kind = output, name = "cache.k">}) {
  return %k : memref<1x8x8xf32>
}

// -----

// expected-error @+1 {{a program needs an entry function @forward}}
module {
  func.func @main() {
    return
  }
}

// -----

// expected-error @+1 {{argument 1 has no #dat.program_value}}
func.func @forward(
    %a: tensor<2xf32> {dat.program_value = #dat.program_value<kind = input, name = "x">},
    %b: tensor<2xf32>) {
  return
}

// -----

// A dynamic dimension must be named (dynamic_dims).
// expected-error @+1 {{argument 0 ('x'): 'tensor<?xf32>' is not a tensor or memref of f32, bf16, f16 or i64 whose dynamic dimensions are named}}
func.func @forward(%a: tensor<?xf32> {dat.program_value = #dat.program_value<kind = input, name = "x">})
    -> (tensor<?xf32> {dat.program_value = #dat.program_value<kind = output, name = "y">}) {
  return %a : tensor<?xf32>
}

// -----

// Named dynamic dimensions: the largest shape and each dimension's name
// ("" for a static one).
// CHECK: @dat_manifest("{\22args\22:[{\22dims\22:[\22batch\22,\22seq\22,\22\22],\22dtype\22:\22F32\22,\22kind\22:\22input\22,\22name\22:\22x\22,\22shape\22:[3,200,8]}],\22results\22:[{\22dims\22:[\22batch\22,\22seq\22,\22\22],\22dtype\22:\22F32\22,\22name\22:\22y\22,\22shape\22:[3,200,8]}]}\00")
func.func @forward(%a: tensor<?x?x8xf32> {dat.program_value = #dat.program_value<kind = input, name = "x", dims = ["batch", "seq", ""], max_shape = [3, 200, 8]>})
    -> (tensor<?x?x8xf32> {dat.program_value = #dat.program_value<kind = output, name = "y", dims = ["batch", "seq", ""], max_shape = [3, 200, 8]>}) {
  return %a : tensor<?x?x8xf32>
}

// -----

// expected-error @+1 {{'y': dims and max_shape come together, one entry per dimension}}
func.func @forward(%a: tensor<4xf32> {dat.program_value = #dat.program_value<kind = output, name = "y", dims = ["n"]>}) {
  return
}
