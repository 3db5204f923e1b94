// REQUIRES: cuda-toolkit
// RUN: dat-opt %s --split-input-file --pass-pipeline='builtin.module(dat-gpu-register-budget)' | FileCheck %s
// RUN: dat-opt %s --split-input-file --pass-pipeline='builtin.module(dat-gpu-register-budget{report=true})' -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not dat-opt %s --split-input-file --pass-pipeline='builtin.module(dat-gpu-register-budget{toolkit=%t.none})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: dat-opt %s --split-input-file --pass-pipeline='builtin.module(dat-gpu-register-budget{tolerated-spills=0})' | FileCheck %s --check-prefix=STRICT

// ptxas decides. @many keeps 192 floats live at once (volatile loads in
// order, summed in reverse): at 3 blocks of 128 threads per SM (168
// registers) it spills, at 2 (255) it does not. @few fits at 3 and keeps
// them. @some keeps 180 floats: it spills 16 bytes (stores and loads) at 3
// blocks, which `tolerated-spills` (32 bytes by default) lets it keep; with
// none tolerated it gets 2. Only a module with shared memory (a tile
// kernel's) is assembled.

// The serializer's time attribute does not stay on the module.
// CHECK-LABEL: gpu.module @tile [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">] {{{$}}
// CHECK: llvm.func @many({{.*}}nvvm.minctasm = 2 : i32
// CHECK: llvm.func @few({{.*}}nvvm.minctasm = 3 : i32
// CHECK: llvm.func @some({{.*}}nvvm.minctasm = 3 : i32
// STRICT-LABEL: gpu.module @tile
// STRICT: llvm.func @some({{.*}}nvvm.minctasm = 2 : i32
// REPORT: remark: dat-gpu-register-budget: some spills 16 bytes at 3 blocks per SM; kept (tolerated-spills 32)
// REPORT: remark: dat-gpu-register-budget: many: 3 -> 2 blocks per SM (up to 255 registers), spills {{[1-9][0-9]*}} -> 0 bytes
// REPORT-NOT: few
// NONE: dat-gpu-register-budget: ptxas not found at {{.*}}.none/bin/ptxas
module attributes {gpu.container_module} {
gpu.module @tile [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">] {
  llvm.mlir.global internal @buffer() {addr_space = 3 : i32} : !llvm.array<4 x f32>
  llvm.func @many(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>, nvvm.minctasm = 3 : i32} {
    %a0 = llvm.getelementptr %p[0] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v0 = llvm.load volatile %a0 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a1 = llvm.getelementptr %p[16] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v1 = llvm.load volatile %a1 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a2 = llvm.getelementptr %p[32] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v2 = llvm.load volatile %a2 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a3 = llvm.getelementptr %p[48] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v3 = llvm.load volatile %a3 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a4 = llvm.getelementptr %p[64] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v4 = llvm.load volatile %a4 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a5 = llvm.getelementptr %p[80] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v5 = llvm.load volatile %a5 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a6 = llvm.getelementptr %p[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v6 = llvm.load volatile %a6 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a7 = llvm.getelementptr %p[112] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v7 = llvm.load volatile %a7 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a8 = llvm.getelementptr %p[128] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v8 = llvm.load volatile %a8 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a9 = llvm.getelementptr %p[144] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v9 = llvm.load volatile %a9 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a10 = llvm.getelementptr %p[160] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v10 = llvm.load volatile %a10 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a11 = llvm.getelementptr %p[176] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v11 = llvm.load volatile %a11 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %s10 = llvm.fadd %v11, %v10 : vector<16xf32>
    %s9 = llvm.fadd %s10, %v9 : vector<16xf32>
    %s8 = llvm.fadd %s9, %v8 : vector<16xf32>
    %s7 = llvm.fadd %s8, %v7 : vector<16xf32>
    %s6 = llvm.fadd %s7, %v6 : vector<16xf32>
    %s5 = llvm.fadd %s6, %v5 : vector<16xf32>
    %s4 = llvm.fadd %s5, %v4 : vector<16xf32>
    %s3 = llvm.fadd %s4, %v3 : vector<16xf32>
    %s2 = llvm.fadd %s3, %v2 : vector<16xf32>
    %s1 = llvm.fadd %s2, %v1 : vector<16xf32>
    %s0 = llvm.fadd %s1, %v0 : vector<16xf32>
    llvm.store %s0, %p {alignment = 64 : i64} : vector<16xf32>, !llvm.ptr<1>
    llvm.return
  }
  llvm.func @few(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>, nvvm.minctasm = 3 : i32} {
    %a0 = llvm.getelementptr %p[0] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v0 = llvm.load volatile %a0 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a1 = llvm.getelementptr %p[16] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v1 = llvm.load volatile %a1 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %s0 = llvm.fadd %v1, %v0 : vector<16xf32>
    llvm.store %s0, %p {alignment = 64 : i64} : vector<16xf32>, !llvm.ptr<1>
    llvm.return
  }
  llvm.func @some(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>, nvvm.minctasm = 3 : i32} {
    %a0 = llvm.getelementptr %p[0] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v0 = llvm.load volatile %a0 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a1 = llvm.getelementptr %p[16] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v1 = llvm.load volatile %a1 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a2 = llvm.getelementptr %p[32] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v2 = llvm.load volatile %a2 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a3 = llvm.getelementptr %p[48] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v3 = llvm.load volatile %a3 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a4 = llvm.getelementptr %p[64] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v4 = llvm.load volatile %a4 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a5 = llvm.getelementptr %p[80] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v5 = llvm.load volatile %a5 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a6 = llvm.getelementptr %p[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v6 = llvm.load volatile %a6 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a7 = llvm.getelementptr %p[112] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v7 = llvm.load volatile %a7 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a8 = llvm.getelementptr %p[128] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v8 = llvm.load volatile %a8 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a9 = llvm.getelementptr %p[144] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v9 = llvm.load volatile %a9 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a10 = llvm.getelementptr %p[160] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v10 = llvm.load volatile %a10 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %b = llvm.getelementptr %p[176] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %w = llvm.load volatile %b {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    %s10 = llvm.fadd %v10, %v9 : vector<16xf32>
    %s8 = llvm.fadd %s10, %v8 : vector<16xf32>
    %s7 = llvm.fadd %s8, %v7 : vector<16xf32>
    %s6 = llvm.fadd %s7, %v6 : vector<16xf32>
    %s5 = llvm.fadd %s6, %v5 : vector<16xf32>
    %s4 = llvm.fadd %s5, %v4 : vector<16xf32>
    %s3 = llvm.fadd %s4, %v3 : vector<16xf32>
    %s2 = llvm.fadd %s3, %v2 : vector<16xf32>
    %s1 = llvm.fadd %s2, %v1 : vector<16xf32>
    %s0 = llvm.fadd %s1, %v0 : vector<16xf32>
    %e = llvm.mlir.constant(0 : i64) : i64
    %x = llvm.extractelement %w[%e : i64] : vector<4xf32>
    %r = llvm.fadd %s0, %s0 : vector<16xf32>
    llvm.store %s0, %p {alignment = 64 : i64} : vector<16xf32>, !llvm.ptr<1>
    llvm.store volatile %w, %b {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
    llvm.return
  }
}
}

// -----

// No shared memory: not a tile kernel, not assembled, bound kept.

// CHECK-LABEL: gpu.module @elementwise
// CHECK: llvm.func @many({{.*}}nvvm.minctasm = 3 : i32
module attributes {gpu.container_module} {
gpu.module @elementwise [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">] {
  llvm.func @many(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>, nvvm.minctasm = 3 : i32} {
    %a0 = llvm.getelementptr %p[0] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v0 = llvm.load volatile %a0 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a1 = llvm.getelementptr %p[16] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v1 = llvm.load volatile %a1 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a2 = llvm.getelementptr %p[32] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v2 = llvm.load volatile %a2 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a3 = llvm.getelementptr %p[48] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v3 = llvm.load volatile %a3 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a4 = llvm.getelementptr %p[64] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v4 = llvm.load volatile %a4 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a5 = llvm.getelementptr %p[80] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v5 = llvm.load volatile %a5 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a6 = llvm.getelementptr %p[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v6 = llvm.load volatile %a6 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a7 = llvm.getelementptr %p[112] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v7 = llvm.load volatile %a7 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a8 = llvm.getelementptr %p[128] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v8 = llvm.load volatile %a8 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a9 = llvm.getelementptr %p[144] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v9 = llvm.load volatile %a9 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a10 = llvm.getelementptr %p[160] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v10 = llvm.load volatile %a10 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a11 = llvm.getelementptr %p[176] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v11 = llvm.load volatile %a11 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %s10 = llvm.fadd %v11, %v10 : vector<16xf32>
    %s9 = llvm.fadd %s10, %v9 : vector<16xf32>
    %s8 = llvm.fadd %s9, %v8 : vector<16xf32>
    %s7 = llvm.fadd %s8, %v7 : vector<16xf32>
    %s6 = llvm.fadd %s7, %v6 : vector<16xf32>
    %s5 = llvm.fadd %s6, %v5 : vector<16xf32>
    %s4 = llvm.fadd %s5, %v4 : vector<16xf32>
    %s3 = llvm.fadd %s4, %v3 : vector<16xf32>
    %s2 = llvm.fadd %s3, %v2 : vector<16xf32>
    %s1 = llvm.fadd %s2, %v1 : vector<16xf32>
    %s0 = llvm.fadd %s1, %v0 : vector<16xf32>
    llvm.store %s0, %p {alignment = 64 : i64} : vector<16xf32>, !llvm.ptr<1>
    llvm.return
  }
}
}

// -----

// 288 floats live spill at 255 registers too: 2 blocks per SM (fewer
// spills), and a remark on what is left. One block would give no more
// registers than two.

// CHECK-LABEL: gpu.module @wide
// CHECK: llvm.func @wide({{.*}}nvvm.minctasm = 2 : i32
// REPORT: remark: dat-gpu-register-budget: wide: 3 -> 2 blocks per SM (up to 255 registers), spills {{[0-9]+}} -> {{[0-9]+}} bytes
// REPORT: remark: dat-gpu-register-budget: wide still spills {{[1-9][0-9]*}} bytes at 2 blocks per SM
module attributes {gpu.container_module} {
gpu.module @wide [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">] {
  llvm.mlir.global internal @buffer() {addr_space = 3 : i32} : !llvm.array<4 x f32>
  llvm.func @wide(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>, nvvm.minctasm = 3 : i32} {
    %a0 = llvm.getelementptr %p[0] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v0 = llvm.load volatile %a0 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a1 = llvm.getelementptr %p[16] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v1 = llvm.load volatile %a1 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a2 = llvm.getelementptr %p[32] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v2 = llvm.load volatile %a2 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a3 = llvm.getelementptr %p[48] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v3 = llvm.load volatile %a3 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a4 = llvm.getelementptr %p[64] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v4 = llvm.load volatile %a4 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a5 = llvm.getelementptr %p[80] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v5 = llvm.load volatile %a5 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a6 = llvm.getelementptr %p[96] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v6 = llvm.load volatile %a6 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a7 = llvm.getelementptr %p[112] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v7 = llvm.load volatile %a7 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a8 = llvm.getelementptr %p[128] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v8 = llvm.load volatile %a8 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a9 = llvm.getelementptr %p[144] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v9 = llvm.load volatile %a9 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a10 = llvm.getelementptr %p[160] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v10 = llvm.load volatile %a10 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a11 = llvm.getelementptr %p[176] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v11 = llvm.load volatile %a11 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a12 = llvm.getelementptr %p[192] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v12 = llvm.load volatile %a12 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a13 = llvm.getelementptr %p[208] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v13 = llvm.load volatile %a13 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a14 = llvm.getelementptr %p[224] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v14 = llvm.load volatile %a14 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a15 = llvm.getelementptr %p[240] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v15 = llvm.load volatile %a15 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a16 = llvm.getelementptr %p[256] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v16 = llvm.load volatile %a16 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %a17 = llvm.getelementptr %p[272] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
    %v17 = llvm.load volatile %a17 {alignment = 64 : i64} : !llvm.ptr<1> -> vector<16xf32>
    %s16 = llvm.fadd %v17, %v16 : vector<16xf32>
    %s15 = llvm.fadd %s16, %v15 : vector<16xf32>
    %s14 = llvm.fadd %s15, %v14 : vector<16xf32>
    %s13 = llvm.fadd %s14, %v13 : vector<16xf32>
    %s12 = llvm.fadd %s13, %v12 : vector<16xf32>
    %s11 = llvm.fadd %s12, %v11 : vector<16xf32>
    %s10 = llvm.fadd %s11, %v10 : vector<16xf32>
    %s9 = llvm.fadd %s10, %v9 : vector<16xf32>
    %s8 = llvm.fadd %s9, %v8 : vector<16xf32>
    %s7 = llvm.fadd %s8, %v7 : vector<16xf32>
    %s6 = llvm.fadd %s7, %v6 : vector<16xf32>
    %s5 = llvm.fadd %s6, %v5 : vector<16xf32>
    %s4 = llvm.fadd %s5, %v4 : vector<16xf32>
    %s3 = llvm.fadd %s4, %v3 : vector<16xf32>
    %s2 = llvm.fadd %s3, %v2 : vector<16xf32>
    %s1 = llvm.fadd %s2, %v1 : vector<16xf32>
    %s0 = llvm.fadd %s1, %v0 : vector<16xf32>
    llvm.store %s0, %p {alignment = 64 : i64} : vector<16xf32>, !llvm.ptr<1>
    llvm.return
  }
}
}
