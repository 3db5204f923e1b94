// RUN: dat-opt %s --dat-gpu-map-tiles | FileCheck %s --check-prefix=GPU
// RUN: dat-opt %s --dat-gpu-map-tiles="emulate=true" | FileCheck %s --check-prefix=EMU
// RUN: dat-opt %s --dat-gpu-map-tiles="async-copies=false" | FileCheck %s --check-prefix=SYNC
// RUN: dat-opt %s --dat-gpu-map-tiles="warp-rows=false" | FileCheck %s --check-prefix=BLOCK
// RUN: dat-opt %s --dat-gpu-map-tiles | dat-opt --gpu-kernel-outlining --dat-gpu-warp-mma-to-nvvm --canonicalize --convert-nvgpu-to-nvvm | FileCheck %s --check-prefix=NVVM

// The staging copies of an attention tile's key loop (pipelineStagingCopies,
// lib/Conversion/GPU/PipelineStagingCopies.cpp): the causal bf16 tile of
// map-tiles-warp-rows.mlir (32 query rows, d = 32, key blocks of 48 of 64
// keys: the second is partial), whose key loop stages the key block, then
// computes the scores, stages the value block and computes P·V, with a
// barrier after each copy.
//
// Each copy is issued right after the barrier before it, its barrier stays
// where the copy was: the value block is copied while the warps compute the
// scores (issued after the key block's barrier), the next key block while
// they compute P·V (after the value block's barrier: the keys are no longer
// read), and the first key block before the loop. On the GPU the copies
// are cp.async (nvgpu.device_async_copy, 16 bytes around L1), committed as
// a group each, and each barrier waits for them first.

// GPU-LABEL: func.func @attention
// The query tile: a synchronous copy and its barrier.
// GPU: vector.store
// GPU: gpu.barrier
// The first key block, before the loop, where the loop has an iteration.
// GPU: %[[HAS:.+]] = arith.cmpi slt, %c0{{.*}}, %c64
// GPU: scf.if %[[HAS]] {
// GPU:   affine.min #{{.+}}(%c0
// GPU:   nvgpu.device_async_copy {{.+}}, 8 {bypassL1} : memref<1x?x1x32xbf16, {{.+}}> to memref<1x1x?x32xbf16, #gpu.address_space<workgroup>>
// GPU:   nvvm.cp.async.commit.group
// GPU: scf.for %[[IV:.+]] = %c0{{.*}} to %c64{{.*}} step %c48{{.*}} iter_args
// The key block is ready; the value block is issued before the scores.
// GPU:   nvvm.cp.async.wait.group 0
// GPU-NEXT: gpu.barrier
// GPU:   nvgpu.device_async_copy
// GPU:   nvvm.cp.async.commit.group
// GPU:   vector.contract
// GPU:   vector.multi_reduction <maximumf>
// The value block is ready; the next key block is issued before P·V.
// GPU:   nvvm.cp.async.wait.group 0
// GPU-NEXT: gpu.barrier
// GPU:   %[[NEXT:.+]] = arith.addi %[[IV]], %c48
// GPU:   %[[MORE:.+]] = arith.cmpi slt, %[[NEXT]], %c64
// GPU:   scf.if %[[MORE]] {
// GPU:     affine.min #{{.+}}(%[[NEXT]])
// GPU:     memref.subview %{{.+}}[0, %[[NEXT]], %{{.+}}, 0]
// GPU:     nvgpu.device_async_copy
// GPU:     nvvm.cp.async.commit.group
// GPU:   vector.insert_strided_slice
// GPU:   vector.contract
// GPU-NOT: gpu.barrier
// GPU:   scf.yield
// GPU-NOT: nvgpu.device_async_copy
// GPU: gpu.terminator

// The block-wide mapping (every linalg op of the tile over the block's
// threads, a barrier after each) issues the value block at the same place:
// right after the key block's barrier, past the barriers of the scores and
// the softmax steps between, and waits for it before P·V.
// BLOCK-LABEL: func.func @attention
// BLOCK: scf.for
// BLOCK:   nvvm.cp.async.wait.group 0
// BLOCK-NEXT: gpu.barrier
// BLOCK-NOT: nvvm.cp.async.wait.group
// BLOCK:   nvgpu.device_async_copy
// BLOCK:   nvvm.cp.async.commit.group
// BLOCK-NOT: nvvm.cp.async.wait.group
// BLOCK:   vector.contract
// BLOCK-NOT: nvvm.cp.async.wait.group
// BLOCK:   math.exp
// BLOCK:   nvvm.cp.async.wait.group 0
// BLOCK-NEXT: gpu.barrier
// BLOCK:   vector.contract

// The emulation runs the same order with synchronous copies and no
// barriers: the first key block before the key loop, the value block before
// the scores, the next key block after them.
// EMU-LABEL: func.func @attention
// EMU-NOT: gpu.
// EMU-NOT: nvvm.
// EMU: scf.if
// EMU: vector.store
// EMU: scf.for %[[IV:.+]] = %c0{{.*}} to %c64{{.*}} step %c48{{.*}} iter_args
// EMU:   vector.store
// EMU:   vector.contract
// EMU:   %[[NEXT:.+]] = arith.addi %[[IV]], %c48
// EMU:   scf.if
// EMU:     vector.store
// EMU:   vector.contract
// EMU:   scf.yield
// EMU-NOT: gpu.barrier
// EMU-NOT: nvvm.

// Without async-copies: each copy where it was, a barrier after it.
// SYNC-LABEL: func.func @attention
// SYNC-NOT: nvgpu.device_async_copy
// SYNC-NOT: nvvm.cp.async
// SYNC: scf.for {{.*}} iter_args
// SYNC-NOT: nvgpu.device_async_copy
// SYNC:   vector.store
// SYNC:   gpu.barrier
// SYNC:   vector.contract
// SYNC-NOT: nvgpu.device_async_copy
// SYNC-NOT: nvvm.cp.async
// SYNC: scf.yield

// In the kernel, after nvgpu's conversion: 16-byte cp.async.cg.
// NVVM-LABEL: gpu.func @attention_attention_tile
// NVVM: nvvm.cp.async.shared.global %{{.+}}, %{{.+}}, 16, cache = cg
// NVVM: nvvm.cp.async.commit.group
// NVVM: nvvm.cp.async.wait.group 0

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
