//===- Passes.td - dat conversion passes ------------------*- tablegen -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_CONVERSION_PASSES_TD
#define DAT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def DatGPUMapParallelLoops : Pass<"dat-gpu-map-parallel-loops"> {
  let summary = "Map the outermost scf.parallel nests to GPU blocks and threads";
  let description = [{
    Every scf.parallel that is not nested in another one (after
    convert-linalg-to-parallel-loops: one per linalg op, its reductions as
    sequential loops inside) is collapsed to one dimension, tiled by
    `block-size` and mapped: tiles to blocks (x), the elements of a tile to
    threads (x), a guard for the partial last tile. Anything nested inside
    runs sequentially in its thread. `convert-parallel-loops-to-gpu` then
    turns each nest into a `gpu.launch`.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "Threads per block">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def DatGPUStageConstants : Pass<"dat-gpu-stage-constants", "::mlir::ModuleOp"> {
  let summary = "Copy host constants into allocated buffers before kernels read them";
  let description = [{
    A kernel cannot read the host's constant data (`memref.global`): every
    `memref.get_global` outside kernels becomes a `memref.alloc` and a copy
    of the constant. Run before buffer deallocation (which then frees the
    copies) and before dat-gpu-host-shared-memory (which puts them in memory
    the device can read).
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def DatGPUHostSharedMemory : Pass<"dat-gpu-host-shared-memory", "::mlir::ModuleOp"> {
  let summary = "Host-side buffers in memory that host and device share";
  let description = [{
    The host code of a GPU program allocates every buffer that a kernel may
    touch: `memref.alloc`/`memref.dealloc` outside kernels become
    `gpu.alloc host_shared`/`gpu.dealloc` (managed memory: the host code
    between kernels and the runtime, which reads the results, use them too).
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

#endif // DAT_CONVERSION_PASSES_TD
