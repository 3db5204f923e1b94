// RUN: dat-opt %s --dat-tile-attention="query-tile=16" \
// RUN:   --dat-decompose-flash="key-tile=32 narrow-value-network=true" \
// RUN:   --canonicalize --split-input-file | FileCheck %s
// RUN: dat-opt %s --dat-tile-attention="query-tile=16" \
// RUN:   --dat-decompose-flash="key-tile=32" --canonicalize \
// RUN:   --split-input-file | FileCheck %s --check-prefix=F32

// HYLA's value network z = relu(Σ_h a·v) in a bf16 program: with
// narrow-value-network its block [1, rows, keys, dv] is rounded to bf16
// after the activation, and o = Σ_j a·z reads that copy (a bf16 operand:
// the GPU's tensor cores take it). Without it z stays f32.
// CHECK-LABEL: func.func @hyla_mlp_bf16
// CHECK: scf.for
// CHECK:   %[[Z:.+]] = linalg.generic {{[^(]*}}outs(%{{.+}} : tensor<1x16x?x64xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   arith.maximumf
// CHECK:   %[[ZB:.+]] = linalg.generic {{.*}} ins(%[[Z]] : tensor<1x16x?x64xf32>)
// CHECK:     arith.truncf %{{.+}} : f32 to bf16
// CHECK:   } -> tensor<1x16x?x64xbf16>
// CHECK:   linalg.generic {{.*}} ins(%{{.+}}, %[[ZB]] : tensor<1x16x16x?xf32>, tensor<1x16x?x64xbf16>)
// F32-LABEL: func.func @hyla_mlp_bf16
// F32: scf.for
// F32-NOT: arith.truncf
// F32: scf.yield
func.func @hyla_mlp_bf16(%q: tensor<1x16x256x64xbf16>) -> tensor<1x16x256x64xbf16> {
  %o = tensor.empty() : tensor<1x16x256x64xbf16>
  %r = dat.hyper_attention ins(%q, %q, %q : tensor<1x16x256x64xbf16>, tensor<1x16x256x64xbf16>, tensor<1x16x256x64xbf16>)
         outs(%o : tensor<1x16x256x64xbf16>)
         scale = 0.125 normalization = "rms_head" network = "mlp_relu" -> tensor<1x16x256x64xbf16>
  return %r : tensor<1x16x256x64xbf16>
}

// -----

// An f32 program's values are f32: nothing to narrow.
// CHECK-LABEL: func.func @hyla_mlp_f32
// CHECK-NOT: bf16
// CHECK: return
func.func @hyla_mlp_f32(%q: tensor<1x16x256x64xf32>) -> tensor<1x16x256x64xf32> {
  %o = tensor.empty() : tensor<1x16x256x64xf32>
  %r = dat.hyper_attention ins(%q, %q, %q : tensor<1x16x256x64xf32>, tensor<1x16x256x64xf32>, tensor<1x16x256x64xf32>)
         outs(%o : tensor<1x16x256x64xf32>)
         scale = 0.125 normalization = "rms_head" network = "mlp_relu" -> tensor<1x16x256x64xf32>
  return %r : tensor<1x16x256x64xf32>
}

// -----

// The plain value sum has no network to narrow.
// CHECK-LABEL: func.func @hyla_default_bf16
// CHECK: scf.for
// CHECK-NOT: arith.truncf
// CHECK: scf.yield
func.func @hyla_default_bf16(%q: tensor<1x16x256x64xbf16>) -> tensor<1x16x256x64xbf16> {
  %o = tensor.empty() : tensor<1x16x256x64xbf16>
  %r = dat.hyper_attention ins(%q, %q, %q : tensor<1x16x256x64xbf16>, tensor<1x16x256x64xbf16>, tensor<1x16x256x64xbf16>)
         outs(%o : tensor<1x16x256x64xbf16>)
         scale = 0.125 normalization = "rms_head" network = "default" -> tensor<1x16x256x64xbf16>
  return %r : tensor<1x16x256x64xbf16>
}
