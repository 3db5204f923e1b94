// RUN: dat-opt %s --pass-pipeline="builtin.module(func.func(dat-gpu-wrap-serial-ops))" | FileCheck %s
// RUN: dat-opt %s --pass-pipeline="builtin.module(func.func(dat-gpu-wrap-serial-ops,convert-linalg-to-parallel-loops,dat-gpu-map-parallel-loops,convert-parallel-loops-to-gpu))" \
// RUN: | FileCheck %s --check-prefix=KERNEL

// A fill of a scalar and a reduction to it (no parallel dim: a store and an
// scf.for nest after lowering) each get a one-iteration scf.parallel; an op
// with a parallel dim is left as it is.
// CHECK-LABEL: func.func @depth
// CHECK: scf.parallel (%{{.+}}) = (%c0) to (%c1) step (%c1) {
// CHECK-NEXT: linalg.fill
// CHECK: scf.parallel (%{{.+}}) = (%c0{{.*}}) to (%c1{{.*}}) step (%c1{{.*}}) {
// CHECK-NEXT: linalg.reduce
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : memref<4xf32>)
// CHECK-NEXT: return

// Each becomes a kernel: no load or store of the buffers is left on the host.
// KERNEL-LABEL: func.func @depth
// KERNEL: gpu.launch
// KERNEL: memref.store %{{.+}}, %{{.+}}[] : memref<i64>
// KERNEL: gpu.terminator
// KERNEL: gpu.launch
// KERNEL: scf.for
// KERNEL: memref.store %{{.+}}, %{{.+}}[] : memref<i64>
// KERNEL: gpu.terminator
// KERNEL: gpu.launch
// KERNEL: memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<4xf32>
// KERNEL: gpu.terminator
// KERNEL-NOT: memref.store
// KERNEL: return
func.func @depth(%positions: memref<2x7xi64>, %depth: memref<i64>, %v: memref<4xf32>) {
  %c0 = arith.constant 0 : i64
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%c0 : i64) outs(%depth : memref<i64>)
  linalg.reduce ins(%positions : memref<2x7xi64>) outs(%depth : memref<i64>) dimensions = [0, 1]
    (%in: i64, %acc: i64) {
      %m = arith.maxsi %in, %acc : i64
      linalg.yield %m : i64
    }
  linalg.fill ins(%z : f32) outs(%v : memref<4xf32>)
  return
}
