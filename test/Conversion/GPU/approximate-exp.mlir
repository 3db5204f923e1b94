// RUN: dat-opt %s --pass-pipeline='builtin.module(gpu.module(dat-gpu-approximate-exp))' | FileCheck %s

// An f32 exponential in a kernel becomes ex2.approx.ftz of x · log2(e)
// (CUDA's __expf); a vector's, element by element; exp(s - m) takes the
// subtraction into the scaling, fma(s, log2 e, m · -log2 e); other element
// types are left to convert-gpu-to-nvvm (libdevice).

// CHECK-LABEL: gpu.func @k
// CHECK-SAME: (%[[X:.+]]: f32, %[[V:.+]]: vector<2x2xf32>, %[[D:.+]]: f64
// CHECK: %[[L:.+]] = arith.constant 1.44269502 : f32
// CHECK: %[[S:.+]] = arith.mulf %[[X]], %[[L]] : f32
// CHECK: %[[E:.+]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[S]]) : (f32) -> f32
// CHECK-NOT: vector.shape_cast
// CHECK: vector.extract %[[V]][0, 0] : f32 from vector<2x2xf32>
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: vector.insert %{{.+}}, %{{.+}} [0, 0] : f32 into vector<2x2xf32>
// CHECK: vector.extract %[[V]][0, 1]
// CHECK: vector.extract %[[V]][1, 0]
// CHECK: vector.extract %[[V]][1, 1]
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: vector.insert %{{.+}}, %{{.+}} [1, 1] : f32 into vector<2x2xf32>
// CHECK: math.exp %[[D]] : f64
// CHECK: %[[NL:.+]] = arith.constant -1.44269502 : f32
// CHECK: %[[NM:.+]] = arith.mulf %[[M:.+]], %[[NL]] : f32
// CHECK: %[[F:.+]] = math.fma %[[S2:.+]], %{{.+}}, %[[NM]] : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[F]]) : (f32) -> f32
// CHECK-NOT: math.exp {{.*}}f32
gpu.module @m {
  gpu.func @k(%x: f32, %v: vector<2x2xf32>, %d: f64, %s: f32, %m: f32, %p: memref<f32>, %q: memref<vector<2x2xf32>>, %r: memref<f64>) kernel {
    %e = math.exp %x : f32
    %ev = math.exp %v : vector<2x2xf32>
    %ed = math.exp %d : f64
    %sm = arith.subf %s, %m : f32
    %es = math.exp %sm : f32
    memref.store %es, %p[] : memref<f32>
    memref.store %e, %p[] : memref<f32>
    memref.store %ev, %q[] : memref<vector<2x2xf32>>
    memref.store %ed, %r[] : memref<f64>
    gpu.return
  }
}
