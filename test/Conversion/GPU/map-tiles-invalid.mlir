// RUN: dat-opt %s --split-input-file --verify-diagnostics --dat-gpu-map-tiles
// RUN: dat-opt %s --split-input-file --verify-diagnostics --dat-gpu-map-tiles="emulate=true"

// A tile loop (marked dat.origin) whose body holds an op the block mapping
// does not take — a store outside any linalg op, which every thread would
// repeat — is an error naming the op, not a loop silently left to the
// per-op kernels.
func.func @store_in_tile(%x: memref<4xf32>) {
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{dat-gpu-map-tiles: the tile loop of "rows" holds an op the block mapping does not take}}
  scf.forall (%i) in (4) {
    linalg.fill ins(%one : f32) outs(%x : memref<4xf32>)
    // expected-note @+1 {{this 'memref.store'}}
    memref.store %one, %x[%i] : memref<4xf32>
  } {dat.origin = "rows"}
  return
}

// -----

// An op that reads its output buffer at another element (an in-place
// transpose) would race once its iterations are spread over threads.
func.func @racy(%x: memref<4x8x8xf32>) {
  // expected-error @+1 {{the tile loop of "transpose" holds an op the block mapping does not take}}
  scf.forall (%i) in (4) {
    %t = memref.subview %x[%i, 0, 0] [1, 8, 8] [1, 1, 1] : memref<4x8x8xf32> to memref<8x8xf32, strided<[8, 1], offset: ?>>
    // expected-note @+1 {{this 'linalg.generic'}}
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%t : memref<8x8xf32, strided<[8, 1], offset: ?>>) outs(%t : memref<8x8xf32, strided<[8, 1], offset: ?>>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
    }
  } {dat.origin = "transpose"}
  return
}

// -----

// A tile loop on tensors (before bufferization) is not one the mapping
// takes either.
func.func @on_tensors(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{holds an op the block mapping does not take}}
  %r = scf.forall (%i) in (4) shared_outs(%o = %x) -> tensor<4xf32> {
    %t = tensor.extract_slice %o[%i] [1] [1] : tensor<4xf32> to tensor<1xf32>
    %f = linalg.fill ins(%one : f32) outs(%t : tensor<1xf32>) -> tensor<1xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %f into %o[%i] [1] [1] : tensor<1xf32> into tensor<4xf32>
    }
  } {dat.origin = "rows"}
  return %r : tensor<4xf32>
}
