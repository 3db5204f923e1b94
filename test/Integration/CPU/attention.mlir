// Executes dat.attention on the CPU and compares every output element with
// an independent float64 computation in plain Python (attention_reference.py),
// which rebuilds the same inputs from the same closed-form formulas.
//
// RUN: dat-opt %s --dat-cpu-pipeline \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils -shared-libs=%mlir_c_runner_utils \
// RUN: | %PYTHON %S/attention_reference.py

func.func private @printMemrefF32(tensor<*xf32>)

// x[b,h,i,d] = amp · sin(freq · flat(b,h,i,d) + phase), flat = row-major index.
func.func @wave(%t: tensor<?x?x?x?xf32>, %freq: f32, %phase: f32, %amp: f32)
    -> tensor<?x?x?x?xf32> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %d1 = tensor.dim %t, %c1 : tensor<?x?x?x?xf32>
  %d2 = tensor.dim %t, %c2 : tensor<?x?x?x?xf32>
  %d3 = tensor.dim %t, %c3 : tensor<?x?x?x?xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>],
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
    %flat = arith.addi %e, %i3 : index
    %fi = arith.index_cast %flat : index to i64
    %ff = arith.sitofp %fi : i64 to f32
    %x = arith.mulf %ff, %freq : f32
    %y = arith.addf %x, %phase : f32
    %s = math.sin %y : f32
    %v = arith.mulf %s, %amp : f32
    linalg.yield %v : f32
  } -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}

func.func @make(%b: index, %h: index, %n: index, %d: index, %freq: f32,
                %phase: f32, %amp: f32) -> tensor<?x?x?x?xf32> {
  %e = tensor.empty(%b, %h, %n, %d) : tensor<?x?x?x?xf32>
  %r = call @wave(%e, %freq, %phase, %amp)
      : (tensor<?x?x?x?xf32>, f32, f32, f32) -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}

// Case A: grouped-query heads (4 over 2), causal, query_offset 2.
func.func @case_a(%q: tensor<2x4x5x6xf32>, %k: tensor<2x2x7x6xf32>,
                  %v: tensor<2x2x7x3xf32>) -> tensor<2x4x5x3xf32> {
  %off = arith.constant 2 : index
  %o = tensor.empty() : tensor<2x4x5x3xf32>
  %r = dat.attention ins(%q, %k, %v : tensor<2x4x5x6xf32>, tensor<2x2x7x6xf32>,
                         tensor<2x2x7x3xf32>)
                     query_offset(%off)
                     outs(%o : tensor<2x4x5x3xf32>) scale = 0.408248305 causal
                     -> tensor<2x4x5x3xf32>
  return %r : tensor<2x4x5x3xf32>
}

// Case B: a boolean mask with one fully masked row (row 1), not causal.
// mask[i,j] = (i + 2j) mod 3 != 0, and false on row 1.
func.func @case_b(%q: tensor<1x3x4x8xf32>, %k: tensor<1x3x6x8xf32>,
                  %v: tensor<1x3x6x8xf32>) -> tensor<1x3x4x8xf32> {
  %e = tensor.empty() : tensor<4x6xi1>
  %mask = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x6xi1>) {
  ^bb0(%out: i1):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %j2 = arith.addi %j, %j : index
    %s = arith.addi %i, %j2 : index
    %m = arith.remui %s, %c3 : index
    %c0 = arith.constant 0 : index
    %ok = arith.cmpi ne, %m, %c0 : index
    %row1 = arith.cmpi eq, %i, %c1 : index
    %true = arith.constant true
    %notrow1 = arith.xori %row1, %true : i1
    %allowed = arith.andi %ok, %notrow1 : i1
    linalg.yield %allowed : i1
  } -> tensor<4x6xi1>
  %o = tensor.empty() : tensor<1x3x4x8xf32>
  %r = dat.attention ins(%q, %k, %v : tensor<1x3x4x8xf32>, tensor<1x3x6x8xf32>,
                         tensor<1x3x6x8xf32>)
                     mask(%mask : tensor<4x6xi1>)
                     outs(%o : tensor<1x3x4x8xf32>) scale = 0.75
                     -> tensor<1x3x4x8xf32>
  return %r : tensor<1x3x4x8xf32>
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %fq = arith.constant 0.31 : f32
  %pq = arith.constant 0.5 : f32
  %fk = arith.constant 0.17 : f32
  %pk = arith.constant 0.2 : f32
  %fv = arith.constant 0.23 : f32
  %pv = arith.constant -0.3 : f32
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32

  %qa = call @make(%c2, %c4, %c5, %c6, %fq, %pq, %two) : (index, index, index, index, f32, f32, f32) -> tensor<?x?x?x?xf32>
  %ka = call @make(%c2, %c2, %c7, %c6, %fk, %pk, %two) : (index, index, index, index, f32, f32, f32) -> tensor<?x?x?x?xf32>
  %va = call @make(%c2, %c2, %c7, %c3, %fv, %pv, %one) : (index, index, index, index, f32, f32, f32) -> tensor<?x?x?x?xf32>
  %qa_s = tensor.cast %qa : tensor<?x?x?x?xf32> to tensor<2x4x5x6xf32>
  %ka_s = tensor.cast %ka : tensor<?x?x?x?xf32> to tensor<2x2x7x6xf32>
  %va_s = tensor.cast %va : tensor<?x?x?x?xf32> to tensor<2x2x7x3xf32>
  %ra = call @case_a(%qa_s, %ka_s, %va_s) : (tensor<2x4x5x6xf32>, tensor<2x2x7x6xf32>, tensor<2x2x7x3xf32>) -> tensor<2x4x5x3xf32>
  %ra_u = tensor.cast %ra : tensor<2x4x5x3xf32> to tensor<*xf32>
  call @printMemrefF32(%ra_u) : (tensor<*xf32>) -> ()

  %qb = call @make(%c1, %c3, %c4, %c8, %fq, %pq, %three) : (index, index, index, index, f32, f32, f32) -> tensor<?x?x?x?xf32>
  %kb = call @make(%c1, %c3, %c6, %c8, %fk, %pk, %one) : (index, index, index, index, f32, f32, f32) -> tensor<?x?x?x?xf32>
  %vb = call @make(%c1, %c3, %c6, %c8, %fv, %pv, %two) : (index, index, index, index, f32, f32, f32) -> tensor<?x?x?x?xf32>
  %qb_s = tensor.cast %qb : tensor<?x?x?x?xf32> to tensor<1x3x4x8xf32>
  %kb_s = tensor.cast %kb : tensor<?x?x?x?xf32> to tensor<1x3x6x8xf32>
  %vb_s = tensor.cast %vb : tensor<?x?x?x?xf32> to tensor<1x3x6x8xf32>
  %rb = call @case_b(%qb_s, %kb_s, %vb_s) : (tensor<1x3x4x8xf32>, tensor<1x3x6x8xf32>, tensor<1x3x6x8xf32>) -> tensor<1x3x4x8xf32>
  %rb_u = tensor.cast %rb : tensor<1x3x4x8xf32> to tensor<*xf32>
  call @printMemrefF32(%rb_u) : (tensor<*xf32>) -> ()
  return
}
