// RUN: dat-opt %s --split-input-file --verify-diagnostics --dat-gpu-device-copies | FileCheck %s

// Host copies become device copies: contiguous ones a gpu.memcpy (the copy
// engine) the host waits for, strided ones a linalg.copy (a kernel, once
// linalg becomes loops); the host's read of a small device buffer (a
// language model's position) goes through a host copy made just before.
// Loads inside linalg bodies (future kernels) are left alone.

// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[POS:.+]]: memref<1xi64>, %[[CACHE:.+]]: memref<2x8x4xf32>, %[[TABLE:.+]]: memref<16x4xf32>)
// CHECK: %[[HOST:.+]] = memref.alloc() {dat.host_memory} : memref<1xi64>
// CHECK: %[[W0:.+]] = gpu.wait async
// CHECK: %[[CP:.+]] = gpu.memcpy async [%[[W0]]] %[[HOST]], %[[POS]] : memref<1xi64>, memref<1xi64>
// CHECK: gpu.wait [%[[CP]]]
// CHECK: %[[P:.+]] = memref.load %[[HOST]][%c0] : memref<1xi64>
// CHECK: memref.dealloc %[[HOST]] : memref<1xi64>
// CHECK: %[[COPY:.+]] = memref.alloc() : memref<2x8x4xf32>
// CHECK: %[[W1:.+]] = gpu.wait async
// CHECK: %[[CP1:.+]] = gpu.memcpy async [%[[W1]]] %[[COPY]], %[[CACHE]]
// CHECK: gpu.wait [%[[CP1]]]
// CHECK: %[[ROW:.+]] = memref.subview %[[COPY]]
// CHECK: linalg.copy ins(%{{.+}} : memref<2x1x4xf32>) outs(%[[ROW]] : memref<2x1x4xf32, strided<[32, 4, 1], offset: ?>>)
// CHECK: linalg.generic
// CHECK:   memref.load %[[TABLE]]
// CHECK-NOT: memref.copy
func.func @step(%pos: memref<1xi64>, %cache: memref<2x8x4xf32>, %table: memref<16x4xf32>) -> memref<2x8x4xf32> {
  %c0 = arith.constant 0 : index
  %p = memref.load %pos[%c0] : memref<1xi64>
  %i = arith.index_cast %p : i64 to index
  %copy = memref.alloc() : memref<2x8x4xf32>
  memref.copy %cache, %copy : memref<2x8x4xf32> to memref<2x8x4xf32>
  %new = memref.alloc() : memref<2x1x4xf32>
  %row = memref.subview %copy[0, %i, 0] [2, 1, 4] [1, 1, 1] : memref<2x8x4xf32> to memref<2x1x4xf32, strided<[32, 4, 1], offset: ?>>
  memref.copy %new, %row : memref<2x1x4xf32> to memref<2x1x4xf32, strided<[32, 4, 1], offset: ?>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%new : memref<2x1x4xf32>) {
  ^bb0(%o: f32):
    %k = linalg.index 2 : index
    %v = memref.load %table[%i, %k] : memref<16x4xf32>
    linalg.yield %v : f32
  }
  memref.dealloc %new : memref<2x1x4xf32>
  return %copy : memref<2x8x4xf32>
}

// -----

// A constant staged into a buffer: copied from host memory by the copy
// engine.
// CHECK-LABEL: func.func @constant
// CHECK: %[[G:.+]] = memref.get_global @table
// CHECK: gpu.memcpy async [%{{.+}}] %{{.+}}, %[[G]]
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @constant() -> memref<4xf32> {
  %g = memref.get_global @table : memref<4xf32>
  %a = memref.alloc() : memref<4xf32>
  memref.copy %g, %a : memref<4xf32> to memref<4xf32>
  return %a : memref<4xf32>
}

// -----

// The host reads only small buffers, whole.
func.func @too_large(%x: memref<8192xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{dat-gpu-device-copies: the host reads a device buffer of 'memref<8192xf32>' (only whole buffers of up to 4096 elements are copied to the host)}}
  %v = memref.load %x[%c0] : memref<8192xf32>
  return %v : f32
}
