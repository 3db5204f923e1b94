// RUN: dat-opt %s --dat-gpu-stage-constants --dat-gpu-host-shared-memory | FileCheck %s

// Host allocations become managed memory (gpu.alloc host_shared), freed on
// a stream that is waited for; a constant is copied into such a buffer
// before a kernel can read it; allocations inside kernels are left alone.
// CHECK-LABEL: func.func @host
// CHECK: %[[G:.+]] = memref.get_global @table : memref<4xf32>
// CHECK: %[[C:.+]] = gpu.alloc  host_shared () : memref<4xf32>
// CHECK: memref.copy %[[G]], %[[C]]
// CHECK: %[[A:.+]] = gpu.alloc  host_shared (%{{.+}}) : memref<?xf32>
// CHECK: gpu.launch
// CHECK:   memref.load %[[C]]
// CHECK:   memref.alloca
// CHECK: %[[S:.+]] = gpu.wait async
// CHECK: %[[D:.+]] = gpu.dealloc async [%[[S]]] %[[A]] : memref<?xf32>
// CHECK: gpu.wait [%[[D]]]
// CHECK-NOT: memref.alloc(
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @host(%n: index) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %t = memref.get_global @table : memref<4xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %v0 = memref.load %t[%c0] : memref<4xf32>
    %tmp = memref.alloca() : memref<1xf32>
    memref.store %v0, %tmp[%c0] : memref<1xf32>
    memref.store %v0, %a[%c0] : memref<?xf32>
    gpu.terminator
  }
  memref.dealloc %a : memref<?xf32>
  return
}
