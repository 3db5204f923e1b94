// RUN: dat-opt %s --transform-interpreter --split-input-file -verify-diagnostics | FileCheck %s

// dat.attention tiles through TilingInterface over (b, h, i, e). A tile of
// 4 query heads covers 2 whole kv-head groups of 2; a causal query tile
// shifts the query offset by the tile's first row.

// CHECK-DAG: #[[$KVH:.+]] = affine_map<(d0) -> (d0 floordiv 2)>
// CHECK-LABEL: func.func @tile_gqa_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<2x8x16x32xf32>, %[[K:.+]]: tensor<2x4x16x32xf32>, %[[V:.+]]: tensor<2x4x16x32xf32>, %[[O:.+]]: tensor<2x8x16x32xf32>)
// CHECK: scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step %{{.+}}
// CHECK: scf.for %[[H:.+]] = %{{.+}} to %{{.+}} step %{{.+}}
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}}
// CHECK-DAG: %[[QT:.+]] = tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[I]], 0] [1, 4, 8, 32]
// CHECK-DAG: %[[KVO:.+]] = affine.apply #[[$KVH]](%[[H]])
// CHECK-DAG: %[[KT:.+]] = tensor.extract_slice %[[K]][%[[B]], %[[KVO]], 0, 0] [1, 2, 16, 32]
// CHECK-DAG: %[[VT:.+]] = tensor.extract_slice %[[V]][%[[B]], %[[KVO]], 0, 0] [1, 2, 16, 32]
// CHECK: %[[T:.+]] = dat.attention ins(%[[QT]], %[[KT]], %[[VT]] : tensor<1x4x8x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>) query_offset(%[[I]]) outs(%{{.+}} : tensor<1x4x8x32xf32>) scale = 1.250000e-01 causal
// CHECK: tensor.insert_slice %[[T]]
func.func @tile_gqa_causal(%q: tensor<2x8x16x32xf32>, %k: tensor<2x4x16x32xf32>,
                           %v: tensor<2x4x16x32xf32>, %o: tensor<2x8x16x32xf32>)
    -> tensor<2x8x16x32xf32> {
  %r = dat.attention ins(%q, %k, %v : tensor<2x8x16x32xf32>, tensor<2x4x16x32xf32>,
                         tensor<2x4x16x32xf32>)
                     outs(%o : tensor<2x8x16x32xf32>) scale = 0.125 causal
                     -> tensor<2x8x16x32xf32>
  return %r : tensor<2x8x16x32xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %a = transform.structured.match ops{["dat.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l:3 = transform.structured.tile_using_for %a tile_sizes [1, 4, 8, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A mask is tiled along its query rows; the value dim tiles too.
// CHECK-LABEL: func.func @tile_mask_value_dim
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<16x16xi1>
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}}
// CHECK: scf.for %[[E:.+]] = %{{.+}} to %{{.+}} step %{{.+}}
// CHECK-DAG: tensor.extract_slice %{{.+}}[0, 0, 0, %[[E]]] [1, 2, 16, 8]
// CHECK-DAG: %[[MT:.+]] = tensor.extract_slice %[[M]][%[[I]], 0] [4, 16]
// CHECK: dat.attention {{.*}} mask(%[[MT]] : tensor<4x16xi1>) outs(%{{.+}} : tensor<1x2x4x8xf32>)
// CHECK-NOT: query_offset
func.func @tile_mask_value_dim(%q: tensor<1x2x16x32xf32>, %k: tensor<1x2x16x32xf32>,
                               %v: tensor<1x2x16x32xf32>, %m: tensor<16x16xi1>,
                               %o: tensor<1x2x16x32xf32>) -> tensor<1x2x16x32xf32> {
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>,
                         tensor<1x2x16x32xf32>)
                     mask(%m : tensor<16x16xi1>)
                     outs(%o : tensor<1x2x16x32xf32>) scale = 0.125
                     -> tensor<1x2x16x32xf32>
  return %r : tensor<1x2x16x32xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %a = transform.structured.match ops{["dat.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l:2 = transform.structured.tile_using_for %a tile_sizes [0, 0, 4, 8]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// A head tile that splits a group of query heads sharing a kv head is refused.
func.func @tile_splits_group(%q: tensor<1x4x8x8xf32>, %k: tensor<1x2x8x8xf32>,
                             %v: tensor<1x2x8x8xf32>, %o: tensor<1x4x8x8xf32>)
    -> tensor<1x4x8x8xf32> {
  // expected-error @+3 {{head tile must cover whole groups of 2 query heads sharing a key/value head}}
  // expected-error @+2 {{to tile operation}}
  // expected-error @+1 {{failed to generate tiling loops}}
  %r = dat.attention ins(%q, %k, %v : tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>,
                         tensor<1x2x8x8xf32>)
                     outs(%o : tensor<1x4x8x8xf32>) scale = 0.125
                     -> tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %a = transform.structured.match ops{["dat.attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l = transform.structured.tile_using_for %a tile_sizes [0, 1]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// dat.hyper_attention tiles over (b, i): a tile keeps all heads and keys; a
// per-batch bias and the mask are sliced to the tile's rows; without
// `causal` no query offset appears.
// CHECK-LABEL: func.func @tile_hyla
// CHECK-SAME: %[[BIAS:[a-z0-9]+]]: tensor<2x4x8x8xf32>, %[[M:[a-z0-9]+]]: tensor<8x8xi1>
// CHECK: scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step %{{.+}}
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}}
// CHECK-DAG: %[[BT:.+]] = tensor.extract_slice %[[BIAS]][%[[B]], 0, %[[I]], 0] [1, 4, 2, 8]
// CHECK-DAG: %[[MT:.+]] = tensor.extract_slice %[[M]][%[[I]], 0] [2, 8]
// CHECK: dat.hyper_attention {{.*}} bias(%[[BT]] : tensor<1x4x2x8xf32>) mask(%[[MT]] : tensor<2x8xi1>) outs(%{{.+}} : tensor<1x4x2x3xf32>)
// CHECK-NOT: query_offset
func.func @tile_hyla(%q: tensor<2x4x8x3xf32>, %k: tensor<2x4x8x3xf32>,
                     %v: tensor<2x4x8x3xf32>, %bias: tensor<2x4x8x8xf32>,
                     %m: tensor<8x8xi1>, %o: tensor<2x4x8x3xf32>)
    -> tensor<2x4x8x3xf32> {
  %r = dat.hyper_attention ins(%q, %k, %v : tensor<2x4x8x3xf32>, tensor<2x4x8x3xf32>,
                               tensor<2x4x8x3xf32>)
                           bias(%bias : tensor<2x4x8x8xf32>) mask(%m : tensor<8x8xi1>)
                           outs(%o : tensor<2x4x8x3xf32>)
                           scale = 0.5 normalization = "softmax" network = "default"
                           -> tensor<2x4x8x3xf32>
  return %r : tensor<2x4x8x3xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %a = transform.structured.match ops{["dat.hyper_attention"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l:2 = transform.structured.tile_using_for %a tile_sizes [1, 2]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}

// -----

// dat.orthogonal_map tiles over (b, h, l) and keeps the feature axis; maps
// with a batch per sequence and a head axis are sliced along both.
// CHECK-LABEL: func.func @tile_orthogonal_map
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x12x8xf32>, %[[MAPS:.+]]: tensor<2x12x4x8x8xf32>
// CHECK: scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step %{{.+}}
// CHECK: scf.for %[[H:.+]] = %{{.+}} to %{{.+}} step %{{.+}}
// CHECK: scf.for %[[L:.+]] = %{{.+}} to %{{.+}} step %{{.+}}
// CHECK-DAG: %[[XT:.+]] = tensor.extract_slice %[[X]][%[[B]], %[[H]], %[[L]], 0] [1, 2, 4, 8]
// CHECK-DAG: %[[MT:.+]] = tensor.extract_slice %[[MAPS]][%[[B]], %[[L]], %[[H]], 0, 0] [1, 4, 2, 8, 8]
// CHECK: dat.orthogonal_map ins(%[[XT]], %[[MT]] : tensor<1x2x4x8xf32>, tensor<1x4x2x8x8xf32>) outs(%{{.+}} : tensor<1x2x4x8xf32>)
func.func @tile_orthogonal_map(%x: tensor<2x4x12x8xf32>, %m: tensor<2x12x4x8x8xf32>,
                               %o: tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32> {
  %r = dat.orthogonal_map ins(%x, %m : tensor<2x4x12x8xf32>, tensor<2x12x4x8x8xf32>)
                          outs(%o : tensor<2x4x12x8xf32>) -> tensor<2x4x12x8xf32>
  return %r : tensor<2x4x12x8xf32>
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %a = transform.structured.match ops{["dat.orthogonal_map"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l:3 = transform.structured.tile_using_for %a tile_sizes [1, 2, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
