// RUN: dat-opt %s --split-input-file --dat-gpu-map-tiles | FileCheck %s --check-prefix=GPU
// RUN: dat-opt %s --split-input-file --dat-gpu-map-tiles="emulate=true block-size=64" | FileCheck %s --check-prefix=EMU
// RUN: dat-opt %s --split-input-file --dat-gpu-map-tiles="mma=false" | FileCheck %s --check-prefix=NOMMA
// RUN: dat-opt %s --split-input-file --dat-gpu-map-tiles="wide-tiles=false" | FileCheck %s --check-prefix=NARROW

// The scores of a key block, S[b, q, k] += Q[b, q, d] · K[b, k, d] with bf16
// operands and an f32 accumulator: the block's 8 warps share S's strips of
// four 16×8 tiles side by side (b outermost, k fastest; ceil-divided: the
// keys, a dynamic count, in strips of 32, the query tile, 16 rows, one),
// each strip a loop over d in steps of 16: one 16×16 A tile, then per two
// 16×8 tiles of the strip a 16×16 (n×k) read of their two B tiles (one
// ldmatrix.x4 on the GPU), split in halves, and a vector.contract per
// tile, the bf16 operands widened to f32. Dims that are multiples of the tile (d =
// 32, the 16 queries) are read in bounds; the keys (dynamic) are not, so
// their reads pad and their writes stop at the end. A barrier follows, as
// after any op of the tile.

// GPU-LABEL: func.func @scores
// GPU: gpu.launch
// GPU:   %[[WARP:.+]] = arith.divui %{{.+}}, %c32{{.*}}
// GPU:   %[[KT:.+]] = arith.ceildivui %{{.+}}, %c32{{.*}}
// GPU:   scf.for %[[T:[a-z0-9_]+]] = %[[WARP]] to %{{.+}} step %c8{{.*}}
// GPU:     %[[N:.+]] = arith.remui %[[T]], %[[KT]]
// GPU:     %[[N0:.+]] = arith.muli %[[N]], %c32{{.*}}
// GPU:     %[[ACC0:.+]] = vector.transfer_read %{{.+}}[%{{.+}}, %{{.+}}, %[[N0]]], %{{.+}} {in_bounds = [true, false]} : memref<2x16x?xf32{{.*}}>, vector<16x8xf32>
// GPU:     %[[N1:.+]] = arith.addi %[[N0]], %c8{{.*}}
// GPU:     %[[ACC1:.+]] = vector.transfer_read %{{.+}}[%{{.+}}, %{{.+}}, %[[N1]]]
// GPU:     vector.transfer_read
// GPU:     vector.transfer_read
// GPU:     %[[SUM:.+]]:4 = scf.for %[[D:[a-z0-9_]+]] = %c0{{.*}} to %c32{{.*}} step %c16{{.*}} iter_args(%[[C0:[a-z0-9_]+]] = %[[ACC0]], %[[C1:[a-z0-9_]+]] = %[[ACC1]], %{{.+}}, %{{.+}}) -> (vector<16x8xf32>, vector<16x8xf32>, vector<16x8xf32>, vector<16x8xf32>)
// GPU:       %[[A:.+]] = vector.transfer_read %{{.+}}[%{{.+}}, %{{.+}}, %[[D]]], %{{.+}} {in_bounds = [true, true]} : memref<2x16x32xbf16{{.*}}>, vector<16x16xbf16>
// GPU:       %[[AF:.+]] = arith.extf %[[A]] : vector<16x16xbf16> to vector<16x16xf32>
// GPU:       %[[BB:.+]] = vector.transfer_read %{{.+}}[%{{.+}}, %[[N0]], %[[D]]], %{{.+}} {in_bounds = [false, true]} : memref<2x?x32xbf16{{.*}}>, vector<16x16xbf16>
// GPU:       %[[B:.+]] = vector.extract_strided_slice %[[BB]] {offsets = [0, 0], sizes = [8, 16], strides = [1, 1]} : vector<16x16xbf16> to vector<8x16xbf16>
// GPU:       %[[B1:.+]] = vector.extract_strided_slice %[[BB]] {offsets = [8, 0], sizes = [8, 16], strides = [1, 1]} : vector<16x16xbf16> to vector<8x16xbf16>
// GPU:       %[[BF:.+]] = arith.extf %[[B]] : vector<8x16xbf16> to vector<8x16xf32>
// GPU:       %[[R0:.+]] = vector.contract {indexing_maps = [#[[MAPA:.+]], #[[MAPB:.+]], #[[MAPC:.+]]], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %[[AF]], %[[BF]], %[[C0]] : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
// GPU:       %[[BF1:.+]] = arith.extf %[[B1]] : vector<8x16xbf16> to vector<8x16xf32>
// GPU:       %[[R1:.+]] = vector.contract {{.*}} %[[AF]], %[[BF1]], %[[C1]]
// GPU:       vector.transfer_read %{{.+}}[%{{.+}}, %{{.+}}, %[[D]]], %{{.+}} {in_bounds = [false, true]} : memref<2x?x32xbf16{{.*}}>, vector<16x16xbf16>
// GPU:       vector.contract {{.*}} %[[AF]]
// GPU:       vector.contract {{.*}} %[[AF]]
// GPU:       scf.yield %[[R0]], %[[R1]]
// GPU:     vector.transfer_write %[[SUM]]#0, %{{.+}}[%{{.+}}, %{{.+}}, %[[N0]]] {in_bounds = [true, false]}
// GPU:     vector.transfer_write %[[SUM]]#1
// GPU:     vector.transfer_write %[[SUM]]#2
// GPU:     vector.transfer_write %[[SUM]]#3
// GPU:   gpu.barrier
// GPU-NOT: linalg.generic

// With emulate, the warps run one after another.
// EMU-LABEL: func.func @scores
// EMU-NOT: gpu.
// EMU: scf.for %[[W:[a-z0-9_]+]] = %c0{{.*}} to %c2{{.*}} step %c1{{.*}}
// EMU:   scf.for %{{.+}} = %[[W]] to %{{.+}} step %c2{{.*}}
// EMU:     vector.contract

// NOMMA-LABEL: func.func @scores
// NOMMA-NOT: vector.contract
// NOMMA: arith.mulf
func.func @scores(%q: memref<2x64x32xbf16>, %k: memref<2x64x32xbf16>, %s: memref<2x64x64xf32>, %n: index) {
  scf.forall (%i) = (0) to (64) step (16) {
    %qt = memref.subview %q[0, %i, 0] [2, 16, 32] [1, 1, 1] : memref<2x64x32xbf16> to memref<2x16x32xbf16, strided<[2048, 32, 1], offset: ?>>
    %kt = memref.subview %k[0, 0, 0] [2, %n, 32] [1, 1, 1] : memref<2x64x32xbf16> to memref<2x?x32xbf16, strided<[2048, 32, 1]>>
    %st = memref.subview %s[0, %i, 0] [2, 16, %n] [1, 1, 1] : memref<2x64x64xf32> to memref<2x16x?xf32, strided<[4096, 64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(b, q, k, d) -> (b, q, d)>, affine_map<(b, q, k, d) -> (b, k, d)>, affine_map<(b, q, k, d) -> (b, q, k)>],
                    iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%qt, %kt : memref<2x16x32xbf16, strided<[2048, 32, 1], offset: ?>>, memref<2x?x32xbf16, strided<[2048, 32, 1]>>)
        outs(%st : memref<2x16x?xf32, strided<[4096, 64, 1], offset: ?>>) {
    ^bb0(%a: bf16, %b: bf16, %c: f32):
      %x = arith.extf %a : bf16 to f32
      %y = arith.extf %b : bf16 to f32
      %p = arith.mulf %x, %y : f32
      %r = arith.addf %c, %p : f32
      linalg.yield %r : f32
    }
  } {dat.origin = "dat.attention"}
  return
}

// -----

// P·V with f32 probabilities and grouped-query values (head h reads value
// head h / 2): P is rounded to bf16 for the product; B is read transposed
// (n = the value dim, k = the keys) at the grouped head.

// GPU-LABEL: func.func @values
// GPU: scf.for
// GPU:   scf.for %[[K:[a-z0-9_]+]] = %c0{{.*}} to %c32{{.*}} step %c16{{.*}} iter_args
// GPU:     %[[P:.+]] = vector.transfer_read %{{.+}} : memref<4x16x32xf32{{.*}}>, vector<16x16xf32>
// GPU:     %[[PB:.+]] = arith.truncf %[[P]] : vector<16x16xf32> to vector<16x16xbf16>
// GPU:     arith.extf %[[PB]]
// GPU:     %[[H:.+]] = affine.apply #{{.+}}(%{{.+}})
// GPU:     vector.transfer_read %{{.+}}[%[[H]], %[[K]], %{{.+}}], %{{.+}} {in_bounds = [true, true], permutation_map = #{{.+}}} : memref<2x32x16xbf16>, vector<16x16xbf16>
// GPU:     vector.contract
func.func @values(%p: memref<4x64x32xf32>, %v: memref<2x32x16xbf16>, %o: memref<4x64x16xf32>) {
  scf.forall (%i) = (0) to (64) step (16) {
    %pt = memref.subview %p[0, %i, 0] [4, 16, 32] [1, 1, 1] : memref<4x64x32xf32> to memref<4x16x32xf32, strided<[2048, 32, 1], offset: ?>>
    %ot = memref.subview %o[0, %i, 0] [4, 16, 16] [1, 1, 1] : memref<4x64x16xf32> to memref<4x16x16xf32, strided<[1024, 16, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(h, q, e, k) -> (h, q, k)>, affine_map<(h, q, e, k) -> (h floordiv 2, k, e)>, affine_map<(h, q, e, k) -> (h, q, e)>],
                    iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%pt, %v : memref<4x16x32xf32, strided<[2048, 32, 1], offset: ?>>, memref<2x32x16xbf16>)
        outs(%ot : memref<4x16x16xf32, strided<[1024, 16, 1], offset: ?>>) {
    ^bb0(%a: f32, %b: bf16, %c: f32):
      %y = arith.extf %b : bf16 to f32
      %m = arith.mulf %a, %y : f32
      %r = arith.addf %c, %m : f32
      linalg.yield %r : f32
    }
  } {dat.origin = "dat.attention"}
  return
}

// -----

// What stays on the threads: an fp32 program's contraction (no bf16
// operand), and a body that is not a multiply-add. (The staging copies'
// 16-byte vectors are the only vector ops.)

// GPU-LABEL: func.func @not_mma
// GPU-NOT: vector.contract
// GPU-NOT: vector.transfer
// GPU: return
func.func @not_mma(%a: memref<64x32xf32>, %b: memref<32x32xf32>, %c: memref<64x32xf32>,
                   %x: memref<64x32xbf16>, %y: memref<32x32xbf16>) {
  scf.forall (%i) = (0) to (64) step (16) {
    %at = memref.subview %a[%i, 0] [16, 32] [1, 1] : memref<64x32xf32> to memref<16x32xf32, strided<[32, 1], offset: ?>>
    %xt = memref.subview %x[%i, 0] [16, 32] [1, 1] : memref<64x32xbf16> to memref<16x32xbf16, strided<[32, 1], offset: ?>>
    %ct = memref.subview %c[%i, 0] [16, 32] [1, 1] : memref<64x32xf32> to memref<16x32xf32, strided<[32, 1], offset: ?>>
    linalg.matmul ins(%at, %b : memref<16x32xf32, strided<[32, 1], offset: ?>>, memref<32x32xf32>)
                  outs(%ct : memref<16x32xf32, strided<[32, 1], offset: ?>>)
    linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%xt, %y : memref<16x32xbf16, strided<[32, 1], offset: ?>>, memref<32x32xbf16>)
        outs(%ct : memref<16x32xf32, strided<[32, 1], offset: ?>>) {
    ^bb0(%p: bf16, %q: bf16, %o: f32):
      %u = arith.extf %p : bf16 to f32
      %v = arith.extf %q : bf16 to f32
      %m = arith.mulf %u, %v : f32
      %r = arith.maximumf %o, %m : f32
      linalg.yield %r : f32
    }
  } {dat.origin = "projection"}
  return
}

// -----

// A projection's tile, 64 rows × 512 outputs over 256 inputs: work for
// every warp in 32×64 blocks (2 × 8 of them for 8 warps), so each warp
// computes 2 rows of 16 by 8 tiles of 8: per 16-wide step two A tiles
// and four B pair reads, each B tile serving both A tiles (16 contracts).

// GPU-LABEL: func.func @wide
// GPU: gpu.launch
// GPU:   scf.for %[[T:[a-z0-9_]+]] = %{{.+}} to %{{.+}} step %c8{{.*}}
// GPU:     %[[N:.+]] = arith.remui %[[T]], %{{.+}}
// GPU:     %[[N0:.+]] = arith.muli %[[N]], %c64{{.*}}
// GPU:     %[[M:.+]] = arith.divui %[[T]], %{{.+}}
// GPU:     %[[M0:.+]] = arith.muli %[[M]], %c32{{.*}}
// GPU:     %[[ACC0:.+]] = vector.transfer_read %{{.+}}[%[[M0]], %[[N0]]], %{{.+}} {in_bounds = [true, true]} : memref<64x512xf32{{.*}}>, vector<16x8xf32>
// GPU-COUNT-15: vector.transfer_read {{.*}} : memref<64x512xf32{{.*}}>, vector<16x8xf32>
// GPU:     %[[SUM:.+]]:16 = scf.for %[[K:[a-z0-9_]+]] = %c0{{.*}} to %c256{{.*}} step %c16{{.*}} iter_args(%[[C0:[a-z0-9_]+]] = %[[ACC0]], {{.*}}) -> (vector<16x8xf32>, {{.*}})
// GPU:       %[[A0:.+]] = vector.transfer_read %{{.+}}[%[[M0]], %[[K]]], %{{.+}} {in_bounds = [true, true]} : memref<64x256xbf16{{.*}}>, vector<16x16xbf16>
// GPU:       %[[AF0:.+]] = arith.extf %[[A0]]
// GPU:       %[[M1:.+]] = arith.addi %[[M0]], %c16{{.*}}
// GPU:       %[[A1:.+]] = vector.transfer_read %{{.+}}[%[[M1]], %[[K]]]
// GPU:       %[[AF1:.+]] = arith.extf %[[A1]]
// GPU:       vector.transfer_read %{{.+}}[%[[N0]], %[[K]]], %{{.+}} {in_bounds = [true, true]} : memref<512x256xbf16>, vector<16x16xbf16>
// GPU:       %[[BF0:.+]] = arith.extf %{{.+}} : vector<8x16xbf16> to vector<8x16xf32>
// GPU:       %[[R0:.+]] = vector.contract {{.*}} %[[AF0]], %[[BF0]], %[[C0]]
// GPU:       vector.contract {{.*}} %[[AF1]], %[[BF0]]
// GPU-COUNT-14: vector.contract
// GPU:       scf.yield %[[R0]]
// GPU:     vector.transfer_write %[[SUM]]#0, %{{.+}}[%[[M0]], %[[N0]]]
// GPU-COUNT-15: vector.transfer_write
// GPU:   gpu.barrier
// Without wide-tiles, strips of 16×32: 4 accumulators a warp.
// NARROW-LABEL: func.func @wide
// NARROW: scf.for %{{.+}} iter_args({{.*}}) -> (vector<16x8xf32>, vector<16x8xf32>, vector<16x8xf32>, vector<16x8xf32>) {
// NARROW-COUNT-4: vector.contract
// NARROW-NEXT: scf.yield
func.func @wide(%x: memref<256x256xbf16>, %w: memref<512x256xbf16>, %y: memref<256x512xf32>) {
  scf.forall (%i) = (0) to (256) step (64) {
    %xt = memref.subview %x[%i, 0] [64, 256] [1, 1] : memref<256x256xbf16> to memref<64x256xbf16, strided<[256, 1], offset: ?>>
    %yt = memref.subview %y[%i, 0] [64, 512] [1, 1] : memref<256x512xf32> to memref<64x512xf32, strided<[512, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%xt, %w : memref<64x256xbf16, strided<[256, 1], offset: ?>>, memref<512x256xbf16>)
        outs(%yt : memref<64x512xf32, strided<[512, 1], offset: ?>>) {
    ^bb0(%p: bf16, %q: bf16, %o: f32):
      %u = arith.extf %p : bf16 to f32
      %v = arith.extf %q : bf16 to f32
      %m = arith.mulf %u, %v : f32
      %r = arith.addf %o, %m : f32
      linalg.yield %r : f32
    }
  } {dat.origin = "projection"}
  return
}

// -----

// HYLA's value network in a bf16 program: z = relu(Σ_h a·v) into a zeroed
// f32 tile buffer, then rounded into a bf16 one that the next product
// reads. The contraction's tiles go through the relu and the rounding and
// are written to the bf16 buffer; the f32 buffer (64 KiB here) is never
// laid out: shared memory holds the bf16 one alone (32 KiB + 16), and no
// scratch. The bf16 buffer, allocated after the relu, is moved before the
// writes that need it.
// GPU-LABEL: func.func @narrowed
// GPU-NOT: memref.alloc
// GPU: %[[SIZE:.+]] = arith.constant 32784 : i32
// GPU: gpu.launch {{.*}} dynamic_shared_memory_size %[[SIZE]]
// GPU:   %[[ZB:.+]] = memref.memory_space_cast %{{.+}} : memref<16x16x64xbf16, #gpu.address_space<workgroup>> to memref<16x16x64xbf16>
// GPU:   scf.for
// GPU:     vector.contract
// GPU:   arith.maximumf %{{.+}} : vector<16x8xf32>
// GPU:   %[[R:.+]] = arith.truncf %{{.+}} : vector<16x8xf32> to vector<16x8xbf16>
// GPU:   vector.transfer_write %[[R]], %[[ZB]]
// GPU-NOT: vector<16x8xf32>, memref
// GPU:   gpu.barrier
// GPU:   vector.transfer_read %[[ZB]]
// GPU-NOT: memref.alloc
// GPU: gpu.terminator
// The same without tensor cores: the f32 buffer stays (96 KiB + 16).
// NOMMA-LABEL: func.func @narrowed
// NOMMA: %[[SIZE:.+]] = arith.constant 98320 : i32
// NOMMA: gpu.launch {{.*}} dynamic_shared_memory_size %[[SIZE]]
func.func @narrowed(%a: memref<16x16x16xf32>, %v: memref<16x16x64xbf16>, %o: memref<16x16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  scf.forall (%t) = (0) to (16) step (16) {
    %z = memref.alloc() : memref<16x16x64xf32>
    linalg.fill ins(%zero : f32) outs(%z : memref<16x16x64xf32>)
    // z[i, j, e] += a[h, i, j] · v[h, j, e]
    linalg.generic {indexing_maps = [affine_map<(i, j, e, h) -> (h, i, j)>, affine_map<(i, j, e, h) -> (h, j, e)>, affine_map<(i, j, e, h) -> (i, j, e)>],
                    iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%a, %v : memref<16x16x16xf32>, memref<16x16x64xbf16>) outs(%z : memref<16x16x64xf32>) {
    ^bb0(%x: f32, %y: bf16, %c: f32):
      %w = arith.extf %y : bf16 to f32
      %m = arith.mulf %x, %w : f32
      %r = arith.addf %c, %m : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [affine_map<(i, j, e) -> (i, j, e)>], iterator_types = ["parallel", "parallel", "parallel"]}
        outs(%z : memref<16x16x64xf32>) {
    ^bb0(%c: f32):
      %r = arith.maximumf %c, %zero : f32
      linalg.yield %r : f32
    }
    %zb = memref.alloc() : memref<16x16x64xbf16>
    linalg.generic {indexing_maps = [affine_map<(i, j, e) -> (i, j, e)>, affine_map<(i, j, e) -> (i, j, e)>], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%z : memref<16x16x64xf32>) outs(%zb : memref<16x16x64xbf16>) {
    ^bb0(%x: f32, %c: bf16):
      %r = arith.truncf %x : f32 to bf16
      linalg.yield %r : bf16
    }
    // o[h, i, e] += a[h, i, j] · zb[i, j, e]
    linalg.generic {indexing_maps = [affine_map<(h, i, e, j) -> (h, i, j)>, affine_map<(h, i, e, j) -> (i, j, e)>, affine_map<(h, i, e, j) -> (h, i, e)>],
                    iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%a, %zb : memref<16x16x16xf32>, memref<16x16x64xbf16>) outs(%o : memref<16x16x64xf32>) {
    ^bb0(%x: f32, %y: bf16, %c: f32):
      %w = arith.extf %y : bf16 to f32
      %m = arith.mulf %x, %w : f32
      %r = arith.addf %c, %m : f32
      linalg.yield %r : f32
    }
    memref.dealloc %z : memref<16x16x64xf32>
    memref.dealloc %zb : memref<16x16x64xbf16>
  } {dat.origin = "dat.hyper_attention"}
  return
}

// -----

// The same, but the f32 products are read again after the rounding: their
// buffer stays and is written (the rounding a pass of its own).
// GPU-LABEL: func.func @narrowed_still_read
// GPU: gpu.launch
// GPU:   vector.contract
// GPU:   arith.maximumf %{{.+}} : vector<16x8xf32>
// GPU-NOT: arith.truncf %{{.+}} : vector<16x8xf32> to vector<16x8xbf16>
// GPU:   vector.transfer_write %{{.+}} : vector<16x8xf32>, memref<16x16x64xf32>
// GPU:   gpu.barrier
// GPU:   arith.truncf %{{.+}} : f32 to bf16
// GPU:   gpu.barrier
// GPU:   arith.negf
// GPU: gpu.terminator
func.func @narrowed_still_read(%a: memref<16x16x16xf32>, %v: memref<16x16x64xbf16>, %o: memref<16x16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  scf.forall (%t) = (0) to (16) step (16) {
    %z = memref.alloc() : memref<16x16x64xf32>
    linalg.fill ins(%zero : f32) outs(%z : memref<16x16x64xf32>)
    linalg.generic {indexing_maps = [affine_map<(i, j, e, h) -> (h, i, j)>, affine_map<(i, j, e, h) -> (h, j, e)>, affine_map<(i, j, e, h) -> (i, j, e)>],
                    iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%a, %v : memref<16x16x16xf32>, memref<16x16x64xbf16>) outs(%z : memref<16x16x64xf32>) {
    ^bb0(%x: f32, %y: bf16, %c: f32):
      %w = arith.extf %y : bf16 to f32
      %m = arith.mulf %x, %w : f32
      %r = arith.addf %c, %m : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [affine_map<(i, j, e) -> (i, j, e)>], iterator_types = ["parallel", "parallel", "parallel"]}
        outs(%z : memref<16x16x64xf32>) {
    ^bb0(%c: f32):
      %r = arith.maximumf %c, %zero : f32
      linalg.yield %r : f32
    }
    %zb = memref.alloc() : memref<16x16x64xbf16>
    linalg.generic {indexing_maps = [affine_map<(i, j, e) -> (i, j, e)>, affine_map<(i, j, e) -> (i, j, e)>], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%z : memref<16x16x64xf32>) outs(%zb : memref<16x16x64xbf16>) {
    ^bb0(%x: f32, %c: bf16):
      %r = arith.truncf %x : f32 to bf16
      linalg.yield %r : bf16
    }
    linalg.generic {indexing_maps = [affine_map<(i, j, e) -> (i, j, e)>, affine_map<(i, j, e) -> (i, j, e)>], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%z : memref<16x16x64xf32>) outs(%o : memref<16x16x64xf32>) {
    ^bb0(%x: f32, %c: f32):
      %r = arith.negf %x : f32
      linalg.yield %r : f32
    }
    memref.dealloc %z : memref<16x16x64xf32>
    memref.dealloc %zb : memref<16x16x64xbf16>
  } {dat.origin = "dat.hyper_attention"}
  return
}
