// Tiling the attention-family ops through TilingInterface must not change
// the result beyond rounding: each op runs tiled and untiled on the same
// inputs and the largest absolute difference is printed (0, or below 1e-5
// where the CPU's vector layer vectorizes a static tile's row sums and
// leaves a partial tile's to the loop vectorizer: a different order of the
// same additions), then the largest magnitude (so that a vacuous all-zero
// result shows up).
//  * dat.relational_attention: causal, grouped kv heads, tiles (1, 3 rows);
//  * dat.hyper_attention: causal, rms_head, mlp_relu, broadcast bias, tiles
//    (1, 4 rows) of 6 (a partial last tile);
//  * dat.orthogonal_map: maps shared by the batch and all heads, tiles
//    (1, 2 heads, 5 tokens) of 6.
//
// RUN: dat-opt %s --transform-preload-library=transform-library-paths=%S/Inputs/tile-marked-ops.mlir \
// RUN:   --transform-interpreter --dat-cpu-pipeline \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils -shared-libs=%mlir_c_runner_utils \
// RUN: | FileCheck %s
// RUN: dat-opt %s --transform-preload-library=transform-library-paths=%S/Inputs/tile-marked-ops.mlir \
// RUN:   --transform-interpreter | FileCheck %s --check-prefix=TILED

// TILED-LABEL: func.func @ra_tiled
// TILED: scf.for
// TILED: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}}
// TILED: dat.relational_attention {{.*}} query_offset(%[[I]]) {{.*}} -> tensor<1x4x3x8xf32>
// TILED-LABEL: func.func @hyla_tiled
// TILED: scf.for
// TILED: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}}
// TILED: dat.hyper_attention {{.*}} bias(%{{.+}} : tensor<1x4x?x6xf32>) query_offset(%[[I]]) {{.*}} -> tensor<1x4x?x3xf32>
// TILED-LABEL: func.func @omap_tiled
// TILED-COUNT-3: scf.for
// TILED: dat.orthogonal_map ins(%{{.+}}, %{{.+}} : tensor<1x2x?x8xf32>, tensor<1x?x1x8x8xf32>)

func.func private @printMemrefF32(tensor<*xf32>)

func.func @ra(%q: tensor<2x4x6x8xf32>, %k: tensor<2x2x6x8xf32>, %qr: tensor<2x3x6x4xf32>,
              %s: tensor<2x2x6x8xf32>, %wr: tensor<4x8x3xf32>) -> tensor<2x4x6x8xf32> {
  %o = tensor.empty() : tensor<2x4x6x8xf32>
  %r = dat.relational_attention
         ins(%q, %k, %qr, %qr, %s, %wr : tensor<2x4x6x8xf32>, tensor<2x2x6x8xf32>,
             tensor<2x3x6x4xf32>, tensor<2x3x6x4xf32>, tensor<2x2x6x8xf32>, tensor<4x8x3xf32>)
         outs(%o : tensor<2x4x6x8xf32>)
         scale = 0.353553385 rel_scale = 0.5 activation = "softmax" causal
         -> tensor<2x4x6x8xf32>
  return %r : tensor<2x4x6x8xf32>
}

func.func @ra_tiled(%q: tensor<2x4x6x8xf32>, %k: tensor<2x2x6x8xf32>, %qr: tensor<2x3x6x4xf32>,
                 %s: tensor<2x2x6x8xf32>, %wr: tensor<4x8x3xf32>) -> tensor<2x4x6x8xf32> {
  %o = tensor.empty() : tensor<2x4x6x8xf32>
  %r = dat.relational_attention
         ins(%q, %k, %qr, %qr, %s, %wr : tensor<2x4x6x8xf32>, tensor<2x2x6x8xf32>,
             tensor<2x3x6x4xf32>, tensor<2x3x6x4xf32>, tensor<2x2x6x8xf32>, tensor<4x8x3xf32>)
         outs(%o : tensor<2x4x6x8xf32>)
         scale = 0.353553385 rel_scale = 0.5 activation = "softmax" causal
         {tile_rows} -> tensor<2x4x6x8xf32>
  return %r : tensor<2x4x6x8xf32>
}

func.func @hyla(%q: tensor<2x4x6x3xf32>, %k: tensor<2x4x6x3xf32>, %v: tensor<2x4x6x3xf32>,
                 %bias: tensor<1x4x6x6xf32>) -> tensor<2x4x6x3xf32> {
  %o = tensor.empty() : tensor<2x4x6x3xf32>
  %r = dat.hyper_attention ins(%q, %k, %v : tensor<2x4x6x3xf32>, tensor<2x4x6x3xf32>, tensor<2x4x6x3xf32>)
         bias(%bias : tensor<1x4x6x6xf32>) outs(%o : tensor<2x4x6x3xf32>)
         scale = 0.577350259 normalization = "rms_head" network = "mlp_relu" causal
         -> tensor<2x4x6x3xf32>
  return %r : tensor<2x4x6x3xf32>
}

func.func @hyla_tiled(%q: tensor<2x4x6x3xf32>, %k: tensor<2x4x6x3xf32>, %v: tensor<2x4x6x3xf32>,
                       %bias: tensor<1x4x6x6xf32>) -> tensor<2x4x6x3xf32> {
  %o = tensor.empty() : tensor<2x4x6x3xf32>
  %r = dat.hyper_attention ins(%q, %k, %v : tensor<2x4x6x3xf32>, tensor<2x4x6x3xf32>, tensor<2x4x6x3xf32>)
         bias(%bias : tensor<1x4x6x6xf32>) outs(%o : tensor<2x4x6x3xf32>)
         scale = 0.577350259 normalization = "rms_head" network = "mlp_relu" causal
         {tile_rows_4} -> tensor<2x4x6x3xf32>
  return %r : tensor<2x4x6x3xf32>
}

func.func @omap(%x: tensor<2x4x6x8xf32>, %m: tensor<1x6x1x8x8xf32>) -> tensor<2x4x6x8xf32> {
  %o = tensor.empty() : tensor<2x4x6x8xf32>
  %r = dat.orthogonal_map ins(%x, %m : tensor<2x4x6x8xf32>, tensor<1x6x1x8x8xf32>)
         outs(%o : tensor<2x4x6x8xf32>) -> tensor<2x4x6x8xf32>
  return %r : tensor<2x4x6x8xf32>
}

func.func @omap_tiled(%x: tensor<2x4x6x8xf32>, %m: tensor<1x6x1x8x8xf32>) -> tensor<2x4x6x8xf32> {
  %o = tensor.empty() : tensor<2x4x6x8xf32>
  %r = dat.orthogonal_map ins(%x, %m : tensor<2x4x6x8xf32>, tensor<1x6x1x8x8xf32>)
         outs(%o : tensor<2x4x6x8xf32>) {tile_tokens} -> tensor<2x4x6x8xf32>
  return %r : tensor<2x4x6x8xf32>
}

// A deterministic, varied fill: sin(0.37·flat + phase).
func.func @fill(%t: tensor<?x?x?x?xf32>, %phase: f32) -> tensor<?x?x?x?xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %d1 = tensor.dim %t, %c1 : tensor<?x?x?x?xf32>
  %d2 = tensor.dim %t, %c2 : tensor<?x?x?x?xf32>
  %d3 = tensor.dim %t, %c3 : tensor<?x?x?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%t : tensor<?x?x?x?xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %a = arith.muli %i0, %d1 : index
    %b = arith.addi %a, %i1 : index
    %c = arith.muli %b, %d2 : index
    %d = arith.addi %c, %i2 : index
    %e = arith.muli %d, %d3 : index
    %f = arith.addi %e, %i3 : index
    %fi = arith.index_cast %f : index to i64
    %ff = arith.sitofp %fi : i64 to f32
    %k = arith.constant 0.37 : f32
    %x = arith.mulf %ff, %k : f32
    %y = arith.addf %x, %phase : f32
    %s = math.sin %y : f32
    linalg.yield %s : f32
  } -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}

// Prints max |a − b|, then max |a|.
func.func @compare(%a: tensor<?x?x?x?xf32>, %b: tensor<?x?x?x?xf32>) {
  %zero = arith.constant dense<0.0> : tensor<1xf32>
  %m:2 = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>,
                                        affine_map<(a, b, c, d) -> (a, b, c, d)>,
                                        affine_map<(a, b, c, d) -> (0)>,
                                        affine_map<(a, b, c, d) -> (0)>],
                       iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %b : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>)
      outs(%zero, %zero : tensor<1xf32>, tensor<1xf32>) {
  ^bb0(%x: f32, %y: f32, %d: f32, %n: f32):
    %diff = arith.subf %x, %y : f32
    %ad = math.absf %diff : f32
    %md = arith.maximumf %d, %ad : f32
    %ax = math.absf %x : f32
    %mn = arith.maximumf %n, %ax : f32
    linalg.yield %md, %mn : f32, f32
  } -> (tensor<1xf32>, tensor<1xf32>)
  %u = tensor.cast %m#0 : tensor<1xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  %v = tensor.cast %m#1 : tensor<1xf32> to tensor<*xf32>
  call @printMemrefF32(%v) : (tensor<*xf32>) -> ()
  return
}

func.func @main() {
  %p0 = arith.constant 0.1 : f32
  %p1 = arith.constant 0.7 : f32
  %p2 = arith.constant 1.3 : f32
  %p3 = arith.constant 2.1 : f32
  %eq = tensor.empty() : tensor<2x4x6x8xf32>
  %ek = tensor.empty() : tensor<2x2x6x8xf32>
  %er = tensor.empty() : tensor<2x3x6x4xf32>
  %q0 = tensor.cast %eq : tensor<2x4x6x8xf32> to tensor<?x?x?x?xf32>
  %k0 = tensor.cast %ek : tensor<2x2x6x8xf32> to tensor<?x?x?x?xf32>
  %r0 = tensor.cast %er : tensor<2x3x6x4xf32> to tensor<?x?x?x?xf32>
  %q1 = call @fill(%q0, %p0) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %k1 = call @fill(%k0, %p1) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %s1 = call @fill(%k0, %p2) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %r1 = call @fill(%r0, %p3) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %q = tensor.cast %q1 : tensor<?x?x?x?xf32> to tensor<2x4x6x8xf32>
  %k = tensor.cast %k1 : tensor<?x?x?x?xf32> to tensor<2x2x6x8xf32>
  %s = tensor.cast %s1 : tensor<?x?x?x?xf32> to tensor<2x2x6x8xf32>
  %qr = tensor.cast %r1 : tensor<?x?x?x?xf32> to tensor<2x3x6x4xf32>
  %wr = arith.constant dense<0.25> : tensor<4x8x3xf32>
  %a = call @ra(%q, %k, %qr, %s, %wr) : (tensor<2x4x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x3x6x4xf32>, tensor<2x2x6x8xf32>, tensor<4x8x3xf32>) -> tensor<2x4x6x8xf32>
  %b = call @ra_tiled(%q, %k, %qr, %s, %wr) : (tensor<2x4x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x3x6x4xf32>, tensor<2x2x6x8xf32>, tensor<4x8x3xf32>) -> tensor<2x4x6x8xf32>
  %ad = tensor.cast %a : tensor<2x4x6x8xf32> to tensor<?x?x?x?xf32>
  %bd = tensor.cast %b : tensor<2x4x6x8xf32> to tensor<?x?x?x?xf32>
  call @compare(%ad, %bd) : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> ()

  %eh = tensor.empty() : tensor<2x4x6x3xf32>
  %eb = tensor.empty() : tensor<1x4x6x6xf32>
  %eh0 = tensor.cast %eh : tensor<2x4x6x3xf32> to tensor<?x?x?x?xf32>
  %eb0 = tensor.cast %eb : tensor<1x4x6x6xf32> to tensor<?x?x?x?xf32>
  %hq1 = call @fill(%eh0, %p0) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %hk1 = call @fill(%eh0, %p1) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %hv1 = call @fill(%eh0, %p2) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %hb1 = call @fill(%eb0, %p3) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %hq = tensor.cast %hq1 : tensor<?x?x?x?xf32> to tensor<2x4x6x3xf32>
  %hk = tensor.cast %hk1 : tensor<?x?x?x?xf32> to tensor<2x4x6x3xf32>
  %hv = tensor.cast %hv1 : tensor<?x?x?x?xf32> to tensor<2x4x6x3xf32>
  %hb = tensor.cast %hb1 : tensor<?x?x?x?xf32> to tensor<1x4x6x6xf32>
  %ha = call @hyla(%hq, %hk, %hv, %hb) : (tensor<2x4x6x3xf32>, tensor<2x4x6x3xf32>, tensor<2x4x6x3xf32>, tensor<1x4x6x6xf32>) -> tensor<2x4x6x3xf32>
  %hbt = call @hyla_tiled(%hq, %hk, %hv, %hb) : (tensor<2x4x6x3xf32>, tensor<2x4x6x3xf32>, tensor<2x4x6x3xf32>, tensor<1x4x6x6xf32>) -> tensor<2x4x6x3xf32>
  %had = tensor.cast %ha : tensor<2x4x6x3xf32> to tensor<?x?x?x?xf32>
  %hbd = tensor.cast %hbt : tensor<2x4x6x3xf32> to tensor<?x?x?x?xf32>
  call @compare(%had, %hbd) : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> ()

  %em = tensor.empty() : tensor<6x8x8xf32>
  %mx = tensor.expand_shape %em [[0, 1], [2], [3, 4]] output_shape [1, 6, 8, 1, 8] : tensor<6x8x8xf32> into tensor<1x6x8x1x8xf32>
  %mc = tensor.collapse_shape %mx [[0], [1], [2, 3], [4]] : tensor<1x6x8x1x8xf32> into tensor<1x6x8x8xf32>
  %m0 = tensor.cast %mc : tensor<1x6x8x8xf32> to tensor<?x?x?x?xf32>
  %m1 = call @fill(%m0, %p3) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %m2 = tensor.cast %m1 : tensor<?x?x?x?xf32> to tensor<1x6x8x8xf32>
  %maps = tensor.expand_shape %m2 [[0], [1, 2], [3], [4]] output_shape [1, 6, 1, 8, 8] : tensor<1x6x8x8xf32> into tensor<1x6x1x8x8xf32>
  %oa = call @omap(%q, %maps) : (tensor<2x4x6x8xf32>, tensor<1x6x1x8x8xf32>) -> tensor<2x4x6x8xf32>
  %ob = call @omap_tiled(%q, %maps) : (tensor<2x4x6x8xf32>, tensor<1x6x1x8x8xf32>) -> tensor<2x4x6x8xf32>
  %oad = tensor.cast %oa : tensor<2x4x6x8xf32> to tensor<?x?x?x?xf32>
  %obd = tensor.cast %ob : tensor<2x4x6x8xf32> to tensor<?x?x?x?xf32>
  call @compare(%oad, %obd) : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> ()
  return
}

// For each op: the difference, then the magnitude of the result.
// CHECK: data =
// CHECK-NEXT: {{\[(0|[0-9](\.[0-9]+)?e-(0[6-9]|[1-9][0-9]))\]}}
// CHECK: data =
// CHECK-NEXT: {{\[}}{{0\.[1-9]|[1-9]}}
// CHECK: data =
// CHECK-NEXT: {{\[(0|[0-9](\.[0-9]+)?e-(0[6-9]|[1-9][0-9]))\]}}
// CHECK: data =
// CHECK-NEXT: {{\[}}{{0\.[1-9]|[1-9]}}
// CHECK: data =
// CHECK-NEXT: {{\[(0|[0-9](\.[0-9]+)?e-(0[6-9]|[1-9][0-9]))\]}}
// CHECK: data =
// CHECK-NEXT: {{\[}}{{0\.[1-9]|[1-9]}}
