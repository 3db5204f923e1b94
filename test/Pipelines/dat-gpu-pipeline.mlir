// REQUIRES: cuda-toolkit
// RUN: dat-opt %s --dat-gpu-pipeline="toolkit=%cuda_toolkit format=isa query-tile=16 key-tile=8" \
// RUN: | FileCheck %s --check-prefix=PTX
// RUN: dat-opt %s --dat-gpu-pipeline="toolkit=%cuda_toolkit query-tile=16 key-tile=8" \
// RUN: | FileCheck %s --check-prefix=CUBIN
// RUN: dat-opt %s --dat-narrow-storage --dat-gpu-pipeline="toolkit=%cuda_toolkit format=isa query-tile=16 key-tile=8" \
// RUN: | FileCheck %s --check-prefix=BF16

// Causal attention through the whole GPU lowering: the tile loop is one
// kernel (dat-gpu-map-tiles), named after its function and its op, so the
// host function launches once; the
// kernel keeps the key-block loop, shares each op among its threads with
// barriers between them and holds the tile's buffers in dynamic shared
// memory; PTX for sm_90 (ptxas-assembled into a cubin with the default
// format), exp from libdevice inlined.
// PTX: llvm.func @attention
// PTX: gpu.launch_func
// PTX-NOT: gpu.launch_func
// PTX: gpu.binary @attention_attention_tile
// PTX-SAME: .target sm_90
// PTX-SAME: .entry attention_attention_tile
// PTX-SAME: .shared .align 16 .b8 __dynamic_shmem__0
// PTX-SAME: bar.sync
// PTX-SAME: ld.shared.b32
// PTX-SAME: ex2.approx
// CUBIN: gpu.binary @attention_attention_tile [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}bin = "\7FELF
// bf16 storage (dat-narrow-storage): still one launch; the kernel stages
// 16-bit blocks into shared memory, then runs in FlashAttention-2's
// warp-row structure (dat-gpu-map-tiles warp-rows): the scores on tensor
// cores (mma.sync, bf16 operands, f32 accumulators), the row max and sum
// across the lanes of a row (shfl.sync.bfly), the weighted values on
// tensor cores, and it rounds the output once (cvt.rn.bf16x2.f32, two
// values at a time) as it stores it.
// BF16: llvm.func @attention
// BF16: gpu.launch_func
// BF16-NOT: gpu.launch_func
// BF16: gpu.binary @attention_attention_tile
// BF16-SAME: ld.global.b16
// BF16-SAME: st.shared.b16
// BF16-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// BF16-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// BF16-SAME: shfl.sync.bfly.b32
// BF16-SAME: cvt.rn.bf16x2.f32
// BF16-SAME: st.global.b16
func.func @attention(%q: tensor<1x4x40x16xf32>, %k: tensor<1x2x40x16xf32>, %v: tensor<1x2x40x8xf32>)
    -> tensor<1x4x40x8xf32> {
  %o = tensor.empty() : tensor<1x4x40x8xf32>
  %r = dat.attention ins(%q, %k, %v : tensor<1x4x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x8xf32>)
         outs(%o : tensor<1x4x40x8xf32>) scale = 0.25 causal -> tensor<1x4x40x8xf32>
  return %r : tensor<1x4x40x8xf32>
}
