// Causal attention over N = 8192 keys through the flash-tiled CPU path
// (64 × 64 tiles: 128 key blocks, the running max rising in every one),
// checked against a closed form. With q_i = 1, k_j = c·j/N (d = 1, scale 1)
// and v_j = exp(-c·j/N):
//   out_i = Σ_{j≤i} e^{cj/N} e^{-cj/N} / Σ_{j≤i} e^{cj/N}
//         = (i+1)(1 - r) / (1 - r^{i+1}),   r = e^{c/N}.
// c = 60 puts the logits in [0, 60]: an unshifted softmax overflows nothing
// here, but a wrong rescaling across blocks shows at once. Prints the
// largest relative error (2e-5: f32 sums over up to 8192 keys) and 1 when
// it is below 1e-4. Runs in about a second.
//
// RUN: dat-opt %s --dat-cpu-pipeline \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils -shared-libs=%mlir_c_runner_utils \
// RUN: | FileCheck %s
// CHECK: data =
// CHECK-NEXT: {{\[}}{{[0-9.e-]+}}]
// CHECK: data =
// CHECK-NEXT: {{\[}}1]

func.func private @printMemrefF32(tensor<*xf32>)

#id4 = affine_map<(a, b, i, d) -> (a, b, i, d)>
#row = affine_map<(a, b, i, d) -> (i)>

func.func @main() {
  %c = arith.constant 60.0 : f32
  %n = arith.constant 8192.0 : f32
  %e = tensor.empty() : tensor<1x1x8192x1xf32>
  %q = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : tensor<1x1x8192x1xf32>) {
  ^bb0(%o: f32):
    %one = arith.constant 1.0 : f32
    linalg.yield %one : f32
  } -> tensor<1x1x8192x1xf32>
  %k = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : tensor<1x1x8192x1xf32>) {
  ^bb0(%o: f32):
    %j = linalg.index 2 : index
    %ji = arith.index_cast %j : index to i64
    %jf = arith.sitofp %ji : i64 to f32
    %t = arith.mulf %jf, %c : f32
    %x = arith.divf %t, %n : f32
    linalg.yield %x : f32
  } -> tensor<1x1x8192x1xf32>
  %v = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<1x1x8192x1xf32>) outs(%e : tensor<1x1x8192x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    %nx = arith.negf %x : f32
    %y = math.exp %nx : f32
    linalg.yield %y : f32
  } -> tensor<1x1x8192x1xf32>
  %out = dat.attention ins(%q, %k, %v : tensor<1x1x8192x1xf32>, tensor<1x1x8192x1xf32>, tensor<1x1x8192x1xf32>)
           outs(%e : tensor<1x1x8192x1xf32>) scale = 1.0 causal -> tensor<1x1x8192x1xf32>

  // max_i |out_i - want_i| / want_i, want_i in f64.
  %z = arith.constant dense<0.0> : tensor<1xf32>
  %err = linalg.generic {indexing_maps = [#id4, affine_map<(a, b, i, d) -> (0)>],
                         iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%out : tensor<1x1x8192x1xf32>) outs(%z : tensor<1xf32>) {
  ^bb0(%got: f32, %acc: f32):
    %i = linalg.index 2 : index
    %ii = arith.index_cast %i : index to i64
    %if = arith.sitofp %ii : i64 to f64
    %one = arith.constant 1.0 : f64
    %ip1 = arith.addf %if, %one : f64
    %cd = arith.constant 60.0 : f64
    %nd = arith.constant 8192.0 : f64
    %a = arith.divf %cd, %nd : f64
    %r = math.exp %a : f64
    %ai = arith.mulf %a, %ip1 : f64
    %rp = math.exp %ai : f64
    %num0 = arith.subf %one, %r : f64
    %num = arith.mulf %ip1, %num0 : f64
    %den = arith.subf %one, %rp : f64
    %want = arith.divf %num, %den : f64
    %gd = arith.extf %got : f32 to f64
    %d = arith.subf %gd, %want : f64
    %ad = math.absf %d : f64
    %rel = arith.divf %ad, %want : f64
    %relf = arith.truncf %rel : f64 to f32
    %m = arith.maximumf %acc, %relf : f32
    linalg.yield %m : f32
  } -> tensor<1xf32>
  %z2 = arith.constant dense<0.0> : tensor<1xf32>
  %ok = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%err : tensor<1xf32>) outs(%z2 : tensor<1xf32>) {
  ^bb0(%x: f32, %o: f32):
    %lim = arith.constant 1.0e-4 : f32
    %lt = arith.cmpf olt, %x, %lim : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %s = arith.select %lt, %one, %zero : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  %u = tensor.cast %err : tensor<1xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  %w = tensor.cast %ok : tensor<1xf32> to tensor<*xf32>
  call @printMemrefF32(%w) : (tensor<*xf32>) -> ()
  return
}
