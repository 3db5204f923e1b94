// RUN: dat-opt %s --split-input-file --pass-pipeline='builtin.module(dat-tile-attention{query-tile=64},dat-decompose-flash{key-tile=64},canonicalize)' | FileCheck %s

// Unmasked f32 attention: the score scale is applied to the query tile once,
// before the key loop, instead of to every key block's scores.
// CHECK-LABEL: func.func @unmasked
// CHECK: %[[SCALE:.+]] = arith.constant 0.176776{{.*}} : f32
// CHECK: scf.forall
// CHECK: linalg.generic
// CHECK: arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK: scf.for
// CHECK-NOT: %[[SCALE]]
// CHECK: scf.forall.in_parallel
func.func @unmasked(%q: tensor<1x2x128x32xf32>, %k: tensor<1x2x128x32xf32>, %v: tensor<1x2x128x32xf32>) -> tensor<1x2x128x32xf32> {
  %o = tensor.empty() : tensor<1x2x128x32xf32>
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>)
                     outs(%o : tensor<1x2x128x32xf32>) scale = 0.176776695 -> tensor<1x2x128x32xf32>
  return %r : tensor<1x2x128x32xf32>
}

// -----

// Causal: the scale stays with the mask, in the per-block scores.
// CHECK-LABEL: func.func @causal
// CHECK: scf.for
// CHECK: arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK: arith.select
func.func @causal(%q: tensor<1x2x128x32xf32>, %k: tensor<1x2x128x32xf32>, %v: tensor<1x2x128x32xf32>) -> tensor<1x2x128x32xf32> {
  %o = tensor.empty() : tensor<1x2x128x32xf32>
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>)
                     outs(%o : tensor<1x2x128x32xf32>) scale = 0.176776695 causal -> tensor<1x2x128x32xf32>
  return %r : tensor<1x2x128x32xf32>
}
