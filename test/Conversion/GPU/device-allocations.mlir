// RUN: dat-opt %s --dat-gpu-stage-constants --dat-gpu-device-allocations | FileCheck %s

// Host allocations become device memory (gpu.alloc, not host_shared),
// allocated and freed on a stream that is waited for; a constant is copied
// into such a buffer before a kernel can read it (dat-gpu-device-copies
// makes that copy a gpu.memcpy); allocations inside kernels are left alone.
// CHECK-LABEL: func.func @host
// CHECK: %[[G:.+]] = memref.get_global @table : memref<4xf32>
// CHECK: %[[W:.+]] = gpu.wait async
// CHECK: %[[C:.+]], %[[T:.+]] = gpu.alloc async [%[[W]]] () : memref<4xf32>
// CHECK: gpu.wait [%[[T]]]
// CHECK: memref.copy %[[G]], %[[C]]
// CHECK: %[[A:.+]], %{{.+}} = gpu.alloc async [%{{.+}}] (%{{.+}}) : memref<?xf32>
// CHECK: gpu.launch
// CHECK:   memref.load %[[C]]
// CHECK:   memref.alloca
// CHECK: %[[S:.+]] = gpu.wait async
// CHECK: %[[D:.+]] = gpu.dealloc async [%[[S]]] %[[A]] : memref<?xf32>
// CHECK: gpu.wait [%[[D]]]
// CHECK-NOT: memref.alloc(
// CHECK-NOT: host_shared
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

// Buffers only the host uses stay host memory: one marked dat.host_memory
// (dat-gpu-device-copies' host copy of a position) and the deallocation
// helper's arrays of pointers and flags.
// CHECK-LABEL: func.func @host_only
// CHECK: %[[H:.+]] = memref.alloc() {dat.host_memory} : memref<1xi64>
// CHECK: %[[P:.+]] = memref.alloc() : memref<2xindex>
// CHECK: %[[F:.+]] = memref.alloc() : memref<2xi1>
// CHECK: call @dealloc_helper(%[[P]], %[[F]])
// CHECK: memref.dealloc %[[H]]
// CHECK: memref.dealloc %[[P]]
// CHECK: memref.dealloc %[[F]]
// CHECK-NOT: gpu.alloc
func.func private @dealloc_helper(memref<2xindex>, memref<2xi1>)
func.func @host_only(%i: index, %b: i1) -> i64 {
  %c0 = arith.constant 0 : index
  %h = memref.alloc() {dat.host_memory} : memref<1xi64>
  %v = memref.load %h[%c0] : memref<1xi64>
  %p = memref.alloc() : memref<2xindex>
  memref.store %i, %p[%c0] : memref<2xindex>
  %f = memref.alloc() : memref<2xi1>
  memref.store %b, %f[%c0] : memref<2xi1>
  call @dealloc_helper(%p, %f) : (memref<2xindex>, memref<2xi1>) -> ()
  memref.dealloc %h : memref<1xi64>
  memref.dealloc %p : memref<2xindex>
  memref.dealloc %f : memref<2xi1>
  return %v : i64
}
