// RUN: dat-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(dat-gpu-kernel-occupancy))' | FileCheck %s
// RUN: dat-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(dat-gpu-kernel-occupancy{blocks-per-sm=4}))' | FileCheck %s --check-prefix=FOUR
// RUN: not dat-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(dat-gpu-kernel-occupancy{blocks-per-sm=0}))' 2>&1 | FileCheck %s --check-prefix=BAD

// Kernels get nvvm.minctasm (PTX .minnctapersm), two blocks per SM by
// default; a kernel that has one keeps it, other functions get none.

// A kernel of small known blocks gets as many as fit the register file
// at 168 registers a thread, where that is more: 3 of 128 threads (a
// warp-row attention tile), still 2 of 256. A kernel that keeps its rows in
// its warps' registers (gpu.shuffle: their row reductions) gets exactly
// that many, at least one: a relational attention tile's 256 threads, one
// block (up to 255 registers), whatever blocks-per-sm says.

// CHECK-LABEL: gpu.module @m
// CHECK: gpu.func @k() kernel attributes {nvvm.minctasm = 2 : i32}
// CHECK: gpu.func @set() kernel attributes {nvvm.minctasm = 1 : i32}
// CHECK: gpu.func @helper() {
// CHECK: gpu.func @warp_rows() kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 3 : i32}
// CHECK: gpu.func @wide() kernel attributes {known_block_size = array<i32: 256, 1, 1>, nvvm.minctasm = 2 : i32}
// CHECK: gpu.func @rows_in_registers(%{{.+}}: f32) kernel attributes {known_block_size = array<i32: 256, 1, 1>, nvvm.minctasm = 1 : i32}
// FOUR: gpu.func @k() kernel attributes {nvvm.minctasm = 4 : i32}
// FOUR: gpu.func @warp_rows() kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.minctasm = 4 : i32}
// FOUR: gpu.func @rows_in_registers(%{{.+}}: f32) kernel attributes {known_block_size = array<i32: 256, 1, 1>, nvvm.minctasm = 1 : i32}
// BAD: dat-gpu-kernel-occupancy: blocks-per-sm must be positive, got 0
gpu.module @m {
  gpu.func @k() kernel {
    gpu.return
  }
  gpu.func @set() kernel attributes {nvvm.minctasm = 1 : i32} {
    gpu.return
  }
  gpu.func @helper() {
    gpu.return
  }
  gpu.func @warp_rows() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    gpu.return
  }
  gpu.func @wide() kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    gpu.return
  }
  gpu.func @rows_in_registers(%x: f32) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %y, %valid = gpu.shuffle xor %x, %c1, %c32 : f32
    gpu.return
  }
}
