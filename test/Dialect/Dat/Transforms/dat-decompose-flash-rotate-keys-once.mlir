// RUN: dat-opt %s --dat-tile-attention="query-tile=64" \
// RUN:   --dat-decompose-flash="key-tile=32 rotate-keys-once=true" \
// RUN:   --canonicalize | FileCheck %s

// With rotate-keys-once (the GPU's pipeline), RoPE on the keys runs once,
// on the whole [2,256,2,32] keys before the tiles, and each key block is
// the transpose of its slice of them (a copy the GPU stages); the queries'
// RoPE is still computed per query tile. Without it (the default, the CPU's
// pipeline: dat-decompose-flash.mlir, @rope_prologue) every query tile
// rotates every key block again.
// CHECK-LABEL: func.func @rope_keys_once
// CHECK: %[[KR:.+]] = dat.rope %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x256x2x32xf32>, tensor<256x16xf32>
// CHECK: scf.forall
// CHECK:   dat.rope {{.*}} : tensor<1x64x4x32xf32>, tensor<64x16xf32>
// CHECK:   scf.for
// CHECK-NOT: dat.rope
// CHECK:     tensor.extract_slice %[[KR]]
// CHECK:     linalg.transpose
// CHECK-NOT: dat.rope
func.func @rope_keys_once(%q: tensor<2x256x8x32xf32>, %k: tensor<2x256x2x32xf32>, %v: tensor<2x2x256x16xf32>,
                          %cos: tensor<256x16xf32>, %sin: tensor<256x16xf32>) -> tensor<2x8x256x16xf32> {
  %qr = dat.rope %q, %cos, %sin : tensor<2x256x8x32xf32>, tensor<256x16xf32> -> tensor<2x256x8x32xf32>
  %kr = dat.rope %k, %cos, %sin : tensor<2x256x2x32xf32>, tensor<256x16xf32> -> tensor<2x256x2x32xf32>
  %eq = tensor.empty() : tensor<2x8x256x32xf32>
  %qt = linalg.transpose ins(%qr : tensor<2x256x8x32xf32>) outs(%eq : tensor<2x8x256x32xf32>) permutation = [0, 2, 1, 3]
  %ek = tensor.empty() : tensor<2x2x256x32xf32>
  %kt = linalg.transpose ins(%kr : tensor<2x256x2x32xf32>) outs(%ek : tensor<2x2x256x32xf32>) permutation = [0, 2, 1, 3]
  %o = tensor.empty() : tensor<2x8x256x16xf32>
  %r = dat.attention ins(%qt, %kt, %v : tensor<2x8x256x32xf32>, tensor<2x2x256x32xf32>, tensor<2x2x256x16xf32>)
         outs(%o : tensor<2x8x256x16xf32>) scale = 0.17677669 causal -> tensor<2x8x256x16xf32>
  return %r : tensor<2x8x256x16xf32>
}
