// RUN: dat-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(dat-gpu-warp-mma-to-nvvm),cse)' | FileCheck %s
// RUN: dat-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(dat-gpu-warp-mma-to-nvvm{pairs=false}),cse)' | FileCheck %s --check-prefix=NOPAIRS

// One warp's tile, as dat-gpu-map-tiles writes it: each lane loads its
// fragment (g = lane / 4, t = lane % 4) in mma.m16n8k16's layout — A rows g
// and g+8, columns 2t, 2t+1, 2t+8, 2t+9; B (n×k) row g, the same columns;
// C rows g and g+8, columns 2t, 2t+1 — the loop carries the lane's 4
// accumulators, and the contraction is one mma.sync on bf16 registers
// (pairs of bf16 as i32), its f32 results stored back by the lane. The
// columns 2t, 2t+1 are neighbours in memory: where the buffer's first
// element, its row stride and the tile's first column allow (checked at
// run time, the same for the whole warp), each pair is one load or store
// of twice the width (32 bits for bf16, 64 for f32); else one per element.

// CHECK-LABEL: gpu.func @tile
// CHECK: %[[PTR:.+]] = memref.extract_aligned_pointer_as_index %{{.+}} : memref<32x16xf32>
// CHECK: arith.remui %[[PTR]], %c8
// CHECK: %[[CPAIRS:.+]] = arith.cmpi eq
// CHECK: %[[ACC:.+]] = scf.if %[[CPAIRS]] -> (vector<4xf32>) {
// CHECK: %[[LANE:.+]] = gpu.lane_id
// CHECK: %[[G:.+]] = arith.divui %[[LANE]], %c4
// CHECK: %[[T:.+]] = arith.remui %[[LANE]], %c4
// CHECK: %[[T2:.+]] = arith.muli %[[T]], %c2
// CHECK: vector.load %{{.+}}[%[[G]], %[[T2]]] {alignment = 8 : i64} : memref<32x16xf32>, vector<2xf32>
// CHECK: } else {
// CHECK: %[[C0:.+]] = memref.load %{{.+}}[%{{.+}}, %{{.+}}] : memref<32x16xf32>
// CHECK: vector.from_elements %[[C0]], %{{.+}}, %{{.+}}, %{{.+}} : vector<4xf32>
// CHECK: %[[SUM:.+]] = scf.for %[[K:.+]] = %{{.+}} iter_args(%[[C:.+]] = %[[ACC]]) -> (vector<4xf32>)
// The A pairs' condition: the buffer 4-byte aligned, its offset and row
// stride even (the step's first column is, by construction: no check).
// CHECK:   %[[APTR:.+]] = memref.extract_aligned_pointer_as_index %{{.+}} : memref<32x64xbf16>
// CHECK:   arith.remui %[[APTR]], %c4
// CHECK-NOT: arith.andi %[[K]]
// CHECK:   %[[AF:.+]] = scf.if %{{.+}} -> (vector<8xbf16>) {
// CHECK-COUNT-4: vector.load %{{.+}} {alignment = 4 : i64} : memref<32x64xbf16>, vector<2xbf16>
// CHECK:   } else {
// CHECK-COUNT-8: memref.load %{{.+}} : memref<32x64xbf16>
// CHECK:   %[[BF:.+]] = scf.if %{{.+}} -> (vector<4xbf16>) {
// CHECK-COUNT-2: vector.load %{{.+}} {alignment = 4 : i64} : memref<16x64xbf16>, vector<2xbf16>
// CHECK:   } else {
// CHECK-COUNT-4: memref.load %{{.+}} : memref<16x64xbf16>
// CHECK:   %[[AW:.+]] = vector.bitcast %[[AF]] : vector<8xbf16> to vector<4xi32>
// CHECK:   %[[BW:.+]] = vector.bitcast %[[BF]] : vector<4xbf16> to vector<2xi32>
// CHECK:   %[[MMA:.+]] = nvvm.mma.sync A[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] B[%{{.+}}, %{{.+}}] C[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK:   llvm.extractvalue %[[MMA]][3]
// CHECK:   scf.yield %{{.+}} : vector<4xf32>
// CHECK: scf.if %[[CPAIRS]] {
// CHECK: %[[P0:.+]] = vector.from_elements %{{.+}}, %{{.+}} : vector<2xf32>
// CHECK: vector.store %[[P0]], %{{.+}}[%{{.+}}, %{{.+}}] {alignment = 8 : i64} : memref<32x16xf32>, vector<2xf32>
// CHECK: } else {
// CHECK: %[[E0:.+]] = vector.extract %[[SUM]][0] : f32 from vector<4xf32>
// CHECK: memref.store %[[E0]], %{{.+}}[%{{.+}}, %{{.+}}] : memref<32x16xf32>
// CHECK-NOT: vector.transfer
// CHECK-NOT: vector.contract
// Without pairs: one access per element, no run-time check.
// NOPAIRS-LABEL: gpu.func @tile
// NOPAIRS-NOT: extract_aligned_pointer
// NOPAIRS-NOT: vector.load
// NOPAIRS: nvvm.mma.sync
// NOPAIRS-NOT: vector.store
// NOPAIRS: gpu.return
gpu.module @m {
  gpu.func @tile(%a: memref<32x64xbf16>, %b: memref<16x64xbf16>, %c: memref<32x16xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %pad = arith.constant 0.0 : bf16
    %acc = vector.transfer_read %c[%c0, %c0], %zero {in_bounds = [true, true]} : memref<32x16xf32>, vector<16x8xf32>
    %sum = scf.for %k = %c0 to %c64 step %c16 iter_args(%r = %acc) -> (vector<16x8xf32>) {
      %x = vector.transfer_read %a[%c0, %k], %pad {in_bounds = [true, true]} : memref<32x64xbf16>, vector<16x16xbf16>
      %xf = arith.extf %x : vector<16x16xbf16> to vector<16x16xf32>
      %y = vector.transfer_read %b[%c0, %k], %pad {in_bounds = [true, true]} : memref<16x64xbf16>, vector<8x16xbf16>
      %yf = arith.extf %y : vector<8x16xbf16> to vector<8x16xf32>
      %s = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                            iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %xf, %yf, %r
          : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
      scf.yield %s : vector<16x8xf32>
    }
    vector.transfer_write %sum, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<32x16xf32>
    gpu.return
  }
}

// -----

// Partial tiles and other layouts: an f32 A (probabilities) is rounded to
// bf16 on the lane's fragment; a B stored k-major (values, [keys, dim]) is
// read through its permutation; a dim out of bounds loads only inside
// (the padding past the end: no lane reads an element another one writes)
// and stores only inside.

// CHECK-LABEL: gpu.func @partial
// The A fragment's first pair: row g of ?, loaded only inside (a pair
// lies inside where its first element does: the columns are in bounds).
// CHECK: scf.if %{{.+}} -> (vector<4xf32>) {
// CHECK: %[[APAIRS:.+]] = arith.cmpi eq
// CHECK: %[[A:.+]] = scf.if %[[APAIRS]] -> (vector<8xf32>) {
// CHECK: %[[ROWS:.+]] = memref.dim %{{.+}}, %c0 : memref<?x16xf32>
// CHECK: %[[LANE:.+]] = gpu.lane_id
// CHECK: %[[G:.+]] = arith.divui %[[LANE]], %c4
// CHECK: %[[INSIDE:.+]] = arith.cmpi ult, %[[G]], %[[ROWS]]
// CHECK: scf.if %[[INSIDE]] -> (vector<2xf32>) {
// CHECK-NEXT: %[[PAIR:.+]] = vector.load %{{.+}}[%[[G]], %{{.+}}] {alignment = 8 : i64} : memref<?x16xf32>, vector<2xf32>
// CHECK-NEXT: scf.yield %[[PAIR]] : vector<2xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: vector.broadcast %{{.+}} : f32 to vector<2xf32>
// Else element by element, each loaded only inside.
// CHECK: } else {
// CHECK: %[[G1:.+]] = arith.divui %{{.+}}, %c4
// CHECK: %[[INSIDE1:.+]] = arith.cmpi ult, %[[G1]], %{{.+}}
// CHECK: scf.if %[[INSIDE1]] -> (f32) {
// CHECK-NEXT: %[[LOAD:.+]] = memref.load %{{.+}}[%[[G1]], %{{.+}}] : memref<?x16xf32>
// CHECK-NEXT: scf.yield %[[LOAD]] : f32
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %{{.+}} : f32
// CHECK: %[[AFRAG:.+]] = vector.from_elements %{{.+}} : vector<8xf32>
// CHECK: %[[AB:.+]] = arith.truncf %[[A]] : vector<8xf32> to vector<8xbf16>
// B: element (n = g, k = 2t) of a k-major buffer is [k][n]: its pairs are
// not neighbours, one load each.
// CHECK: %[[GB:.+]] = arith.divui %{{.+}}, %c4
// CHECK: memref.load %{{.+}}[%{{.+}}, %[[GB]]] : memref<16x8xbf16>
// CHECK: vector.bitcast %[[AB]] : vector<8xbf16> to vector<4xi32>
// CHECK-NOT: arith.minui
// CHECK: nvvm.mma.sync
// CHECK: scf.if %{{.+}} {
// CHECK: scf.if %{{.+}} {
// CHECK-NEXT: vector.from_elements %{{.+}} : vector<2xf32>
// CHECK-NEXT: vector.store %{{.+}} : memref<?x8xf32>, vector<2xf32>
// CHECK: } else {
// CHECK: scf.if %{{.+}} {
// CHECK-NEXT: memref.store %{{.+}} : memref<?x8xf32>
gpu.module @m {
  gpu.func @partial(%p: memref<?x16xf32>, %v: memref<16x8xbf16>, %o: memref<?x8xf32>) kernel {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %pad = arith.constant 0.0 : bf16
    %acc = vector.transfer_read %o[%c0, %c0], %zero {in_bounds = [false, true]} : memref<?x8xf32>, vector<16x8xf32>
    %x = vector.transfer_read %p[%c0, %c0], %zero {in_bounds = [false, true]} : memref<?x16xf32>, vector<16x16xf32>
    %xb = arith.truncf %x : vector<16x16xf32> to vector<16x16xbf16>
    %xf = arith.extf %xb : vector<16x16xbf16> to vector<16x16xf32>
    %y = vector.transfer_read %v[%c0, %c0], %pad {in_bounds = [true, true], permutation_map = affine_map<(d0, d1) -> (d1, d0)>} : memref<16x8xbf16>, vector<8x16xbf16>
    %yf = arith.extf %y : vector<8x16xbf16> to vector<8x16xf32>
    %s = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                          iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %xf, %yf, %acc
        : vector<16x16xf32>, vector<8x16xf32> into vector<16x8xf32>
    vector.transfer_write %s, %o[%c0, %c0] {in_bounds = [false, true]} : vector<16x8xf32>, memref<?x8xf32>
    gpu.return
  }
}

// -----

// Vectors of other shapes are not MMA tiles: left as they are.

// CHECK-LABEL: gpu.func @other
// CHECK: vector.transfer_read %{{.+}} : memref<32x32xf32>, vector<4x4xf32>
// CHECK-NOT: nvvm.mma.sync
gpu.module @m {
  gpu.func @other(%a: memref<32x32xf32>) kernel {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %x = vector.transfer_read %a[%c0, %c0], %zero {in_bounds = [true, true]} : memref<32x32xf32>, vector<4x4xf32>
    vector.transfer_write %x, %a[%c0, %c0] {in_bounds = [true, true]} : vector<4x4xf32>, memref<32x32xf32>
    gpu.return
  }
}

// -----

// bf16 operands straight into the contraction (no widening): used as they
// are.

// CHECK-LABEL: gpu.func @bf16_operands
// CHECK-NOT: arith.truncf
// CHECK: vector.bitcast %{{.+}} : vector<8xbf16> to vector<4xi32>
// CHECK: nvvm.mma.sync
gpu.module @m {
  gpu.func @bf16_operands(%a: memref<16x16xbf16>, %b: memref<8x16xbf16>, %c: memref<16x8xf32>) kernel {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %pad = arith.constant 0.0 : bf16
    %acc = vector.transfer_read %c[%c0, %c0], %zero {in_bounds = [true, true]} : memref<16x8xf32>, vector<16x8xf32>
    %x = vector.transfer_read %a[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16x16xbf16>, vector<16x16xbf16>
    %y = vector.transfer_read %b[%c0, %c0], %pad {in_bounds = [true, true]} : memref<8x16xbf16>, vector<8x16xbf16>
    %s = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                          iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %x, %y, %acc
        : vector<16x16xbf16>, vector<8x16xbf16> into vector<16x8xf32>
    vector.transfer_write %s, %c[%c0, %c0] {in_bounds = [true, true]} : vector<16x8xf32>, memref<16x8xf32>
    gpu.return
  }
}
