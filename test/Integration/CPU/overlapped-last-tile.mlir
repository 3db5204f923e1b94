// Batch 1, N = 100 queries in tiles of 64: the attention tile loops of
// relational attention and HYLA (tiles that keep every head) would leave the
// 36-row partial tile to one thread; dat-peel-tile-loops instead computes a
// full last tile over rows 36-99 and inserts rows 64-99 of it
// (dat.overlapped_last_tile). The outputs, printed whole, must equal the
// reference lowering's (tile-attention=false: the N × N form, no tiles) and
// the peeled loops' (overlap-last-tile=false) up to rounding
// (compare_runs.py).
//
// RUN: dat-opt %s --dat-cpu-pipeline \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils -shared-libs=%mlir_c_runner_utils > %t.overlap
// RUN: dat-opt %s --dat-cpu-pipeline="overlap-last-tile=false" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils -shared-libs=%mlir_c_runner_utils > %t.peel
// RUN: dat-opt %s --dat-cpu-pipeline="tile-attention=false" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils -shared-libs=%mlir_c_runner_utils > %t.ref
// RUN: %PYTHON %S/compare_runs.py %t.ref %t.overlap %t.peel | FileCheck %s
// CHECK: 2 outputs of 1600, 800 values agree
//
// The loops are overlapped (and the peeled form is the other one).
// RUN: dat-opt %s --dat-cpu-pipeline="c-interface=false" --mlir-print-ir-before=dat-register-tiles 2>&1 >/dev/null \
// RUN: | FileCheck %s --check-prefix=IR
// IR-COUNT-2: dat.overlapped_last_tile
// IR-NOT: dat.rest_of_split

func.func private @printMemrefF32(tensor<*xf32>)

func.func @ra(%q: tensor<1x2x100x8xf32>, %k: tensor<1x2x100x8xf32>, %qr: tensor<1x2x100x4xf32>,
              %kr: tensor<1x2x100x4xf32>, %s: tensor<1x2x100x8xf32>,
              %wr: tensor<2x8x2xf32>) -> tensor<1x2x100x8xf32> {
  %o = tensor.empty() : tensor<1x2x100x8xf32>
  %r = dat.relational_attention
         ins(%q, %k, %qr, %kr, %s, %wr : tensor<1x2x100x8xf32>, tensor<1x2x100x8xf32>,
             tensor<1x2x100x4xf32>, tensor<1x2x100x4xf32>, tensor<1x2x100x8xf32>, tensor<2x8x2xf32>)
         outs(%o : tensor<1x2x100x8xf32>)
         scale = 0.353553385 rel_scale = 0.5 activation = "relu"
         -> tensor<1x2x100x8xf32>
  return %r : tensor<1x2x100x8xf32>
}

func.func @hyla(%q: tensor<1x2x100x4xf32>, %k: tensor<1x2x100x4xf32>, %v: tensor<1x2x100x4xf32>)
    -> tensor<1x2x100x4xf32> {
  %o = tensor.empty() : tensor<1x2x100x4xf32>
  %r = dat.hyper_attention ins(%q, %k, %v : tensor<1x2x100x4xf32>, tensor<1x2x100x4xf32>, tensor<1x2x100x4xf32>)
         outs(%o : tensor<1x2x100x4xf32>)
         scale = 0.5 normalization = "rms_head" network = "mlp_relu" causal
         -> tensor<1x2x100x4xf32>
  return %r : tensor<1x2x100x4xf32>
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

func.func @print(%t: tensor<?x?x?x?xf32>) {
  %u = tensor.cast %t : tensor<?x?x?x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

func.func @main() {
  %p0 = arith.constant 0.1 : f32
  %p1 = arith.constant 0.7 : f32
  %p2 = arith.constant 1.3 : f32
  %p3 = arith.constant 2.1 : f32
  %p4 = arith.constant 2.9 : f32
  %e8 = tensor.empty() : tensor<1x2x100x8xf32>
  %e4 = tensor.empty() : tensor<1x2x100x4xf32>
  %d8 = tensor.cast %e8 : tensor<1x2x100x8xf32> to tensor<?x?x?x?xf32>
  %d4 = tensor.cast %e4 : tensor<1x2x100x4xf32> to tensor<?x?x?x?xf32>
  %q1 = call @fill(%d8, %p0) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %k1 = call @fill(%d8, %p1) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %s1 = call @fill(%d8, %p2) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %qr1 = call @fill(%d4, %p3) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %kr1 = call @fill(%d4, %p4) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %q = tensor.cast %q1 : tensor<?x?x?x?xf32> to tensor<1x2x100x8xf32>
  %k = tensor.cast %k1 : tensor<?x?x?x?xf32> to tensor<1x2x100x8xf32>
  %s = tensor.cast %s1 : tensor<?x?x?x?xf32> to tensor<1x2x100x8xf32>
  %qr = tensor.cast %qr1 : tensor<?x?x?x?xf32> to tensor<1x2x100x4xf32>
  %kr = tensor.cast %kr1 : tensor<?x?x?x?xf32> to tensor<1x2x100x4xf32>
  %wr = arith.constant dense<0.25> : tensor<2x8x2xf32>
  %a = call @ra(%q, %k, %qr, %kr, %s, %wr) : (tensor<1x2x100x8xf32>, tensor<1x2x100x8xf32>, tensor<1x2x100x4xf32>, tensor<1x2x100x4xf32>, tensor<1x2x100x8xf32>, tensor<2x8x2xf32>) -> tensor<1x2x100x8xf32>
  %ad = tensor.cast %a : tensor<1x2x100x8xf32> to tensor<?x?x?x?xf32>
  call @print(%ad) : (tensor<?x?x?x?xf32>) -> ()

  %hq = call @fill(%d4, %p1) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %hk = call @fill(%d4, %p2) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %hv = call @fill(%d4, %p3) : (tensor<?x?x?x?xf32>, f32) -> tensor<?x?x?x?xf32>
  %hqs = tensor.cast %hq : tensor<?x?x?x?xf32> to tensor<1x2x100x4xf32>
  %hks = tensor.cast %hk : tensor<?x?x?x?xf32> to tensor<1x2x100x4xf32>
  %hvs = tensor.cast %hv : tensor<?x?x?x?xf32> to tensor<1x2x100x4xf32>
  %h = call @hyla(%hqs, %hks, %hvs) : (tensor<1x2x100x4xf32>, tensor<1x2x100x4xf32>, tensor<1x2x100x4xf32>) -> tensor<1x2x100x4xf32>
  %hd = tensor.cast %h : tensor<1x2x100x4xf32> to tensor<?x?x?x?xf32>
  call @print(%hd) : (tensor<?x?x?x?xf32>) -> ()
  return
}
