// RUN: dat-opt %s --dat-tile-attention="query-tile=16" \
// RUN:   --dat-decompose-flash="key-tile=64 whole-key-blocks=true" \
// RUN:   --canonicalize --split-input-file | FileCheck %s
// RUN: dat-opt %s --dat-tile-attention="query-tile=16" \
// RUN:   --dat-decompose-flash="key-tile=64" --canonicalize \
// RUN:   --split-input-file | FileCheck %s --check-prefix=PARTIAL

// A causal tile of 16 rows at i0 sees keys up to i0 + 16. With whole key
// blocks its loop runs to the end of the 64-key block holding that key,
// min(256, ceil((i0 + 16) / 64) * 64), and with 256 keys (a multiple of
// 64) every block is a static 64 keys: the keys past the tile's rows are
// masked by the causal select, as in the diagonal block.
// CHECK: #[[$BOUND:.+]] = affine_map<(d0) -> (256, ((d0 + 16) ceildiv 64) * 64)>
// CHECK-LABEL: func.func @attention_causal
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %[[I0:.+]]) =
// CHECK: %[[UB:.+]] = affine.min #[[$BOUND]](%[[I0]])
// CHECK: scf.for %[[J0:.+]] = %c0 to %[[UB]] step %c64
// CHECK-NOT: affine.min
// CHECK: tensor.extract_slice %{{.+}}[%{{.+}}, %{{.+}}, %[[J0]], 0] [1, 1, 64, 32]
// CHECK: arith.cmpi sle
// CHECK: arith.select
// Without them the loop stops at i0 + 16 and the last block is partial:
// PARTIAL: #[[$BOUND:.+]] = affine_map<(d0) -> (256, d0 + 16)>
// PARTIAL-LABEL: func.func @attention_causal
// PARTIAL: scf.for %[[J0:.+]] = %c0 to %{{.+}} step %c64
// PARTIAL: affine.min
// PARTIAL: tensor.extract_slice %{{.+}}[%{{.+}}, %{{.+}}, %[[J0]], 0] [1, 1, %{{.+}}, 32]
func.func @attention_causal(%q: tensor<2x4x256x32xf32>, %k: tensor<2x4x256x32xf32>,
                            %v: tensor<2x4x256x32xf32>) -> tensor<2x4x256x32xf32> {
  %o = tensor.empty() : tensor<2x4x256x32xf32>
  %r = dat.attention ins(%q, %k, %v : tensor<2x4x256x32xf32>, tensor<2x4x256x32xf32>, tensor<2x4x256x32xf32>)
         outs(%o : tensor<2x4x256x32xf32>) scale = 0.17677669 causal -> tensor<2x4x256x32xf32>
  return %r : tensor<2x4x256x32xf32>
}

// -----

// 200 keys are no multiple of 64: the bound is still rounded (to at most
// 200), but the last block may be partial, so blocks keep their
// min(64, bound - j0) size.
// CHECK: #[[$BOUND2:.+]] = affine_map<(d0, d1) -> (200, ((d0 + d1) ceildiv 64) * 64)>
// CHECK-LABEL: func.func @attention_causal_200
// CHECK: affine.min #[[$BOUND2]]
// CHECK: scf.for
// CHECK: affine.min
func.func @attention_causal_200(%q: tensor<1x2x200x32xf32>, %k: tensor<1x2x200x32xf32>,
                                %v: tensor<1x2x200x32xf32>) -> tensor<1x2x200x32xf32> {
  %o = tensor.empty() : tensor<1x2x200x32xf32>
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>, tensor<1x2x200x32xf32>)
         outs(%o : tensor<1x2x200x32xf32>) scale = 0.17677669 causal -> tensor<1x2x200x32xf32>
  return %r : tensor<1x2x200x32xf32>
}

// -----

// Without causality nothing changes: the loop runs over every key.
// CHECK-LABEL: func.func @attention_full
// CHECK: scf.for %{{.+}} = %c0 to %c256 step %c64
func.func @attention_full(%q: tensor<1x2x256x32xf32>, %k: tensor<1x2x256x32xf32>,
                          %v: tensor<1x2x256x32xf32>) -> tensor<1x2x256x32xf32> {
  %o = tensor.empty() : tensor<1x2x256x32xf32>
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>)
         outs(%o : tensor<1x2x256x32xf32>) scale = 0.17677669 -> tensor<1x2x256x32xf32>
  return %r : tensor<1x2x256x32xf32>
}
