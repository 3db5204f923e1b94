// Executes the CPU pipeline's f32 exp (dat-vectorizable-loops: the
// polynomial of ExpApproximation.cpp, vectorized by LLVM) on a sweep of
// 40,000 inputs across its whole range and on the special values, and checks
// each result bit pattern against exp computed in float64 by plain Python
// (exp_reference.py): within 2 ulp where the result is normal, exact for
// exp(0), exp(-inf), exp(+inf) and NaN, zero or subnormal below 2^-126,
// +inf above the largest float.
//
// RUN: dat-opt %s --dat-cpu-pipeline \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils -shared-libs=%mlir_c_runner_utils \
// RUN: | %PYTHON %S/exp_reference.py

func.func private @printMemrefI32(tensor<*xi32>)

// Bit patterns of x and of exp(x).
func.func @exp_bits(%x: tensor<?xf32>) -> (tensor<?xi32>, tensor<?xi32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e0 = tensor.empty(%n) : tensor<?xi32>
  %e1 = tensor.empty(%n) : tensor<?xi32>
  %r:2 = linalg.generic {
      indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>,
                       affine_map<(i) -> (i)>],
      iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%e0, %e1 : tensor<?xi32>, tensor<?xi32>) {
  ^bb0(%a: f32, %o0: i32, %o1: i32):
    %y = math.exp %a : f32
    %ab = arith.bitcast %a : f32 to i32
    %yb = arith.bitcast %y : f32 to i32
    linalg.yield %ab, %yb : i32, i32
  } -> (tensor<?xi32>, tensor<?xi32>)
  return %r#0, %r#1 : tensor<?xi32>, tensor<?xi32>
}

func.func @print(%x: tensor<?xf32>) {
  %xb, %yb = call @exp_bits(%x) : (tensor<?xf32>) -> (tensor<?xi32>, tensor<?xi32>)
  %xu = tensor.cast %xb : tensor<?xi32> to tensor<*xi32>
  %yu = tensor.cast %yb : tensor<?xi32> to tensor<*xi32>
  call @printMemrefI32(%xu) : (tensor<*xi32>) -> ()
  call @printMemrefI32(%yu) : (tensor<*xi32>) -> ()
  return
}

func.func @main() {
  // x_i = -105 + i · 0.004875, i < 40000: [-105, 90), both ends past the
  // range where exp is a normal float.
  %n = arith.constant 40000 : index
  %empty = tensor.empty(%n) : tensor<?xf32>
  %sweep = linalg.generic {
      indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%empty : tensor<?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %step = arith.constant 0.004875 : f32
    %lo = arith.constant -105.0 : f32
    %s = arith.mulf %fi, %step : f32
    %x = arith.addf %s, %lo : f32
    linalg.yield %x : f32
  } -> tensor<?xf32>
  call @print(%sweep) : (tensor<?xf32>) -> ()

  // -inf, +inf, NaN, ±0, the ends of the normal range (ln of the largest
  // float 88.7228, of 2^-126 -87.3365), the clamp (-127 ln 2) and the
  // reduction's interval ends (±ln 2 / 2), tiny arguments.
  %special = arith.constant dense<[0xFF800000, 0x7F800000, 0x7FC00000,
      0.0, -0.0, 88.72283, 88.72284, 88.7228, 88.5, 88.376, 88.377,
      -87.3365, -87.33655, -88.0296, -88.0297, -88.5, -103.972, -104.0,
      0.34657359, -0.34657359, 0.3466, -0.3466, 1.0e-8, -1.0e-8, 1.0e-30,
      1.0, -1.0, 0.5, -0.5, 10.0, -10.0, 20.0, -20.0, 0x7F7FFFFF,
      0xFF7FFFFF, 0x00000001, 0x80000001]> : tensor<37xf32>
  %sd = tensor.cast %special : tensor<37xf32> to tensor<?xf32>
  call @print(%sd) : (tensor<?xf32>) -> ()
  return
}
