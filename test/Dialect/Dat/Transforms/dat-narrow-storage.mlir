// RUN: dat-opt %s --split-input-file --verify-diagnostics --dat-narrow-storage | FileCheck %s
// RUN: dat-opt %s --split-input-file --verify-diagnostics --dat-narrow-storage="element-type=f16" | FileCheck %s --check-prefix=F16
// RUN: not dat-opt %s --split-input-file --dat-narrow-storage="element-type=f8" 2>&1 | FileCheck %s --check-prefix=BADTYPE
// BADTYPE: error: dat-narrow-storage: element-type must be bf16 or f16, got 'f8'

// A projection with a bias, a residual add, and attention on the result.
// Arguments and results become bf16. The bias broadcast and the
// contraction accumulate in f32; the residual add reads the f32 result as
// is and writes bf16; the attention op gets one bf16 copy.

#bcast = affine_map<(b, l, o) -> (o)>
#id3 = affine_map<(b, l, o) -> (b, l, o)>
#x = affine_map<(b, l, o, i) -> (b, l, i)>
#w = affine_map<(b, l, o, i) -> (o, i)>
#y = affine_map<(b, l, o, i) -> (b, l, o)>

// CHECK-LABEL: func.func @projection
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x16xbf16>, %[[W:.+]]: tensor<16x16xbf16>, %[[B:.+]]: tensor<16xbf16>)
// CHECK-SAME: -> (tensor<1x8x16xbf16>, tensor<1x1x8x16xbf16>)
// F16-LABEL: func.func @projection
// F16-SAME: (%{{.+}}: tensor<1x8x16xf16>, %{{.+}}: tensor<16x16xf16>, %{{.+}}: tensor<16xf16>)
func.func @projection(%x: tensor<1x8x16xf32>, %w: tensor<16x16xf32>,
                      %b: tensor<16xf32>)
    -> (tensor<1x8x16xf32>, tensor<1x1x8x16xf32>) {
  // CHECK-NOT: tensor.empty() : tensor<1x8x16xbf16>
  // CHECK: %[[E0:.+]] = tensor.empty() : tensor<1x8x16xf32>
  // CHECK: %[[BIAS:.+]] = linalg.generic {{.+}} ins(%[[B]] : tensor<16xbf16>) outs(%[[E0]] : tensor<1x8x16xf32>)
  // CHECK-NEXT: ^bb0(%[[IN:.+]]: bf16, %{{.+}}: f32):
  // CHECK-NEXT: %[[WIDE:.+]] = arith.extf %[[IN]] : bf16 to f32
  // CHECK-NEXT: linalg.yield %[[WIDE]] : f32
  %e0 = tensor.empty() : tensor<1x8x16xf32>
  %bias = linalg.generic {indexing_maps = [#bcast, #id3],
                          iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<16xf32>) outs(%e0 : tensor<1x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x8x16xf32>
  // CHECK: %[[Y:.+]] = linalg.generic {{.+}} ins(%[[X]], %[[W]] : tensor<1x8x16xbf16>, tensor<16x16xbf16>) outs(%[[BIAS]] : tensor<1x8x16xf32>)
  // CHECK-NEXT: ^bb0(%[[XI:.+]]: bf16, %[[WI:.+]]: bf16, %[[ACC:.+]]: f32):
  // CHECK-DAG: %[[XW:.+]] = arith.extf %[[XI]] : bf16 to f32
  // CHECK-DAG: %[[WW:.+]] = arith.extf %[[WI]] : bf16 to f32
  // CHECK: %[[P:.+]] = arith.mulf %[[XW]], %[[WW]] : f32
  // CHECK: %[[S:.+]] = arith.addf %[[ACC]], %[[P]] : f32
  // CHECK: linalg.yield %[[S]] : f32
  // CHECK: } -> tensor<1x8x16xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x8x16xf32>, tensor<16x16xf32>) outs(%bias : tensor<1x8x16xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x8x16xf32>
  // The copy for the non-elementwise consumers, made right after %y.
  // CHECK: %[[E1:.+]] = tensor.empty() : tensor<1x8x16xbf16>
  // CHECK: %[[YN:.+]] = linalg.generic {{.+}} ins(%[[Y]] : tensor<1x8x16xf32>) outs(%[[E1]] : tensor<1x8x16xbf16>)
  // CHECK: arith.truncf %{{.+}} : f32 to bf16
  // The residual: f32 %y read as is, %x widened, the sum narrowed.
  // CHECK: %[[R:.+]] = linalg.generic {{.+}} ins(%[[Y]], %[[X]] : tensor<1x8x16xf32>, tensor<1x8x16xbf16>) outs(%{{.+}} : tensor<1x8x16xbf16>)
  // CHECK-NEXT: ^bb0(%[[YI:.+]]: f32, %[[XI2:.+]]: bf16, %{{.+}}: bf16):
  // CHECK-NEXT: %[[XW2:.+]] = arith.extf %[[XI2]] : bf16 to f32
  // CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[YI]], %[[XW2]] : f32
  // CHECK-NEXT: %[[SN:.+]] = arith.truncf %[[SUM]] : f32 to bf16
  // CHECK-NEXT: linalg.yield %[[SN]] : bf16
  %e1 = tensor.empty() : tensor<1x8x16xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y, %x : tensor<1x8x16xf32>, tensor<1x8x16xf32>) outs(%e1 : tensor<1x8x16xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<1x8x16xf32>
  // CHECK: %[[Q:.+]] = tensor.expand_shape %[[YN]] {{.+}} into tensor<1x1x8x16xbf16>
  // CHECK: dat.attention ins(%[[Q]], %[[Q]], %[[Q]] : tensor<1x1x8x16xbf16>, tensor<1x1x8x16xbf16>, tensor<1x1x8x16xbf16>) outs(%{{.+}} : tensor<1x1x8x16xbf16>)
  %q = tensor.expand_shape %y [[0, 1], [2], [3]] output_shape [1, 1, 8, 16]
      : tensor<1x8x16xf32> into tensor<1x1x8x16xf32>
  %o = tensor.empty() : tensor<1x1x8x16xf32>
  %a = dat.attention ins(%q, %q, %q : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>)
         outs(%o : tensor<1x1x8x16xf32>) scale = 0.25 -> tensor<1x1x8x16xf32>
  return %r, %a : tensor<1x8x16xf32>, tensor<1x1x8x16xf32>
}

// -----

// A reduction started by a fill (layer-norm statistics): the fill and the
// sum stay f32; a constant table becomes bf16 (rounded to nearest even);
// a gather reads the bf16 table and widens the scalar; calls and callees
// agree on bf16.

#row = affine_map<(b, l) -> (b, l)>
#red = affine_map<(b, l, d) -> (b, l, d)>
#out = affine_map<(b, l, d) -> (b, l)>

// CHECK-LABEL: func.func private @layer
// CHECK-SAME: (%{{.+}}: tensor<2x4xbf16>) -> tensor<2x4xbf16>
func.func private @layer(%t: tensor<2x4xf32>) -> tensor<2x4xf32> {
  return %t : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @stats
func.func @stats(%x: tensor<2x4x8xf32>, %idx: tensor<2x4xi64>) -> tensor<2x4xf32> {
  // CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
  // CHECK: %[[E:.+]] = tensor.empty() : tensor<2x4xf32>
  // CHECK: %[[F:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<2x4xf32>)
  // CHECK: %[[SUM:.+]] = linalg.generic {{.+}} outs(%[[F]] : tensor<2x4xf32>)
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %sum = linalg.generic {indexing_maps = [#red, #out],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x4x8xf32>) outs(%f : tensor<2x4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  // 1.00390625 = 1 + 2^-8 is a tie between bf16 1.0 and 1.0078125: even wins.
  // CHECK: arith.constant dense<[1.000000e+00, 3.000000e+00, 1.000000e+00]> : tensor<3xbf16>
  %table = arith.constant dense<[1.00390625, 3.0, 1.0]> : tensor<3xf32>
  // CHECK: linalg.generic {{.+}} ins(%[[SUM]], %{{.+}} : tensor<2x4xf32>, tensor<2x4xi64>) outs(%{{.+}} : tensor<2x4xbf16>)
  // CHECK: %[[G:.+]] = tensor.extract %{{.+}}[%{{.+}}] : tensor<3xbf16>
  // CHECK-NEXT: %[[GW:.+]] = arith.extf %[[G]] : bf16 to f32
  // CHECK-NEXT: arith.mulf %{{.+}}, %[[GW]] : f32
  %e2 = tensor.empty() : tensor<2x4xf32>
  %scaled = linalg.generic {indexing_maps = [#row, #row, #row],
                            iterator_types = ["parallel", "parallel"]}
      ins(%sum, %idx : tensor<2x4xf32>, tensor<2x4xi64>) outs(%e2 : tensor<2x4xf32>) {
  ^bb0(%s: f32, %i: i64, %out: f32):
    %k = arith.index_cast %i : i64 to index
    %t = tensor.extract %table[%k] : tensor<3xf32>
    %m = arith.mulf %s, %t : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  // CHECK: %[[C:.+]] = call @layer(%{{.+}}) : (tensor<2x4xbf16>) -> tensor<2x4xbf16>
  // CHECK: return %[[C]] : tensor<2x4xbf16>
  %c = call @layer(%scaled) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %c : tensor<2x4xf32>
}

// -----

// A loop (APE's tree maps) computes in f32: what it reads narrow, as an
// operand or from above, is widened before it; its result is narrowed where
// it is used.
// CHECK-LABEL: func.func @loop(
// CHECK-SAME: %[[X:.+]]: tensor<4xbf16>, %[[W:.+]]: tensor<4xbf16>
// CHECK-DAG: %[[XW:.+]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4xbf16>) outs(%{{.+}} : tensor<4xf32>)
// CHECK-DAG: %[[WW:.+]] = linalg.generic {{.*}} ins(%[[W]] : tensor<4xbf16>) outs(%{{.+}} : tensor<4xf32>)
// CHECK: %[[R:.+]] = scf.for {{.*}} iter_args(%[[ACC:.+]] = %[[XW]]) -> (tensor<4xf32>)
// CHECK: arith.addf %[[ACC]], %[[WW]] : tensor<4xf32>
// CHECK: %[[N:.+]] = linalg.generic {{.*}} ins(%[[R]] : tensor<4xf32>) outs(%{{.+}} : tensor<4xbf16>)
// CHECK: return %[[N]] : tensor<4xbf16>
func.func @loop(%x: tensor<4xf32>, %w: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<4xf32> {
    %s = arith.addf %acc, %w : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Other IR outside the frontend's flat form is refused, not guessed at.
func.func @branch(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  // expected-error @+1 {{dat-narrow-storage: unexpected op with regions}}
  %r = scf.if %c -> tensor<4xf32> {
    scf.yield %x : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A declaration's f32 tensors are another library's ABI (e.g. the runner's
// printMemrefF32): refused rather than silently changed.
// expected-error @+1 {{dat-narrow-storage: the external function's f32 tensors would change its ABI}}
func.func private @printMemrefF32(tensor<*xf32>)

func.func @print(%x: tensor<4xf32>) {
  %u = tensor.cast %x : tensor<4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

// -----

// Unranked tensors are narrowed like ranked ones.
// CHECK-LABEL: func.func @unranked
// CHECK-SAME: (%{{.+}}: tensor<4xbf16>) -> tensor<*xbf16>
// CHECK: tensor.cast %{{.+}} : tensor<4xbf16> to tensor<*xbf16>
func.func @unranked(%x: tensor<4xf32>) -> tensor<*xf32> {
  %u = tensor.cast %x : tensor<4xf32> to tensor<*xf32>
  return %u : tensor<*xf32>
}
