// RUN: dat-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(dat-gpu-swizzle-shared-tiles))' | FileCheck %s
// RUN: dat-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(dat-gpu-swizzle-shared-tiles{report-conflicts=true}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// A tile buffer of 64 bf16 per row (128 bytes) is swizzled: every access,
// the staging store through the generic-space cast and the ldmatrix alike,
// reads column c ^ ((row mod 8) * 8) of its row. A buffer of 24 bf16 per
// row is left alone (rows of 48 bytes), and so is one with a use the pass
// cannot take (a vector.load of a whole chunk from a column not known to
// start one).

// CHECK-LABEL: gpu.func @tiles
// CHECK-DAG: %[[V:.+]] = memref.view %{{.+}}[%c0][] {{.+}} to memref<64x64xbf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[CAST:.+]] = memref.memory_space_cast %[[V]]
// CHECK: %[[SR:.+]] = arith.remui %[[ROW:.+]], %c8
// CHECK: %[[SK:.+]] = arith.muli %[[SR]], %c8
// CHECK: %[[SC:.+]] = arith.xori %[[COL:.+]], %[[SK]]
// CHECK: memref.store %{{.+}}, %[[CAST]][%[[ROW]], %[[SC]]]
// CHECK: gpu.barrier
// CHECK: %[[LR:.+]] = arith.remui %[[LROW:.+]], %c8
// CHECK: %[[LK:.+]] = arith.muli %[[LR]], %c8
// CHECK: %[[LC:.+]] = arith.xori %[[LCOL:.+]], %[[LK]]
// CHECK: nvgpu.ldmatrix %[[V]][%[[LROW]], %[[LC]]]
// CHECK-NOT: arith.xori
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : memref<64x24xbf16
// CHECK-NOT: arith.xori
// CHECK: vector.load
// CHECK-NOT: arith.xori
gpu.module @m {
  gpu.func @tiles(%x: bf16, %i: index, %j: index, %o: memref<8xbf16>) kernel {
    %c0 = arith.constant 0 : index
    %c8192 = arith.constant 8192 : index
    %c12288 = arith.constant 12288 : index
    %sh = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %v = memref.view %sh[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xbf16, #gpu.address_space<workgroup>>
    %g = memref.memory_space_cast %v : memref<64x64xbf16, #gpu.address_space<workgroup>> to memref<64x64xbf16>
    memref.store %x, %g[%i, %j] : memref<64x64xbf16>
    gpu.barrier
    %m = nvgpu.ldmatrix %v[%i, %j] {numTiles = 4 : i32, transpose = false} : memref<64x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
    %narrow = memref.view %sh[%c8192][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x24xbf16, #gpu.address_space<workgroup>>
    memref.store %x, %narrow[%i, %j] : memref<64x24xbf16, #gpu.address_space<workgroup>>
    %w = memref.view %sh[%c12288][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8x64xbf16, #gpu.address_space<workgroup>>
    memref.store %x, %w[%i, %j] : memref<8x64xbf16, #gpu.address_space<workgroup>>
    %r = vector.load %w[%i, %j] : memref<8x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
    vector.store %r, %o[%c0] : memref<8xbf16>, vector<8xbf16>
    gpu.return
  }
}

// -----

// Views that may overlap (the second starts inside the first): no buffer
// of the memory is swizzled, since a swizzled one could be seen unswizzled
// through the other.

// CHECK-LABEL: gpu.func @overlap
// CHECK-NOT: arith.xori
gpu.module @m {
  gpu.func @overlap(%x: bf16, %i: index, %j: index) kernel {
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    %sh = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %a = memref.view %sh[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8x64xbf16, #gpu.address_space<workgroup>>
    %b = memref.view %sh[%c128][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8x64xbf16, #gpu.address_space<workgroup>>
    memref.store %x, %a[%i, %j] : memref<8x64xbf16, #gpu.address_space<workgroup>>
    memref.store %x, %b[%i, %j] : memref<8x64xbf16, #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

// A vectorized staging copy's 16-byte stores (8 bf16 from a multiple of 8)
// are whole chunks: swizzled like the rest; the alignment checks' address
// queries are not accesses. A vector store not known to start a chunk
// leaves its buffer alone.

// CHECK-LABEL: gpu.func @vectors
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: %[[C8:.+]] = arith.muli %{{.+}}, %c8
// CHECK: %[[K:.+]] = arith.muli %{{.+}}, %c8
// CHECK: %[[S:.+]] = arith.xori %[[C8]], %[[K]]
// CHECK: vector.store %{{.+}}, %{{.+}}[%{{.+}}, %[[S]]]
// CHECK-NOT: arith.xori
// CHECK: vector.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : memref<8x64xbf16
gpu.module @m {
  gpu.func @vectors(%v: vector<8xbf16>, %i: index, %j: index) kernel {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c1024 = arith.constant 1024 : index
    %sh = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %a = memref.view %sh[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8x64xbf16, #gpu.address_space<workgroup>>
    %g = memref.memory_space_cast %a : memref<8x64xbf16, #gpu.address_space<workgroup>> to memref<8x64xbf16>
    %p = memref.extract_aligned_pointer_as_index %g : memref<8x64xbf16> -> index
    %col = arith.muli %j, %c8 : index
    vector.store %v, %g[%i, %col] {alignment = 16 : i64} : memref<8x64xbf16>, vector<8xbf16>
    %b = memref.view %sh[%c1024][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8x64xbf16, #gpu.address_space<workgroup>>
    vector.store %v, %b[%i, %j] : memref<8x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
    gpu.return
  }
}

// -----

// A pipelined key block (dat-gpu-map-tiles async-copies): its next block is
// copied by cp.async through another view of the same bytes (here the key
// loop's view, of the block's dynamic length, and the prefetch's, of a whole
// block). The views are one buffer: both are swizzled, the cp.async's
// destination (16 bytes from a multiple of 8 bf16: a whole chunk) like the
// ldmatrix that reads it; its global source is not.

// CHECK-LABEL: gpu.func @async_copy
// CHECK: %[[C8:.+]] = arith.muli %{{.+}}, %c8
// CHECK: %[[K:.+]] = arith.muli %{{.+}}, %c8
// CHECK: %[[S:.+]] = arith.xori %[[C8]], %[[K]]
// CHECK: nvgpu.device_async_copy %{{.+}}[%{{.+}}, %[[C8]]], %{{.+}}[%{{.+}}, %[[S]]], 8
// CHECK: arith.xori
// CHECK: nvgpu.ldmatrix
gpu.module @m {
  gpu.func @async_copy(%src: memref<64x64xbf16>, %n: index, %i: index, %j: index) kernel {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %sh = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %next = memref.view %sh[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xbf16, #gpu.address_space<workgroup>>
    %col = arith.muli %j, %c8 : index
    %t = nvgpu.device_async_copy %src[%i, %col], %next[%i, %col], 8 {bypassL1} : memref<64x64xbf16> to memref<64x64xbf16, #gpu.address_space<workgroup>>
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    gpu.barrier
    %block = memref.view %sh[%c0][%n] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?x64xbf16, #gpu.address_space<workgroup>>
    %m = nvgpu.ldmatrix %block[%i, %col] {numTiles = 4 : i32, transpose = false} : memref<?x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
    gpu.return
  }
}

// -----

// Two views of the same bytes with rows of different lengths are not one
// buffer's: neither is swizzled.

// CHECK-LABEL: gpu.func @same_bytes_other_rows
// CHECK-NOT: arith.xori
gpu.module @m {
  gpu.func @same_bytes_other_rows(%x: bf16, %i: index, %j: index) kernel {
    %c0 = arith.constant 0 : index
    %sh = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %a = memref.view %sh[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8x64xbf16, #gpu.address_space<workgroup>>
    %b = memref.view %sh[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4x128xbf16, #gpu.address_space<workgroup>>
    memref.store %x, %a[%i, %j] : memref<8x64xbf16, #gpu.address_space<workgroup>>
    memref.store %x, %b[%i, %j] : memref<4x128xbf16, #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

// The mma fragments' paired loads (dat-gpu-map-tiles mma-pairs): 2 bf16 from
// an even column stay inside a chunk, so the key block they read where
// ldmatrix cannot is swizzled with its ldmatrix (session 38 left it
// unswizzled: an 8-way conflict on every ldmatrix of the block). A pair from
// a column not known to be even could straddle two chunks: that buffer is
// left alone, and with report-conflicts its ldmatrix read is reported.

// CHECK-LABEL: gpu.func @pairs
// CHECK: %[[P:.+]] = arith.muli %{{.+}}, %c2
// CHECK: %[[K:.+]] = arith.muli %{{.+}}, %c8
// CHECK: %[[S:.+]] = arith.xori %[[P]], %[[K]]
// CHECK: vector.load %{{.+}}[%{{.+}}, %[[S]]] : memref<?x64xbf16>, vector<2xbf16>
// CHECK: arith.xori
// CHECK: nvgpu.ldmatrix
// CHECK-NOT: arith.xori
// CHECK: vector.load %{{.+}}[%{{.+}}, %{{.+}}] : memref<64x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK-NOT: arith.xori
// CHECK: gpu.return
// REPORT-NOT: remark
// REPORT: remark: ldmatrix reads this shared buffer unswizzled: 8-way bank conflicts
// REPORT-NEXT: %odd = memref.view
// REPORT: note: read here
// REPORT-NEXT: %n = nvgpu.ldmatrix %odd
// REPORT-NOT: remark
gpu.module @m {
  gpu.func @pairs(%len: index, %i: index, %j: index) kernel {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c8192 = arith.constant 8192 : index
    %sh = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %block = memref.view %sh[%c0][%len] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?x64xbf16, #gpu.address_space<workgroup>>
    %g = memref.memory_space_cast %block : memref<?x64xbf16, #gpu.address_space<workgroup>> to memref<?x64xbf16>
    %even = arith.muli %j, %c2 : index
    %p = vector.load %g[%i, %even] : memref<?x64xbf16>, vector<2xbf16>
    %m = nvgpu.ldmatrix %block[%i, %even] {numTiles = 4 : i32, transpose = false} : memref<?x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
    %odd = memref.view %sh[%c8192][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xbf16, #gpu.address_space<workgroup>>
    %q = vector.load %odd[%i, %j] : memref<64x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
    %n = nvgpu.ldmatrix %odd[%i, %even] {numTiles = 4 : i32, transpose = false} : memref<64x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
    gpu.return
  }
}

// -----

// The pipelined key loop's first block is copied before the loop through a
// cast of a whole block's view to the loop's dynamic length (dat-gpu-map
// -tiles async-copies). The cast keeps the layout: the copy is swizzled like
// the loop's ldmatrix (session 40 left the key block unswizzled so).

// CHECK-LABEL: gpu.func @cast
// CHECK: %[[V:.+]] = memref.view
// CHECK: %[[C:.+]] = memref.cast %[[V]]
// CHECK: %[[S:.+]] = arith.xori
// CHECK: nvgpu.device_async_copy %{{.+}}, %[[C]][%{{.+}}, %[[S]]], 8
// CHECK: arith.xori
// CHECK: nvgpu.ldmatrix
gpu.module @m {
  gpu.func @cast(%src: memref<64x64xbf16>, %n: index, %i: index, %j: index) kernel {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %sh = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %first = memref.view %sh[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x64xbf16, #gpu.address_space<workgroup>>
    %dyn = memref.cast %first : memref<64x64xbf16, #gpu.address_space<workgroup>> to memref<?x64xbf16, #gpu.address_space<workgroup>>
    %col = arith.muli %j, %c8 : index
    %t = nvgpu.device_async_copy %src[%i, %col], %dyn[%i, %col], 8 {bypassL1} : memref<64x64xbf16> to memref<?x64xbf16, #gpu.address_space<workgroup>>
    nvvm.cp.async.commit.group
    nvvm.cp.async.wait.group 0
    gpu.barrier
    %block = memref.view %sh[%c0][%n] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?x64xbf16, #gpu.address_space<workgroup>>
    %m = nvgpu.ldmatrix %block[%i, %col] {numTiles = 4 : i32, transpose = false} : memref<?x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
    gpu.return
  }
}

// -----

// Rows of 64 bytes (32 bf16: relational attention's key blocks where
// d_model / relations is 32) share a 128-byte line two by two: chunk c of
// row r lives at c ^ ((r / 2) mod 4). Rows of 32 bytes: c ^ ((r / 4) mod 2).
// Rows of 48 bytes are left alone.

// CHECK-LABEL: gpu.func @narrow_rows
// CHECK: %[[L:.+]] = arith.divui %[[R:.+]], %c2
// CHECK: %[[M:.+]] = arith.remui %[[L]], %c4
// CHECK: %[[K:.+]] = arith.muli %[[M]], %c8
// CHECK: %[[S:.+]] = arith.xori %[[C:.+]], %[[K]]
// CHECK: nvgpu.ldmatrix %{{.+}}[%[[R]], %[[S]]] {{.+}} : memref<64x32xbf16
// CHECK: %[[L2:.+]] = arith.divui %[[R]], %c4
// CHECK: %[[M2:.+]] = arith.remui %[[L2]], %c2
// CHECK: %[[K2:.+]] = arith.muli %[[M2]], %c8
// CHECK: %[[S2:.+]] = arith.xori %{{.+}}, %[[K2]]
// CHECK: nvgpu.ldmatrix %{{.+}}[%[[R]], %[[S2]]] {{.+}} : memref<64x16xbf16
// CHECK-NOT: arith.xori
// CHECK: nvgpu.ldmatrix %{{.+}} : memref<64x24xbf16
gpu.module @m {
  gpu.func @narrow_rows(%i: index, %j: index) kernel {
    %c0 = arith.constant 0 : index
    %c4096 = arith.constant 4096 : index
    %c6144 = arith.constant 6144 : index
    %c8 = arith.constant 8 : index
    %sh = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %col = arith.muli %j, %c8 : index
    %a = memref.view %sh[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x32xbf16, #gpu.address_space<workgroup>>
    %m = nvgpu.ldmatrix %a[%i, %col] {numTiles = 4 : i32, transpose = false} : memref<64x32xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
    %b = memref.view %sh[%c4096][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x16xbf16, #gpu.address_space<workgroup>>
    %n = nvgpu.ldmatrix %b[%i, %col] {numTiles = 4 : i32, transpose = false} : memref<64x16xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
    %c = memref.view %sh[%c6144][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x24xbf16, #gpu.address_space<workgroup>>
    %o = nvgpu.ldmatrix %c[%i, %col] {numTiles = 4 : i32, transpose = false} : memref<64x24xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
    gpu.return
  }
}

// -----

// A block-wide tile's head-major block (dat.swizzle_outer_dims, from
// dat-gpu-map-tiles): the key is (row + head) mod 8, so that an ldmatrix
// reading one key's rows across 8 heads (HYLA's value network contracts over
// heads) spreads them over the banks; the batch dim of one adds nothing. The
// same buffer in a warp-row program (no attribute) keys by the row alone.

// CHECK-LABEL: gpu.func @outer_dims
// CHECK: %[[V:.+]] = memref.view {{.+}} {dat.swizzle_outer_dims} : {{.+}} to memref<1x16x16x64xbf16
// CHECK: %[[SUM:.+]] = arith.addi %[[ROW:.+]], %[[HEAD:.+]] : index
// CHECK: %[[R:.+]] = arith.remui %[[SUM]], %c8
// CHECK: %[[K:.+]] = arith.muli %[[R]], %c8
// CHECK: %[[C:.+]] = arith.xori %{{.+}}, %[[K]]
// CHECK: nvgpu.ldmatrix %[[V]][%c0, %[[HEAD]], %[[ROW]], %[[C]]]
// CHECK: %[[W:.+]] = memref.view {{.+}}[%c32768][] : {{.+}} to memref<1x16x16x64xbf16
// CHECK-NOT: arith.addi
// CHECK: arith.remui %[[ROW]], %c8
// CHECK: nvgpu.ldmatrix %[[W]][%c0, %[[HEAD]], %[[ROW]], %{{.+}}]
gpu.module @m {
  gpu.func @outer_dims(%h: index, %j: index, %e: index, %o: memref<4x2xbf16>) kernel {
    %c0 = arith.constant 0 : index
    %c32768 = arith.constant 32768 : index
    %sh = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %v = memref.view %sh[%c0][] {dat.swizzle_outer_dims} : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x16x16x64xbf16, #gpu.address_space<workgroup>>
    %m = nvgpu.ldmatrix %v[%c0, %h, %j, %e] {numTiles = 4 : i32, transpose = true} : memref<1x16x16x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
    %w = memref.view %sh[%c32768][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1x16x16x64xbf16, #gpu.address_space<workgroup>>
    %n = nvgpu.ldmatrix %w[%c0, %h, %j, %e] {numTiles = 4 : i32, transpose = true} : memref<1x16x16x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
    %s = arith.addf %m, %n : vector<4x2xbf16>
    vector.store %s, %o[%c0, %c0] : memref<4x2xbf16>, vector<4x2xbf16>
    gpu.return
  }
}
