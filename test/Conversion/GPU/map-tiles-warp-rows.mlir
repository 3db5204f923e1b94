// RUN: dat-opt %s --dat-gpu-map-tiles | FileCheck %s --check-prefix=GPU
// RUN: dat-opt %s --dat-gpu-map-tiles="emulate=true" | FileCheck %s --check-prefix=EMU
// RUN: dat-opt %s --dat-gpu-map-tiles="warp-rows=false" | FileCheck %s --check-prefix=BLOCK
// RUN: dat-opt %s --dat-gpu-map-tiles | dat-opt --gpu-kernel-outlining --dat-gpu-warp-mma-to-nvvm --canonicalize | FileCheck %s --check-prefix=NVVM

// A causal attention tile as dat-decompose-flash writes it (32 query rows,
// d = 32, key blocks of 48: the second is partial) in bf16: the online
// softmax's per-row buffers (scores, row max and sum, the accumulator) are
// only filled, written by MMA contractions and read and written by
// elementwise and row-reduction generics, so the tile takes
// FlashAttention-2's structure: a block of one warp per 16 rows (64
// threads), each warp's rows of those buffers in registers through the key
// loop (its iter_args: 2 row vectors, 4 accumulator tiles of 32 columns),
// the scores as 6 tiles of 8 keys, the row reductions combining the tiles
// and then one vector.multi_reduction, the probabilities masked past the
// block's keys and packed pairwise into 16×16 A tiles. Barriers only after
// the three staging copies (query tile; key and value blocks).

// GPU-LABEL: func.func @attention
// GPU: gpu.launch {{.*}} threads({{.*}}) in (%{{.+}} = %[[THREADS:c64[_0-9]*]],
// GPU: %[[TID:.+]] = gpu.thread_id x
// GPU: %[[WARP:.+]] = arith.divui %[[TID]], %c32
// GPU: %[[STRIP0:.+]] = arith.remui %[[WARP]], %c2
// GPU: %[[ROW0:.+]] = arith.muli %[[STRIP0]], %c16
// GPU: gpu.barrier
// GPU: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16x8xf32>, vector<16x8xf32>, vector<16x8xf32>, vector<16x8xf32>)
// GPU:   gpu.barrier
// GPU:   vector.transfer_read %{{.+}}[%{{.+}}, %{{.+}}, %[[ROW0]], %{{.+}}], %{{.+}} {in_bounds = [true, true]} : memref<1x1x32x32xbf16>, vector<16x16xbf16>
// GPU:   vector.contract
// GPU:   vector.step : vector<16xindex>
// GPU:   vector.step : vector<8xindex>
// GPU:   vector.create_mask
// GPU:   arith.maximumf {{.*}} : vector<16x8xf32>
// GPU:   vector.multi_reduction <maximumf>, %{{.+}}, %{{.+}} [1] : vector<16x8xf32> to vector<16xf32>
// GPU-NOT: vector.multi_reduction <maximumf>
// GPU:   math.exp {{.*}} : vector<16xf32>
// GPU:   math.exp {{.*}} : vector<16x8xf32>
// GPU:   vector.multi_reduction <add>, %{{.+}}, %{{.+}} [1] : vector<16x8xf32> to vector<16xf32>
// GPU:   gpu.barrier
// GPU:   vector.insert_strided_slice %{{.+}}, %{{.+}} {offsets = [0, 0], strides = [1, 1]} : vector<16x8xbf16> into vector<16x16xbf16>
// GPU:   vector.insert_strided_slice %{{.+}}, %{{.+}} {offsets = [0, 8], strides = [1, 1]} : vector<16x8xbf16> into vector<16x16xbf16>
// GPU:   vector.contract
// GPU-NOT: gpu.barrier
// GPU:   scf.yield
// GPU: arith.divf {{.*}} : vector<16x8xf32>
// GPU: vector.transfer_write %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %[[ROW0]], %c0{{.*}}] {in_bounds = [true, true]} : vector<16x8xbf16>, memref<1x1x32x32xbf16, strided<[8192, 2048, 32, 1], offset: ?>>
// GPU-NOT: gpu.barrier
// GPU-NOT: linalg.generic
// GPU: gpu.terminator

// With emulate, the two warps run one after another through the whole body.
// EMU-LABEL: func.func @attention
// EMU-NOT: gpu.
// EMU: scf.for %[[W:[a-z0-9_]+]] = %c0{{.*}} to %c2{{.*}} step %c1
// EMU:   %[[S:.+]] = arith.remui %[[W]], %c2
// EMU:   arith.muli %[[S]], %c16
// EMU:   scf.for {{.*}} iter_args
// EMU-NOT: vector.multi_reduction

// Without warp-rows: the block-wide mapping (256 threads, a barrier per op).
// BLOCK-LABEL: func.func @attention
// BLOCK: threads({{.*}}) in (%{{.+}} = %c256
// BLOCK-NOT: vector.multi_reduction
// BLOCK-COUNT-16: gpu.barrier

// On the lanes: the row reductions are two xor shuffles per row value (2
// per lane) per reduction; the contractions are mma.sync; no tile types
// are left.
// NVVM-LABEL: gpu.func @attention_attention_tile
// NVVM-COUNT-4: gpu.shuffle xor %{{.+}}, %c{{[12]}}_i32, %c32_i32 : f32
// NVVM-COUNT-4: gpu.shuffle xor %{{.+}}, %c{{[12]}}_i32, %c32_i32 : f32
// NVVM-NOT: gpu.shuffle
// NVVM-NOT: vector<16x8
// NVVM-NOT: vector<16x16
// NVVM-NOT: vector<16x
// NVVM: gpu.return

// Grouped-query heads: a tile of two query heads sharing one key/value head
// ([1, 2, 16, C] buffers). Each head's rows have their own warps (2 heads x
// 1 strip: 64 threads); a warp reads its head's query rows and the shared
// key/value head (h floordiv 2), and linalg.index of the head dim is its
// head.
// GPU-LABEL: func.func @gqa
// GPU: threads({{.*}}) in (%{{.+}} = %c64,
// GPU: %[[W:.+]] = arith.divui %thread_id_x, %c32
// GPU: %[[HEAD:.+]] = arith.divui %[[W]], %c1
// GPU: %[[STRIP:.+]] = arith.remui %[[W]], %c1
// GPU: %[[ROW:.+]] = arith.muli %[[STRIP]], %c16
// GPU-COUNT-3: gpu.barrier
// GPU: vector.transfer_read %{{.+}}[%{{.+}}, %[[HEAD]], %[[ROW]], %{{.+}}], %{{.+}} {in_bounds = [true, true]} : memref<1x2x16x32xbf16>, vector<16x16xbf16>
// GPU: %[[KV:.+]] = affine.apply #{{.+}}()[%[[HEAD]]]
// GPU: %[[KEYS:.+]] = vector.transfer_read %{{.+}}[%{{.+}}, %[[KV]], %{{.+}}, %{{.+}}], %{{.+}} {in_bounds = [true, true]} : memref<1x1x16x32xbf16>, vector<16x16xbf16>
// GPU: vector.extract_strided_slice %[[KEYS]] {offsets = [0, 0], sizes = [8, 16], strides = [1, 1]} : vector<16x16xbf16> to vector<8x16xbf16>
// GPU: vector.extract_strided_slice %[[KEYS]] {offsets = [8, 0], sizes = [8, 16], strides = [1, 1]} : vector<16x16xbf16> to vector<8x16xbf16>
// GPU: vector.multi_reduction <maximumf>
// GPU: vector.broadcast %[[HEAD]] : index to vector<16x8xindex>
// GPU: vector.transfer_write %{{.+}}, %{{.+}}[%{{.+}}, %[[HEAD]], %[[ROW]], %{{.+}}] {in_bounds = [true, true]} : vector<16x8xbf16>, memref<1x2x16x32xbf16>
// GPU-NOT: gpu.barrier

// A key loop with one staging op (the value rows staged once, before it):
// the next iteration's key copy could overwrite keys a slower warp still
// reads, and no other staging op's barrier lies between, so each iteration
// starts with a barrier.
// GPU-LABEL: func.func @one_staging_op
// GPU: scf.for {{.*}} iter_args
// GPU-NEXT: gpu.barrier

// Likewise where the scores read the key block through a view of its
// staging buffer: the buffers are compared by allocation.
// GPU-LABEL: func.func @read_through_view
// GPU: scf.for {{.*}} iter_args
// GPU-NEXT: gpu.barrier

// A score term in memory (APE's, an attention bias: here [H, N, N]) read
// by each warp as its rows' 16x8 tiles of the term's view, zeros past its
// ends (the key block's last tile is masked where it counts).
// GPU-LABEL: func.func @score_term
// GPU: threads({{.*}}) in (%{{.+}} = %c64{{.*}},
// GPU: %[[W:.+]] = arith.divui %{{.+}}, %c32
// GPU: %[[G:.+]] = arith.divui %[[W]], %c2
// GPU: %[[ROW:.+]] = arith.muli %{{.+}}, %c16
// GPU: scf.for {{.*}} iter_args
// GPU:   vector.contract
// GPU:   %[[TERM:.+]] = memref.subview %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] [1, 32, %{{.+}}] [1, 1, 1]
// GPU:   vector.transfer_read %[[TERM]][%[[G]], %[[ROW]], %c0{{.*}}], %{{.+}} : memref<1x32x?xbf16, strided<[4096, 64, 1], offset: ?>>, vector<16x8xbf16>
// GPU:   vector.transfer_read %[[TERM]][%[[G]], %[[ROW]], %c8{{.*}}], %{{.+}} : memref<1x32x?xbf16, strided<[4096, 64, 1], offset: ?>>, vector<16x8xbf16>
// GPU:   vector.multi_reduction <maximumf>
// GPU-NOT: linalg.generic
// GPU: gpu.terminator
// NVVM-LABEL: gpu.func @score_term_attention_tile
// NVVM-NOT: vector<16x8
// NVVM: gpu.return

func.func @attention(%q: memref<1x64x4x32xbf16>, %k: memref<1x64x4x32xbf16>, %v: memref<1x64x4x32xbf16>, %o: memref<1x4x64x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c48 = arith.constant 48 : index
  %scale = arith.constant 0.176776695 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.000000e+00 : f32
  scf.forall (%h, %i) = (0, 0) to (4, 64) step (1, 32) {
    %qs = memref.subview %q[0, %i, %h, 0] [1, 32, 1, 32] [1, 1, 1, 1] : memref<1x64x4x32xbf16> to memref<1x32x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>
    %qt = memref.alloc() : memref<1x1x32x32xbf16>
    linalg.transpose ins(%qs : memref<1x32x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>) outs(%qt : memref<1x1x32x32xbf16>) permutation = [0, 2, 1, 3]
    %os = memref.subview %o[0, %h, %i, 0] [1, 1, 32, 32] [1, 1, 1, 1] : memref<1x4x64x32xbf16> to memref<1x1x32x32xbf16, strided<[8192, 2048, 32, 1], offset: ?>>
    %m = memref.alloc() : memref<1x1x32xf32>
    linalg.fill ins(%ninf : f32) outs(%m : memref<1x1x32xf32>)
    %l = memref.alloc() : memref<1x1x32xf32>
    linalg.fill ins(%zero : f32) outs(%l : memref<1x1x32xf32>)
    %acc = memref.alloc() : memref<1x1x32x32xf32>
    linalg.fill ins(%zero : f32) outs(%acc : memref<1x1x32x32xf32>)
    scf.for %j = %c0 to %c64 step %c48 {
      %n = affine.min affine_map<(d0) -> (-d0 + 64, 48)>(%j)
      %ks = memref.subview %k[0, %j, %h, 0] [1, %n, 1, 32] [1, 1, 1, 1] : memref<1x64x4x32xbf16> to memref<1x?x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>
      %kt = memref.alloc(%n) : memref<1x1x?x32xbf16>
      linalg.transpose ins(%ks : memref<1x?x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>) outs(%kt : memref<1x1x?x32xbf16>) permutation = [0, 2, 1, 3]
      %s = memref.alloc(%n) : memref<1x1x32x?xf32>
      linalg.fill ins(%zero : f32) outs(%s : memref<1x1x32x?xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qt, %kt : memref<1x1x32x32xbf16>, memref<1x1x?x32xbf16>) outs(%s : memref<1x1x32x?xf32>) {
      ^bb0(%a: bf16, %b: bf16, %c: f32):
        %0 = arith.extf %b : bf16 to f32
        %1 = arith.extf %a : bf16 to f32
        %2 = arith.mulf %1, %0 : f32
        %3 = arith.addf %c, %2 : f32
        linalg.yield %3 : f32
      }
      // Scale, and the causal mask (key j visible from query i + j0 ... as
      // the flash decomposition writes it: index arithmetic in the body).
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%s : memref<1x1x32x?xf32>) {
      ^bb0(%c: f32):
        %r = linalg.index 2 : index
        %rr = arith.addi %r, %i : index
        %cc = linalg.index 3 : index
        %col = arith.addi %cc, %j : index
        %ok = arith.cmpi sle, %col, %rr : index
        %0 = arith.mulf %c, %scale : f32
        %1 = arith.select %ok, %0, %ninf : f32
        linalg.yield %1 : f32
      }
      %mx = memref.alloc() : memref<1x1x32xf32>
      linalg.fill ins(%ninf : f32) outs(%mx : memref<1x1x32xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x1x32x?xf32>) outs(%mx : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.maximumf %a, %c : f32
        linalg.yield %0 : f32
      }
      %alpha = memref.alloc() : memref<1x1x32xf32>
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m, %mx : memref<1x1x32xf32>, memref<1x1x32xf32>) outs(%alpha : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %b: f32, %c: f32):
        %0 = arith.maximumf %a, %b : f32
        %1 = arith.cmpf oeq, %0, %ninf : f32
        %2 = arith.select %1, %zero, %0 : f32
        %3 = arith.subf %a, %2 : f32
        %4 = math.exp %3 : f32
        linalg.yield %4 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%mx : memref<1x1x32xf32>) outs(%m : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.maximumf %c, %a : f32
        linalg.yield %0 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%m : memref<1x1x32xf32>) outs(%s : memref<1x1x32x?xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.cmpf oeq, %a, %ninf : f32
        %1 = arith.select %0, %zero, %a : f32
        %2 = arith.subf %c, %1 : f32
        %3 = math.exp %2 : f32
        linalg.yield %3 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%alpha : memref<1x1x32xf32>) outs(%l : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.mulf %c, %a : f32
        linalg.yield %0 : f32
      }
      %sum = memref.alloc() : memref<1x1x32xf32>
      linalg.fill ins(%zero : f32) outs(%sum : memref<1x1x32xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x1x32x?xf32>) outs(%sum : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.addf %a, %c : f32
        linalg.yield %0 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sum : memref<1x1x32xf32>) outs(%l : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.addf %c, %a : f32
        linalg.yield %0 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alpha : memref<1x1x32xf32>) outs(%acc : memref<1x1x32x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.mulf %c, %a : f32
        linalg.yield %0 : f32
      }
      %vs = memref.subview %v[0, %j, %h, 0] [1, %n, 1, 32] [1, 1, 1, 1] : memref<1x64x4x32xbf16> to memref<1x?x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>
      %vt = memref.alloc(%n) : memref<1x1x?x32xbf16>
      linalg.transpose ins(%vs : memref<1x?x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>) outs(%vt : memref<1x1x?x32xbf16>) permutation = [0, 2, 1, 3]
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%s, %vt : memref<1x1x32x?xf32>, memref<1x1x?x32xbf16>) outs(%acc : memref<1x1x32x32xf32>) {
      ^bb0(%a: f32, %b: bf16, %c: f32):
        %0 = arith.extf %b : bf16 to f32
        %1 = arith.mulf %a, %0 : f32
        %2 = arith.addf %c, %1 : f32
        linalg.yield %2 : f32
      }
      memref.dealloc %kt : memref<1x1x?x32xbf16>
      memref.dealloc %s : memref<1x1x32x?xf32>
      memref.dealloc %mx : memref<1x1x32xf32>
      memref.dealloc %alpha : memref<1x1x32xf32>
      memref.dealloc %sum : memref<1x1x32xf32>
      memref.dealloc %vt : memref<1x1x?x32xbf16>
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%acc, %l : memref<1x1x32x32xf32>, memref<1x1x32xf32>) outs(%os : memref<1x1x32x32xbf16, strided<[8192, 2048, 32, 1], offset: ?>>) {
    ^bb0(%a: f32, %b: f32, %c: bf16):
      %0 = arith.cmpf oeq, %b, %zero : f32
      %1 = arith.divf %a, %b : f32
      %2 = arith.select %0, %zero, %1 : f32
      %3 = arith.truncf %2 : f32 to bf16
      linalg.yield %3 : bf16
    }
    memref.dealloc %qt : memref<1x1x32x32xbf16>
    memref.dealloc %m : memref<1x1x32xf32>
    memref.dealloc %l : memref<1x1x32xf32>
    memref.dealloc %acc : memref<1x1x32x32xf32>
  } {dat.origin = "dat.attention"}
  return
}

func.func @gqa(%q: memref<1x2x16x32xbf16>, %k: memref<1x1x16x32xbf16>, %v: memref<1x1x16x32xbf16>, %o: memref<1x2x16x32xbf16>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.000000e+00 : f32
  scf.forall (%b) in (1) {
    %qt = memref.alloc() : memref<1x2x16x32xbf16>
    linalg.copy ins(%q : memref<1x2x16x32xbf16>) outs(%qt : memref<1x2x16x32xbf16>)
    %kt = memref.alloc() : memref<1x1x16x32xbf16>
    linalg.copy ins(%k : memref<1x1x16x32xbf16>) outs(%kt : memref<1x1x16x32xbf16>)
    %vt = memref.alloc() : memref<1x1x16x32xbf16>
    linalg.copy ins(%v : memref<1x1x16x32xbf16>) outs(%vt : memref<1x1x16x32xbf16>)
    %s = memref.alloc() : memref<1x2x16x16xf32>
    linalg.fill ins(%zero : f32) outs(%s : memref<1x2x16x16xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qt, %kt : memref<1x2x16x32xbf16>, memref<1x1x16x32xbf16>) outs(%s : memref<1x2x16x16xf32>) {
    ^bb0(%a: bf16, %bb: bf16, %c: f32):
      %0 = arith.extf %a : bf16 to f32
      %1 = arith.extf %bb : bf16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %c, %2 : f32
      linalg.yield %3 : f32
    }
    %mx = memref.alloc() : memref<1x2x16xf32>
    linalg.fill ins(%ninf : f32) outs(%mx : memref<1x2x16xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x16x16xf32>) outs(%mx : memref<1x2x16xf32>) {
    ^bb0(%a: f32, %c: f32):
      %0 = arith.maximumf %a, %c : f32
      linalg.yield %0 : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%mx : memref<1x2x16xf32>) outs(%s : memref<1x2x16x16xf32>) {
    ^bb0(%a: f32, %c: f32):
      %h = linalg.index 1 : index
      %hf = arith.index_cast %h : index to i32
      %f = arith.sitofp %hf : i32 to f32
      %0 = arith.subf %c, %a : f32
      %1 = math.exp %0 : f32
      %2 = arith.addf %1, %f : f32
      linalg.yield %2 : f32
    }
    %acc = memref.alloc() : memref<1x2x16x32xf32>
    linalg.fill ins(%zero : f32) outs(%acc : memref<1x2x16x32xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%s, %vt : memref<1x2x16x16xf32>, memref<1x1x16x32xbf16>) outs(%acc : memref<1x2x16x32xf32>) {
    ^bb0(%a: f32, %bb: bf16, %c: f32):
      %0 = arith.extf %bb : bf16 to f32
      %1 = arith.mulf %a, %0 : f32
      %2 = arith.addf %c, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%acc : memref<1x2x16x32xf32>) outs(%o : memref<1x2x16x32xbf16>) {
    ^bb0(%a: f32, %c: bf16):
      %0 = arith.truncf %a : f32 to bf16
      linalg.yield %0 : bf16
    }
  } {dat.origin = "dat.attention"}
  return
}

func.func @one_staging_op(%q: memref<1x64x4x32xbf16>, %k: memref<1x64x4x32xbf16>, %v: memref<1x64x4x32xbf16>, %o: memref<1x4x64x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c48 = arith.constant 48 : index
  %scale = arith.constant 0.176776695 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.000000e+00 : f32
  scf.forall (%h, %i) = (0, 0) to (4, 64) step (1, 32) {
    %qs = memref.subview %q[0, %i, %h, 0] [1, 32, 1, 32] [1, 1, 1, 1] : memref<1x64x4x32xbf16> to memref<1x32x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>
    %qt = memref.alloc() : memref<1x1x32x32xbf16>
    linalg.transpose ins(%qs : memref<1x32x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>) outs(%qt : memref<1x1x32x32xbf16>) permutation = [0, 2, 1, 3]
    %os = memref.subview %o[0, %h, %i, 0] [1, 1, 32, 32] [1, 1, 1, 1] : memref<1x4x64x32xbf16> to memref<1x1x32x32xbf16, strided<[8192, 2048, 32, 1], offset: ?>>
    %m = memref.alloc() : memref<1x1x32xf32>
    linalg.fill ins(%ninf : f32) outs(%m : memref<1x1x32xf32>)
    %l = memref.alloc() : memref<1x1x32xf32>
    linalg.fill ins(%zero : f32) outs(%l : memref<1x1x32xf32>)
    %acc = memref.alloc() : memref<1x1x32x32xf32>
    linalg.fill ins(%zero : f32) outs(%acc : memref<1x1x32x32xf32>)
    %vs0 = memref.subview %v[0, 0, %h, 0] [1, 64, 1, 32] [1, 1, 1, 1] : memref<1x64x4x32xbf16> to memref<1x64x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>
    %vall = memref.alloc() : memref<1x1x64x32xbf16>
    linalg.transpose ins(%vs0 : memref<1x64x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>) outs(%vall : memref<1x1x64x32xbf16>) permutation = [0, 2, 1, 3]
    scf.for %j = %c0 to %c64 step %c48 {
      %n = affine.min affine_map<(d0) -> (-d0 + 64, 48)>(%j)
      %ks = memref.subview %k[0, %j, %h, 0] [1, %n, 1, 32] [1, 1, 1, 1] : memref<1x64x4x32xbf16> to memref<1x?x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>
      %kt = memref.alloc(%n) : memref<1x1x?x32xbf16>
      linalg.transpose ins(%ks : memref<1x?x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>) outs(%kt : memref<1x1x?x32xbf16>) permutation = [0, 2, 1, 3]
      %s = memref.alloc(%n) : memref<1x1x32x?xf32>
      linalg.fill ins(%zero : f32) outs(%s : memref<1x1x32x?xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qt, %kt : memref<1x1x32x32xbf16>, memref<1x1x?x32xbf16>) outs(%s : memref<1x1x32x?xf32>) {
      ^bb0(%a: bf16, %b: bf16, %c: f32):
        %0 = arith.extf %b : bf16 to f32
        %1 = arith.extf %a : bf16 to f32
        %2 = arith.mulf %1, %0 : f32
        %3 = arith.addf %c, %2 : f32
        linalg.yield %3 : f32
      }
      // Scale, and the causal mask (key j visible from query i + j0 ... as
      // the flash decomposition writes it: index arithmetic in the body).
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%s : memref<1x1x32x?xf32>) {
      ^bb0(%c: f32):
        %r = linalg.index 2 : index
        %rr = arith.addi %r, %i : index
        %cc = linalg.index 3 : index
        %col = arith.addi %cc, %j : index
        %ok = arith.cmpi sle, %col, %rr : index
        %0 = arith.mulf %c, %scale : f32
        %1 = arith.select %ok, %0, %ninf : f32
        linalg.yield %1 : f32
      }
      %mx = memref.alloc() : memref<1x1x32xf32>
      linalg.fill ins(%ninf : f32) outs(%mx : memref<1x1x32xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x1x32x?xf32>) outs(%mx : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.maximumf %a, %c : f32
        linalg.yield %0 : f32
      }
      %alpha = memref.alloc() : memref<1x1x32xf32>
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m, %mx : memref<1x1x32xf32>, memref<1x1x32xf32>) outs(%alpha : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %b: f32, %c: f32):
        %0 = arith.maximumf %a, %b : f32
        %1 = arith.cmpf oeq, %0, %ninf : f32
        %2 = arith.select %1, %zero, %0 : f32
        %3 = arith.subf %a, %2 : f32
        %4 = math.exp %3 : f32
        linalg.yield %4 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%mx : memref<1x1x32xf32>) outs(%m : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.maximumf %c, %a : f32
        linalg.yield %0 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%m : memref<1x1x32xf32>) outs(%s : memref<1x1x32x?xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.cmpf oeq, %a, %ninf : f32
        %1 = arith.select %0, %zero, %a : f32
        %2 = arith.subf %c, %1 : f32
        %3 = math.exp %2 : f32
        linalg.yield %3 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%alpha : memref<1x1x32xf32>) outs(%l : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.mulf %c, %a : f32
        linalg.yield %0 : f32
      }
      %sum = memref.alloc() : memref<1x1x32xf32>
      linalg.fill ins(%zero : f32) outs(%sum : memref<1x1x32xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x1x32x?xf32>) outs(%sum : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.addf %a, %c : f32
        linalg.yield %0 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sum : memref<1x1x32xf32>) outs(%l : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.addf %c, %a : f32
        linalg.yield %0 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alpha : memref<1x1x32xf32>) outs(%acc : memref<1x1x32x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.mulf %c, %a : f32
        linalg.yield %0 : f32
      }
      %vt = memref.subview %vall[0, 0, %j, 0] [1, 1, %n, 32] [1, 1, 1, 1] : memref<1x1x64x32xbf16> to memref<1x1x?x32xbf16, strided<[2048, 2048, 32, 1], offset: ?>>
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%s, %vt : memref<1x1x32x?xf32>, memref<1x1x?x32xbf16, strided<[2048, 2048, 32, 1], offset: ?>>) outs(%acc : memref<1x1x32x32xf32>) {
      ^bb0(%a: f32, %b: bf16, %c: f32):
        %0 = arith.extf %b : bf16 to f32
        %1 = arith.mulf %a, %0 : f32
        %2 = arith.addf %c, %1 : f32
        linalg.yield %2 : f32
      }
      memref.dealloc %kt : memref<1x1x?x32xbf16>
      memref.dealloc %s : memref<1x1x32x?xf32>
      memref.dealloc %mx : memref<1x1x32xf32>
      memref.dealloc %alpha : memref<1x1x32xf32>
      memref.dealloc %sum : memref<1x1x32xf32>
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%acc, %l : memref<1x1x32x32xf32>, memref<1x1x32xf32>) outs(%os : memref<1x1x32x32xbf16, strided<[8192, 2048, 32, 1], offset: ?>>) {
    ^bb0(%a: f32, %b: f32, %c: bf16):
      %0 = arith.cmpf oeq, %b, %zero : f32
      %1 = arith.divf %a, %b : f32
      %2 = arith.select %0, %zero, %1 : f32
      %3 = arith.truncf %2 : f32 to bf16
      linalg.yield %3 : bf16
    }
    memref.dealloc %qt : memref<1x1x32x32xbf16>
    memref.dealloc %m : memref<1x1x32xf32>
    memref.dealloc %l : memref<1x1x32xf32>
    memref.dealloc %acc : memref<1x1x32x32xf32>
    memref.dealloc %vall : memref<1x1x64x32xbf16>
  } {dat.origin = "dat.attention"}
  return
}

func.func @read_through_view(%q: memref<1x64x4x32xbf16>, %k: memref<1x64x4x32xbf16>, %v: memref<1x64x4x32xbf16>, %o: memref<1x4x64x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c48 = arith.constant 48 : index
  %scale = arith.constant 0.176776695 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.000000e+00 : f32
  scf.forall (%h, %i) = (0, 0) to (4, 64) step (1, 32) {
    %qs = memref.subview %q[0, %i, %h, 0] [1, 32, 1, 32] [1, 1, 1, 1] : memref<1x64x4x32xbf16> to memref<1x32x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>
    %qt = memref.alloc() : memref<1x1x32x32xbf16>
    linalg.transpose ins(%qs : memref<1x32x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>) outs(%qt : memref<1x1x32x32xbf16>) permutation = [0, 2, 1, 3]
    %os = memref.subview %o[0, %h, %i, 0] [1, 1, 32, 32] [1, 1, 1, 1] : memref<1x4x64x32xbf16> to memref<1x1x32x32xbf16, strided<[8192, 2048, 32, 1], offset: ?>>
    %m = memref.alloc() : memref<1x1x32xf32>
    linalg.fill ins(%ninf : f32) outs(%m : memref<1x1x32xf32>)
    %l = memref.alloc() : memref<1x1x32xf32>
    linalg.fill ins(%zero : f32) outs(%l : memref<1x1x32xf32>)
    %acc = memref.alloc() : memref<1x1x32x32xf32>
    linalg.fill ins(%zero : f32) outs(%acc : memref<1x1x32x32xf32>)
    %vs0 = memref.subview %v[0, 0, %h, 0] [1, 64, 1, 32] [1, 1, 1, 1] : memref<1x64x4x32xbf16> to memref<1x64x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>
    %vall = memref.alloc() : memref<1x1x64x32xbf16>
    linalg.transpose ins(%vs0 : memref<1x64x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>) outs(%vall : memref<1x1x64x32xbf16>) permutation = [0, 2, 1, 3]
    scf.for %j = %c0 to %c64 step %c48 {
      %n = affine.min affine_map<(d0) -> (-d0 + 64, 48)>(%j)
      %ks = memref.subview %k[0, %j, %h, 0] [1, %n, 1, 32] [1, 1, 1, 1] : memref<1x64x4x32xbf16> to memref<1x?x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>
      %kt = memref.alloc(%n) : memref<1x1x?x32xbf16>
      linalg.transpose ins(%ks : memref<1x?x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>) outs(%kt : memref<1x1x?x32xbf16>) permutation = [0, 2, 1, 3]
      %kv = memref.subview %kt[0, 0, 0, 0] [1, 1, %n, 32] [1, 1, 1, 1] : memref<1x1x?x32xbf16> to memref<1x1x?x32xbf16, strided<[?, ?, 32, 1]>>
      %s = memref.alloc(%n) : memref<1x1x32x?xf32>
      linalg.fill ins(%zero : f32) outs(%s : memref<1x1x32x?xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qt, %kv : memref<1x1x32x32xbf16>, memref<1x1x?x32xbf16, strided<[?, ?, 32, 1]>>) outs(%s : memref<1x1x32x?xf32>) {
      ^bb0(%a: bf16, %b: bf16, %c: f32):
        %0 = arith.extf %b : bf16 to f32
        %1 = arith.extf %a : bf16 to f32
        %2 = arith.mulf %1, %0 : f32
        %3 = arith.addf %c, %2 : f32
        linalg.yield %3 : f32
      }
      // Scale, and the causal mask (key j visible from query i + j0 ... as
      // the flash decomposition writes it: index arithmetic in the body).
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%s : memref<1x1x32x?xf32>) {
      ^bb0(%c: f32):
        %r = linalg.index 2 : index
        %rr = arith.addi %r, %i : index
        %cc = linalg.index 3 : index
        %col = arith.addi %cc, %j : index
        %ok = arith.cmpi sle, %col, %rr : index
        %0 = arith.mulf %c, %scale : f32
        %1 = arith.select %ok, %0, %ninf : f32
        linalg.yield %1 : f32
      }
      %mx = memref.alloc() : memref<1x1x32xf32>
      linalg.fill ins(%ninf : f32) outs(%mx : memref<1x1x32xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x1x32x?xf32>) outs(%mx : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.maximumf %a, %c : f32
        linalg.yield %0 : f32
      }
      %alpha = memref.alloc() : memref<1x1x32xf32>
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m, %mx : memref<1x1x32xf32>, memref<1x1x32xf32>) outs(%alpha : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %b: f32, %c: f32):
        %0 = arith.maximumf %a, %b : f32
        %1 = arith.cmpf oeq, %0, %ninf : f32
        %2 = arith.select %1, %zero, %0 : f32
        %3 = arith.subf %a, %2 : f32
        %4 = math.exp %3 : f32
        linalg.yield %4 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%mx : memref<1x1x32xf32>) outs(%m : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.maximumf %c, %a : f32
        linalg.yield %0 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%m : memref<1x1x32xf32>) outs(%s : memref<1x1x32x?xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.cmpf oeq, %a, %ninf : f32
        %1 = arith.select %0, %zero, %a : f32
        %2 = arith.subf %c, %1 : f32
        %3 = math.exp %2 : f32
        linalg.yield %3 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%alpha : memref<1x1x32xf32>) outs(%l : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.mulf %c, %a : f32
        linalg.yield %0 : f32
      }
      %sum = memref.alloc() : memref<1x1x32xf32>
      linalg.fill ins(%zero : f32) outs(%sum : memref<1x1x32xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x1x32x?xf32>) outs(%sum : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.addf %a, %c : f32
        linalg.yield %0 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sum : memref<1x1x32xf32>) outs(%l : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.addf %c, %a : f32
        linalg.yield %0 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alpha : memref<1x1x32xf32>) outs(%acc : memref<1x1x32x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.mulf %c, %a : f32
        linalg.yield %0 : f32
      }
      %vt = memref.subview %vall[0, 0, %j, 0] [1, 1, %n, 32] [1, 1, 1, 1] : memref<1x1x64x32xbf16> to memref<1x1x?x32xbf16, strided<[2048, 2048, 32, 1], offset: ?>>
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%s, %vt : memref<1x1x32x?xf32>, memref<1x1x?x32xbf16, strided<[2048, 2048, 32, 1], offset: ?>>) outs(%acc : memref<1x1x32x32xf32>) {
      ^bb0(%a: f32, %b: bf16, %c: f32):
        %0 = arith.extf %b : bf16 to f32
        %1 = arith.mulf %a, %0 : f32
        %2 = arith.addf %c, %1 : f32
        linalg.yield %2 : f32
      }
      memref.dealloc %kt : memref<1x1x?x32xbf16>
      memref.dealloc %s : memref<1x1x32x?xf32>
      memref.dealloc %mx : memref<1x1x32xf32>
      memref.dealloc %alpha : memref<1x1x32xf32>
      memref.dealloc %sum : memref<1x1x32xf32>
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%acc, %l : memref<1x1x32x32xf32>, memref<1x1x32xf32>) outs(%os : memref<1x1x32x32xbf16, strided<[8192, 2048, 32, 1], offset: ?>>) {
    ^bb0(%a: f32, %b: f32, %c: bf16):
      %0 = arith.cmpf oeq, %b, %zero : f32
      %1 = arith.divf %a, %b : f32
      %2 = arith.select %0, %zero, %1 : f32
      %3 = arith.truncf %2 : f32 to bf16
      linalg.yield %3 : bf16
    }
    memref.dealloc %qt : memref<1x1x32x32xbf16>
    memref.dealloc %m : memref<1x1x32xf32>
    memref.dealloc %l : memref<1x1x32xf32>
    memref.dealloc %acc : memref<1x1x32x32xf32>
    memref.dealloc %vall : memref<1x1x64x32xbf16>
  } {dat.origin = "dat.attention"}
  return
}

func.func @score_term(%bias: memref<4x64x64xbf16>, %q: memref<1x64x4x32xbf16>, %k: memref<1x64x4x32xbf16>, %v: memref<1x64x4x32xbf16>, %o: memref<1x4x64x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c48 = arith.constant 48 : index
  %scale = arith.constant 0.176776695 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.000000e+00 : f32
  scf.forall (%h, %i) = (0, 0) to (4, 64) step (1, 32) {
    %qs = memref.subview %q[0, %i, %h, 0] [1, 32, 1, 32] [1, 1, 1, 1] : memref<1x64x4x32xbf16> to memref<1x32x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>
    %qt = memref.alloc() : memref<1x1x32x32xbf16>
    linalg.transpose ins(%qs : memref<1x32x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>) outs(%qt : memref<1x1x32x32xbf16>) permutation = [0, 2, 1, 3]
    %os = memref.subview %o[0, %h, %i, 0] [1, 1, 32, 32] [1, 1, 1, 1] : memref<1x4x64x32xbf16> to memref<1x1x32x32xbf16, strided<[8192, 2048, 32, 1], offset: ?>>
    %m = memref.alloc() : memref<1x1x32xf32>
    linalg.fill ins(%ninf : f32) outs(%m : memref<1x1x32xf32>)
    %l = memref.alloc() : memref<1x1x32xf32>
    linalg.fill ins(%zero : f32) outs(%l : memref<1x1x32xf32>)
    %acc = memref.alloc() : memref<1x1x32x32xf32>
    linalg.fill ins(%zero : f32) outs(%acc : memref<1x1x32x32xf32>)
    scf.for %j = %c0 to %c64 step %c48 {
      %n = affine.min affine_map<(d0) -> (-d0 + 64, 48)>(%j)
      %ks = memref.subview %k[0, %j, %h, 0] [1, %n, 1, 32] [1, 1, 1, 1] : memref<1x64x4x32xbf16> to memref<1x?x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>
      %kt = memref.alloc(%n) : memref<1x1x?x32xbf16>
      linalg.transpose ins(%ks : memref<1x?x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>) outs(%kt : memref<1x1x?x32xbf16>) permutation = [0, 2, 1, 3]
      %s = memref.alloc(%n) : memref<1x1x32x?xf32>
      linalg.fill ins(%zero : f32) outs(%s : memref<1x1x32x?xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qt, %kt : memref<1x1x32x32xbf16>, memref<1x1x?x32xbf16>) outs(%s : memref<1x1x32x?xf32>) {
      ^bb0(%a: bf16, %b: bf16, %c: f32):
        %0 = arith.extf %b : bf16 to f32
        %1 = arith.extf %a : bf16 to f32
        %2 = arith.mulf %1, %0 : f32
        %3 = arith.addf %c, %2 : f32
        linalg.yield %3 : f32
      }
      // Scale, plus a term from memory: the head's [rows, keys] block of
      // a [H, N, N] bias (read by each warp as its 16x8 tiles).
      %bs = memref.subview %bias[%h, %i, %j] [1, 32, %n] [1, 1, 1] : memref<4x64x64xbf16> to memref<1x32x?xbf16, strided<[4096, 64, 1], offset: ?>>
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bs : memref<1x32x?xbf16, strided<[4096, 64, 1], offset: ?>>) outs(%s : memref<1x1x32x?xf32>) {
      ^bb0(%t: bf16, %c: f32):
        %0 = arith.mulf %c, %scale : f32
        %1 = arith.extf %t : bf16 to f32
        %2 = arith.addf %0, %1 : f32
        linalg.yield %2 : f32
      }
      %mx = memref.alloc() : memref<1x1x32xf32>
      linalg.fill ins(%ninf : f32) outs(%mx : memref<1x1x32xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x1x32x?xf32>) outs(%mx : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.maximumf %a, %c : f32
        linalg.yield %0 : f32
      }
      %alpha = memref.alloc() : memref<1x1x32xf32>
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m, %mx : memref<1x1x32xf32>, memref<1x1x32xf32>) outs(%alpha : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %b: f32, %c: f32):
        %0 = arith.maximumf %a, %b : f32
        %1 = arith.cmpf oeq, %0, %ninf : f32
        %2 = arith.select %1, %zero, %0 : f32
        %3 = arith.subf %a, %2 : f32
        %4 = math.exp %3 : f32
        linalg.yield %4 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%mx : memref<1x1x32xf32>) outs(%m : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.maximumf %c, %a : f32
        linalg.yield %0 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%m : memref<1x1x32xf32>) outs(%s : memref<1x1x32x?xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.cmpf oeq, %a, %ninf : f32
        %1 = arith.select %0, %zero, %a : f32
        %2 = arith.subf %c, %1 : f32
        %3 = math.exp %2 : f32
        linalg.yield %3 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%alpha : memref<1x1x32xf32>) outs(%l : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.mulf %c, %a : f32
        linalg.yield %0 : f32
      }
      %sum = memref.alloc() : memref<1x1x32xf32>
      linalg.fill ins(%zero : f32) outs(%sum : memref<1x1x32xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x1x32x?xf32>) outs(%sum : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.addf %a, %c : f32
        linalg.yield %0 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sum : memref<1x1x32xf32>) outs(%l : memref<1x1x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.addf %c, %a : f32
        linalg.yield %0 : f32
      }
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%alpha : memref<1x1x32xf32>) outs(%acc : memref<1x1x32x32xf32>) {
      ^bb0(%a: f32, %c: f32):
        %0 = arith.mulf %c, %a : f32
        linalg.yield %0 : f32
      }
      %vs = memref.subview %v[0, %j, %h, 0] [1, %n, 1, 32] [1, 1, 1, 1] : memref<1x64x4x32xbf16> to memref<1x?x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>
      %vt = memref.alloc(%n) : memref<1x1x?x32xbf16>
      linalg.transpose ins(%vs : memref<1x?x1x32xbf16, strided<[8192, 128, 32, 1], offset: ?>>) outs(%vt : memref<1x1x?x32xbf16>) permutation = [0, 2, 1, 3]
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%s, %vt : memref<1x1x32x?xf32>, memref<1x1x?x32xbf16>) outs(%acc : memref<1x1x32x32xf32>) {
      ^bb0(%a: f32, %b: bf16, %c: f32):
        %0 = arith.extf %b : bf16 to f32
        %1 = arith.mulf %a, %0 : f32
        %2 = arith.addf %c, %1 : f32
        linalg.yield %2 : f32
      }
      memref.dealloc %kt : memref<1x1x?x32xbf16>
      memref.dealloc %s : memref<1x1x32x?xf32>
      memref.dealloc %mx : memref<1x1x32xf32>
      memref.dealloc %alpha : memref<1x1x32xf32>
      memref.dealloc %sum : memref<1x1x32xf32>
      memref.dealloc %vt : memref<1x1x?x32xbf16>
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%acc, %l : memref<1x1x32x32xf32>, memref<1x1x32xf32>) outs(%os : memref<1x1x32x32xbf16, strided<[8192, 2048, 32, 1], offset: ?>>) {
    ^bb0(%a: f32, %b: f32, %c: bf16):
      %0 = arith.cmpf oeq, %b, %zero : f32
      %1 = arith.divf %a, %b : f32
      %2 = arith.select %0, %zero, %1 : f32
      %3 = arith.truncf %2 : f32 to bf16
      linalg.yield %3 : bf16
    }
    memref.dealloc %qt : memref<1x1x32x32xbf16>
    memref.dealloc %m : memref<1x1x32xf32>
    memref.dealloc %l : memref<1x1x32xf32>
    memref.dealloc %acc : memref<1x1x32x32xf32>
  } {dat.origin = "dat.attention"}
  return
}
