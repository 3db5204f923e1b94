// RUN: dat-opt %s --dat-tile-attention="query-tile=16" \
// RUN:   --dat-decompose-flash="key-tile=64 block-bytes=232432" --canonicalize \
// RUN:   --split-input-file | FileCheck %s
// Without a bound, the key tile as given:
// RUN: dat-opt %s --dat-tile-attention="query-tile=16" \
// RUN:   --dat-decompose-flash="key-tile=64" --canonicalize --split-input-file \
// RUN: | FileCheck %s --check-prefix=NOBOUND
// RUN: not dat-opt %s --dat-decompose-flash="block-bytes=-1" --split-input-file 2>&1 \
// RUN: | FileCheck %s --check-prefix=BAD
// BAD: error: dat-decompose-flash: block-bytes must be positive or 0, got -1

// A bf16 relational attention tile of 16 rows, 8 heads and 8 relations of
// 64 (d_model 512): its query tiles take 32 KiB, and each key 3 KiB of
// keys, relation keys and symbols and 512 bytes of f32 relations. 64 keys
// (256 KiB) do not fit 227 KiB: 32 (144 KiB).
// CHECK-LABEL: func.func @relational_bf16
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c32
// NOBOUND-LABEL: func.func @relational_bf16
// NOBOUND: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c64
func.func @relational_bf16(%q: tensor<1x8x1024x64xbf16>, %qr: tensor<1x8x1024x64xbf16>,
                           %wr: tensor<8x64x8xbf16>) -> tensor<1x8x1024x64xbf16> {
  %o = tensor.empty() : tensor<1x8x1024x64xbf16>
  %r = dat.relational_attention ins(%q, %q, %qr, %qr, %q, %wr : tensor<1x8x1024x64xbf16>, tensor<1x8x1024x64xbf16>,
             tensor<1x8x1024x64xbf16>, tensor<1x8x1024x64xbf16>, tensor<1x8x1024x64xbf16>, tensor<8x64x8xbf16>)
         outs(%o : tensor<1x8x1024x64xbf16>) scale = 0.125 rel_scale = 0.125 activation = "identity"
         -> tensor<1x8x1024x64xbf16>
  return %r : tensor<1x8x1024x64xbf16>
}

// -----

// Half the model (d_model 256) fits with 64 keys (16 KiB + 64 × 2 KiB).
// CHECK-LABEL: func.func @relational_bf16_fits
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c64
func.func @relational_bf16_fits(%q: tensor<1x8x1024x32xbf16>, %qr: tensor<1x8x1024x32xbf16>,
                                %wr: tensor<8x32x8xbf16>) -> tensor<1x8x1024x32xbf16> {
  %o = tensor.empty() : tensor<1x8x1024x32xbf16>
  %r = dat.relational_attention ins(%q, %q, %qr, %qr, %q, %wr : tensor<1x8x1024x32xbf16>, tensor<1x8x1024x32xbf16>,
             tensor<1x8x1024x32xbf16>, tensor<1x8x1024x32xbf16>, tensor<1x8x1024x32xbf16>, tensor<8x32x8xbf16>)
         outs(%o : tensor<1x8x1024x32xbf16>) scale = 0.125 rel_scale = 0.125 activation = "identity"
         -> tensor<1x8x1024x32xbf16>
  return %r : tensor<1x8x1024x32xbf16>
}

// -----

// f32 (no tensor cores, no warp-row program): the key tile as given.
// CHECK-LABEL: func.func @relational_f32
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c64
func.func @relational_f32(%q: tensor<1x8x1024x64xf32>, %qr: tensor<1x8x1024x64xf32>,
                          %wr: tensor<8x64x8xf32>) -> tensor<1x8x1024x64xf32> {
  %o = tensor.empty() : tensor<1x8x1024x64xf32>
  %r = dat.relational_attention ins(%q, %q, %qr, %qr, %q, %wr : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>,
             tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<8x64x8xf32>)
         outs(%o : tensor<1x8x1024x64xf32>) scale = 0.125 rel_scale = 0.125 activation = "identity"
         -> tensor<1x8x1024x64xf32>
  return %r : tensor<1x8x1024x64xf32>
}
