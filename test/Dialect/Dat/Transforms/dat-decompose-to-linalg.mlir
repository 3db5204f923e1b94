// RUN: dat-opt %s --dat-decompose-to-linalg --split-input-file | FileCheck %s

// CHECK-DAG: #[[$QMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$KMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d3, d4)>
// CHECK-DAG: #[[$SMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @gqa_causal_f16
// CHECK-SAME: (%[[Q:.+]]: tensor<1x8x4x16xf16>, %[[K:.+]]: tensor<1x2x32x16xf16>, %[[V:.+]]: tensor<1x2x32x24xf16>, %[[O:.+]]: tensor<1x8x4x24xf16>, %[[POS:.+]]: index)
// Scores in f32 over the grouped kv head h floordiv 4.
// CHECK: %[[S0:.+]] = linalg.fill {{.*}} -> tensor<1x8x4x32xf32>
// CHECK: %[[S:.+]] = linalg.generic {indexing_maps = [#[[$QMAP]], #[[$KMAP]], #[[$SMAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[Q]], %[[K]] : {{.*}}) outs(%[[S0]] : tensor<1x8x4x32xf32>)
// CHECK: arith.extf
// CHECK: arith.extf
// Scale and causal mask: key j allowed iff j <= i + offset.
// CHECK: %[[SM:.+]] = linalg.generic {{.*}} outs(%[[S]] : tensor<1x8x4x32xf32>)
// CHECK:   arith.mulf
// CHECK:   %[[ROWI:.+]] = linalg.index 2
// CHECK:   %[[ROWG:.+]] = arith.addi %[[ROWI]], %[[POS]]
// CHECK:   %[[COL:.+]] = linalg.index 3
// CHECK:   arith.cmpi sle, %[[COL]], %[[ROWG]]
// CHECK:   arith.select
// Max, exp, sum, weighted values, normalization into the init.
// CHECK: %[[MAX:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}}ins(%[[SM]]
// CHECK:   arith.maximumf
// CHECK: %[[P:.+]] = linalg.generic {{.*}}ins(%[[SM]], %[[MAX]] :
// CHECK:   math.exp
// CHECK: %[[L:.+]] = linalg.generic {{.*}}ins(%[[P]]
// CHECK:   arith.addf
// CHECK: %[[ACC:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[P]], %[[V]]
// CHECK: %[[R:.+]] = linalg.generic {{.*}}ins(%[[ACC]], %[[L]] : {{.*}}) outs(%[[O]] : tensor<1x8x4x24xf16>)
// CHECK:   arith.divf
// CHECK:   arith.truncf {{.*}} : f32 to f16
// CHECK: return %[[R]]
// CHECK-NOT: dat.attention
func.func @gqa_causal_f16(%q: tensor<1x8x4x16xf16>, %k: tensor<1x2x32x16xf16>,
                          %v: tensor<1x2x32x24xf16>, %o: tensor<1x8x4x24xf16>,
                          %pos: index) -> tensor<1x8x4x24xf16> {
  %r = dat.attention ins(%q, %k, %v : tensor<1x8x4x16xf16>, tensor<1x2x32x16xf16>,
                         tensor<1x2x32x24xf16>)
                     query_offset(%pos)
                     outs(%o : tensor<1x8x4x24xf16>) scale = 0.25 causal
                     -> tensor<1x8x4x24xf16>
  return %r : tensor<1x8x4x24xf16>
}

// -----

// A boolean mask is read at [i, j]; dynamic lengths become tensor.dim sizes.
// CHECK-DAG: #[[$MMAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @mask_dynamic
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<?x?xi1>
// CHECK: tensor.dim
// CHECK: linalg.generic {indexing_maps = [#[[$MMAP]], {{.*}}]{{.*}} ins(%[[M]] : tensor<?x?xi1>)
// CHECK:   arith.select
// CHECK-NOT: linalg.index
// CHECK-NOT: dat.attention
func.func @mask_dynamic(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>,
                        %v: tensor<1x2x?x8xf32>, %m: tensor<?x?xi1>,
                        %o: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>,
                         tensor<1x2x?x8xf32>)
                     mask(%m : tensor<?x?xi1>)
                     outs(%o : tensor<1x2x?x8xf32>) scale = 1.0
                     -> tensor<1x2x?x8xf32>
  return %r : tensor<1x2x?x8xf32>
}

// -----

// RoPE views the last axis as pairs: both lanes read through constant maps.
// CHECK-DAG: #[[$EVEN:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, 0)>
// CHECK-DAG: #[[$ODD:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, 1)>
// CHECK-DAG: #[[$TAB:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3)>
// CHECK-LABEL: func.func @rope
// CHECK: %[[P:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0], [1], [2], [3, 4]] output_shape [2, 16, 4, 4, 2]
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$EVEN]], #[[$ODD]], #[[$TAB]], #[[$TAB]], {{.*}}]{{.*}} ins(%[[P]], %[[P]],
// CHECK:   linalg.index 4
// CHECK:   arith.select
// CHECK: tensor.collapse_shape %[[R]] {{\[\[}}0], [1], [2], [3, 4]]
func.func @rope(%x: tensor<2x16x4x8xf32>, %c: tensor<16x4xf32>, %s: tensor<16x4xf32>)
    -> tensor<2x16x4x8xf32> {
  %r = dat.rope %x, %c, %s : tensor<2x16x4x8xf32>, tensor<16x4xf32> -> tensor<2x16x4x8xf32>
  return %r : tensor<2x16x4x8xf32>
}

// -----

// Per-token tables: batch 1 broadcasts (constant 0), heads and positions
// follow the input.
// CHECK-DAG: #[[$TOK:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (0, d1, d2, d3)>
// CHECK-LABEL: func.func @rope_per_token
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #[[$TOK]], #[[$TOK]], {{.*}}]
func.func @rope_per_token(%x: tensor<2x16x4x8xf32>, %c: tensor<1x16x4x4xf32>, %s: tensor<1x16x4x4xf32>)
    -> tensor<2x16x4x8xf32> {
  %r = dat.rope %x, %c, %s : tensor<2x16x4x8xf32>, tensor<1x16x4x4xf32> -> tensor<2x16x4x8xf32>
  return %r : tensor<2x16x4x8xf32>
}

// -----

// Relational attention: α, relations (here with a softmax over keys),
// Σ α·symbols, Σ α·relations, then wr.
// CHECK-DAG: #[[$WR:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
// CHECK-LABEL: func.func @relational_attention
// CHECK-SAME: %[[WR:[a-z0-9]+]]: tensor<4x8x3xf32>
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK: linalg.generic {{.*}}ins(%{{.+}}, %[[WR]] : tensor<2x4x12x3xf32>, tensor<4x8x3xf32>)
// CHECK-NOT: dat.
func.func @relational_attention(%q: tensor<2x4x12x8xf32>, %k: tensor<2x2x12x8xf32>,
                                %qr: tensor<2x3x12x16xf32>, %kr: tensor<2x3x12x16xf32>,
                                %s: tensor<2x2x12x8xf32>, %wr: tensor<4x8x3xf32>,
                                %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  %r = dat.relational_attention
         ins(%q, %k, %qr, %kr, %s, %wr : tensor<2x4x12x8xf32>, tensor<2x2x12x8xf32>,
             tensor<2x3x12x16xf32>, tensor<2x3x12x16xf32>, tensor<2x2x12x8xf32>,
             tensor<4x8x3xf32>)
         outs(%o : tensor<2x4x12x8xf32>)
         scale = 0.353553385 rel_scale = 0.25 activation = "softmax" causal
         -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}
