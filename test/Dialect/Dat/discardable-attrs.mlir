// RUN: dat-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// The attributes dat passes put on other dialects' ops (DatBase.td's
// discardableAttrs) are checked where they appear: dat.origin names what a
// tile loop computes, the other two are unit markers.
// CHECK-LABEL: func.func @marked
// CHECK: } {dat.origin = "dat.attention"}
// CHECK: } {dat.origin = "projection", dat.rest_of_split}
// CHECK: {dat.recompute_per_tile}
func.func @marked(%x: memref<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %one = arith.constant 1.0 : f32
  scf.forall (%i) in (4) {
  } {dat.origin = "dat.attention"}
  scf.forall (%i) in (4) {
  } {dat.origin = "projection", dat.rest_of_split}
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%y : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {dat.recompute_per_tile} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @origin_not_string() {
  // expected-error @+1 {{'dat.origin' must be a non-empty string: the op the tile loop computes}}
  scf.forall (%i) in (4) {
  } {dat.origin = 1 : i64}
  return
}

// -----

func.func @origin_empty() {
  // expected-error @+1 {{'dat.origin' must be a non-empty string}}
  scf.forall (%i) in (4) {
  } {dat.origin = ""}
  return
}

// -----

func.func @origin_not_a_loop() {
  // expected-error @+1 {{'dat.origin' marks tile loops; 'arith.constant' is not a loop}}
  %c = arith.constant {dat.origin = "rows"} 0 : index
  return
}

// -----

func.func @rest_not_unit() {
  // expected-error @+1 {{'dat.rest_of_split' is a unit attribute}}
  scf.forall (%i) in (4) {
  } {dat.rest_of_split = 1 : i64}
  return
}

// -----

func.func @program_value_on_op() {
  // expected-error @+1 {{'dat.program_value' belongs on an entry function's arguments and results, not on an op}}
  %c = arith.constant {dat.program_value = #dat.program_value<kind = input, name = "x">} 0 : index
  return
}

// -----

func.func @unknown() {
  // expected-error @+1 {{unknown dat attribute 'dat.tile_loop'}}
  %c = arith.constant {dat.tile_loop} 0 : index
  return
}
