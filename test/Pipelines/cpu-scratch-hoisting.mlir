// RUN: dat-opt %s --dat-cpu-pipeline="key-tile=32" \
// RUN:   --mlir-print-ir-after=buffer-loop-hoisting -o /dev/null 2>&1 \
// RUN:   | FileCheck %s

// The key loop's scratch tiles (scores, row maxima and sums) are allocated
// once per flash tile, in the scf.forall's body: none inside the key loop
// (thousands of allocations per call, which serialized the OpenMP threads),
// and none hoisted out of the forall (its tiles run on several threads at
// once and must not share a buffer).
// CHECK-LABEL: func.func @attention(
// CHECK: memref.alloc() {{.*}} : memref<1x2x128x32xf32>
// CHECK-NEXT: scf.forall
// CHECK: memref.alloc() {{.*}} : memref<1x1x64xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c128 step %c32
// CHECK-NOT: memref.alloc
// CHECK: } {dat.origin = "dat.attention"}
func.func @attention(%q: tensor<1x2x128x32xf32>, %k: tensor<1x2x128x32xf32>,
                     %v: tensor<1x2x128x32xf32>) -> tensor<1x2x128x32xf32> {
  %o = tensor.empty() : tensor<1x2x128x32xf32>
  %r = dat.attention ins(%q, %k, %v : tensor<1x2x128x32xf32>,
                         tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>)
                     outs(%o : tensor<1x2x128x32xf32>) scale = 0.176776695
                     -> tensor<1x2x128x32xf32>
  return %r : tensor<1x2x128x32xf32>
}
