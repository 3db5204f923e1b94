// RUN: dat-opt %s --split-input-file --dat-peel-tile-loops | FileCheck %s
// RUN: dat-opt %s --split-input-file --dat-peel-tile-loops --canonicalize | FileCheck %s --check-prefix=CANON
// RUN: dat-opt %s --split-input-file --dat-peel-tile-loops=overlap | FileCheck %s --check-prefix=OVERLAP
// RUN: dat-opt %s --split-input-file --dat-peel-tile-loops=overlap --canonicalize | FileCheck %s --check-prefix=OVERLAPC
// RUN: dat-opt %s --split-input-file --dat-peel-tile-loops="overlap threads=2" | FileCheck %s --check-prefix=THREADS
// RUN: not dat-opt %s --split-input-file --dat-peel-tile-loops="overlap threads=-1" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: dat-peel-tile-loops: threads must be positive or 0, got -1

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

// -----

// overlap: an attention tile loop at batch 1 over 200 queries (three full
// tiles and 8 rows) whose tiles keep every head. Peeled, the last 8 rows
// would be a loop of one iteration, run on one thread; instead every tile is
// full, the last starting at 136 (min(i, 136)), computing into a tensor of
// its own, and inserts its rows past the previous tile (i - start of them
// skipped). The tile size folds to 64 inside the tile and stays min(200 - i,
// 64) for the insert.
// (Canonicalized: the batch loop of one tile folds away.)
// OVERLAPC-LABEL: func.func @overlapped
// OVERLAPC: scf.forall (%[[I:.+]]) = (0) to (200) step (64)
// OVERLAPC-DAG: %[[START:.+]] = affine.min #[[$START:.+]](%[[I]])
// OVERLAPC-DAG: %[[N:.+]] = affine.min #[[$SIZE:.+]](%[[I]])
// OVERLAPC-DAG: %[[TILE:.+]] = tensor.empty() : tensor<1x64x64xf32>
// OVERLAPC: tensor.extract_slice %arg0[0, %[[START]], 0] [1, 64, 64]
// OVERLAPC: %[[E:.+]] = linalg.exp {{.*}} outs(%[[TILE]]
// OVERLAPC: %[[SKIP:.+]] = affine.apply #{{.+}}(%[[I]], %[[START]])
// OVERLAPC: %[[ROWS:.+]] = tensor.extract_slice %[[E]][0, %[[SKIP]], 0] [1, %[[N]], 64]
// OVERLAPC: tensor.parallel_insert_slice %[[ROWS]] into %{{.+}}[0, %[[I]], 0] [1, %[[N]], 64]
// OVERLAPC: dat.origin = "dat.relational_attention", dat.overlapped_last_tile
// OVERLAPC-NOT: scf.forall (
// OVERLAPC: return
// Without the option, the same loop is peeled.
// CHECK-LABEL: func.func @overlapped
// CHECK: scf.forall ({{.+}}) = (0, 0) to (1, 192)
// CHECK: scf.forall ({{.+}}) = (0, 192) to (1, 200)
// CHECK: dat.rest_of_split
func.func @overlapped(%x: tensor<1x200x64xf32>) -> tensor<1x200x64xf32> {
  %e = tensor.empty() : tensor<1x200x64xf32>
  %r = scf.forall (%b, %i) = (0, 0) to (1, 200) step (1, 64) shared_outs(%o = %e) -> (tensor<1x200x64xf32>) {
    %n = affine.min affine_map<(d0) -> (-d0 + 200, 64)>(%i)
    %s = tensor.extract_slice %x[%b, %i, 0] [1, %n, 64] [1, 1, 1] : tensor<1x200x64xf32> to tensor<1x?x64xf32>
    %d = tensor.extract_slice %o[%b, %i, 0] [1, %n, 64] [1, 1, 1] : tensor<1x200x64xf32> to tensor<1x?x64xf32>
    %t = linalg.exp ins(%s : tensor<1x?x64xf32>) outs(%d : tensor<1x?x64xf32>) -> tensor<1x?x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%b, %i, 0] [1, %n, 64] [1, 1, 1] : tensor<1x?x64xf32> into tensor<1x200x64xf32>
    }
  } {dat.origin = "dat.relational_attention"}
  return %r : tensor<1x200x64xf32>
}

// -----

// overlap leaves a loop with several tiles besides the partial one (heads:
// its peeled loop has 8 iterations for the threads), and any loop that is
// not an attention tile loop (a projection's: its tiles would each be
// copied out of a tensor of their own), to the peeling.
// OVERLAP-LABEL: func.func @not_overlapped
// OVERLAP: scf.forall ({{.+}}) = (0, 0) to (8, 192)
// OVERLAP: scf.forall ({{.+}}) = (0, 192) to (8, 200)
// OVERLAP: dat.rest_of_split
// OVERLAP: scf.forall ({{.+}}) = (0) to (192)
// OVERLAP: scf.forall ({{.+}}) = (192) to (200)
// OVERLAP: dat.rest_of_split
// OVERLAP-NOT: dat.overlapped_last_tile
func.func @not_overlapped(%x: tensor<8x200x64xf32>, %y: tensor<200x64xf32>) -> (tensor<8x200x64xf32>, tensor<200x64xf32>) {
  %e = tensor.empty() : tensor<8x200x64xf32>
  %r = scf.forall (%h, %i) = (0, 0) to (8, 200) step (1, 64) shared_outs(%o = %e) -> (tensor<8x200x64xf32>) {
    %n = affine.min affine_map<(d0) -> (-d0 + 200, 64)>(%i)
    %s = tensor.extract_slice %x[%h, %i, 0] [1, %n, 64] [1, 1, 1] : tensor<8x200x64xf32> to tensor<1x?x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%h, %i, 0] [1, %n, 64] [1, 1, 1] : tensor<1x?x64xf32> into tensor<8x200x64xf32>
    }
  } {dat.origin = "dat.attention"}
  %e2 = tensor.empty() : tensor<200x64xf32>
  %r2 = scf.forall (%i) = (0) to (200) step (64) shared_outs(%o = %e2) -> (tensor<200x64xf32>) {
    %n = affine.min affine_map<(d0) -> (-d0 + 200, 64)>(%i)
    %s = tensor.extract_slice %y[%i, 0] [%n, 64] [1, 1] : tensor<200x64xf32> to tensor<?x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%i, 0] [%n, 64] [1, 1] : tensor<?x64xf32> into tensor<200x64xf32>
    }
  } {dat.origin = "projection"}
  return %r, %r2 : tensor<8x200x64xf32>, tensor<200x64xf32>
}

// -----

// Balanced for two threads: 264 rows are four full tiles and 8 rows. The
// four share evenly (two rounds); an overlapped fifth would add a third
// round, longer than the 8 rows alone after them: peeled. (200 rows, three
// full tiles, are overlapped: the fourth fills the second round.)
// THREADS-LABEL: func.func @even_full_tiles
// THREADS: scf.forall ({{.+}}) = (0) to (256) step (64)
// THREADS: scf.forall ({{.+}}) = (256) to (264) step (64)
// THREADS: dat.rest_of_split
// THREADS-NOT: dat.overlapped_last_tile
// THREADS-LABEL: func.func @odd_full_tiles
// THREADS: dat.overlapped_last_tile
// Without threads, both are overlapped.
// OVERLAP-LABEL: func.func @even_full_tiles
// OVERLAP: dat.overlapped_last_tile
func.func @even_full_tiles(%x: tensor<264x64xf32>) -> tensor<264x64xf32> {
  %e = tensor.empty() : tensor<264x64xf32>
  %r = scf.forall (%i) = (0) to (264) step (64) shared_outs(%o = %e) -> (tensor<264x64xf32>) {
    %n = affine.min affine_map<(d0) -> (-d0 + 264, 64)>(%i)
    %s = tensor.extract_slice %x[%i, 0] [%n, 64] [1, 1] : tensor<264x64xf32> to tensor<?x64xf32>
    %d = tensor.extract_slice %o[%i, 0] [%n, 64] [1, 1] : tensor<264x64xf32> to tensor<?x64xf32>
    %t = linalg.exp ins(%s : tensor<?x64xf32>) outs(%d : tensor<?x64xf32>) -> tensor<?x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%i, 0] [%n, 64] [1, 1] : tensor<?x64xf32> into tensor<264x64xf32>
    }
  } {dat.origin = "dat.attention"}
  return %r : tensor<264x64xf32>
}

func.func @odd_full_tiles(%x: tensor<200x64xf32>) -> tensor<200x64xf32> {
  %e = tensor.empty() : tensor<200x64xf32>
  %r = scf.forall (%i) = (0) to (200) step (64) shared_outs(%o = %e) -> (tensor<200x64xf32>) {
    %n = affine.min affine_map<(d0) -> (-d0 + 200, 64)>(%i)
    %s = tensor.extract_slice %x[%i, 0] [%n, 64] [1, 1] : tensor<200x64xf32> to tensor<?x64xf32>
    %d = tensor.extract_slice %o[%i, 0] [%n, 64] [1, 1] : tensor<200x64xf32> to tensor<?x64xf32>
    %t = linalg.exp ins(%s : tensor<?x64xf32>) outs(%d : tensor<?x64xf32>) -> tensor<?x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%i, 0] [%n, 64] [1, 1] : tensor<?x64xf32> into tensor<200x64xf32>
    }
  } {dat.origin = "dat.attention"}
  return %r : tensor<200x64xf32>
}

// -----

// A dynamic number of rows (a config's dynamic_dims) in tiles of 64: the
// full tiles end at n floordiv 64 * 64, where the tile size folds to 64
// (static slices once canonicalized); the last tile keeps its dynamic
// size, n - i.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[END:.+]] = affine.apply #{{.+}}()[%[[N]]]
// CHECK: %[[FULL:.+]] = scf.forall (%{{.+}}) = (0) to (%[[END]]) step (64)
// CHECK-NOT: affine.min
// CHECK: dat.origin = "rows"
// CHECK: %[[REST:.+]] = scf.forall (%[[J:.+]]) = (%[[END]]) to (%[[N]]) step (64) shared_outs(%{{.+}} = %[[FULL]])
// CHECK: affine.apply #{{.+}}(%[[J]])[%[[N]]]
// CHECK: {dat.origin = "rows", dat.rest_of_split}
// CHECK: return %[[REST]]
// CANON-LABEL: func.func @dynamic_rows
// CANON: tensor.extract_slice {{.+}} to tensor<64x64xf32>
// CANON: tensor.extract_slice {{.+}} to tensor<?x64xf32>
func.func @dynamic_rows(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%n) : tensor<?x64xf32>
  %r = scf.forall (%i) = (0) to (%n) step (64) shared_outs(%o = %e) -> (tensor<?x64xf32>) {
    %m = affine.min affine_map<(d0)[s0] -> (-d0 + s0, 64)>(%i)[%n]
    %s = tensor.extract_slice %x[%i, 0] [%m, 64] [1, 1] : tensor<?x64xf32> to tensor<?x64xf32>
    %t = linalg.exp ins(%s : tensor<?x64xf32>) outs(%s : tensor<?x64xf32>) -> tensor<?x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%i, 0] [%m, 64] [1, 1] : tensor<?x64xf32> into tensor<?x64xf32>
    }
  } {dat.origin = "rows"}
  return %r : tensor<?x64xf32>
}

// -----

// An attention tile loop over a dynamic number of rows, with overlap: where
// there is a whole tile (n >= 64), every tile is full and static, the last
// starting at n - 64 (min(i, n - 64)) and inserting its rows past the tile
// before it; else the loop as it was (its one partial tile). (Without the
// option: peeled, as @dynamic_rows.)
// OVERLAPC-LABEL: func.func @dynamic_overlapped
// OVERLAPC: %[[N:.+]] = tensor.dim %arg0, %c1
// OVERLAPC: %[[ENOUGH:.+]] = arith.cmpi sge, %[[N]], %c64
// OVERLAPC: scf.if %[[ENOUGH]]
// OVERLAPC: scf.forall (%[[I:.+]]) = (0) to (%[[N]]) step (64)
// OVERLAPC-DAG: %[[START:.+]] = affine.min #{{.+}}(%[[I]])[%[[N]]]
// OVERLAPC-DAG: %[[ROWS:.+]] = affine.min #{{.+}}(%[[I]])[%[[N]]]
// OVERLAPC: tensor.extract_slice %arg0[0, %[[START]], 0] [1, 64, 64]
// OVERLAPC: %[[E:.+]] = linalg.exp {{.*}} -> tensor<1x64x64xf32>
// OVERLAPC: %[[SKIP:.+]] = affine.apply #{{.+}}(%[[I]], %[[START]])
// OVERLAPC: %[[PAST:.+]] = tensor.extract_slice %[[E]][0, %[[SKIP]], 0] [1, %[[ROWS]], 64]
// OVERLAPC: tensor.parallel_insert_slice %[[PAST]] into %{{.+}}[0, %[[I]], 0] [1, %[[ROWS]], 64]
// OVERLAPC: dat.origin = "dat.attention", dat.overlapped_last_tile
// OVERLAPC: } else {
// OVERLAPC: scf.forall (%{{.+}}) = (0) to (%[[N]]) step (64)
// OVERLAPC: tensor.extract_slice %arg0{{.+}} to tensor<1x?x64xf32>
// OVERLAPC: {dat.origin = "dat.attention"}
// CHECK-LABEL: func.func @dynamic_overlapped
// CHECK: dat.rest_of_split
func.func @dynamic_overlapped(%x: tensor<1x?x64xf32>) -> tensor<1x?x64xf32> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c1 : tensor<1x?x64xf32>
  %e = tensor.empty(%n) : tensor<1x?x64xf32>
  %r = scf.forall (%i) = (0) to (%n) step (64) shared_outs(%o = %e) -> (tensor<1x?x64xf32>) {
    %m = affine.min affine_map<(d0)[s0] -> (-d0 + s0, 64)>(%i)[%n]
    %s = tensor.extract_slice %x[0, %i, 0] [1, %m, 64] [1, 1, 1] : tensor<1x?x64xf32> to tensor<1x?x64xf32>
    %d = tensor.extract_slice %o[0, %i, 0] [1, %m, 64] [1, 1, 1] : tensor<1x?x64xf32> to tensor<1x?x64xf32>
    %t = linalg.exp ins(%s : tensor<1x?x64xf32>) outs(%d : tensor<1x?x64xf32>) -> tensor<1x?x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[0, %i, 0] [1, %m, 64] [1, 1, 1] : tensor<1x?x64xf32> into tensor<1x?x64xf32>
    }
  } {dat.origin = "dat.attention"}
  return %r : tensor<1x?x64xf32>
}

// -----

// Several tiles besides the dynamic dimension (heads): their partial tiles
// run side by side, so the loop is peeled, not versioned.
// OVERLAP-LABEL: func.func @dynamic_heads_peeled
// OVERLAP-NOT: scf.if
// OVERLAP: dat.rest_of_split
func.func @dynamic_heads_peeled(%x: tensor<4x?x64xf32>) -> tensor<4x?x64xf32> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c1 : tensor<4x?x64xf32>
  %e = tensor.empty(%n) : tensor<4x?x64xf32>
  %r = scf.forall (%h, %i) = (0, 0) to (4, %n) step (1, 64) shared_outs(%o = %e) -> (tensor<4x?x64xf32>) {
    %m = affine.min affine_map<(d0)[s0] -> (-d0 + s0, 64)>(%i)[%n]
    %s = tensor.extract_slice %x[%h, %i, 0] [1, %m, 64] [1, 1, 1] : tensor<4x?x64xf32> to tensor<1x?x64xf32>
    %d = tensor.extract_slice %o[%h, %i, 0] [1, %m, 64] [1, 1, 1] : tensor<4x?x64xf32> to tensor<1x?x64xf32>
    %t = linalg.exp ins(%s : tensor<1x?x64xf32>) outs(%d : tensor<1x?x64xf32>) -> tensor<1x?x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%h, %i, 0] [1, %m, 64] [1, 1, 1] : tensor<1x?x64xf32> into tensor<4x?x64xf32>
    }
  } {dat.origin = "dat.attention"}
  return %r : tensor<4x?x64xf32>
}
