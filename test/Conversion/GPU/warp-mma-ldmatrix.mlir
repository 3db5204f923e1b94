// RUN: dat-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(dat-gpu-warp-mma-to-nvvm),cse)' | FileCheck %s
// RUN: dat-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(dat-gpu-warp-mma-to-nvvm{ldmatrix=false}))' | FileCheck %s --check-prefix=OFF

// Operand tiles in shared memory (the tile buffers dat-gpu-map-tiles
// stages, used through a cast to the generic address space) are read with
// one ldmatrix each: A (16×16) as .x4, B (8×16, n×k) as .x2, a B whose
// rows (n) are the buffer's contiguous dim (values, [keys, d]) as .x2.trans.
// Lane l addresses row l % 8 of matrix (l / 8) mod the matrices: A's at
// (rows, columns) (8 (m mod 2), 8 (m / 2)), B's at (0, 8 m); with .trans
// the lane's address is a tile column, the matrix's row. A B tile that
// may run past the buffer's end (in_bounds false) is read by ldmatrix only
// where the whole tile is inside (a warp-uniform check), else by the
// lanes' guarded scalar loads.

// CHECK-LABEL: gpu.func @shared
// CHECK-DAG: %[[VA:.+]] = memref.view %{{.+}}[%c0][] {{.+}} to memref<16x64xbf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[VB:.+]] = memref.view %{{.+}}[%c2048][%{{.+}}] {{.+}} to memref<?x64xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[LANE:.+]] = gpu.lane_id
// CHECK: scf.for %[[K:.+]] = %c0 to %c64 step %c16
// CHECK:   %[[R:.+]] = arith.remui %[[LANE]], %c8
// CHECK:   %[[L8:.+]] = arith.divui %[[LANE]], %c8
// CHECK:   %[[MA:.+]] = arith.remui %[[L8]], %c4
// CHECK:   %[[AROW:.+]] = arith.muli %{{.+}}, %c8
// CHECK:   %[[ACOL:.+]] = arith.muli %{{.+}}, %c8
// CHECK:   %[[ROW:.+]] = arith.addi %[[AROW]], %[[R]]
// CHECK:   %[[COL:.+]] = arith.addi %[[K]], %[[ACOL]]
// CHECK:   %[[A:.+]] = nvgpu.ldmatrix %[[VA]][%{{.+}}, %[[COL]]] {numTiles = 4 : i32, transpose = false} : memref<16x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK:   vector.extract %[[A]][3, 1]
// CHECK:   %[[AF:.+]] = vector.from_elements {{.+}} : vector<8xbf16>
// CHECK:   %[[DIM:.+]] = memref.dim %[[VB]], %c0
// CHECK:   %[[FITS:.+]] = arith.cmpi ule, %{{.+}}, %[[DIM]]
// CHECK:   %[[B:.+]] = scf.if %[[FITS]] -> (vector<4xbf16>) {
// CHECK:     nvgpu.ldmatrix %[[VB]][%{{.+}}, %{{.+}}] {numTiles = 2 : i32, transpose = false} : memref<?x64xbf16, #gpu.address_space<workgroup>> -> vector<2x2xbf16>
// CHECK:   } else {
// CHECK:     memref.load
// CHECK:   nvvm.mma.sync
// CHECK:   nvgpu.ldmatrix %[[VB]][%{{.+}}, %{{.+}}] {numTiles = 2 : i32, transpose = true} : memref<?x64xbf16, #gpu.address_space<workgroup>> -> vector<2x2xbf16>
// CHECK:   nvvm.mma.sync
// CHECK-NOT: vector.transfer_read

// OFF-LABEL: gpu.func @shared
// OFF-NOT: nvgpu.ldmatrix
// OFF: nvvm.mma.sync
gpu.module @m {
  gpu.func @shared(%c: memref<16x8xf32>, %n: index) kernel {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c2048 = arith.constant 2048 : index
    %pad = arith.constant 0.0 : bf16
    %zero = arith.constant 0.0 : f32
    %sh = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %va = memref.view %sh[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x64xbf16, #gpu.address_space<workgroup>>
    %a = memref.memory_space_cast %va : memref<16x64xbf16, #gpu.address_space<workgroup>> to memref<16x64xbf16>
    %vb = memref.view %sh[%c2048][%n] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?x64xbf16, #gpu.address_space<workgroup>>
    %b = memref.memory_space_cast %vb : memref<?x64xbf16, #gpu.address_space<workgroup>> to memref<?x64xbf16>
    %acc0 = vector.transfer_read %c[%c0, %c0], %zero {in_bounds = [true, true]} : memref<16x8xf32>, vector<16x8xf32>
    %r = scf.for %k = %c0 to %c64 step %c16 iter_args(%acc = %acc0) -> (vector<16x8xf32>) {
      %ta = vector.transfer_read %a[%c0, %k], %pad {in_bounds = [true, true]} : memref<16x64xbf16>, vector<16x16xbf16>
      %tb = vector.transfer_read %b[%c0, %k], %pad {in_bounds = [false, true]} : memref<?x64xbf16>, vector<8x16xbf16>
      %fa = arith.extf %ta : vector<16x16xbf16> to vector<16x16xf32>
      %fb = arith.extf %tb : vector<8x16xbf16> to vector<8x16xf32>
      %d = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %fa, %fb, %acc : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
      %tv = vector.transfer_read %b[%k, %c16], %pad {in_bounds = [true, true], permutation_map = affine_map<(d0, d1) -> (d1, d0)>} : memref<?x64xbf16>, vector<8x16xbf16>
      %fv = arith.extf %tv : vector<8x16xbf16> to vector<8x16xf32>
      %d2 = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %fa, %fv, %d : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
      scf.yield %d2 : vector<16x8xf32>
    }
    vector.transfer_write %r, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
    gpu.return
  }
}

// -----

// Not read with ldmatrix: global memory; a tile whose first column is not
// known to be a multiple of 8 elements (its rows would not start 16-byte
// aligned); a view at a byte offset not known to be a multiple of 16.

// CHECK-LABEL: gpu.func @scalar
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvgpu.ldmatrix
gpu.module @m {
  gpu.func @scalar(%g: memref<16x64xbf16>, %c: memref<16x8xf32>, %j: index, %shift: index) kernel {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %pad = arith.constant 0.0 : bf16
    %zero = arith.constant 0.0 : f32
    %sh = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %va = memref.view %sh[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x64xbf16, #gpu.address_space<workgroup>>
    %a = memref.memory_space_cast %va : memref<16x64xbf16, #gpu.address_space<workgroup>> to memref<16x64xbf16>
    %vu = memref.view %sh[%shift][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x64xbf16, #gpu.address_space<workgroup>>
    %u = memref.memory_space_cast %vu : memref<16x64xbf16, #gpu.address_space<workgroup>> to memref<16x64xbf16>
    %b = vector.transfer_read %g[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x64xbf16>, vector<8x16xbf16>
    %fb = arith.extf %b : vector<8x16xbf16> to vector<8x16xf32>
    %acc = vector.transfer_read %c[%c0, %c0], %zero {in_bounds = [true, true]} : memref<16x8xf32>, vector<16x8xf32>
    %ta = vector.transfer_read %g[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x64xbf16>, vector<16x16xbf16>
    %fa = arith.extf %ta : vector<16x16xbf16> to vector<16x16xf32>
    %d0 = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %fa, %fb, %acc : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
    %j4 = arith.addi %j, %c4 : index
    %tm = vector.transfer_read %a[%c0, %j4], %pad {in_bounds = [true, true]} : memref<16x64xbf16>, vector<16x16xbf16>
    %fm = arith.extf %tm : vector<16x16xbf16> to vector<16x16xf32>
    %d1 = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %fm, %fb, %d0 : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
    %tu = vector.transfer_read %u[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x64xbf16>, vector<16x16xbf16>
    %fu = arith.extf %tu : vector<16x16xbf16> to vector<16x16xf32>
    %d2 = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %fu, %fb, %d1 : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
    vector.transfer_write %d2, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
    gpu.return
  }
}

// -----

// Two B tiles side by side (readWarpMmaBTiles): one 16×16 read, one
// ldmatrix.x4, split in halves, in B-pair order: lane l addresses row
// l % 8 of matrix m = (l / 8) mod 4 at (rows, columns) (8 (m / 2),
// 8 (m mod 2)), so that rows 0-7 of the pair are the x4's matrices 0 and 1
// (elements 0-3 of the fragment), rows 8-15 matrices 2 and 3 (elements
// 4-7): each B tile's two registers side by side, as mma.sync takes them.
// (In the A order a B tile was registers 0 and 2: ptxas moved them.)

// CHECK-LABEL: gpu.func @pair
// CHECK: %[[R:.+]] = arith.remui %[[LANE:.+]], %c8
// CHECK-NEXT: %[[L8:.+]] = arith.divui %[[LANE]], %c8
// CHECK: %[[MX:.+]] = arith.remui %[[L8]], %c4
// CHECK: %[[LOW:.+]] = arith.remui %[[MX]], %c2
// CHECK: %[[HIGH:.+]] = arith.divui %[[MX]], %c2
// CHECK: %[[ROW8:.+]] = arith.muli %[[HIGH]], %c8
// CHECK: %[[COL8:.+]] = arith.muli %[[LOW]], %c8
// CHECK: %[[ROW:.+]] = arith.addi %[[ROW8]], %[[R]]
// CHECK: %[[M:.+]] = nvgpu.ldmatrix %{{.+}} {numTiles = 4 : i32, transpose = false} : memref<16x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK-DAG: %[[E0:.+]] = vector.extract %[[M]][0, 0]
// CHECK-DAG: %[[E1:.+]] = vector.extract %[[M]][0, 1]
// CHECK-DAG: %[[E2:.+]] = vector.extract %[[M]][1, 0]
// CHECK-DAG: %[[E3:.+]] = vector.extract %[[M]][1, 1]
// CHECK-DAG: %[[E4:.+]] = vector.extract %[[M]][2, 0]
// CHECK-DAG: %[[E5:.+]] = vector.extract %[[M]][2, 1]
// CHECK-DAG: %[[E6:.+]] = vector.extract %[[M]][3, 0]
// CHECK-DAG: %[[E7:.+]] = vector.extract %[[M]][3, 1]
// CHECK: %[[F:.+]] = vector.from_elements %[[E0]], %[[E1]], %[[E2]], %[[E3]], %[[E4]], %[[E5]], %[[E6]], %[[E7]] : vector<8xbf16>
// CHECK-DAG: %[[G0:.+]] = vector.extract %[[F]][0]
// CHECK-DAG: %[[G1:.+]] = vector.extract %[[F]][1]
// CHECK-DAG: %[[G2:.+]] = vector.extract %[[F]][2]
// CHECK-DAG: %[[G3:.+]] = vector.extract %[[F]][3]
// CHECK-DAG: %[[G4:.+]] = vector.extract %[[F]][4]
// CHECK-DAG: %[[G5:.+]] = vector.extract %[[F]][5]
// CHECK-DAG: %[[G6:.+]] = vector.extract %[[F]][6]
// CHECK-DAG: %[[G7:.+]] = vector.extract %[[F]][7]
// CHECK-DAG: vector.from_elements %[[G0]], %[[G1]], %[[G2]], %[[G3]] : vector<4xbf16>
// CHECK-DAG: vector.from_elements %[[G4]], %[[G5]], %[[G6]], %[[G7]] : vector<4xbf16>
// CHECK: nvvm.mma.sync

// Without ldmatrix the lanes' own loads make the A order and the halves
// take its elements 0, 1, 4, 5 and 2, 3, 6, 7, as before.
// OFF-LABEL: gpu.func @pair
// OFF-NOT: nvgpu.ldmatrix
// OFF: scf.if %{{.+}} -> (vector<8xbf16>)
// OFF: %[[F:.+]] = scf.if %{{.+}} -> (vector<8xbf16>)
// OFF: %[[G0:.+]] = vector.extract %[[F]][0]
// OFF-NEXT: %[[G1:.+]] = vector.extract %[[F]][1]
// OFF-NEXT: vector.extract %[[F]][2]
// OFF-NEXT: vector.extract %[[F]][3]
// OFF-NEXT: %[[G4:.+]] = vector.extract %[[F]][4]
// OFF-NEXT: %[[G5:.+]] = vector.extract %[[F]][5]
// OFF-NEXT: vector.extract %[[F]][6]
// OFF-NEXT: vector.extract %[[F]][7]
// OFF-NEXT: vector.from_elements %[[G0]], %[[G1]], %[[G4]], %[[G5]] : vector<4xbf16>
gpu.module @m {
  gpu.func @pair(%a: memref<16x16xbf16>, %c: memref<16x16xf32>) kernel {
    %c0 = arith.constant 0 : index
    %pad = arith.constant 0.0 : bf16
    %zero = arith.constant 0.0 : f32
    %sh = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %vk = memref.view %sh[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x64xbf16, #gpu.address_space<workgroup>>
    %k = memref.memory_space_cast %vk : memref<16x64xbf16, #gpu.address_space<workgroup>> to memref<16x64xbf16>
    %ta = vector.transfer_read %a[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x16xbf16>, vector<16x16xbf16>
    %fa = arith.extf %ta : vector<16x16xbf16> to vector<16x16xf32>
    %pair = vector.transfer_read %k[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x64xbf16>, vector<16x16xbf16>
    %b0 = vector.extract_strided_slice %pair {offsets = [0, 0], sizes = [8, 16], strides = [1, 1]} : vector<16x16xbf16> to vector<8x16xbf16>
    %b1 = vector.extract_strided_slice %pair {offsets = [8, 0], sizes = [8, 16], strides = [1, 1]} : vector<16x16xbf16> to vector<8x16xbf16>
    %f0 = arith.extf %b0 : vector<8x16xbf16> to vector<8x16xf32>
    %f1 = arith.extf %b1 : vector<8x16xbf16> to vector<8x16xf32>
    %acc = vector.transfer_read %c[%c0, %c0], %zero {in_bounds = [true, true]} : memref<16x16xf32>, vector<16x8xf32>
    %d0 = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %fa, %f0, %acc : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
    %d1 = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %fa, %f1, %acc : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
    vector.transfer_write %d0, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x16xf32>
    vector.transfer_write %d1, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x16xf32>
    gpu.return
  }
}

// -----

// A pair of B tiles from global memory (no ldmatrix there): the lanes'
// own loads, in the A order, shuffled to the pairs' (registers 0, 2, 1, 3)
// so that the halves take elements 0-3 and 4-7 as from ldmatrix.

// CHECK-LABEL: gpu.func @pair_global
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: %[[F:.+]] = vector.shuffle %[[A:.+]], %[[A]] [0, 1, 4, 5, 2, 3, 6, 7] : vector<8xbf16>, vector<8xbf16>
// CHECK-DAG: %[[G0:.+]] = vector.extract %[[F]][0]
// CHECK-DAG: %[[G3:.+]] = vector.extract %[[F]][3]
// CHECK-DAG: %[[G4:.+]] = vector.extract %[[F]][4]
// CHECK-DAG: %[[G7:.+]] = vector.extract %[[F]][7]
// CHECK-DAG: vector.from_elements %[[G0]], %{{.+}}, %{{.+}}, %[[G3]] : vector<4xbf16>
// CHECK-DAG: vector.from_elements %[[G4]], %{{.+}}, %{{.+}}, %[[G7]] : vector<4xbf16>
// CHECK: nvvm.mma.sync
gpu.module @m {
  gpu.func @pair_global(%a: memref<16x16xbf16>, %g: memref<16x64xbf16>, %c: memref<16x16xf32>) kernel {
    %c0 = arith.constant 0 : index
    %pad = arith.constant 0.0 : bf16
    %zero = arith.constant 0.0 : f32
    %ta = vector.transfer_read %a[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x16xbf16>, vector<16x16xbf16>
    %fa = arith.extf %ta : vector<16x16xbf16> to vector<16x16xf32>
    %pair = vector.transfer_read %g[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x64xbf16>, vector<16x16xbf16>
    %b0 = vector.extract_strided_slice %pair {offsets = [0, 0], sizes = [8, 16], strides = [1, 1]} : vector<16x16xbf16> to vector<8x16xbf16>
    %b1 = vector.extract_strided_slice %pair {offsets = [8, 0], sizes = [8, 16], strides = [1, 1]} : vector<16x16xbf16> to vector<8x16xbf16>
    %f0 = arith.extf %b0 : vector<8x16xbf16> to vector<8x16xf32>
    %f1 = arith.extf %b1 : vector<8x16xbf16> to vector<8x16xf32>
    %acc = vector.transfer_read %c[%c0, %c0], %zero {in_bounds = [true, true]} : memref<16x16xf32>, vector<16x8xf32>
    %d0 = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %fa, %f0, %acc : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
    %d1 = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %fa, %f1, %acc : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
    vector.transfer_write %d0, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x16xf32>
    vector.transfer_write %d1, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x16xf32>
    gpu.return
  }
}
