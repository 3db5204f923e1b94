// RUN: dat-opt %s --dat-pad-tile-buffers --split-input-file --allow-unregistered-dialect | FileCheck %s

// In a flash tile: 16 planes of 64 x 64 floats (16 KiB, a multiple of the
// L1 set period) get one more row each; 2 planes, planes of 60 rows
// (15 KiB) and rank-2 tensors stay. A plane of 64 x 48 floats (12 KiB) is
// a multiple too.
// CHECK-LABEL: func.func @tile
// CHECK: scf.forall
// CHECK: %[[P:.+]] = tensor.empty() : tensor<1x16x65x64xf32>
// CHECK: %[[S:.+]] = tensor.extract_slice %[[P]][0, 0, 0, 0] [1, 16, 64, 64] [1, 1, 1, 1] : tensor<1x16x65x64xf32> to tensor<1x16x64x64xf32>
// CHECK: linalg.fill {{.+}} outs(%[[S]] : tensor<1x16x64x64xf32>)
// CHECK: tensor.empty() : tensor<1x2x64x64xf32>
// CHECK: tensor.empty() : tensor<1x16x60x64xf32>
// CHECK: tensor.empty() : tensor<64x64xf32>
// CHECK: tensor.empty() : tensor<16x65x48xf32>
func.func @tile(%out: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %zero = arith.constant 0.0 : f32
  %r = scf.forall (%i) in (2) shared_outs(%o = %out) -> (tensor<2x64xf32>) {
    %a = tensor.empty() : tensor<1x16x64x64xf32>
    %fa = linalg.fill ins(%zero : f32) outs(%a : tensor<1x16x64x64xf32>) -> tensor<1x16x64x64xf32>
    %b = tensor.empty() : tensor<1x2x64x64xf32>
    %c = tensor.empty() : tensor<1x16x60x64xf32>
    %d = tensor.empty() : tensor<64x64xf32>
    %e = tensor.empty() : tensor<16x64x48xf32>
    "test.use"(%fa, %b, %c, %d, %e) : (tensor<1x16x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x16x60x64xf32>, tensor<64x64xf32>, tensor<16x64x48xf32>) -> ()
    %row = tensor.extract_slice %o[%i, 0] [1, 64] [1, 1] : tensor<2x64xf32> to tensor<1x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %row into %o[%i, 0] [1, 64] [1, 1] : tensor<1x64xf32> into tensor<2x64xf32>
    }
  } {dat.origin = "dat.relational_attention"}
  return %r : tensor<2x64xf32>
}

// -----

// Outside flash tiles (a projection's row blocks, no loop) nothing changes.
// CHECK-LABEL: func.func @not_tiles
// CHECK-NOT: tensor<1x16x65x64xf32>
func.func @not_tiles(%out: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %a = tensor.empty() : tensor<1x16x64x64xf32>
  "test.use"(%a) : (tensor<1x16x64x64xf32>) -> ()
  %r = scf.forall (%i) in (2) shared_outs(%o = %out) -> (tensor<2x64xf32>) {
    %b = tensor.empty() : tensor<1x16x64x64xf32>
    "test.use"(%b) : (tensor<1x16x64x64xf32>) -> ()
    %row = tensor.extract_slice %o[%i, 0] [1, 64] [1, 1] : tensor<2x64xf32> to tensor<1x64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %row into %o[%i, 0] [1, 64] [1, 1] : tensor<1x64xf32> into tensor<2x64xf32>
    }
  } {dat.origin = "projection"}
  return %r : tensor<2x64xf32>
}
