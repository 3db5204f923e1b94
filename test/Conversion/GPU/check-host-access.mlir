// RUN: dat-opt %s --split-input-file --verify-diagnostics --dat-gpu-check-host-access | FileCheck %s

// Host code may allocate, free, view and pass device buffers, and use its
// own host memory; it may not touch a device buffer's contents.

// CHECK-LABEL: func.func @fine
func.func @fine(%x: memref<4xf32>, %n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %h = memref.alloc() {dat.host_memory} : memref<1xindex>
  memref.store %n, %h[%c0] : memref<1xindex>
  %d = gpu.alloc host_shared () : memref<4xf32>
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%c0] : memref<4xf32>
    memref.store %v, %d[%c0] : memref<4xf32>
    gpu.terminator
  }
  memref.dealloc %h : memref<1xindex>
  return %d : memref<4xf32>
}

// -----

func.func @argument(%x: memref<4xf32>) -> f32 {
  // expected-note @-1 {{an argument of this function}}
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{dat-gpu-check-host-access: the host accesses a buffer in device memory ('memref.load' outside a kernel)}}
  %v = memref.load %x[%c0] : memref<4xf32>
  return %v : f32
}

// -----

func.func @allocation(%v: f32) {
  %c0 = arith.constant 0 : index
  // expected-note @+1 {{allocated here}}
  %d = gpu.alloc () : memref<4xf32>
  %s = memref.subview %d[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
  // expected-error @+1 {{'memref.store' outside a kernel}}
  memref.store %v, %s[%c0] : memref<2xf32, strided<[1], offset: 1>>
  return
}
