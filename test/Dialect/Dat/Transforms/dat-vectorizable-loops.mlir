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
// plain arithmetic (no libm call a loop could not vectorize): f32 exp takes
// dat's form (ExpApproximation.cpp): clamp at -127 ln 2, n rounded by the
// 1.5 · 2^23 magic number and held at 127, a two-step Cody-Waite reduction,
// a degree-7 polynomial, 2^n built from n's bits.
// CHECK-LABEL: func.func @scale_exp
// CHECK-DAG: %[[LN2HI:.*]] = arith.constant -0.693359375 : f32
// CHECK-DAG: %[[MAXK:.*]] = arith.constant 0x4B40007F : f32
// CHECK-DAG: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-DAG: %[[MAGIC:.*]] = arith.constant 0x4B400000 : f32
// CHECK-DAG: %[[LO:.*]] = arith.constant -88.0296936 : f32
// CHECK-NOT: fastmath<reassoc
// CHECK-NOT: math.exp
// CHECK: %[[X:.*]] = arith.mulf
// CHECK: %[[BELOW:.*]] = arith.cmpf olt, %[[X]], %[[LO]]
// CHECK: %[[XC:.*]] = arith.select %[[BELOW]], %[[LO]], %[[X]]
// CHECK: %[[T:.*]] = arith.mulf %[[XC]], %[[LOG2E]] fastmath<contract>
// CHECK: %[[K0:.*]] = arith.addf %[[T]], %[[MAGIC]] fastmath<contract>
// CHECK: %[[ABOVE:.*]] = arith.cmpf ogt, %[[K0]], %[[MAXK]]
// CHECK: %[[K:.*]] = arith.select %[[ABOVE]], %[[MAXK]], %[[K0]]
// CHECK: %[[N:.*]] = arith.subf %[[K]], %[[MAGIC]]
// CHECK: arith.mulf %[[N]], %[[LN2HI]] fastmath<contract>
// CHECK-COUNT-8: arith.addf
// CHECK: %[[BITS:.*]] = arith.bitcast %[[K]] : f32 to i32
// CHECK: %[[BIASED:.*]] = arith.addi %[[BITS]]
// CHECK: %[[EXP:.*]] = arith.shli %[[BIASED]]
// CHECK: %[[SCALE:.*]] = arith.bitcast %[[EXP]] : i32 to f32
// CHECK: %[[R:.*]] = arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK: linalg.yield %[[R]]
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

// Vectors take the same form; other element types are left to upstream's
// polynomials (which have none for f64: it stays a libm call).
// CHECK-LABEL: func.func @exp_vector_f64
// CHECK: arith.shli {{.*}} : vector<16xi32>
// CHECK: arith.bitcast {{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: math.exp {{.*}} : f64
// CHECK: return
// LIBM-LABEL: func.func @exp_vector_f64
// LIBM-COUNT-2: math.exp
func.func @exp_vector_f64(%v: vector<16xf32>, %d: f64) -> (vector<16xf32>, f64) {
  %e = math.exp %v : vector<16xf32>
  %f = math.exp %d : f64
  return %e, %f : vector<16xf32>, f64
}
