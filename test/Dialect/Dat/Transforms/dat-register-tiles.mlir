// RUN: dat-opt %s --split-input-file --dat-register-tiles --canonicalize | FileCheck %s
// RUN: dat-opt %s --split-input-file --dat-register-tiles="vector-width=8" --canonicalize | FileCheck %s --check-prefix=AVX2
// RUN: dat-opt %s --split-input-file --dat-register-tiles="block-weights=false" --canonicalize | FileCheck %s --check-prefix=NOBLOCK
// RUN: dat-opt %s --split-input-file --dat-register-tiles="pack-blocks=false" --canonicalize | FileCheck %s --check-prefix=NOPACK

// A projection y = x·Wᵀ (torch's [out, in] weight): the weight is packed
// ([in, out], transposed once where it is made, here at the function's
// entry), the output tiled to 8 rows × 32 lanes (two AVX-512 vectors) with
// the reduction innermost by steps of 4, the accumulator carried in
// registers, and each step 4 × 8 FMA outer products. The output was a
// zero fill read by nothing else: the accumulators start as zeros in
// registers, and the fill is gone.
// CHECK-LABEL: func.func @projection
// CHECK-SAME: (%[[X:.+]]: tensor<1x16x64xf32>, %[[W:.+]]: tensor<32x64xf32>)
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK-DAG: %[[WT:.+]] = linalg.transpose ins(%[[W]] : tensor<32x64xf32>) outs(%{{.+}} : tensor<64x32xf32>) permutation = [1, 0]
// CHECK-NOT: linalg.fill
// CHECK: scf.for %{{.+}} = %c0 to %c16 step %c8
// CHECK: scf.for %{{.+}} = %c0 to %c64 step %c4 iter_args(%{{.+}} = %[[ZERO]]) -> (vector<8x32xf32>)
// CHECK: vector.transfer_read %{{.+}} : tensor<1x8x4xf32>, vector<8x4xf32>
// CHECK: vector.transfer_read %{{.+}} : tensor<4x32xf32>, vector<4x32xf32>
// CHECK-COUNT-32: vector.fma {{.+}} : vector<32xf32>
// CHECK-NOT: vector.fma
// CHECK: scf.yield %{{.+}} : vector<8x32xf32>
// CHECK: vector.transfer_write %{{.+}} : vector<8x32xf32>, tensor<1x8x32xf32>
// CHECK-NOT: linalg.generic
// With AVX2 (8 lanes): 8 rows × 16 lanes, the same structure.
// AVX2-LABEL: func.func @projection
// AVX2: scf.for %{{.+}} = %c0 to %c64 step %c4 iter_args(%{{.+}} = %{{.+}}) -> (vector<8x16xf32>)
// AVX2: vector.fma {{.+}} : vector<16xf32>
func.func @projection(%x: tensor<1x16x64xf32>, %w: tensor<32x64xf32>) -> tensor<1x16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  %y = linalg.generic {
      indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                       affine_map<(b, m, n, k) -> (n, k)>,
                       affine_map<(b, m, n, k) -> (b, m, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x16x64xf32>, tensor<32x64xf32>)
      outs(%init : tensor<1x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x16x32xf32>
  return %y : tensor<1x16x32xf32>
}

// -----

// QKᵀ in a key loop: the key tile comes from a head-split transpose of a
// tensor made outside the loops, so the whole tensor is packed once
// (composed transpose: [b, h, d, n]) and the loop slices the packed one.
// The key loop slices blocks of 32 keys at multiples of 32: the packing is
// blocked by them, [b, h, n/32, d, 32], so that each block's Kᵀ is one
// contiguous 16 × 32 panel (rows N apart otherwise), and each step slices
// one block, rank-reduced to the unblocked tile's type.
// CHECK-LABEL: func.func @scores
// CHECK: %[[KX:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 32, 2, 16] : tensor<1x64x2x16xf32> into tensor<1x2x32x2x16xf32>
// CHECK: %[[KB:.+]] = linalg.transpose ins(%[[KX]] : tensor<1x2x32x2x16xf32>) outs(%{{.+}} : tensor<1x2x2x16x32xf32>) permutation = [0, 3, 1, 4, 2]
// CHECK: scf.for %[[J:.+]] = %c0 to %c64 step %c32
// CHECK: %[[BLOCK:.+]] = affine.apply #{{.+}}(%[[J]])
// CHECK: tensor.extract_slice %[[KB]][0, 1, %[[BLOCK]], 0, 0] [1, 1, 1, 16, 32] [1, 1, 1, 1, 1] : tensor<1x2x2x16x32xf32> to tensor<1x1x16x32xf32>
// CHECK: vector.fma {{.+}} : vector<32xf32>
// Without pack-blocks: packed whole, [b, h, d, n].
// NOPACK-LABEL: func.func @scores
// NOPACK: %[[KT:.+]] = linalg.transpose ins(%{{.+}} : tensor<1x64x2x16xf32>) outs(%{{.+}} : tensor<1x2x16x64xf32>) permutation = [0, 2, 3, 1]
// NOPACK: scf.for
// NOPACK: tensor.extract_slice %[[KT]]{{.+}} : tensor<1x2x16x64xf32> to tensor<1x1x16x32xf32>
func.func @scores(%q: tensor<1x1x8x16xf32>, %k: tensor<1x64x2x16xf32>, %acc: tensor<1x1x8x32xf32>) -> tensor<1x1x8x32xf32> {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %r = scf.for %j = %c0 to %c64 step %c32 iter_args(%a = %acc) -> tensor<1x1x8x32xf32> {
    %ks = tensor.extract_slice %k[0, %j, 1, 0] [1, 32, 1, 16] [1, 1, 1, 1] : tensor<1x64x2x16xf32> to tensor<1x32x1x16xf32>
    %e = tensor.empty() : tensor<1x1x32x16xf32>
    %kt = linalg.transpose ins(%ks : tensor<1x32x1x16xf32>) outs(%e : tensor<1x1x32x16xf32>) permutation = [0, 2, 1, 3]
    %s = linalg.generic {
        indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>,
                         affine_map<(b, h, m, n, d) -> (b, h, n, d)>,
                         affine_map<(b, h, m, n, d) -> (b, h, m, n)>],
        iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
        ins(%q, %kt : tensor<1x1x8x16xf32>, tensor<1x1x32x16xf32>)
        outs(%a : tensor<1x1x8x32xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %o, %p : f32
      linalg.yield %t : f32
    } -> tensor<1x1x8x32xf32>
    scf.yield %s : tensor<1x1x8x32xf32>
  }
  return %r : tensor<1x1x8x32xf32>
}

// -----

// One block at a constant offset (a peeled key loop's rest): not blocked —
// a blocked copy for one block would sit beside the main loop's packing.
// CHECK-LABEL: func.func @scores_rest
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.transpose ins(%{{.+}} : tensor<1x64x2x16xf32>) outs(%{{.+}} : tensor<1x2x16x64xf32>) permutation = [0, 2, 3, 1]
// CHECK: tensor.extract_slice %{{.+}}[0, 1, 0, 32] [1, 1, 16, 32] [1, 1, 1, 1] : tensor<1x2x16x64xf32> to tensor<1x1x16x32xf32>
// CHECK: scf.for
func.func @scores_rest(%q: tensor<1x1x8x16xf32>, %k: tensor<1x64x2x16xf32>, %acc: tensor<1x1x8x32xf32>, %n: index) -> tensor<1x1x8x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %acc) -> tensor<1x1x8x32xf32> {
    %ks = tensor.extract_slice %k[0, 32, 1, 0] [1, 32, 1, 16] [1, 1, 1, 1] : tensor<1x64x2x16xf32> to tensor<1x32x1x16xf32>
    %e = tensor.empty() : tensor<1x1x32x16xf32>
    %kt = linalg.transpose ins(%ks : tensor<1x32x1x16xf32>) outs(%e : tensor<1x1x32x16xf32>) permutation = [0, 2, 1, 3]
    %s = linalg.generic {
        indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>,
                         affine_map<(b, h, m, n, d) -> (b, h, n, d)>,
                         affine_map<(b, h, m, n, d) -> (b, h, m, n)>],
        iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
        ins(%q, %kt : tensor<1x1x8x16xf32>, tensor<1x1x32x16xf32>)
        outs(%a : tensor<1x1x8x32xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %o, %p : f32
      linalg.yield %t : f32
    } -> tensor<1x1x8x32xf32>
    scf.yield %s : tensor<1x1x8x32xf32>
  }
  return %r : tensor<1x1x8x32xf32>
}

// -----

// Extents with no divisor of a few lanes or rows (6 outputs, 17 rows, as
// ViT's 16 patches + 1 class token make): along the vector, a partial tile
// whose transfers are masked (in_bounds false) instead of falling back to
// scalar loops; one 8-lane vector per row leaves room for 16 rows of
// accumulators. The rows are split: 16 in a static tile, the last one in
// its own, so that no row is masked.
// CHECK-LABEL: func.func @odd
// CHECK: %[[ACC:.+]] = vector.transfer_read {{.+}} {in_bounds = [true, false]} : tensor<16x6xf32>, vector<16x8xf32>
// CHECK: scf.for {{.+}} iter_args(%{{.+}} = %[[ACC]]) -> (vector<16x8xf32>)
// CHECK: vector.transfer_read {{.+}} {in_bounds = [true, true]} : tensor<16x4xf32>, vector<16x4xf32>
// CHECK: vector.transfer_read {{.+}} {in_bounds = [true, false]} : tensor<4x6xf32>, vector<4x8xf32>
// CHECK: vector.fma {{.+}} : vector<8xf32>
// CHECK: vector.transfer_write {{.+}} {in_bounds = [true, false]} : vector<16x8xf32>, tensor<16x6xf32>
// CHECK: tensor.extract_slice %{{.+}}[16, 0] [1, 8] [1, 1] : tensor<17x8xf32> to tensor<1x8xf32>
// CHECK: scf.for {{.+}} -> (vector<8xf32>)
// CHECK: vector.transfer_write {{.+}} : vector<8xf32>, tensor<1x6xf32>
func.func @odd(%x: tensor<17x8xf32>, %w: tensor<8x6xf32>, %o: tensor<17x6xf32>) -> tensor<17x6xf32> {
  %y = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<17x8xf32>, tensor<8x6xf32>) outs(%o : tensor<17x6xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<17x6xf32>
  return %y : tensor<17x6xf32>
}

// -----

// Fewer than 4 outputs along the vector dimension: left to the loops.
// CHECK-LABEL: func.func @narrow
// CHECK-NOT: vector.
// CHECK: linalg.generic
func.func @narrow(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %o: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %y = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%o : tensor<4x3xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// The online softmax's row maximum inside a key loop: one row at a time,
// vectorized (a vector reduction, not a scalar loop).
// CHECK-LABEL: func.func @row_max
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.transfer_read {{.+}} vector<64xf32>
// CHECK: vector.reduction <maxnumf>
// CHECK-NOT: linalg.generic
func.func @row_max(%s: tensor<1x1x8x64xf32>, %m: tensor<1x1x8xf32>) -> tensor<1x1x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %j = %c0 to %c2 step %c1 iter_args(%a = %m) -> tensor<1x1x8xf32> {
    %y = linalg.generic {
        indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>,
                         affine_map<(b, h, i, j) -> (b, h, i)>],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%s : tensor<1x1x8x64xf32>) outs(%a : tensor<1x1x8xf32>) {
    ^bb0(%x: f32, %o: f32):
      %t = arith.maxnumf %x, %o : f32
      linalg.yield %t : f32
    } -> tensor<1x1x8xf32>
    scf.yield %y : tensor<1x1x8xf32>
  }
  return %r : tensor<1x1x8xf32>
}

// -----

// A transpose of a tile loop's result (the attention heads merged back,
// [B, H, N, D] → [B, N, H, D]) moves into the loop. A tile of one head moves
// only unit dimensions ([1, 1, 8, 8] → [1, 8, 1, 8]): it is made in its
// place in the transposed result (a rank-reduced slice, viewed as the tile)
// and inserted back as it is, with no transpose and, once bufferized, no
// copy (dat-register-tiles-in-place.mlir).
// CHECK-LABEL: func.func @merge_heads
// CHECK: %[[E:.+]] = tensor.empty() : tensor<1x16x2x8xf32>
// CHECK: scf.forall (%[[H:.+]], %[[Q:.+]]) = (0, 0) to (2, 16) step (1, 8) shared_outs(%[[O:.+]] = %[[E]]) -> (tensor<1x16x2x8xf32>)
// CHECK: %[[PLACE:.+]] = tensor.extract_slice %[[O]][0, %[[Q]], %[[H]], 0] [1, 8, 1, 8] [1, 1, 1, 1] : tensor<1x16x2x8xf32> to tensor<8x8xf32>
// CHECK: %[[TILE:.+]] = tensor.expand_shape %[[PLACE]] {{.+}} into tensor<1x1x8x8xf32>
// CHECK: %[[R:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[TILE]])
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[R]] {{.+}} into tensor<8x8xf32>
// CHECK: tensor.parallel_insert_slice %[[FLAT]] into %[[O]][0, %[[Q]], %[[H]], 0] [1, 8, 1, 8] [1, 1, 1, 1] : tensor<8x8xf32> into tensor<1x16x2x8xf32>
// CHECK-NOT: linalg.transpose
func.func @merge_heads(%x: tensor<1x2x16x8xf32>) -> tensor<1x16x2x8xf32> {
  %e = tensor.empty() : tensor<1x2x16x8xf32>
  %r = scf.forall (%h, %q) = (0, 0) to (2, 16) step (1, 8) shared_outs(%o = %e) -> (tensor<1x2x16x8xf32>) {
    %in = tensor.extract_slice %x[0, %h, %q, 0] [1, 1, 8, 8] [1, 1, 1, 1] : tensor<1x2x16x8xf32> to tensor<1x1x8x8xf32>
    %out = tensor.extract_slice %o[0, %h, %q, 0] [1, 1, 8, 8] [1, 1, 1, 1] : tensor<1x2x16x8xf32> to tensor<1x1x8x8xf32>
    %t = linalg.generic {
        indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>,
                         affine_map<(a, b, c, d) -> (a, b, c, d)>],
        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%in : tensor<1x1x8x8xf32>) outs(%out : tensor<1x1x8x8xf32>) {
    ^bb0(%a: f32, %b: f32):
      %n = arith.negf %a : f32
      linalg.yield %n : f32
    } -> tensor<1x1x8x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[0, %h, %q, 0] [1, 1, 8, 8] [1, 1, 1, 1] : tensor<1x1x8x8xf32> into tensor<1x2x16x8xf32>
    }
  }
  %m = tensor.empty() : tensor<1x16x2x8xf32>
  %y = linalg.transpose ins(%r : tensor<1x2x16x8xf32>) outs(%m : tensor<1x16x2x8xf32>) permutation = [0, 2, 1, 3]
  return %y : tensor<1x16x2x8xf32>
}

// -----

// PV in a key loop: the value tile is a head split of [B, N, H, D] made in
// the loop. The whole tensor is packed head-major once, [B, H, N, D], before
// the loop (a block's rows contiguous instead of H·D apart; the packing moves
// into the loop that makes V where there is one), and no copy is made per
// key block.
// CHECK-LABEL: func.func @values
// CHECK: %[[VT:.+]] = linalg.transpose ins(%{{.+}} : tensor<1x64x2x32xf32>) outs(%{{.+}} : tensor<1x2x64x32xf32>) permutation = [0, 2, 1, 3]
// CHECK: scf.for
// CHECK-NOT: linalg.transpose
// CHECK: tensor.extract_slice %[[VT]][0, 1, %{{.+}}, 0] [1, 1, 32, 32]
// CHECK: vector.transfer_read %{{.+}} : tensor<1x1x4x32xf32>, vector<4x32xf32>
// CHECK: vector.fma {{.+}} : vector<32xf32>
// Without pack-blocks it reads V where it lies (a permuted map).
// NOPACK-LABEL: func.func @values
// NOPACK-NOT: linalg.transpose
// NOPACK: vector.transfer_read %{{.+}} : tensor<1x4x1x32xf32>, vector<4x32xf32>
func.func @values(%p: tensor<1x1x8x32xf32>, %v: tensor<1x64x2x32xf32>, %acc: tensor<1x1x8x32xf32>) -> tensor<1x1x8x32xf32> {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %r = scf.for %j = %c0 to %c64 step %c32 iter_args(%a = %acc) -> tensor<1x1x8x32xf32> {
    %vs = tensor.extract_slice %v[0, %j, 1, 0] [1, 32, 1, 32] [1, 1, 1, 1] : tensor<1x64x2x32xf32> to tensor<1x32x1x32xf32>
    %e = tensor.empty() : tensor<1x1x32x32xf32>
    %vt = linalg.transpose ins(%vs : tensor<1x32x1x32xf32>) outs(%e : tensor<1x1x32x32xf32>) permutation = [0, 2, 1, 3]
    %o = linalg.generic {
        indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, n)>,
                         affine_map<(b, h, m, n, d) -> (b, h, n, d)>,
                         affine_map<(b, h, m, n, d) -> (b, h, m, d)>],
        iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
        ins(%p, %vt : tensor<1x1x8x32xf32>, tensor<1x1x32x32xf32>)
        outs(%a : tensor<1x1x8x32xf32>) {
    ^bb0(%x: f32, %y: f32, %z: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %z, %m : f32
      linalg.yield %s : f32
    } -> tensor<1x1x8x32xf32>
    scf.yield %o : tensor<1x1x8x32xf32>
  }
  return %r : tensor<1x1x8x32xf32>
}

// -----

// A tile loop split into full tiles and a partial last one
// (dat-peel-tile-loops: the second is marked dat.rest_of_split, its tiles
// disjoint from the first's): the transpose of the result moves into both
// loops, the second filling the first one's transposed result.
// CHECK-LABEL: func.func @split_loop_transposed
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x16x200xf32>
// CHECK: %[[FULL:.+]] = scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (2, 192) step (1, 64) shared_outs(%[[O1:.+]] = %[[E]]) -> (tensor<2x16x200xf32>)
// CHECK: scf.for %{{.+}} = %c0 to %c64 step %c16
// CHECK: vector.transfer_read {{.+}} : tensor<{{.+}}>, vector<16x16xf32>
// CHECK: vector.shuffle
// CHECK: vector.transfer_write {{.+}} : vector<16x16xf32>, tensor<{{.+}}>
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[O1]][%{{.+}}, 0, %{{.+}}] [1, 16, 64]
// CHECK: %[[REST:.+]] = scf.forall (%{{.+}}) in (2) shared_outs(%[[O2:.+]] = %[[FULL]]) -> (tensor<2x16x200xf32>)
// CHECK: linalg.transpose ins(%{{.+}} : tensor<1x8x16xf32>) outs(%{{.+}} : tensor<1x16x8xf32>) permutation = [0, 2, 1]
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[O2]][%{{.+}}, 0, 192] [1, 16, 8]
// CHECK-NOT: linalg.transpose
// CHECK: return %[[REST]]
// Without the mark, the second loop may read what the first wrote (an
// update in place): the transpose stays after the loops.
// CHECK-LABEL: func.func @chained_loops_transposed
// CHECK-COUNT-2: scf.forall
// CHECK: linalg.transpose ins(%{{.+}} : tensor<2x200x16xf32>)
func.func @split_loop_transposed(%x: tensor<2x200x16xf32>) -> tensor<2x16x200xf32> {
  %e = tensor.empty() : tensor<2x200x16xf32>
  %full = scf.forall (%h, %i) = (0, 0) to (2, 192) step (1, 64) shared_outs(%o = %e) -> (tensor<2x200x16xf32>) {
    %s = tensor.extract_slice %x[%h, %i, 0] [1, 64, 16] [1, 1, 1] : tensor<2x200x16xf32> to tensor<1x64x16xf32>
    %d = tensor.extract_slice %o[%h, %i, 0] [1, 64, 16] [1, 1, 1] : tensor<2x200x16xf32> to tensor<1x64x16xf32>
    %t = linalg.exp ins(%s : tensor<1x64x16xf32>) outs(%d : tensor<1x64x16xf32>) -> tensor<1x64x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%h, %i, 0] [1, 64, 16] [1, 1, 1] : tensor<1x64x16xf32> into tensor<2x200x16xf32>
    }
  }
  %rest = scf.forall (%h) in (2) shared_outs(%o = %full) -> (tensor<2x200x16xf32>) {
    %d = tensor.extract_slice %o[%h, 192, 0] [1, 8, 16] [1, 1, 1] : tensor<2x200x16xf32> to tensor<1x8x16xf32>
    %s = tensor.extract_slice %x[%h, 192, 0] [1, 8, 16] [1, 1, 1] : tensor<2x200x16xf32> to tensor<1x8x16xf32>
    %t = linalg.exp ins(%s : tensor<1x8x16xf32>) outs(%d : tensor<1x8x16xf32>) -> tensor<1x8x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%h, 192, 0] [1, 8, 16] [1, 1, 1] : tensor<1x8x16xf32> into tensor<2x200x16xf32>
    }
  } {dat.rest_of_split}
  %te = tensor.empty() : tensor<2x16x200xf32>
  %tr = linalg.transpose ins(%rest : tensor<2x200x16xf32>) outs(%te : tensor<2x16x200xf32>) permutation = [0, 2, 1]
  return %tr : tensor<2x16x200xf32>
}

func.func @chained_loops_transposed(%x: tensor<2x200x16xf32>) -> tensor<2x16x200xf32> {
  %e = tensor.empty() : tensor<2x200x16xf32>
  %first = scf.forall (%h) in (2) shared_outs(%o = %e) -> (tensor<2x200x16xf32>) {
    %s = tensor.extract_slice %x[%h, 0, 0] [1, 200, 16] [1, 1, 1] : tensor<2x200x16xf32> to tensor<1x200x16xf32>
    %d = tensor.extract_slice %o[%h, 0, 0] [1, 200, 16] [1, 1, 1] : tensor<2x200x16xf32> to tensor<1x200x16xf32>
    %t = linalg.exp ins(%s : tensor<1x200x16xf32>) outs(%d : tensor<1x200x16xf32>) -> tensor<1x200x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%h, 0, 0] [1, 200, 16] [1, 1, 1] : tensor<1x200x16xf32> into tensor<2x200x16xf32>
    }
  }
  %second = scf.forall (%h) in (2) shared_outs(%o = %first) -> (tensor<2x200x16xf32>) {
    %d = tensor.extract_slice %o[%h, 0, 0] [1, 200, 16] [1, 1, 1] : tensor<2x200x16xf32> to tensor<1x200x16xf32>
    %t = linalg.exp ins(%d : tensor<1x200x16xf32>) outs(%d : tensor<1x200x16xf32>) -> tensor<1x200x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%h, 0, 0] [1, 200, 16] [1, 1, 1] : tensor<1x200x16xf32> into tensor<2x200x16xf32>
    }
  }
  %te = tensor.empty() : tensor<2x16x200xf32>
  %tr = linalg.transpose ins(%second : tensor<2x200x16xf32>) outs(%te : tensor<2x16x200xf32>) permutation = [0, 2, 1]
  return %tr : tensor<2x16x200xf32>
}

// -----

// The partial last tile of a split loop whose loop of one iteration was
// folded away (straight-line code inserting 8 rows into the full tiles'
// result, past every row the loop writes: its outs, a slice there, are
// undefined): the transpose moves into the loop and into the folded tile.
// CHECK-LABEL: func.func @folded_rest_transposed
// CHECK: %[[E:.+]] = tensor.empty() : tensor<16x200xf32>
// CHECK: %[[FULL:.+]] = scf.forall (%{{.+}}) = (0) to (192) step (64) shared_outs(%{{.+}} = %[[E]]) -> (tensor<16x200xf32>)
// CHECK: scf.for %{{.+}} = %c0 to %c64 step %c16
// CHECK: vector.transfer_read {{.+}} : tensor<{{.+}}>, vector<16x16xf32>
// CHECK: vector.shuffle
// CHECK: vector.transfer_write {{.+}} : vector<16x16xf32>, tensor<{{.+}}>
// CHECK: %[[T:.+]] = linalg.transpose ins(%{{.+}} : tensor<8x16xf32>) outs(%{{.+}} : tensor<16x8xf32>) permutation = [1, 0]
// CHECK: %[[R:.+]] = tensor.insert_slice %[[T]] into %[[FULL]][0, 192] [16, 8] [1, 1]
// CHECK-NOT: linalg.transpose
// CHECK: return %[[R]]
// A tile that reads the loop's result (rows the loop wrote: an update in
// place) keeps the transpose after it.
// CHECK-LABEL: func.func @folded_rest_reads
// CHECK: tensor.insert_slice
// CHECK: linalg.transpose ins(%{{.+}} : tensor<200x16xf32>)
func.func @folded_rest_transposed(%x: tensor<200x16xf32>) -> tensor<16x200xf32> {
  %e = tensor.empty() : tensor<200x16xf32>
  %full = scf.forall (%i) = (0) to (192) step (64) shared_outs(%o = %e) -> (tensor<200x16xf32>) {
    %s = tensor.extract_slice %x[%i, 0] [64, 16] [1, 1] : tensor<200x16xf32> to tensor<64x16xf32>
    %d = tensor.extract_slice %o[%i, 0] [64, 16] [1, 1] : tensor<200x16xf32> to tensor<64x16xf32>
    %t = linalg.exp ins(%s : tensor<64x16xf32>) outs(%d : tensor<64x16xf32>) -> tensor<64x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%i, 0] [64, 16] [1, 1] : tensor<64x16xf32> into tensor<200x16xf32>
    }
  } {dat.origin = "projection"}
  %d = tensor.extract_slice %full[192, 0] [8, 16] [1, 1] : tensor<200x16xf32> to tensor<8x16xf32>
  %s = tensor.extract_slice %x[192, 0] [8, 16] [1, 1] : tensor<200x16xf32> to tensor<8x16xf32>
  %t = linalg.exp ins(%s : tensor<8x16xf32>) outs(%d : tensor<8x16xf32>) -> tensor<8x16xf32>
  %rest = tensor.insert_slice %t into %full[192, 0] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<200x16xf32>
  %te = tensor.empty() : tensor<16x200xf32>
  %tr = linalg.transpose ins(%rest : tensor<200x16xf32>) outs(%te : tensor<16x200xf32>) permutation = [1, 0]
  return %tr : tensor<16x200xf32>
}

func.func @folded_rest_reads(%x: tensor<200x16xf32>) -> tensor<16x200xf32> {
  %e = tensor.empty() : tensor<200x16xf32>
  %full = scf.forall (%i) = (0) to (192) step (64) shared_outs(%o = %e) -> (tensor<200x16xf32>) {
    %s = tensor.extract_slice %x[%i, 0] [64, 16] [1, 1] : tensor<200x16xf32> to tensor<64x16xf32>
    %d = tensor.extract_slice %o[%i, 0] [64, 16] [1, 1] : tensor<200x16xf32> to tensor<64x16xf32>
    %t = linalg.exp ins(%s : tensor<64x16xf32>) outs(%d : tensor<64x16xf32>) -> tensor<64x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%i, 0] [64, 16] [1, 1] : tensor<64x16xf32> into tensor<200x16xf32>
    }
  } {dat.origin = "projection"}
  %d = tensor.extract_slice %full[128, 0] [8, 16] [1, 1] : tensor<200x16xf32> to tensor<8x16xf32>
  %t = linalg.negf ins(%d : tensor<8x16xf32>) outs(%d : tensor<8x16xf32>) -> tensor<8x16xf32>
  %rest = tensor.insert_slice %t into %full[128, 0] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<200x16xf32>
  %te = tensor.empty() : tensor<16x200xf32>
  %tr = linalg.transpose ins(%rest : tensor<200x16xf32>) outs(%te : tensor<16x200xf32>) permutation = [1, 0]
  return %tr : tensor<16x200xf32>
}

// -----

// Other readers of the loop's result that are slices after the transpose
// (a causal tile's peeled key block, a partial key block the vector layer
// leaves unpacked) read the transposed tensor, transposed back: the
// transpose still moves into the loop.
// CHECK-LABEL: func.func @slices_read_transposed
// CHECK: %[[FULL:.+]] = scf.forall (%{{.+}}) = (0) to (128) step (64) shared_outs(%{{.+}} = %{{.+}}) -> (tensor<16x128xf32>)
// CHECK: vector.shuffle
// CHECK: %[[PART:.+]] = tensor.extract_slice %[[FULL]][0, %{{.+}}] [16, %{{.+}}] [1, 1] : tensor<16x128xf32> to tensor<16x?xf32>
// CHECK: %[[BACK:.+]] = linalg.transpose ins(%[[PART]] : tensor<16x?xf32>) outs(%{{.+}} : tensor<?x16xf32>) permutation = [1, 0]
// CHECK: return %[[FULL]], %[[BACK]]
// A reader before the transpose keeps it after the loop.
// CHECK-LABEL: func.func @slice_before_transpose
// CHECK: scf.forall
// CHECK: linalg.transpose ins(%{{.+}} : tensor<128x16xf32>)
func.func @slices_read_transposed(%x: tensor<128x16xf32>, %n: index, %m: index) -> (tensor<16x128xf32>, tensor<?x16xf32>) {
  %e = tensor.empty() : tensor<128x16xf32>
  %full = scf.forall (%i) = (0) to (128) step (64) shared_outs(%o = %e) -> (tensor<128x16xf32>) {
    %s = tensor.extract_slice %x[%i, 0] [64, 16] [1, 1] : tensor<128x16xf32> to tensor<64x16xf32>
    %d = tensor.extract_slice %o[%i, 0] [64, 16] [1, 1] : tensor<128x16xf32> to tensor<64x16xf32>
    %t = linalg.exp ins(%s : tensor<64x16xf32>) outs(%d : tensor<64x16xf32>) -> tensor<64x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%i, 0] [64, 16] [1, 1] : tensor<64x16xf32> into tensor<128x16xf32>
    }
  } {dat.origin = "projection"}
  %te = tensor.empty() : tensor<16x128xf32>
  %tr = linalg.transpose ins(%full : tensor<128x16xf32>) outs(%te : tensor<16x128xf32>) permutation = [1, 0]
  %r = tensor.extract_slice %full[%n, 0] [%m, 16] [1, 1] : tensor<128x16xf32> to tensor<?x16xf32>
  return %tr, %r : tensor<16x128xf32>, tensor<?x16xf32>
}

func.func @slice_before_transpose(%x: tensor<128x16xf32>, %n: index, %m: index) -> (tensor<16x128xf32>, tensor<?x16xf32>) {
  %e = tensor.empty() : tensor<128x16xf32>
  %full = scf.forall (%i) = (0) to (128) step (64) shared_outs(%o = %e) -> (tensor<128x16xf32>) {
    %s = tensor.extract_slice %x[%i, 0] [64, 16] [1, 1] : tensor<128x16xf32> to tensor<64x16xf32>
    %d = tensor.extract_slice %o[%i, 0] [64, 16] [1, 1] : tensor<128x16xf32> to tensor<64x16xf32>
    %t = linalg.exp ins(%s : tensor<64x16xf32>) outs(%d : tensor<64x16xf32>) -> tensor<64x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%i, 0] [64, 16] [1, 1] : tensor<64x16xf32> into tensor<128x16xf32>
    }
  } {dat.origin = "projection"}
  %r = tensor.extract_slice %full[%n, 0] [%m, 16] [1, 1] : tensor<128x16xf32> to tensor<?x16xf32>
  %te = tensor.empty() : tensor<16x128xf32>
  %tr = linalg.transpose ins(%full : tensor<128x16xf32>) outs(%te : tensor<16x128xf32>) permutation = [1, 0]
  return %tr, %r : tensor<16x128xf32>, tensor<?x16xf32>
}

// -----

// A row maximum in a tile loop (the online softmax's) is a vector
// reduction that may ignore NaN and the sign of zero (fastmath nnan, nsz):
// IEEE maximum's checks would make it a serial chain of scalar compares.
// CHECK-LABEL: func.func @row_max_in_loop
// CHECK: vector.reduction <maximumf>, %{{.+}}, %{{.+}} fastmath<nnan,nsz> : vector<64xf32> into f32
func.func @row_max_in_loop(%s: tensor<4x64xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<4xf32>) {
    %m = linalg.generic {
        indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
        iterator_types = ["parallel", "reduction"]}
        ins(%s : tensor<4x64xf32>) outs(%acc : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      linalg.yield %x : f32
    } -> tensor<4xf32>
    scf.yield %m : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A large transpose left outside the tile loops runs as a tile loop over
// its outer dimensions (8 heads), on every thread; a transpose of a
// function argument (a weight's packing, for dat-pack-weights) stays.
// CHECK-LABEL: func.func @parallel_transpose
// CHECK: scf.forall (%{{.+}}) in (8)
// CHECK: scf.for
// CHECK: vector.transfer_read {{.+}} : tensor<{{.+}}>, vector<16x16xf32>
// CHECK: vector.shuffle
// CHECK: vector.transfer_write {{.+}} : vector<16x16xf32>, tensor<{{.+}}>
// CHECK: {dat.origin = "transpose"}
// CHECK: linalg.transpose ins(%arg1 : tensor<256x256xf32>)
func.func @parallel_transpose(%x: tensor<8x64x1024xf32>, %w: tensor<256x256xf32>) -> (tensor<8x1024x64xf32>, tensor<256x256xf32>) {
  %k = arith.negf %x : tensor<8x64x1024xf32>
  %e = tensor.empty() : tensor<8x1024x64xf32>
  %t = linalg.transpose ins(%k : tensor<8x64x1024xf32>) outs(%e : tensor<8x1024x64xf32>) permutation = [0, 2, 1]
  %we = tensor.empty() : tensor<256x256xf32>
  %wt = linalg.transpose ins(%w : tensor<256x256xf32>) outs(%we : tensor<256x256xf32>) permutation = [1, 0]
  return %t, %wt : tensor<8x1024x64xf32>, tensor<256x256xf32>
}

// -----

// A projection whose weight has two register panels (64 outputs): the
// weight is blocked, [64, 64] → [2, 32, 64] → [2, 64, 32] (panel, in,
// lane), each 64 × 32 panel contiguous; the contraction loops over (panel,
// row tile: each panel read by every row tile while it is in L1) with the
// lane as one more loop, on the output expanded to [1, 16, 2, 32] and
// collapsed back; the zero fill still starts the accumulators in registers
// (the reduction, 64, is one block of the reduction tile).
// CHECK-LABEL: func.func @blocked_projection
// CHECK-SAME: (%[[X:.+]]: tensor<1x16x64xf32>, %[[W:.+]]: tensor<64x64xf32>)
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK: %[[WX:.+]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2]] output_shape [2, 32, 64] : tensor<64x64xf32> into tensor<2x32x64xf32>
// CHECK: %[[WB:.+]] = linalg.transpose ins(%[[WX]] : tensor<2x32x64xf32>) outs(%{{.+}} : tensor<2x64x32xf32>) permutation = [0, 2, 1]
// CHECK: %[[OUT:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2, 3]] output_shape [1, 16, 2, 32]
// CHECK: scf.for %[[P:.+]] = %c0 to %c2 step %c1 iter_args(%{{.+}} = %[[OUT]])
// CHECK: scf.for %[[M:.+]] = %c0 to %c16 step %c8
// CHECK: scf.for %[[K:.+]] = %c0 to %c64 step %c4 iter_args(%{{.+}} = %[[ZERO]]) -> (vector<8x32xf32>)
// CHECK: tensor.extract_slice %[[WB]][%[[P]], %[[K]], 0] [1, 4, 32] [1, 1, 1] : tensor<2x64x32xf32> to tensor<1x4x32xf32>
// CHECK-COUNT-32: vector.fma {{.+}} : vector<32xf32>
// CHECK: vector.transfer_write %{{.+}} : vector<8x32xf32>, tensor<1x8x1x32xf32>
// CHECK: tensor.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : tensor<1x16x2x32xf32> into tensor<1x16x64xf32>
// NOBLOCK-LABEL: func.func @blocked_projection
// NOBLOCK-NOT: tensor.expand_shape
// NOBLOCK: linalg.transpose ins(%{{.+}} : tensor<64x64xf32>) outs(%{{.+}} : tensor<64x64xf32>) permutation = [1, 0]
// NOBLOCK-NOT: tensor.expand_shape
func.func @blocked_projection(%x: tensor<1x16x64xf32>, %w: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
  %y = linalg.generic {
      indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                       affine_map<(b, m, n, k) -> (n, k)>,
                       affine_map<(b, m, n, k) -> (b, m, n)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x16x64xf32>, tensor<64x64xf32>)
      outs(%init : tensor<1x16x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

// Rows that the register budget does not divide (8 rows, 20 of them): the
// contraction is split into 16 rows and the static rest of 4, each tiled
// without masks (5 rows, the largest divisor, would leave 6 of the 16
// accumulators unused).
// CHECK-LABEL: func.func @split_rows
// CHECK: scf.for %{{.+}} = %c0 to %c16 step %c8
// CHECK: scf.for {{.+}} -> (vector<8x32xf32>)
// CHECK: vector.transfer_read {{.+}} {in_bounds = [true, true]} : tensor<8x4xf32>, vector<8x4xf32>
// CHECK: tensor.extract_slice %{{.+}}[16, 0] [4, 64] [1, 1] : tensor<20x64xf32> to tensor<4x64xf32>
// CHECK: scf.for {{.+}} -> (vector<4x32xf32>)
// CHECK: vector.transfer_read {{.+}} {in_bounds = [true, true]} : tensor<4x4xf32>, vector<4x4xf32>
// CHECK-NOT: in_bounds = [false
func.func @split_rows(%x: tensor<20x64xf32>, %w: tensor<64x32xf32>, %o: tensor<20x32xf32>) -> tensor<20x32xf32> {
  %y = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<20x64xf32>, tensor<64x32xf32>)
      outs(%o : tensor<20x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<20x32xf32>
  return %y : tensor<20x32xf32>
}

// -----

// The relational tile's Σ_j p[h,i,j]·r[l,i,j] for 4 relations: as an outer
// product its vector would be the 4 relations (4-lane FMAs, each relation's
// value gathered from rows 64 floats apart). The keys, innermost in both
// inputs and in the loops, fill whole registers: each (h, i) reads its row
// of p and the 4 relations' rows along j, and sums the products (dot
// products). Each relation's 64 products are multiply-added into one
// register (`contract`: FMAs); the 4 registers' horizontal sums share one
// shuffle tree (TransposingReduction.cpp): pairs of registers folded into
// one (lower halves + upper halves) twice, two in-group steps, then lanes
// 0, 4, 8 and 12 are the 4 sums. The heads' loop is innermost: r does not
// index it, so the relations' rows of one i (4 × 64 floats here; 12 × 64
// in the 12-relation tile) stay in L1 while the heads' rows of p pass
// (with the heads outer, every head read all of r again: L2 at the suite's
// sizes; 1.03-1.05x, BENCHMARKS.md).
// CHECK-LABEL: func.func @relation_sums
// CHECK: scf.for
// CHECK: scf.for %{{.+}} = %c0 to %c8 step %c1
// CHECK: scf.for %{{.+}} = %c0 to %c2 step %c1
// CHECK: vector.transfer_read {{.+}} : tensor<1x4x1x64xf32>, vector<4x64xf32>
// CHECK-COUNT-16: arith.mulf {{.+}} fastmath<contract> : vector<16xf32>
// CHECK: vector.shuffle {{.+}} [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23] : vector<16xf32>, vector<16xf32>
// CHECK: vector.shuffle {{.+}} [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31] : vector<16xf32>, vector<16xf32>
// CHECK: vector.shuffle {{.+}} [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27] : vector<16xf32>, vector<16xf32>
// CHECK: vector.shuffle {{.+}} [2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13] : vector<16xf32>, vector<16xf32>
// CHECK: vector.shuffle {{.+}} [1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14] : vector<16xf32>, vector<16xf32>
// CHECK: %[[SUMS:.+]] = vector.shuffle {{.+}} [0, 4, 8, 12] : vector<16xf32>, vector<16xf32>
// CHECK: arith.addf %[[SUMS]], %{{.+}} : vector<4xf32>
// CHECK-NOT: vector.reduction
// CHECK-NOT: vector.fma
func.func @relation_sums(%p: tensor<1x2x8x64xf32>, %r: tensor<1x4x8x64xf32>, %acc: tensor<1x2x8x4xf32>, %n: index) -> tensor<1x2x8x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = scf.for %it = %c0 to %n step %c1 iter_args(%a = %acc) -> (tensor<1x2x8x4xf32>) {
    %y = linalg.generic {indexing_maps = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>,
                                          affine_map<(b, h, i, e, j) -> (b, e, i, j)>,
                                          affine_map<(b, h, i, e, j) -> (b, h, i, e)>],
                         iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
        ins(%p, %r : tensor<1x2x8x64xf32>, tensor<1x4x8x64xf32>) outs(%a : tensor<1x2x8x4xf32>) {
    ^bb0(%x: f32, %z: f32, %c: f32):
      %m = arith.mulf %x, %z : f32
      %s = arith.addf %c, %m : f32
      linalg.yield %s : f32
    } -> tensor<1x2x8x4xf32>
    scf.yield %y : tensor<1x2x8x4xf32>
  }
  return %out : tensor<1x2x8x4xf32>
}

// -----

// 12 relations (d_model 384, 12 heads, 12 relations): under one 16-lane
// register too, so dot products as for 4, their 12 sums one shuffle tree
// padded to 16 groups and one gather of lanes 0-11. (As an outer product
// over the relations, before: 4-key steps of 12-lane masked FMAs on a
// transposed copy of the relations; 1.02-1.04x slower at N = 600 and 1024,
// BENCHMARKS.md.)
// CHECK-LABEL: func.func @relation_sums12
// CHECK: vector.transfer_read {{.+}} : tensor<1x12x1x64xf32>, vector<12x64xf32>
// CHECK-COUNT-48: arith.mulf {{.+}} fastmath<contract> : vector<16xf32>
// CHECK: vector.shuffle {{.+}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] : vector<16xf32>, vector<16xf32>
// CHECK-NOT: vector.fma
// CHECK: return
func.func @relation_sums12(%p: tensor<1x1x2x64xf32>, %r: tensor<1x12x2x64xf32>, %acc: tensor<1x1x2x12xf32>, %n: index) -> tensor<1x1x2x12xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = scf.for %it = %c0 to %n step %c1 iter_args(%a = %acc) -> (tensor<1x1x2x12xf32>) {
    %y = linalg.generic {indexing_maps = [affine_map<(b, h, i, e, j) -> (b, h, i, j)>,
                                          affine_map<(b, h, i, e, j) -> (b, e, i, j)>,
                                          affine_map<(b, h, i, e, j) -> (b, h, i, e)>],
                         iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
        ins(%p, %r : tensor<1x1x2x64xf32>, tensor<1x12x2x64xf32>) outs(%a : tensor<1x1x2x12xf32>) {
    ^bb0(%x: f32, %z: f32, %c: f32):
      %m = arith.mulf %x, %z : f32
      %s = arith.addf %c, %m : f32
      linalg.yield %s : f32
    } -> tensor<1x1x2x12xf32>
    scf.yield %y : tensor<1x1x2x12xf32>
  }
  return %out : tensor<1x1x2x12xf32>
}

// -----

// A block of 40 keys (the last of 1000) and of 17 keys (ViT's tokens):
// vectors of a power of two lanes only. 40: 8-lane vectors, which divide it
// (20 lanes, the largest multiple of 4 that does, made LLVM split each
// vector into a register and a piece with shuffles between them); 17: a
// masked partial tile of two registers (before: 20 lanes).
// CHECK-LABEL: func.func @keys40
// CHECK: vector.transfer_read {{.+}} : tensor<1x1x16x1x8xf32>, vector<16x8xf32>
// CHECK-NOT: vector<16x20xf32>
// CHECK-LABEL: func.func @keys17
// CHECK: vector.transfer_read {{.+}} {in_bounds = [true, false]} : tensor<1x1x8x17xf32>, vector<8x32xf32>
func.func @keys40(%q: tensor<1x1x16x16xf32>, %k: tensor<1x1x40x16xf32>, %acc: tensor<1x1x16x40xf32>, %n: index) -> tensor<1x1x16x40xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %acc) -> tensor<1x1x16x40xf32> {
    %s = linalg.generic {
        indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>,
                         affine_map<(b, h, m, n, d) -> (b, h, n, d)>,
                         affine_map<(b, h, m, n, d) -> (b, h, m, n)>],
        iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
        ins(%q, %k : tensor<1x1x16x16xf32>, tensor<1x1x40x16xf32>)
        outs(%a : tensor<1x1x16x40xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %o, %p : f32
      linalg.yield %t : f32
    } -> tensor<1x1x16x40xf32>
    scf.yield %s : tensor<1x1x16x40xf32>
  }
  return %r : tensor<1x1x16x40xf32>
}
func.func @keys17(%q: tensor<1x1x8x16xf32>, %k: tensor<1x1x17x16xf32>, %acc: tensor<1x1x8x17xf32>, %n: index) -> tensor<1x1x8x17xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %acc) -> tensor<1x1x8x17xf32> {
    %s = linalg.generic {
        indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>,
                         affine_map<(b, h, m, n, d) -> (b, h, n, d)>,
                         affine_map<(b, h, m, n, d) -> (b, h, m, n)>],
        iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
        ins(%q, %k : tensor<1x1x8x16xf32>, tensor<1x1x17x16xf32>)
        outs(%a : tensor<1x1x8x17xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %o, %p : f32
      linalg.yield %t : f32
    } -> tensor<1x1x8x17xf32>
    scf.yield %s : tensor<1x1x8x17xf32>
  }
  return %r : tensor<1x1x8x17xf32>
}

// -----

// Row reductions of several rows (TransposingReduction.cpp): 4 rows of two
// registers each folded into one register, then one shuffle tree; IEEE
// maxima with fastmath<nnan,nsz> (plain vector max instructions, as for the
// row maxima above). 3 rows (not a power of two; 12 relations are the case
// that matters): the odd level pairs its last register with itself, and the
// gather takes lanes 0, 4 and 8. 17 rows would need 32 groups of a 16-lane
// register: upstream's way, one horizontal reduction each.
// CHECK-LABEL: func.func @multi_row_max
// CHECK-COUNT-4: arith.maximumf {{.+}} fastmath<nnan,nsz> : vector<16xf32>
// CHECK: vector.shuffle
// CHECK: %[[MAX:.+]] = vector.shuffle {{.+}} [0, 4, 8, 12] : vector<16xf32>, vector<16xf32>
// CHECK: arith.maximumf %[[MAX]], %{{.+}} fastmath<nnan,nsz> : vector<4xf32>
// CHECK: %[[R2:.+]] = vector.extract %{{.+}}[2] : vector<16xf32> from vector<3x16xf32>
// CHECK: vector.shuffle %[[R2]], %[[R2]] [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
// CHECK: %[[SUMS:.+]] = vector.shuffle {{.+}} [0, 4, 8] : vector<16xf32>, vector<16xf32>
// CHECK: arith.addf %[[SUMS]], %{{.+}} : vector<3xf32>
// CHECK-NOT: vector.shuffle
// CHECK-COUNT-17: vector.reduction <add>
// CHECK: return
func.func @multi_row_max(%v: vector<4x32xf32>, %acc: vector<4xf32>,
                         %w: vector<3x16xf32>, %acc3: vector<3xf32>,
                         %u: vector<17x16xf32>, %acc17: vector<17xf32>) -> (vector<4xf32>, vector<3xf32>, vector<17xf32>) {
  %m = vector.multi_reduction <maximumf>, %v, %acc [1] : vector<4x32xf32> to vector<4xf32>
  %s = vector.multi_reduction <add>, %w, %acc3 [1] : vector<3x16xf32> to vector<3xf32>
  %t = vector.multi_reduction <add>, %u, %acc17 [1] : vector<17x16xf32> to vector<17xf32>
  return %m, %s, %t : vector<4xf32>, vector<3xf32>, vector<17xf32>
}

// -----

// Position-relative symbols: a key block [64 queries, 64 keys, 256
// features] of an input read in place. The register tiles (8 heads × 32
// features) step through the keys 1 KiB apart, a 128-byte strip of each;
// during each query row the next row's 64 KiB block is prefetched in memory
// order, 8 lines at each of the row's 128 steps (8 strips × 16 steps of 4
// keys) (PrefetchBlocks.cpp), so that memory streams it: at strip E and
// keys J, lines 8t..8t+7 of the block, t = 16·E/32 + J/4, which are key
// ⌊t/2⌋ and features 128·(t mod 2) + 16c.
// CHECK-DAG: #[[$FEATURE:.+]] = affine_map<(d0) -> ((d0 floordiv 4) * 128 - ((d0 floordiv 4) floordiv 2) * 256)>
// CHECK-DAG: #[[$KEY:.+]] = affine_map<(d0, d1) -> (((d0 floordiv 32) * 8 + (d1 floordiv 4) floordiv 2) mod 64)>
// CHECK-DAG: #[[$FEATURE7:.+]] = affine_map<(d0) -> ((d0 floordiv 4) * 128 - ((d0 floordiv 4) floordiv 2) * 256 + 112)>
// CHECK-LABEL: func.func @strided_symbols
// CHECK: %[[BLOCK:.+]] = bufferization.to_buffer %{{.+}} read_only : tensor<64x64x256xf32> to memref<64x64x256xf32, strided<[?, ?, ?], offset: ?>>
// CHECK: scf.for %[[I:.+]] = %c0 to %c64 step %c1
// CHECK: %[[NEXT:.+]] = affine.min #{{.+}}(%[[I]])
// CHECK: scf.for %[[E:.+]] = %c0 to %c256 step %c32
// CHECK: scf.for %[[J:.+]] = %c0 to %c64 step %c4
// CHECK: %[[F0:.+]] = affine.apply #[[$FEATURE]](%[[J]])
// CHECK: %[[K0:.+]] = affine.apply #[[$KEY]](%[[E]], %[[J]])
// CHECK: memref.prefetch %[[BLOCK]][%[[NEXT]], %[[K0]], %[[F0]]], read, locality<2>, data
// CHECK-COUNT-6: memref.prefetch %[[BLOCK]][%[[NEXT]]
// CHECK: %[[F7:.+]] = affine.apply #[[$FEATURE7]](%[[J]])
// CHECK: memref.prefetch %[[BLOCK]][%[[NEXT]], %{{.+}}, %[[F7]]], read, locality<2>, data
// CHECK-NOT: memref.prefetch
// CHECK: vector.fma
func.func @strided_symbols(%p: tensor<1x8x64x64xf32>, %s: tensor<64x512x256xf32>, %acc: tensor<1x8x64x256xf32>) -> tensor<1x8x64x256xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %out = scf.for %j0 = %c0 to %c512 step %c64 iter_args(%a = %acc) -> (tensor<1x8x64x256xf32>) {
    %block = tensor.extract_slice %s[0, %j0, 0] [64, 64, 256] [1, 1, 1] : tensor<64x512x256xf32> to tensor<64x64x256xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, e) -> (b, h, i, j)>,
                                          affine_map<(b, h, i, j, e) -> (i, j, e)>,
                                          affine_map<(b, h, i, j, e) -> (b, h, i, e)>],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
        ins(%p, %block : tensor<1x8x64x64xf32>, tensor<64x64x256xf32>) outs(%a : tensor<1x8x64x256xf32>) {
    ^bb0(%x: f32, %z: f32, %c: f32):
      %m = arith.mulf %x, %z : f32
      %t = arith.addf %c, %m : f32
      linalg.yield %t : f32
    } -> tensor<1x8x64x256xf32>
    scf.yield %y : tensor<1x8x64x256xf32>
  }
  return %out : tensor<1x8x64x256xf32>
}

// -----

// Rows of 32 features (a head's symbols): each step reads whole 128-byte
// rows, and a query row's block is 8 KiB: nothing to prefetch.
// CHECK-LABEL: func.func @narrow_symbols
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func @narrow_symbols(%p: tensor<1x8x64x64xf32>, %s: tensor<64x512x32xf32>, %acc: tensor<1x8x64x32xf32>) -> tensor<1x8x64x32xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %out = scf.for %j0 = %c0 to %c512 step %c64 iter_args(%a = %acc) -> (tensor<1x8x64x32xf32>) {
    %block = tensor.extract_slice %s[0, %j0, 0] [64, 64, 32] [1, 1, 1] : tensor<64x512x32xf32> to tensor<64x64x32xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, e) -> (b, h, i, j)>,
                                          affine_map<(b, h, i, j, e) -> (i, j, e)>,
                                          affine_map<(b, h, i, j, e) -> (b, h, i, e)>],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
        ins(%p, %block : tensor<1x8x64x64xf32>, tensor<64x64x32xf32>) outs(%a : tensor<1x8x64x32xf32>) {
    ^bb0(%x: f32, %z: f32, %c: f32):
      %m = arith.mulf %x, %z : f32
      %t = arith.addf %c, %m : f32
      linalg.yield %t : f32
    } -> tensor<1x8x64x32xf32>
    scf.yield %y : tensor<1x8x64x32xf32>
  }
  return %out : tensor<1x8x64x32xf32>
}

// -----

// A reduction over a dimension that is not the rows' (HYLA's sum over
// heads: the heads tiled one at a time, the keys the vector) reduces over
// unit dimensions only: an elementwise multiply-add of 64-lane vectors, not
// one single-lane reduction per element (upstream's lowering transposes
// such a reduction: 64 scalar adds and inserts, 20 % of the HYLA tile).
// CHECK-LABEL: func.func @sum_over_heads
// CHECK: scf.for %{{.+}} = %c0 to %c8 step %c1
// CHECK: scf.for %{{.+}} = %c0 to %c64 step %c1
// CHECK: %[[SQ:.+]] = arith.mulf %{{.+}}, %{{.+}} : vector<64xf32>
// CHECK: arith.addf %{{.+}}, %[[SQ]] : vector<64xf32>
// CHECK-NOT: vector.reduction
// CHECK-NOT: vector.insert
// CHECK: return
func.func @sum_over_heads(%s: tensor<1x8x64x64xf32>, %m: tensor<1x64x64xf32>, %n: index) -> tensor<1x64x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %it = %c0 to %n step %c1 iter_args(%a = %m) -> (tensor<1x64x64xf32>) {
    %y = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>,
                                          affine_map<(b, h, i, j) -> (b, i, j)>],
                         iterator_types = ["parallel", "reduction", "parallel", "parallel"]}
        ins(%s : tensor<1x8x64x64xf32>) outs(%a : tensor<1x64x64xf32>) {
    ^bb0(%x: f32, %o: f32):
      %q = arith.mulf %x, %x : f32
      %t = arith.addf %o, %q : f32
      linalg.yield %t : f32
    } -> tensor<1x64x64xf32>
    scf.yield %y : tensor<1x64x64xf32>
  }
  return %r : tensor<1x64x64xf32>
}

// -----

// The blocked packing of keys made by a tile loop of 64 rows: the heads
// split, then the rows in blocks of 64 (two expand_shapes, composed), then
// [N/64, H, d, 64]. Each tile is one block: it is transposed in the loop
// and inserted at block i floordiv 64. Inside the tile the transpose runs
// in 16 × 16 blocks, each read as 16 rows, transposed with AVX-512 shuffles
// (vector.transpose lowered as shuffle_16x16) and written as 16 rows.
// CHECK-LABEL: func.func @blocked_keys
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x2x16x64xf32>
// CHECK: scf.forall (%[[I:.+]]) = (0) to (128) step (64) shared_outs(%[[O:.+]] = %[[E]]) -> (tensor<2x2x16x64xf32>)
// CHECK: %[[B:.+]] = affine.apply #{{.+}}(%[[I]])
// CHECK: %[[T:.+]] = scf.for
// CHECK: vector.transfer_read {{.+}} : tensor<{{.+}}>, vector<16x16xf32>
// CHECK: vector.shuffle
// CHECK: vector.transfer_write {{.+}} : vector<16x16xf32>, tensor<{{.+}}>
// CHECK: tensor.parallel_insert_slice %[[T]] into %[[O]][%[[B]], 0, 0, 0] [1, 2, 16, 64] [1, 1, 1, 1]
// CHECK-NOT: linalg.transpose
// NOBLOCK-LABEL: func.func @blocked_keys
func.func @blocked_keys(%x: tensor<128x32xf32>) -> tensor<2x2x16x64xf32> {
  %e = tensor.empty() : tensor<128x32xf32>
  %k = scf.forall (%i) = (0) to (128) step (64) shared_outs(%o = %e) -> (tensor<128x32xf32>) {
    %s = tensor.extract_slice %x[%i, 0] [64, 32] [1, 1] : tensor<128x32xf32> to tensor<64x32xf32>
    %d = tensor.extract_slice %o[%i, 0] [64, 32] [1, 1] : tensor<128x32xf32> to tensor<64x32xf32>
    %t = linalg.exp ins(%s : tensor<64x32xf32>) outs(%d : tensor<64x32xf32>) -> tensor<64x32xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[%i, 0] [64, 32] [1, 1] : tensor<64x32xf32> into tensor<128x32xf32>
    }
  } {dat.origin = "projection"}
  %heads = tensor.expand_shape %k [[0], [1, 2]] output_shape [128, 2, 16] : tensor<128x32xf32> into tensor<128x2x16xf32>
  %blocks = tensor.expand_shape %heads [[0, 1], [2], [3]] output_shape [2, 64, 2, 16] : tensor<128x2x16xf32> into tensor<2x64x2x16xf32>
  %te = tensor.empty() : tensor<2x2x16x64xf32>
  %tr = linalg.transpose ins(%blocks : tensor<2x64x2x16xf32>) outs(%te : tensor<2x2x16x64xf32>) permutation = [0, 2, 3, 1]
  return %tr : tensor<2x2x16x64xf32>
}

// -----

// A sum over a reduction that is not the row (APE's tree path lengths:
// each query node's ancestors compared with a key block's at each of 16
// depths, integer inputs) goes one depth at a time, its unit dims dropped,
// so that each row is a 1-D vector of 64 keys: compares and selects on
// vector<64xi64> / vector<64xf32> (as a [64, 1] vector they were
// scalarized).
// CHECK-LABEL: func.func @path_lengths
// CHECK: scf.for
// CHECK: vector.transfer_read {{.+}} : tensor<64xi64>, vector<64xi64>
// CHECK: arith.cmpi eq, {{.+}} : vector<64xi64>
// CHECK: arith.select {{.+}} : vector<64xi1>, vector<64xf32>
// CHECK-NOT: vector<64x1x
// CHECK: return
func.func @path_lengths(%qa: tensor<1x8x16xi64>, %ka: tensor<1x16x64xi64>, %acc: tensor<1x8x64xf32>, %n: index) -> tensor<1x8x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = scf.for %it = %c0 to %n step %c1 iter_args(%a = %acc) -> (tensor<1x8x64xf32>) {
    %y = linalg.generic {indexing_maps = [affine_map<(b, i, j, t) -> (b, i, t)>,
                                          affine_map<(b, i, j, t) -> (b, t, j)>,
                                          affine_map<(b, i, j, t) -> (b, i, j)>],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%qa, %ka : tensor<1x8x16xi64>, tensor<1x16x64xi64>) outs(%a : tensor<1x8x64xf32>) {
    ^bb0(%x: i64, %z: i64, %c: f32):
      %eq = arith.cmpi eq, %x, %z : i64
      %one = arith.constant 1.0 : f32
      %zero = arith.constant 0.0 : f32
      %s = arith.select %eq, %one, %zero : f32
      %r = arith.addf %c, %s : f32
      linalg.yield %r : f32
    } -> tensor<1x8x64xf32>
    scf.yield %y : tensor<1x8x64xf32>
  }
  return %out : tensor<1x8x64xf32>
}

// -----

// An i1 input (a key mask) is widened to i8 once before the rows (a memref
// holds an i1 per byte: a vector<64xi1> loaded from it would read 64 bits),
// and each row reads 64 bytes and truncates them.
// CHECK-LABEL: func.func @mask_input
// CHECK: %[[WIDE:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<1x64xi1>) outs(%{{.+}} : tensor<1x64xi8>)
// CHECK: arith.extui {{.+}} : i1 to i8
// CHECK: scf.for
// CHECK: vector.transfer_read %[[WIDE]]{{.+}} : tensor<1x64xi8>, vector<64xi8>
// CHECK: arith.trunci {{.+}} : vector<64xi8> to vector<64xi1>
// CHECK: arith.select {{.+}} : vector<64xi1>, vector<64xf32>
// CHECK: return
func.func @mask_input(%m: tensor<1x64xi1>, %s: tensor<1x8x64xf32>, %n: index) -> tensor<1x8x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = scf.for %it = %c0 to %n step %c1 iter_args(%a = %s) -> (tensor<1x8x64xf32>) {
    %y = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, j)>,
                                          affine_map<(b, i, j) -> (b, i, j)>],
                         iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%m : tensor<1x64xi1>) outs(%a : tensor<1x8x64xf32>) {
    ^bb0(%x: i1, %c: f32):
      %fill = arith.constant -1.0e10 : f32
      %r = arith.select %x, %c, %fill : f32
      linalg.yield %r : f32
    } -> tensor<1x8x64xf32>
    scf.yield %y : tensor<1x8x64xf32>
  }
  return %out : tensor<1x8x64xf32>
}

// -----

// The ops between the tile loops (a layer norm's row sums, a residual add)
// run on every thread where they are large enough (64K iterations): a tile
// loop over single indices of their outer parallel loops, up to the first
// reduction, until there are 8 tiles. Smaller ones stay as they are.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @glue_on_threads
// CHECK: scf.forall (%{{.+}}) in (256) {{.*}} -> (tensor<256xf32>)
// CHECK:   linalg.generic {{.*}} ins(%{{.+}} : tensor<1x256xf32>) outs(%{{.+}} : tensor<1xf32>)
// CHECK: } {dat.origin = "glue"}
// CHECK: scf.forall (%{{.+}}, %{{.+}}) in (4, 128) {{.*}} -> (tensor<4x128x128xf32>)
// CHECK:   linalg.generic {{.*}} outs(%{{.+}} : tensor<1x1x128xf32>)
// CHECK: } {dat.origin = "glue"}
// CHECK-NOT: scf.forall
// CHECK: linalg.generic {{.*}} ins(%{{.+}} : tensor<16x16xf32>)
// CHECK-NOT: scf.forall
// CHECK: return
func.func @glue_on_threads(%x: tensor<256x256xf32>, %a: tensor<4x128x128xf32>, %b: tensor<4x128x128xf32>, %s: tensor<16x16xf32>) -> (tensor<256xf32>, tensor<4x128x128xf32>, tensor<16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %sums = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<256x256xf32>) outs(%z : tensor<256xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %o, %v : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  %e3 = tensor.empty() : tensor<4x128x128xf32>
  %add = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a, %b : tensor<4x128x128xf32>, tensor<4x128x128xf32>) outs(%e3 : tensor<4x128x128xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<4x128x128xf32>
  %e2 = tensor.empty() : tensor<16x16xf32>
  %small = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16x16xf32>) outs(%e2 : tensor<16x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %v : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  return %sums, %add, %small : tensor<256xf32>, tensor<4x128x128xf32>, tensor<16x16xf32>
}
