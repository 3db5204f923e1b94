// RUN: dat-opt %s --split-input-file --pass-pipeline='builtin.module(dat-gpu-index-width)' | FileCheck %s
// RUN: dat-opt %s --split-input-file --pass-pipeline='builtin.module(dat-gpu-index-width{report=true})' -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: dat-opt %s --split-input-file --pass-pipeline='builtin.module(dat-gpu-index-width{all-kernels=true})' | FileCheck %s --check-prefix=ALL

// Static buffers under 2^30 elements, a known launch: 32-bit indices, and
// the host asserts the index operand fits before each launch.
// CHECK-LABEL: func.func @host
// CHECK-SAME: (%[[BUF:.*]]: memref<4x1024xf32>, %[[POS:.*]]: index)
// CHECK: %[[WIDE:.*]] = arith.index_cast %[[POS]] : index to i64
// CHECK: %[[NARROW:.*]] = arith.trunci %[[WIDE]] : i64 to i32
// CHECK: %[[BACK:.*]] = arith.extsi %[[NARROW]] : i32 to i64
// CHECK: %[[FITS:.*]] = arith.cmpi eq, %[[BACK]], %[[WIDE]] : i64
// CHECK: cf.assert %[[FITS]], "dat: kernel fits::k: index operand 1 does not fit the kernel's 32-bit indices"
// CHECK-NEXT: gpu.launch_func @fits::@k
// CHECK: gpu.module @fits attributes {dlti.dl_spec = #dlti.dl_spec<index = 32 : i64>}
// REPORT-NOT: fits
module attributes {gpu.container_module} {
  func.func @host(%buf: memref<4x1024xf32>, %pos: index) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c256 = arith.constant 256 : index
    gpu.launch_func @fits::@k blocks in (%c4, %c1, %c1) threads in (%c256, %c1, %c1) args(%buf : memref<4x1024xf32>, %pos : index)
    return
  }
  gpu.module @fits {
    gpu.func @k(%buf: memref<4x1024xf32>, %pos: index) kernel attributes {nvvm.minctasm = 1 : i32, known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 4, 1, 1>} {
      gpu.return
    }
  }
}

// -----

// Each of these keeps 64-bit indices: a dynamic shape, a dynamic offset, a
// buffer past 2^30 elements, a grid not known statically, an i64
// argument, an index constant past 32 bits. No assert on their launches.
// CHECK-LABEL: func.func @host
// CHECK-NOT: cf.assert
// CHECK: gpu.module @dynamic {
// CHECK: gpu.module @offset {
// CHECK: gpu.module @big {
// CHECK: gpu.module @edge attributes {dlti.dl_spec
// CHECK: gpu.module @grid {
// CHECK: gpu.module @wide {
// CHECK: gpu.module @constant {
// REPORT: remark: dynamic: 64-bit indices: a buffer of dynamic shape
// REPORT: remark: offset: 64-bit indices: a buffer of dynamic strides or offset, or not strided
// REPORT: remark: big: 64-bit indices: a buffer past 2^30 elements
// REPORT-NOT: edge
// REPORT: remark: grid: 64-bit indices: a grid or block size not known statically
// REPORT: remark: wide: 64-bit indices: an integer argument wider than 32 bits
// REPORT: remark: constant: 64-bit indices: an index constant outside 32 bits
module attributes {gpu.container_module} {
  func.func @host(%buf: memref<?xf32>, %pos: index) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @dynamic::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%buf : memref<?xf32>, %pos : index)
    return
  }
  gpu.module @dynamic {
    gpu.func @k(%buf: memref<?xf32>, %pos: index) kernel attributes {nvvm.minctasm = 1 : i32, known_block_size = array<i32: 1, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      gpu.return
    }
  }
  gpu.module @offset {
    gpu.func @k(%buf: memref<32xf32, strided<[1], offset: ?>>) kernel attributes {nvvm.minctasm = 1 : i32, known_block_size = array<i32: 1, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      gpu.return
    }
  }
  // The last element 2^30 elements from the base (2^29 + 1 rows of stride 2).
  gpu.module @big {
    gpu.func @k(%buf: memref<536870913x1xf32, strided<[2, 1]>>) kernel attributes {nvvm.minctasm = 1 : i32, known_block_size = array<i32: 1, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      gpu.return
    }
  }
  // The last element 2^30 - 1 elements from the base: fits.
  gpu.module @edge {
    gpu.func @k(%buf: memref<1073741824xi8>) kernel attributes {nvvm.minctasm = 1 : i32, known_block_size = array<i32: 1, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      gpu.return
    }
  }
  gpu.module @grid {
    gpu.func @k(%buf: memref<32xf32>) kernel attributes {nvvm.minctasm = 1 : i32, known_block_size = array<i32: 1, 1, 1>} {
      gpu.return
    }
  }
  gpu.module @wide {
    gpu.func @k(%n: i64) kernel attributes {nvvm.minctasm = 1 : i32, known_block_size = array<i32: 1, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      gpu.return
    }
  }
  gpu.module @constant {
    gpu.func @k(%buf: memref<32xf32>) kernel attributes {nvvm.minctasm = 1 : i32, known_block_size = array<i32: 1, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %far = arith.constant 4294967296 : index
      gpu.return
    }
  }
}

// -----

// Two blocks per SM: 64-bit indices (fewer blocks are the better remedy
// for its registers), unless all-kernels.
// CHECK: gpu.module @shared {
// REPORT: remark: shared: 64-bit indices: not alone on its SM (nvvm.minctasm is not 1)
// ALL: gpu.module @shared attributes {dlti.dl_spec = #dlti.dl_spec<index = 32 : i64>}
module attributes {gpu.container_module} {
  gpu.module @shared {
    gpu.func @k(%buf: memref<32xf32>) kernel attributes {nvvm.minctasm = 2 : i32, known_block_size = array<i32: 1, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      gpu.return
    }
  }
}
