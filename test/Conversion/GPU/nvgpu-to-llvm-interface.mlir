// RUN: dat-opt %s --pass-pipeline='builtin.module(gpu.module(convert-gpu-to-nvvm),reconcile-unrealized-casts)' | FileCheck %s --implicit-check-not=nvgpu. --implicit-check-not=unrealized_conversion_cast

// convert-gpu-to-nvvm lowers the tiles' nvgpu ops itself (dat registers
// the nvgpu dialect's ConvertToLLVMPatternInterface), at the module's
// index width: one type converter, so a kernel with 32-bit indices
// (dat-gpu-index-width) gets no 64-bit memref descriptor that no cast
// could reconcile with its own.
// CHECK-LABEL: gpu.module @tile
// CHECK: llvm.func @k(%{{.*}}: !llvm.ptr<3>, %{{.*}}: !llvm.ptr<3>, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %[[I:.*]]: i32)
// CHECK: nvvm.ldmatrix {{.*}}num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>)
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 0
module attributes {gpu.container_module} {
  gpu.module @tile attributes {dlti.dl_spec = #dlti.dl_spec<index = 32 : i64>} {
    gpu.func @k(%tile: memref<64x64xbf16, #gpu.address_space<workgroup>>, %src: memref<64x64xbf16>, %i: index) kernel {
      %c0 = arith.constant 0 : index
      %frag = nvgpu.ldmatrix %tile[%i, %c0] {numTiles = 4 : i32, transpose = false} : memref<64x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
      %e = vector.extract %frag[0, 0] : bf16 from vector<4x2xbf16>
      memref.store %e, %src[%i, %c0] : memref<64x64xbf16>
      %t = nvgpu.device_async_copy %src[%i, %c0], %tile[%i, %c0], 8 {bypassL1} : memref<64x64xbf16> to memref<64x64xbf16, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group %t
      nvgpu.device_async_wait %g {numGroups = 0 : i32}
      gpu.return
    }
  }
}
