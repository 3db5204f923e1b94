// RUN: dat-opt %s --split-input-file --verify-diagnostics --dat-gemm-library-calls | FileCheck %s
// RUN: dat-opt %s --split-input-file --verify-diagnostics --dat-gemm-library-calls="epilogues=false" | FileCheck %s --check-prefix=OFF

// A projection on contiguous buffers, y[b, l, o] += Σ_i x[b, l, i] W[o, i],
// becomes one call y[M, N] = x[M, K] · W[N, K]ᵀ + β·y with M = b·l (β 1:
// y's value is not known here); bf16 operands (widened in the body) call
// the bf16 GEMM. One declaration per GEMM, with a C interface.

#x = affine_map<(b, l, o, i) -> (b, l, i)>
#w = affine_map<(b, l, o, i) -> (o, i)>
#y = affine_map<(b, l, o, i) -> (b, l, o)>

// CHECK-DAG: func.func private @dat_gemm_f32(memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, f32) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @dat_gemm_bf16(memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xf32>, f32) attributes {llvm.emit_c_interface}

// CHECK-LABEL: func.func @projection
// CHECK-SAME: (%[[X:.+]]: memref<2x3x8xf32>, %[[W:.+]]: memref<5x8xf32>, %[[Y:.+]]: memref<2x3x5xf32>)
// CHECK: %[[X2:.+]] = memref.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : memref<2x3x8xf32> into memref<6x8xf32>
// CHECK: %[[Y2:.+]] = memref.collapse_shape %[[Y]] {{\[}}[0, 1], [2]] : memref<2x3x5xf32> into memref<6x5xf32>
// CHECK: %[[XC:.+]] = memref.cast %[[X2]] : memref<6x8xf32> to memref<?x?xf32>
// CHECK: %[[WC:.+]] = memref.cast %[[W]] : memref<5x8xf32> to memref<?x?xf32>
// CHECK: %[[YC:.+]] = memref.cast %[[Y2]] : memref<6x5xf32> to memref<?x?xf32>
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: call @dat_gemm_f32(%[[XC]], %[[WC]], %[[YC]], %[[ONE]])
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
// CHECK: call @dat_gemm_bf16(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xf32>, f32) -> ()
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

// -----

// The epilogue around the call. y zero-filled just before: the fill goes,
// β = 0. y's only reader its truncf copy to a fresh bf16 buffer: the call
// writes that buffer (dat_gemm_bf16_to_bf16) and y goes; y's initial value
// a broadcast bf16 bias: written to the bf16 buffer as it is, β = 1.
#x = affine_map<(l, o, i) -> (l, i)>
#w = affine_map<(l, o, i) -> (o, i)>
#y = affine_map<(l, o, i) -> (l, o)>
#id = affine_map<(l, o) -> (l, o)>
#row = affine_map<(l, o) -> (o)>
#t = affine_map<(l, o) -> (o, l)>

// CHECK-DAG: func.func private @dat_gemm_bf16_to_bf16(memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>, f32) attributes {llvm.emit_c_interface}

// CHECK-LABEL: func.func @zero_fill
// CHECK-NOT: linalg.fill
// CHECK: %[[Y:.+]] = memref.alloc() : memref<6x5xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[YC:.+]] = memref.cast %[[Y]]
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: call @dat_gemm_f32(%{{.+}}, %{{.+}}, %[[YC]], %[[ZERO]])
// CHECK-NEXT: return %[[Y]]
func.func @zero_fill(%x: memref<6x8xf32>, %w: memref<5x8xf32>) -> memref<6x5xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<6x5xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<6x5xf32>)
  %v = memref.collapse_shape %x [[0, 1]] : memref<6x8xf32> into memref<48xf32>
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<6x8xf32>, memref<5x8xf32>) outs(%y : memref<6x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return %y : memref<6x5xf32>
}

// CHECK-LABEL: func.func @narrow_copy
// CHECK-NOT: f32>
// CHECK: %[[Z:.+]] = memref.alloc() : memref<6x5xbf16>
// CHECK: %[[ZC:.+]] = memref.cast %[[Z]] : memref<6x5xbf16> to memref<?x?xbf16>
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: call @dat_gemm_bf16_to_bf16(%{{.+}}, %{{.+}}, %[[ZC]], %[[ZERO]])
// CHECK-NEXT: return %[[Z]]
// OFF-LABEL: func.func @narrow_copy
// OFF: linalg.fill
// OFF: %[[B:.+]] = arith.constant 1.000000e+00 : f32
// OFF-NEXT: call @dat_gemm_bf16(%{{.+}}, %{{.+}}, %{{.+}}, %[[B]])
// OFF: arith.truncf
func.func @narrow_copy(%x: memref<6x8xbf16>, %w: memref<5x8xbf16>) -> memref<6x5xbf16> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<6x5xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<6x5xf32>)
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<6x8xbf16>, memref<5x8xbf16>) outs(%y : memref<6x5xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %aw = arith.extf %a : bf16 to f32
    %bw = arith.extf %b : bf16 to f32
    %p = arith.mulf %aw, %bw : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %z = memref.alloc() : memref<6x5xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<6x5xf32>) outs(%z : memref<6x5xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  return %z : memref<6x5xbf16>
}

// CHECK-LABEL: func.func @narrow_bias
// CHECK-SAME: %[[BIAS:[^:]+]]: memref<5xbf16>
// CHECK-NOT: f32>
// CHECK: %[[Z:.+]] = memref.alloc() : memref<6x5xbf16>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[BIAS]] : memref<5xbf16>) outs(%[[Z]] : memref<6x5xbf16>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: bf16, %{{.+}}: bf16):
// CHECK-NEXT: linalg.yield %[[IN]] : bf16
// CHECK: %[[ZC:.+]] = memref.cast %[[Z]] : memref<6x5xbf16> to memref<?x?xbf16>
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: call @dat_gemm_bf16_to_bf16(%{{.+}}, %{{.+}}, %[[ZC]], %[[ONE]])
// CHECK-NEXT: return %[[Z]]
func.func @narrow_bias(%x: memref<6x8xbf16>, %w: memref<5x8xbf16>, %bias: memref<5xbf16>) -> memref<6x5xbf16> {
  %y = memref.alloc() : memref<6x5xf32>
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<5xbf16>) outs(%y : memref<6x5xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<6x8xbf16>, memref<5x8xbf16>) outs(%y : memref<6x5xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %aw = arith.extf %a : bf16 to f32
    %bw = arith.extf %b : bf16 to f32
    %p = arith.mulf %aw, %bw : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %z = memref.alloc() : memref<6x5xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<6x5xf32>) outs(%z : memref<6x5xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  return %z : memref<6x5xbf16>
}

// Kept: a fill of 1 (β 1); a zero fill with a store into y after it (β 1);
// a second reader of y (β 0, y kept in f32); a copy that transposes; an f32
// GEMM's copy to bf16 (only bf16 GEMMs write bf16).
// CHECK-LABEL: func.func @kept
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : memref<6x5xf32>)
// CHECK: %[[B1:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: call @dat_gemm_bf16(%{{.+}}, %{{.+}}, %{{.+}}, %[[B1]]) :
// CHECK: linalg.fill
// CHECK: memref.store
// CHECK: %[[B2:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: call @dat_gemm_bf16(%{{.+}}, %{{.+}}, %{{.+}}, %[[B2]]) :
// CHECK-NOT: linalg.fill
// CHECK: %[[B3:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: call @dat_gemm_bf16(%{{.+}}, %{{.+}}, %{{.+}}, %[[B3]]) :
// CHECK: arith.truncf
// CHECK: arith.negf
// CHECK-NOT: linalg.fill
// CHECK: %[[B4:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: call @dat_gemm_bf16(%{{.+}}, %{{.+}}, %{{.+}}, %[[B4]]) :
// CHECK: arith.truncf
// CHECK-NOT: linalg.fill
// CHECK: %[[B5:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: call @dat_gemm_f32(%{{.+}}, %{{.+}}, %{{.+}}, %[[B5]]) :
// CHECK: arith.truncf
// CHECK-NOT: call
func.func @kept(%x: memref<6x8xbf16>, %w: memref<5x8xbf16>, %xf: memref<6x8xf32>,
                %wf: memref<5x8xf32>, %zt: memref<5x6xbf16>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %y1 = memref.alloc() : memref<6x5xf32>
  linalg.fill ins(%one : f32) outs(%y1 : memref<6x5xf32>)
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<6x8xbf16>, memref<5x8xbf16>) outs(%y1 : memref<6x5xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %aw = arith.extf %a : bf16 to f32
    %bw = arith.extf %b : bf16 to f32
    %p = arith.mulf %aw, %bw : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %y2 = memref.alloc() : memref<6x5xf32>
  linalg.fill ins(%zero : f32) outs(%y2 : memref<6x5xf32>)
  memref.store %one, %y2[%c0, %c0] : memref<6x5xf32>
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<6x8xbf16>, memref<5x8xbf16>) outs(%y2 : memref<6x5xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %aw = arith.extf %a : bf16 to f32
    %bw = arith.extf %b : bf16 to f32
    %p = arith.mulf %aw, %bw : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %y3 = memref.alloc() : memref<6x5xf32>
  linalg.fill ins(%zero : f32) outs(%y3 : memref<6x5xf32>)
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<6x8xbf16>, memref<5x8xbf16>) outs(%y3 : memref<6x5xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %aw = arith.extf %a : bf16 to f32
    %bw = arith.extf %b : bf16 to f32
    %p = arith.mulf %aw, %bw : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %z3 = memref.alloc() : memref<6x5xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y3 : memref<6x5xf32>) outs(%z3 : memref<6x5xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  %n3 = memref.alloc() : memref<6x5xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y3 : memref<6x5xf32>) outs(%n3 : memref<6x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  }
  %y4 = memref.alloc() : memref<6x5xf32>
  linalg.fill ins(%zero : f32) outs(%y4 : memref<6x5xf32>)
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<6x8xbf16>, memref<5x8xbf16>) outs(%y4 : memref<6x5xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %aw = arith.extf %a : bf16 to f32
    %bw = arith.extf %b : bf16 to f32
    %p = arith.mulf %aw, %bw : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #t], iterator_types = ["parallel", "parallel"]}
      ins(%y4 : memref<6x5xf32>) outs(%zt : memref<5x6xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  %y5 = memref.alloc() : memref<6x5xf32>
  linalg.fill ins(%zero : f32) outs(%y5 : memref<6x5xf32>)
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xf, %wf : memref<6x8xf32>, memref<5x8xf32>) outs(%y5 : memref<6x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %z5 = memref.alloc() : memref<6x5xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y5 : memref<6x5xf32>) outs(%z5 : memref<6x5xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}
