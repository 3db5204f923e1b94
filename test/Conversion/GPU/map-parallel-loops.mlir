// RUN: dat-opt %s --pass-pipeline="builtin.module(func.func(dat-gpu-map-parallel-loops{block-size=128}))" \
// RUN: | FileCheck %s
// RUN: not dat-opt %s --pass-pipeline="builtin.module(func.func(dat-gpu-map-parallel-loops{block-size=2000}))" 2>&1 \
// RUN: | FileCheck %s --check-prefix=BAD
// BAD: error: dat-gpu-map-parallel-loops: block-size must be in [1, 1024], got 2000
// RUN: dat-opt %s --pass-pipeline="builtin.module(func.func(dat-gpu-map-parallel-loops{block-size=128 elements-per-thread=4}))" \
// RUN: | FileCheck %s --check-prefix=COARSE
// RUN: not dat-opt %s --pass-pipeline="builtin.module(func.func(dat-gpu-map-parallel-loops{elements-per-thread=0}))" 2>&1 \
// RUN: | FileCheck %s --check-prefix=BADPER
// BADPER: error: dat-gpu-map-parallel-loops: elements-per-thread must be in [1, 64], got 0

// A 3-d nest (one linalg op's parallel dims, its reduction inside) becomes
// one collapsed dimension, tiled by 128: tiles on blocks, elements on
// threads, a guard for the last partial tile; the reduction stays a
// sequential loop in the thread.
// CHECK-LABEL: func.func @nest
// CHECK: scf.parallel (%[[T:.+]]) = (%{{.+}}) to (%{{.+}}) step (%[[STEP:.+]])
// CHECK:   scf.parallel (%[[E:.+]]) = (%{{.+}}) to (%[[STEP]])
// CHECK:     %[[IN:.+]] = arith.cmpi ult, %{{.+}}, %{{.+}}
// CHECK:     %[[GUARD:.+]] = arith.andi %{{.+}}, %[[IN]]
// CHECK:     scf.if %[[GUARD]]
// CHECK:       scf.for
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
func.func @nest(%a: memref<2x3x5xf32>, %b: memref<2x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c3) step (%c1, %c1) {
    scf.for %k = %c0 to %c5 step %c1 {
      %x = memref.load %a[%i, %j, %k] : memref<2x3x5xf32>
      %y = memref.load %b[%i, %j] : memref<2x3xf32>
      %z = arith.addf %x, %y : f32
      memref.store %z, %b[%i, %j] : memref<2x3xf32>
    }
  }
  return
}

// A parallel loop below the thread's sequential loop (a linalg op whose
// reduction dim comes before a parallel one) runs as scf.for in the thread:
// left an scf.parallel, it would keep convert-parallel-loops-to-gpu from
// converting the nest, which would then run on the host.
// CHECK-LABEL: func.func @inner_parallel
// CHECK: scf.parallel
// CHECK:   scf.parallel
// CHECK:     scf.for %{{.+}} = %c0 to %{{.+}}
// CHECK-NEXT:  scf.for %{{.+}} = %c0 to %c4
// CHECK-NOT: scf.parallel
// CHECK: mapping = [#gpu.loop_dim_map<processor = thread_x
func.func @inner_parallel(%p: memref<2x?xf32>, %v: memref<?x4xf32>, %o: memref<2x4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    scf.for %k = %c0 to %n step %c1 {
      scf.parallel (%e) = (%c0) to (%c4) step (%c1) {
        %x = memref.load %p[%i, %k] : memref<2x?xf32>
        %y = memref.load %v[%k, %e] : memref<?x4xf32>
        %z = memref.load %o[%i, %e] : memref<2x4xf32>
        %m = arith.mulf %x, %y : f32
        %s = arith.addf %z, %m : f32
        memref.store %s, %o[%i, %e] : memref<2x4xf32>
      }
    }
  }
  return
}


// Elementwise, 2^20 + 3 elements: with elements-per-thread=4, a thread
// takes elements 128 apart in its block's chunk of 512; the four loads
// (past the last element: of the last) first, then the arithmetic, then
// the four stores, each guarded. Work items: ceil(N / 512) · 128.
// COARSE-LABEL: func.func @elementwise
// COARSE: scf.parallel (%[[B:.+]]) = (%{{.+}}) to (%c262272) step
// COARSE:   scf.parallel (%[[T:.+]]) =
// COARSE:     %[[ITEM:.+]] = arith.addi %[[T]], %[[B]]
// COARSE:     %[[LANE:.+]] = arith.remui %[[ITEM]], %c128
// COARSE:     %[[BLK:.+]] = arith.divui %[[ITEM]], %c128
// COARSE:     %[[CHUNK:.+]] = arith.muli %[[BLK]], %c512
// COARSE:     %[[FIRST:.+]] = arith.addi %[[CHUNK]], %[[LANE]]
// COARSE:     %[[E0:.+]] = arith.addi %[[FIRST]], %c0
// COARSE:     %[[I0:.+]] = arith.minui %[[E0]], %c1048578
// COARSE:     memref.load %{{.+}}[%[[I0]]]
// COARSE-NOT: arith.mulf
// COARSE:     %[[E1:.+]] = arith.addi %[[FIRST]], %c128
// COARSE-NOT: arith.mulf
// COARSE:     memref.load
// COARSE-NOT: arith.mulf
// COARSE:     memref.load
// COARSE-NOT: arith.mulf
// COARSE:     memref.load
// COARSE-COUNT-4: arith.mulf
// COARSE-NOT: memref.load
// COARSE:     %[[IN0:.+]] = arith.cmpi ult, %[[E0]], %c1048579
// COARSE:     scf.if %[[IN0]] {
// COARSE-NEXT:  memref.store %{{.+}}, %{{.+}}[%[[I0]]]
// COARSE:     scf.if
// COARSE:     scf.if
// COARSE:     scf.if
// COARSE-NOT: scf.if
// COARSE:   } {mapping = [#gpu.loop_dim_map<processor = thread_x
// COARSE: } {mapping = [#gpu.loop_dim_map<processor = block_x
// Without the option, a thread per element:
// CHECK-LABEL: func.func @elementwise
// CHECK-COUNT-1: memref.load
// CHECK-NOT: memref.load
func.func @elementwise(%a: memref<1048579xf32>, %b: memref<1048579xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1048579 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<1048579xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<1048579xf32>
  }
  return
}


// Left one element a thread: under 2^20 elements, a dynamic count, a body
// with a loop (a reduction), a load after a store.
// COARSE-LABEL: func.func @not_coarsened
// CHECK-LABEL: func.func @not_coarsened
// COARSE-NOT: arith.remui
// COARSE: return
func.func @not_coarsened(%a: memref<1048576xf32>, %d: memref<?xf32>, %r: memref<1024x1024xf32>,
                         %w: memref<1048576x2xf32>, %o: memref<1048576xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %small = arith.constant 1048575 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%small) step (%c1) {
    %x = memref.load %a[%i] : memref<1048576xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %a[%i] : memref<1048576xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %d[%i] : memref<?xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %d[%i] : memref<?xf32>
  }
  %c2 = arith.constant 2 : index
  %rows = arith.constant 1048576 : index
  scf.parallel (%i) = (%c0) to (%rows) step (%c1) {
    scf.for %k = %c0 to %c2 step %c1 {
      %x = memref.load %w[%i, %k] : memref<1048576x2xf32>
      %y = memref.load %o[%i] : memref<1048576xf32>
      %z = arith.addf %x, %y : f32
      memref.store %z, %o[%i] : memref<1048576xf32>
    }
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1024, %c1024) step (%c1, %c1) {
    %x = memref.load %r[%i, %j] : memref<1024x1024xf32>
    memref.store %x, %r[%j, %i] : memref<1024x1024xf32>
    %y = memref.load %r[%i, %j] : memref<1024x1024xf32>
    memref.store %y, %a[%j] : memref<1048576xf32>
  }
  return
}
