// RUN: dat-opt %s --split-input-file --dat-peel-tile-loops | FileCheck %s
// RUN: dat-opt %s --split-input-file --dat-peel-tile-loops --canonicalize | FileCheck %s --check-prefix=CANON

// 200 rows in tiles of 64: a loop over the three full tiles, whose size is
// the constant 64, then one over the last 8 rows, which reads the first
// loop's result; each with static slices once canonicalized.
// CHECK-LABEL: func.func @rows
// CHECK: %[[FULL:.+]] = scf.forall (%[[I:.+]]) = (0) to (192) step (64) shared_outs(%{{.+}} = %{{.+}})
// CHECK-NOT: affine.min
// CHECK: tensor.extract_slice %arg0[%[[I]], 0] [%{{.+}}, 64]
// CHECK: dat.origin = "rows"
// CHECK: %[[REST:.+]] = scf.forall (%{{.+}}) = (192) to (200) step (64) shared_outs(%{{.+}} = %[[FULL]])
// CHECK-NOT: affine.min
// CHECK: dat.origin = "rows"
// CHECK: return %[[REST]]
func.func @rows(%x: tensor<200x64xf32>) -> tensor<200x64xf32> {
  %e = tensor.empty() : tensor<200x64xf32>
  %r = scf.forall (%i) = (0) to (200) step (64) shared_outs(%o = %e) -> (tensor<200x64xf32>) {
    %n = affine.min affine_map<(d0) -> (-d0 + 200, 64)>(%i)
    %s = tensor.extract_slice %x[%i, 0] [%n, 64] [1, 1] : tensor<200x64xf32> to tensor<?x64xf32>
    %t = linalg.exp ins(%s : tensor<?x64xf32>) outs(%s : tensor<?x64xf32>) -> tensor<?x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%i, 0] [%n, 64] [1, 1] : tensor<?x64xf32> into tensor<200x64xf32>
    }
  } {dat.origin = "rows"}
  return %r : tensor<200x64xf32>
}

// -----

// (head, query tile): only the query dimension has a partial tile; the
// heads stay parallel in both loops. After canonicalization every slice
// is static: 64 rows, then 16.
// CHECK-LABEL: func.func @heads_and_queries
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (8, 1024) step (1, 64)
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 1024) to (8, 1040) step (1, 64)
// CANON-LABEL: func.func @heads_and_queries
// CANON: scf.forall
// CANON: tensor.extract_slice {{.+}} to tensor<1x64x32xf32>
// CANON: scf.forall
// CANON: tensor.extract_slice {{.+}} to tensor<1x16x32xf32>
// CANON-NOT: tensor<1x?x32xf32>
func.func @heads_and_queries(%q: tensor<8x1040x32xf32>) -> tensor<8x1040x32xf32> {
  %e = tensor.empty() : tensor<8x1040x32xf32>
  %r = scf.forall (%h, %i) = (0, 0) to (8, 1040) step (1, 64) shared_outs(%o = %e) -> (tensor<8x1040x32xf32>) {
    %n = affine.min affine_map<(d0) -> (-d0 + 1040, 64)>(%i)
    %s = tensor.extract_slice %q[%h, %i, 0] [1, %n, 32] [1, 1, 1] : tensor<8x1040x32xf32> to tensor<1x?x32xf32>
    %t = linalg.exp ins(%s : tensor<1x?x32xf32>) outs(%s : tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%h, %i, 0] [1, %n, 32] [1, 1, 1] : tensor<1x?x32xf32> into tensor<8x1040x32xf32>
    }
  }
  return %r : tensor<8x1040x32xf32>
}

// -----

// A loop whose tiles all are full, and one of a single partial tile, are
// left as they are.
// CHECK-LABEL: func.func @nothing_to_split
// CHECK-COUNT-2: scf.forall (
// CHECK-NOT: scf.forall (
func.func @nothing_to_split(%x: tensor<128x8xf32>, %y: tensor<40x8xf32>) -> (tensor<128x8xf32>, tensor<40x8xf32>) {
  %e = tensor.empty() : tensor<128x8xf32>
  %r = scf.forall (%i) = (0) to (128) step (64) shared_outs(%o = %e) -> (tensor<128x8xf32>) {
    %s = tensor.extract_slice %x[%i, 0] [64, 8] [1, 1] : tensor<128x8xf32> to tensor<64x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%i, 0] [64, 8] [1, 1] : tensor<64x8xf32> into tensor<128x8xf32>
    }
  }
  %e2 = tensor.empty() : tensor<40x8xf32>
  %r2 = scf.forall (%i) = (0) to (40) step (64) shared_outs(%o = %e2) -> (tensor<40x8xf32>) {
    %n = affine.min affine_map<(d0) -> (-d0 + 40, 64)>(%i)
    %s = tensor.extract_slice %y[%i, 0] [%n, 8] [1, 1] : tensor<40x8xf32> to tensor<?x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%i, 0] [%n, 8] [1, 1] : tensor<?x8xf32> into tensor<40x8xf32>
    }
  }
  return %r, %r2 : tensor<128x8xf32>, tensor<40x8xf32>
}
