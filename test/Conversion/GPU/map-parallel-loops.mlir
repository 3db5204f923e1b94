// RUN: dat-opt %s --pass-pipeline="builtin.module(func.func(dat-gpu-map-parallel-loops{block-size=128}))" \
// RUN: | FileCheck %s
// RUN: not dat-opt %s --pass-pipeline="builtin.module(func.func(dat-gpu-map-parallel-loops{block-size=2000}))" 2>&1 \
// RUN: | FileCheck %s --check-prefix=BAD
// BAD: error: dat-gpu-map-parallel-loops: block-size must be in [1, 1024], got 2000

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
