// RUN: dat-opt %s --split-input-file --verify-diagnostics --dat-gemm-library-calls | FileCheck %s

// A projection on contiguous buffers, y[b, l, o] += Σ_i x[b, l, i] W[o, i],
// becomes one call y[M, N] += x[M, K] · W[N, K]ᵀ with M = b·l; bf16
// operands (widened in the body) call the bf16 GEMM. One declaration per
// GEMM, with a C interface.

#x = affine_map<(b, l, o, i) -> (b, l, i)>
#w = affine_map<(b, l, o, i) -> (o, i)>
#y = affine_map<(b, l, o, i) -> (b, l, o)>

// CHECK-DAG: func.func private @dat_gemm_f32(memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @dat_gemm_bf16(memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xf32>) attributes {llvm.emit_c_interface}

// CHECK-LABEL: func.func @projection
// CHECK-SAME: (%[[X:.+]]: memref<2x3x8xf32>, %[[W:.+]]: memref<5x8xf32>, %[[Y:.+]]: memref<2x3x5xf32>)
// CHECK: %[[X2:.+]] = memref.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : memref<2x3x8xf32> into memref<6x8xf32>
// CHECK: %[[Y2:.+]] = memref.collapse_shape %[[Y]] {{\[}}[0, 1], [2]] : memref<2x3x5xf32> into memref<6x5xf32>
// CHECK: %[[XC:.+]] = memref.cast %[[X2]] : memref<6x8xf32> to memref<?x?xf32>
// CHECK: %[[WC:.+]] = memref.cast %[[W]] : memref<5x8xf32> to memref<?x?xf32>
// CHECK: %[[YC:.+]] = memref.cast %[[Y2]] : memref<6x5xf32> to memref<?x?xf32>
// CHECK: call @dat_gemm_f32(%[[XC]], %[[WC]], %[[YC]])
// CHECK-NOT: linalg.generic
func.func @projection(%x: memref<2x3x8xf32>, %w: memref<5x8xf32>, %y: memref<2x3x5xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x3x8xf32>, memref<5x8xf32>) outs(%y : memref<2x3x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @projection_bf16
// CHECK: call @dat_gemm_bf16(%{{.+}}, %{{.+}}, %{{.+}}) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xf32>) -> ()
func.func @projection_bf16(%x: memref<2x3x8xbf16>, %w: memref<5x8xbf16>, %y: memref<2x3x5xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x3x8xbf16>, memref<5x8xbf16>) outs(%y : memref<2x3x5xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %aw = arith.extf %a : bf16 to f32
    %bw = arith.extf %b : bf16 to f32
    %p = arith.mulf %bw, %aw : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// Left alone: W read transposed (not x·Wᵀ), a strided operand, another
// body (max instead of sum), and a projection inside a loop (a fused tile).
// CHECK-LABEL: func.func @not_projections
// CHECK-NOT: call
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: call
#wt = affine_map<(b, l, o, i) -> (i, o)>
func.func @not_projections(%x: memref<2x3x8xf32>, %w: memref<5x8xf32>, %wt: memref<8x5xf32>,
                           %xs: memref<2x3x8xf32, strided<[48, 16, 1]>>, %y: memref<2x3x5xf32>) {
  linalg.generic {indexing_maps = [#x, #wt, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wt : memref<2x3x8xf32>, memref<8x5xf32>) outs(%y : memref<2x3x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%xs, %w : memref<2x3x8xf32, strided<[48, 16, 1]>>, memref<5x8xf32>) outs(%y : memref<2x3x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x3x8xf32>, memref<5x8xf32>) outs(%y : memref<2x3x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
    linalg.generic {indexing_maps = [#x, #w, #y],
                    iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%x, %w : memref<2x3x8xf32>, memref<5x8xf32>) outs(%y : memref<2x3x5xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
  }
  return
}

// -----

// The runtime's names are taken by something else: an error, not a second
// symbol of the same name.
#x = affine_map<(b, l, o, i) -> (b, l, i)>
#w = affine_map<(b, l, o, i) -> (o, i)>
#y = affine_map<(b, l, o, i) -> (b, l, o)>
memref.global "private" @dat_gemm_f32 : memref<1xf32>
func.func @taken(%x: memref<2x3x8xf32>, %w: memref<5x8xf32>, %y: memref<2x3x5xf32>) {
  // expected-error @+1 {{dat-gemm-library-calls: symbol @dat_gemm_f32 is not a function}}
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x3x8xf32>, memref<5x8xf32>) outs(%y : memref<2x3x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
