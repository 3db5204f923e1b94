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
// CHECK:   arith.cmpi ule, %[[COL]], %[[ROWG]]
// CHECK:   arith.select
// Max, exp, sum, weighted values, normalization into the init.
// CHECK: %[[MAX:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}}ins(%[[SM]]
// CHECK:   arith.maximumf
// CHECK: %[[P:.+]] = linalg.generic {{.*}}ins(%[[MAX]] {{.*}}outs(%[[SM]]
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
