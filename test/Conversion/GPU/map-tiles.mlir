// RUN: dat-opt %s --split-input-file --dat-gpu-map-tiles | FileCheck %s --check-prefix=GPU
// RUN: dat-opt %s --split-input-file --dat-gpu-map-tiles="shared-memory=0 shared-over-scratch=false" | FileCheck %s --check-prefix=SCRATCH
// Buffers past shared-memory take the SM's shared memory where that holds
// them (shared-over-scratch), else scratch:
// RUN: dat-opt %s --split-input-file --dat-gpu-map-tiles="shared-memory=0" | FileCheck %s --check-prefix=SOS
// RUN: dat-opt %s --split-input-file --dat-gpu-map-tiles="shared-memory=0 whole-sm-shared-memory=128" | FileCheck %s --check-prefix=SCRATCH
// RUN: dat-opt %s --split-input-file --dat-gpu-map-tiles="emulate=true block-size=64" | FileCheck %s --check-prefix=EMU
// RUN: dat-opt %s --split-input-file --dat-gpu-map-tiles="vector-copies=false" | FileCheck %s --check-prefix=SCALAR

// A tile loop (a row block of a softmax-like computation): one kernel with a
// block per iteration of the forall; the tile buffers (bounded by the tile
// size, 32 rows: 128 bytes, and 4 bytes, each aligned to 64; 16 bytes of
// slack for the shared symbol) in dynamic shared memory, or with no shared memory in a
// per-block slice of one scratch buffer; each linalg op strided over the
// threads, a barrier after each; the whole reduction in thread 0.

// GPU-LABEL: func.func @tile
// GPU-NOT: scf.forall
// GPU: %[[SIZE:.+]] = arith.constant 208 : i32
// The kernel is named after its function and what the tile computes.
// GPU: gpu.launch blocks(%[[BX:[a-z0-9]+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %{{.+}}, {{.*}} threads(%[[TX:[a-z0-9]+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c256{{.*}} dynamic_shared_memory_size %[[SIZE]] function(@tile_row_softmax_tile)
// GPU:   %[[SMEM:.+]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// GPU:   %[[ROW:.+]] = arith.remui %[[BX]]
// GPU:   memref.view %[[SMEM]][%{{.+}}][%{{.+}}] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x?xf32, #gpu.address_space<workgroup>>
// GPU:   memref.memory_space_cast
// GPU:   scf.for %{{.+}} = %[[TX]] to %{{.+}} step %c256
// GPU:     math.exp
// GPU:   gpu.barrier
// GPU:   scf.for %{{.+}} = %[[TX]] to %{{.+}} step %c256
// GPU:   gpu.barrier
// GPU:   scf.for %{{.+}} = %[[TX]] to %{{.+}} step %c256
// GPU:     scf.for
// GPU:       arith.addf
// GPU:   gpu.barrier
// GPU:   %[[FIRST:.+]] = arith.cmpi eq, %[[TX]], %c0
// GPU:   scf.if %[[FIRST]]
// GPU:     arith.maximumf
// GPU:   gpu.barrier
// GPU:   scf.for %{{.+}} = %[[TX]] to %{{.+}} step %c256
// GPU:     arith.divf
// GPU:   gpu.barrier
// GPU-NOT: memref.alloc
// GPU-NOT: memref.dealloc
// GPU: gpu.terminator

// SCRATCH-LABEL: func.func @tile
// SCRATCH: %[[BYTES:.+]] = arith.muli %{{.+}}, %c192
// SCRATCH: %[[SCRATCH:.+]] = memref.alloc(%[[BYTES]]) {alignment = 64 : i64} : memref<?xi8>
// SCRATCH: gpu.launch blocks(%[[BX:[a-z0-9]+]], %{{.+}}, %{{.+}}) in
// SCRATCH-NOT: dynamic_shared_memory
// SCRATCH:   %[[BASE:.+]] = arith.muli %[[BX]], %c192
// SCRATCH:   %[[AT:.+]] = arith.addi %[[BASE]], %c0
// SCRATCH:   memref.view %[[SCRATCH]][%[[AT]]][%{{.+}}] : memref<?xi8> to memref<1x?xf32>
// SCRATCH:   %[[AT2:.+]] = arith.addi %[[BASE]], %c128
// SCRATCH:   memref.view %[[SCRATCH]][%[[AT2]]][] : memref<?xi8> to memref<1xf32>
// SCRATCH: gpu.terminator
// SCRATCH: memref.dealloc %[[SCRATCH]]

// SOS-LABEL: func.func @tile
// SOS-NOT: memref.alloc
// SOS: %[[SIZE:.+]] = arith.constant 208 : i32
// SOS: gpu.launch {{.*}} dynamic_shared_memory_size %[[SIZE]]
// SOS-NOT: memref.alloc
// SOS: gpu.terminator

// EMU-LABEL: func.func @tile
// EMU-NOT: gpu.
// EMU: %[[SHARED:.+]] = memref.alloc() {alignment = 64 : i64} : memref<192xi8>
// EMU: scf.for %[[B:[a-z0-9]+]] = %c0{{.*}} to %{{.+}} step %c1
// EMU:   memref.view %[[SHARED]][%{{.+}}][%{{.+}}] : memref<192xi8> to memref<1x?xf32>
// EMU:   scf.for %[[T:[a-z0-9]+]] = %c0{{.*}} to %c64 step %c1
// EMU:     scf.for %{{.+}} = %[[T]] to %{{.+}} step %c64
// EMU:       math.exp
// EMU-NOT: gpu.
// EMU: memref.dealloc %[[SHARED]]
func.func @tile(%x: memref<2x100xf32>, %y: memref<2x100xf32>, %m: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  scf.forall (%b, %i) = (0, 0) to (2, 100) step (1, 32) {
    %n = affine.min affine_map<(d0) -> (-d0 + 100, 32)>(%i)
    %in = memref.subview %x[%b, %i] [1, %n] [1, 1] : memref<2x100xf32> to memref<1x?xf32, strided<[100, 1], offset: ?>>
    %out = memref.subview %y[%b, %i] [1, %n] [1, 1] : memref<2x100xf32> to memref<1x?xf32, strided<[100, 1], offset: ?>>
    %t = memref.alloc(%n) : memref<1x?xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%in : memref<1x?xf32, strided<[100, 1], offset: ?>>) outs(%t : memref<1x?xf32>) {
    ^bb0(%a: f32, %o: f32):
      %e = math.exp %a : f32
      linalg.yield %e : f32
    }
    %s = memref.alloc() : memref<1xf32>
    linalg.fill ins(%zero : f32) outs(%s : memref<1xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                    iterator_types = ["parallel", "reduction"]}
        ins(%t : memref<1x?xf32>) outs(%s : memref<1xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.addf %a, %o : f32
      linalg.yield %r : f32
    }
    // A reduction to a scalar: no parallel iterations, thread 0 runs it.
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                    iterator_types = ["reduction"]}
        ins(%s : memref<1xf32>) outs(%m : memref<f32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.maximumf %a, %o : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%t, %s : memref<1x?xf32>, memref<1xf32>) outs(%out : memref<1x?xf32, strided<[100, 1], offset: ?>>) {
    ^bb0(%a: f32, %d: f32, %o: f32):
      %r = arith.divf %a, %d : f32
      linalg.yield %r : f32
    }
    memref.dealloc %t : memref<1x?xf32>
    memref.dealloc %s : memref<1xf32>
  } {dat.origin = "row softmax"}
  return
}

// -----

// Only the tile loops the dat tiling passes made (marked dat.origin) are
// mapped: another loop, even one the mapping could take, stays as it is
// (the per-op kernels take it). A marked loop the mapping cannot take is an
// error: map-tiles-invalid.mlir.
// GPU-LABEL: func.func @not_a_tile
// GPU: scf.forall
// GPU-NOT: gpu.launch
// SCRATCH-LABEL: func.func @not_a_tile
// EMU-LABEL: func.func @not_a_tile
// EMU: scf.forall
func.func @not_a_tile(%x: memref<4xf32>) {
  %one = arith.constant 1.0 : f32
  scf.forall (%i) in (4) {
    %t = memref.subview %x[%i] [1] [1] : memref<4xf32> to memref<1xf32, strided<[1], offset: ?>>
    linalg.fill ins(%one : f32) outs(%t : memref<1xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// Copies into and out of tile buffers move 16 bytes a thread at a time
// (LDG.128 / STS.128) where both sides are contiguous along an innermost
// dim of whole 16-byte vectors (64 bf16) and, checked at run time, 16-byte
// aligned; the scalar copy otherwise, and always for rows of 36 bf16.

// SCALAR-LABEL: func.func @vector_copy
// SCALAR-NOT: vector.load
// SCALAR: return
// GPU-LABEL: func.func @vector_copy
// GPU: %[[PTR:.+]] = memref.extract_aligned_pointer_as_index %[[SRC:.+]] : memref<16x64xbf16, strided<[64, 1], offset: ?>> -> index
// GPU: %[[OK:.+]] = arith.andi
// GPU: scf.if %[[OK]] {
// GPU:   scf.for
// GPU:     %[[V:.+]] = vector.load %[[SRC]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<16x64xbf16, strided<[64, 1], offset: ?>>, vector<8xbf16>
// GPU:     vector.store %[[V]], %{{.+}}[%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<16x64xbf16>, vector<8xbf16>
// GPU: } else {
// GPU:   memref.load %[[SRC]]
// GPU: gpu.barrier
// GPU: vector.load %{{.+}} {alignment = 16 : i64} : memref<16x64xbf16>, vector<8xbf16>
// GPU: gpu.barrier
// GPU-NOT: vector.load
// GPU: memref.load %{{.+}} : memref<16x36xbf16, strided<[36, 1], offset: ?>>
// GPU-NOT: vector.load
// GPU: return
func.func @vector_copy(%x: memref<64x64xbf16>, %y: memref<64x64xbf16>, %u: memref<64x36xbf16>) {
  scf.forall (%i) = (0) to (64) step (16) {
    %xt = memref.subview %x[%i, 0] [16, 64] [1, 1] : memref<64x64xbf16> to memref<16x64xbf16, strided<[64, 1], offset: ?>>
    %buf = memref.alloc() : memref<16x64xbf16>
    memref.copy %xt, %buf : memref<16x64xbf16, strided<[64, 1], offset: ?>> to memref<16x64xbf16>
    %yt = memref.subview %y[%i, 0] [16, 64] [1, 1] : memref<64x64xbf16> to memref<16x64xbf16, strided<[64, 1], offset: ?>>
    memref.copy %buf, %yt : memref<16x64xbf16> to memref<16x64xbf16, strided<[64, 1], offset: ?>>
    %ut = memref.subview %u[%i, 0] [16, 36] [1, 1] : memref<64x36xbf16> to memref<16x36xbf16, strided<[36, 1], offset: ?>>
    %odd = memref.alloc() : memref<16x36xbf16>
    memref.copy %ut, %odd : memref<16x36xbf16, strided<[36, 1], offset: ?>> to memref<16x36xbf16>
    memref.copy %odd, %ut : memref<16x36xbf16> to memref<16x36xbf16, strided<[36, 1], offset: ?>>
    memref.dealloc %buf : memref<16x64xbf16>
    memref.dealloc %odd : memref<16x36xbf16>
  } {dat.origin = "dat.attention"}
  return
}

// -----

// A contraction reads a block of a global buffer many times: the block is
// staged (copied once by the block's threads, a barrier after) into shared
// memory, ahead of the tile's other buffers, and the contraction reads the
// copy. Here 16 rows × 8 of x: 512 bytes (+16 of slack).
// GPU-LABEL: func.func @staged
// GPU: %[[SIZE:.+]] = arith.constant 528 : i32
// GPU: gpu.launch {{.*}} dynamic_shared_memory_size %[[SIZE]]
// GPU:   %[[SMEM:.+]] = gpu.dynamic_shared_memory
// GPU:   %[[ROWS:.+]] = memref.subview %arg0
// GPU:   %[[V:.+]] = memref.view %[[SMEM]][%c0{{.*}}][] : {{.*}} to memref<16x8xf32, #gpu.address_space<workgroup>>
// GPU:   %[[STAGED:.+]] = memref.memory_space_cast %[[V]]
// GPU:   scf.for
// GPU:     memref.load %[[ROWS]]
// GPU:     memref.store {{.*}}, %[[STAGED]]
// GPU:   gpu.barrier
// GPU:   scf.for
// GPU:     scf.for
// GPU:       memref.load %[[STAGED]]
// GPU:   gpu.barrier
// SCRATCH-LABEL: func.func @staged
// EMU-LABEL: func.func @staged
func.func @staged(%x: memref<64x8xf32>, %w: memref<4x8xf32>, %y: memref<64x4xf32>) {
  scf.forall (%i) = (0) to (64) step (16) {
    %rows = memref.subview %x[%i, 0] [16, 8] [1, 1] : memref<64x8xf32> to memref<16x8xf32, strided<[8, 1], offset: ?>>
    %out = memref.subview %y[%i, 0] [16, 4] [1, 1] : memref<64x4xf32> to memref<16x4xf32, strided<[4, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>,
                                     affine_map<(d0, d1, d2) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%rows, %w : memref<16x8xf32, strided<[8, 1], offset: ?>>, memref<4x8xf32>)
        outs(%out : memref<16x4xf32, strided<[4, 1], offset: ?>>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    }
  } {dat.origin = "projection"}
  return
}

// Shared memory past sm_90's opt-in limit (227 KiB, less the 16 bytes the
// kernels add) would fail at run time in cuFuncSetAttribute: refused here.
// RUN: not dat-opt %s --split-input-file --dat-gpu-map-tiles="shared-memory=232433" 2>&1 | FileCheck %s --check-prefix=TOOMUCH
// TOOMUCH: dat-gpu-map-tiles: shared-memory must be in [0, 232432] bytes
