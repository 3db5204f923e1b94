// RUN: dat-opt %s --dat-tile-attention="query-tile=0 balance-threads=2" --split-input-file | FileCheck %s
// RUN: dat-opt %s --dat-tile-attention="query-tile=0 balance-threads=1" --split-input-file | FileCheck %s --check-prefix=ONE
// RUN: not dat-opt %s --dat-tile-attention="query-tile=0 balance-threads=-2" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: dat-tile-attention: balance-threads must be positive or 0, got -2

// balance-threads (the CPU): of 64, 32 and 16 rows, the largest whose tiles
// the threads share within 5% as evenly as the best; smaller tiles only
// where they keep 8192 query elements (32 KiB in f32). On one thread every size is as even:
// 64 rows everywhere (ONE).
// ONE-COUNT-4: step (1, {{(1, )?}}64)

// 700 queries at batch 1 with 16 heads of 16 (256 elements a row): 10 tiles of
// 64 on two threads, then 60 rows alone (380 rows on the longer thread);
// 22 tiles of 32 (352); 44 of 16 (352): 32 rows.
// CHECK-LABEL: func.func @relational_700
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (1, 700) step (1, 32)
func.func @relational_700(%q: tensor<1x16x700x16xf32>, %qr: tensor<1x16x700x16xf32>,
                          %wr: tensor<16x16x16xf32>) -> tensor<1x16x700x16xf32> {
  %o = tensor.empty() : tensor<1x16x700x16xf32>
  %r = dat.relational_attention ins(%q, %q, %qr, %qr, %q, %wr : tensor<1x16x700x16xf32>, tensor<1x16x700x16xf32>,
             tensor<1x16x700x16xf32>, tensor<1x16x700x16xf32>, tensor<1x16x700x16xf32>, tensor<16x16x16xf32>)
         outs(%o : tensor<1x16x700x16xf32>) scale = 0.25 rel_scale = 0.25 activation = "identity"
         -> tensor<1x16x700x16xf32>
  return %r : tensor<1x16x700x16xf32>
}

// -----

// 1000 queries: 15 tiles of 64 and an overlapped 16th (512 rows on the
// longer thread), 32 rows no better: 64 rows.
// CHECK-LABEL: func.func @relational_1000
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (1, 1000) step (1, 64)
func.func @relational_1000(%q: tensor<1x8x1000x32xf32>, %qr: tensor<1x8x1000x32xf32>,
                           %wr: tensor<8x32x8xf32>) -> tensor<1x8x1000x32xf32> {
  %o = tensor.empty() : tensor<1x8x1000x32xf32>
  %r = dat.relational_attention ins(%q, %q, %qr, %qr, %q, %wr : tensor<1x8x1000x32xf32>, tensor<1x8x1000x32xf32>,
             tensor<1x8x1000x32xf32>, tensor<1x8x1000x32xf32>, tensor<1x8x1000x32xf32>, tensor<8x32x8xf32>)
         outs(%o : tensor<1x8x1000x32xf32>) scale = 0.17677669 rel_scale = 0.17677669 activation = "identity"
         -> tensor<1x8x1000x32xf32>
  return %r : tensor<1x8x1000x32xf32>
}

// -----

// HYLA at 3 × 200 queries with a narrow model (2 heads of 32: 64 elements
// a row): 32 rows would share better (304 rows against 336), but a
// 32-row tile holds 2048 query elements, below 8192: 64 rows.
// CHECK-LABEL: func.func @hyla_narrow
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (3, 200) step (1, 64)
func.func @hyla_narrow(%q: tensor<3x2x200x32xf32>) -> tensor<3x2x200x32xf32> {
  %o = tensor.empty() : tensor<3x2x200x32xf32>
  %r = dat.hyper_attention ins(%q, %q, %q : tensor<3x2x200x32xf32>, tensor<3x2x200x32xf32>, tensor<3x2x200x32xf32>)
         outs(%o : tensor<3x2x200x32xf32>)
         scale = 0.17677669 normalization = "rms_head" network = "mlp_relu" -> tensor<3x2x200x32xf32>
  return %r : tensor<3x2x200x32xf32>
}

// -----

// Plain attention's tiles are per head: 6 heads × 13 tiles of 64 rows
// (777 queries) share evenly enough: 64 rows.
// CHECK-LABEL: func.func @attention_777
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) = (0, 0, 0) to (1, 6, 777) step (1, 1, 64)
func.func @attention_777(%q: tensor<1x6x777x64xf32>) -> tensor<1x6x777x64xf32> {
  %o = tensor.empty() : tensor<1x6x777x64xf32>
  %r = dat.attention ins(%q, %q, %q : tensor<1x6x777x64xf32>, tensor<1x6x777x64xf32>, tensor<1x6x777x64xf32>)
         outs(%o : tensor<1x6x777x64xf32>) scale = 0.125 causal -> tensor<1x6x777x64xf32>
  return %r : tensor<1x6x777x64xf32>
}
