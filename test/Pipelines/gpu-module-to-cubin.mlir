// REQUIRES: cuda-toolkit
// RUN: dat-opt %s --convert-gpu-to-nvvm --reconcile-unrealized-casts \
// RUN:   --gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" \
// RUN: | FileCheck %s --check-prefix=PTX
// RUN: dat-opt %s --convert-gpu-to-nvvm --reconcile-unrealized-casts \
// RUN:   --gpu-module-to-binary="format=bin toolkit=%cuda_toolkit" \
// RUN: | FileCheck %s --check-prefix=CUBIN

// dat-opt carries the GPU → LLVM IR translations and reaches ptxas: a kernel
// becomes PTX for sm_90, and a cubin (assembled by ptxas) embedded in the
// host module.

// PTX: gpu.binary @kernels
// PTX-SAME: .target sm_90
// PTX-SAME: .entry scale_by_two
// CUBIN: gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90">, {{.*}}bin = "\7FELF
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
    gpu.func @scale_by_two(%buf: memref<256xf32>) kernel {
      %i = gpu.thread_id x
      %x = memref.load %buf[%i] : memref<256xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %buf[%i] : memref<256xf32>
      gpu.return
    }
  }
}
