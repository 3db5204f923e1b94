// RUN: dat-opt %s --dat-register-tiles --canonicalize --one-shot-bufferize="bufferize-function-boundaries" --canonicalize --cse --canonicalize | FileCheck %s

// The attention heads merged back ([B, H, N, D] → [B, N, H, D]) where each
// tile is one head: the tile is made in its place in the merged result, so
// once bufferized it is written there directly, with no copy per tile (it
// was a transpose into a buffer of its own, then a strided copy).
// CHECK-LABEL: func.func @merge_heads
// CHECK: %[[OUT:.+]] = memref.alloc() {{.*}} : memref<1x16x2x8xf32>
// CHECK: scf.forall
// CHECK: %[[PLACE:.+]] = memref.subview %[[OUT]]
// CHECK: %[[TILE:.+]] = memref.expand_shape %[[PLACE]]
// CHECK: vector.transfer_write %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.alloc
// CHECK: return %[[OUT]]
func.func @merge_heads(%x: tensor<1x2x16x8xf32>) -> tensor<1x16x2x8xf32> {
  %e = tensor.empty() : tensor<1x2x16x8xf32>
  %r = scf.forall (%h, %q) = (0, 0) to (2, 16) step (1, 8) shared_outs(%o = %e) -> (tensor<1x2x16x8xf32>) {
    %in = tensor.extract_slice %x[0, %h, %q, 0] [1, 1, 8, 8] [1, 1, 1, 1] : tensor<1x2x16x8xf32> to tensor<1x1x8x8xf32>
    %out = tensor.extract_slice %o[0, %h, %q, 0] [1, 1, 8, 8] [1, 1, 1, 1] : tensor<1x2x16x8xf32> to tensor<1x1x8x8xf32>
    %t = linalg.generic {
        indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>,
                         affine_map<(a, b, c, d) -> (a, b, c, d)>],
        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%in : tensor<1x1x8x8xf32>) outs(%out : tensor<1x1x8x8xf32>) {
    ^bb0(%a: f32, %b: f32):
      %n = arith.negf %a : f32
      linalg.yield %n : f32
    } -> tensor<1x1x8x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %t into %o[0, %h, %q, 0] [1, 1, 8, 8] [1, 1, 1, 1] : tensor<1x1x8x8xf32> into tensor<1x2x16x8xf32>
    }
  }
  %m = tensor.empty() : tensor<1x16x2x8xf32>
  %y = linalg.transpose ins(%r : tensor<1x2x16x8xf32>) outs(%m : tensor<1x16x2x8xf32>) permutation = [0, 2, 1, 3]
  return %y : tensor<1x16x2x8xf32>
}
