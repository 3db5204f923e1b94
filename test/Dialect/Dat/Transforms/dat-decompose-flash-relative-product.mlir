// RUN: dat-opt %s --dat-tile-attention="query-tile=64" --dat-decompose-flash="key-tile=32 relative-symbols-as-product=true" \
// RUN:   --canonicalize | FileCheck %s
// RUN: dat-opt %s --dat-tile-attention="query-tile=64" --dat-decompose-flash="key-tile=32" \
// RUN:   --canonicalize | FileCheck %s --check-prefix=GATHER

// Position-relative symbols as a product (relative-symbols-as-product): each
// key block gathers the window of table rows its pairs use (64 + 32 rows,
// clamped), skews the probabilities so that pair (i, j) sits in column
// j - i + 63, and adds their product with the window: a contraction over the
// window's rows (heads of a kv group read its head). No gather per pair and
// element is left.
// CHECK-LABEL: func.func @relational_relative
// CHECK: scf.for
// CHECK:   %[[W:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<?x2x8xf32>)
// CHECK:     arith.maxsi
// CHECK:     arith.minsi
// CHECK:     tensor.extract %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : tensor<33x2x8xf32>
// CHECK:   %[[S:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<1x4x64x?xf32>)
// CHECK-DAG: arith.cmpi sge
// CHECK-DAG: arith.cmpi slt
// CHECK:     tensor.extract %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : tensor<1x4x64x?xf32>
// CHECK:     arith.select
// CHECK:   linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[S]], %[[W]] : tensor<1x4x64x?xf32>, tensor<?x2x8xf32>) outs(%{{.+}} : tensor<1x4x64x8xf32>)
// CHECK-NOT: tensor.extract %{{.+}} : tensor<33x2x8xf32>
// GATHER-LABEL: func.func @relational_relative
// GATHER: linalg.generic {{.*}} ins(%{{.+}} : tensor<1x4x64x?xf32>) outs(%{{.+}} : tensor<1x4x64x8xf32>)
// GATHER: tensor.extract %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : tensor<33x2x8xf32>
func.func @relational_relative(%q: tensor<1x4x256x8xf32>, %k: tensor<1x2x256x8xf32>, %qr: tensor<1x3x256x4xf32>,
                               %s: tensor<33x2x8xf32>, %wr: tensor<4x8x3xf32>) -> tensor<1x4x256x8xf32> {
  %o = tensor.empty() : tensor<1x4x256x8xf32>
  %r = dat.relational_attention ins(%q, %k, %qr, %qr, %s, %wr : tensor<1x4x256x8xf32>, tensor<1x2x256x8xf32>,
             tensor<1x3x256x4xf32>, tensor<1x3x256x4xf32>, tensor<33x2x8xf32>, tensor<4x8x3xf32>)
         outs(%o : tensor<1x4x256x8xf32>) scale = 0.353553385 rel_scale = 0.5 activation = "identity"
         causal relative_symbols -> tensor<1x4x256x8xf32>
  return %r : tensor<1x4x256x8xf32>
}
