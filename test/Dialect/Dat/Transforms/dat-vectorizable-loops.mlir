// RUN: dat-opt %s --dat-vectorizable-loops | FileCheck %s
// RUN: dat-opt %s --dat-vectorizable-loops="polynomial-exp=false" | FileCheck %s --check-prefix=LIBM

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// A reduction's arithmetic may be reassociated (and contracted into FMAs):
// LLVM can then vectorize its loop.
// CHECK-LABEL: func.func @dot_rows
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<reassoc,contract>
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc,contract>
func.func @dot_rows(%a: tensor<4x64xf32>, %b: tensor<4x64xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a, %b : tensor<4x64xf32>, tensor<4x64xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %s: f32):
    %p = arith.mulf %x, %y : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Elementwise ops keep their exact arithmetic; exp becomes a polynomial in
// plain arithmetic (no libm call a loop could not vectorize).
// CHECK-LABEL: func.func @scale_exp
// CHECK-NOT: fastmath<reassoc
// CHECK-NOT: math.exp
// CHECK: linalg.yield
// LIBM-LABEL: func.func @scale_exp
// LIBM: math.exp
func.func @scale_exp(%a: tensor<4x64xf32>, %out: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x64xf32>) outs(%out : tensor<4x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.constant 0.5 : f32
    %m = arith.mulf %x, %c : f32
    %e = math.exp %m : f32
    linalg.yield %e : f32
  } -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}
