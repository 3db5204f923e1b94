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
    runs sequentially in its thread (nested scf.parallel loops become
    scf.for). `convert-parallel-loops-to-gpu` then turns each nest into a
    `gpu.launch`. Run before canonicalization, which would fold a nest of
    one iteration into host code on device buffers.

    An elementwise nest (its body loads, arithmetic without side effects,
    then stores) of at least 2^20 elements, a static count, gives each
    thread `elements-per-thread` elements, `block-size` apart within its
    block's chunk (each warp access stays contiguous), all their loads and
    arithmetic before their stores, the stores guarded where the chunk
    does not divide the count: the loads of all of them are in flight at
    once (one 2-4 byte element a thread keeps too little in flight for
    HBM's bandwidth).
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256",
           "Threads per block">,
    Option<"elementsPerThread", "elements-per-thread", "int64_t", "1",
           "Elements a thread of a large elementwise nest computes (1: one)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def DatGPUMapRowReductions : Pass<"dat-gpu-map-row-reductions"> {
  let summary = "A warp per output element for linalg reductions along the innermost dim";
  let description = [{
    dat-gpu-map-parallel-loops gives every output element of a reduction a
    thread that walks the reduced dimension alone, and
    convert-linalg-to-parallel-loops keeps the accumulator in memory: a
    layer norm's row statistics over 8192 rows of 1024 (M1) ran as 32
    blocks whose threads each made 1024 dependent load-add-store steps, the
    loads of a warp 2 KiB apart.

    This pass takes each linalg op on buffers (outside kernels) whose last
    loop is its only reduction, at least `min-length` long where static,
    whose other loops are parallel, whose indexing maps are projected
    permutations, whose inputs are buffers other than the output's, each
    that the reduced dim indexes with it innermost (so not a matmul's B),
    with one f32 output whose side-effect-free body combines the output's
    value once, with `arith.addf`, `maximumf`, `minimumf`, `maxnumf` or
    `minnumf` (without `ninf`/`nnan`: the identities are -0, ±inf and NaN),
    with a value computed from the inputs alone. It becomes a `gpu.launch`
    of blocks of 8 warps, a warp per output element: each lane folds every
    32nd element of the row into a register (from the combiner's identity),
    five `gpu.shuffle xor` steps combine the lanes, and lane 0 combines the
    total with the output's value and stores it once. The order of the
    additions changes (lanes, then a tree), the same in every run.
    Run after dat-gpu-device-copies, before
    convert-linalg-to-parallel-loops.
  }];
  let options = [
    Option<"minLength", "min-length", "int64_t", "32",
           "Shortest static reduction a warp takes (shorter ones keep a "
           "thread per output element)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def DatGPUWrapSerialOps : Pass<"dat-gpu-wrap-serial-ops"> {
  let summary = "Give linalg ops without a parallel dim a one-iteration scf.parallel";
  let description = [{
    A linalg op (on buffers, outside kernels and parallel loops) whose
    iteration space has no parallel dimension — a fill of a rank-0 buffer,
    a reduction to a scalar (the tree depth of APE's TreeAlgebraic) —
    lowers to a store or an scf.for nest, no scf.parallel, which
    dat-gpu-map-parallel-loops would leave on the host, touching device
    buffers (dat-gpu-check-host-access then rejects the program). Wrapped
    in an scf.parallel of one iteration, it becomes a kernel of one thread,
    like every other linalg op of the program. Run before
    convert-linalg-to-parallel-loops.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def DatGPUMapTiles : Pass<"dat-gpu-map-tiles"> {
  let summary = "One GPU block per flash tile: each tile loop becomes one kernel";
  let description = [{
    The dat tiling passes mark their tile loops `dat.origin`: per attention
    op, one `scf.forall` over (batch, query block) whose body (fused
    prologues, the key-block loop with its online-softmax updates, the
    epilogue) works on buffers of one tile; per projection, one over row
    blocks. After bufferization this pass turns each such loop, and no other,
    into one `gpu.launch` (whose kernel is named after the function and the
    origin: `forward_relational_attention_tile`): an
    iteration per block, and every linalg op of the body spread over the
    block's threads — its parallel dims linearized and strided by the block
    size (reductions moved innermost and run in the thread), then a
    `gpu.barrier`. A copy (into or out of a tile buffer, heads moved or
    not) whose two sides are contiguous along the same innermost loop of
    whole 16-byte vectors moves a vector a thread at a time, under a run
    time check that both start 16-byte aligned (the scalar copy
    otherwise). The blocks of global buffers that the tile's
    contractions read many times (query tile, key and value blocks, the rows
    of a projection) are first staged into tile buffers where their views
    are made. The tile's buffers leave the heap: those that fit into
    `shared-memory` bytes become workgroup (shared) memory, staged operands
    first, the rest a per-block slice of one global scratch buffer; sizes
    are the tile's upper bounds. A tile loop whose body holds anything else
    is an error that names the op; unmarked loops are left to the per-op
    kernels.

    With `warp-rows` (and `mma`), a tile whose per-row buffers (scores,
    probabilities, row maxima and sums, the output accumulator) are only
    filled, written by bf16 contractions and read and written by
    elementwise or row-reduction generics takes FlashAttention-2's
    structure instead: a block of one warp per 16 rows, each warp keeping
    its rows of those buffers in registers through the key loop (MMA
    accumulator tiles and row vectors), the contractions as mma tiles with
    the probabilities as their A operand, row reductions in registers; the
    only barriers left follow the staging copies of the query, key and
    value blocks (`buildWarpRowProgram`, lib/Conversion/GPU/WarpRowPrograms.cpp).
    A bf16 contraction spread over the block's warps takes in the zero fill
    of its output just before it (its accumulators start at zero) and the
    in-place elementwise generics just after it (a scale, an activation:
    applied to its accumulators before they are written), each a pass over
    the buffer and a barrier fewer.
    A buffer that a generic reads at another head than the one it writes
    (relational attention's relation tile `[.., ℓ, i, j]`, which every
    head's warps read) is staged instead: the block computes it into shared
    memory, its contraction as warp MMA tiles, and each warp reduces its
    rows of `Σ_j α[h, i, j] · r[ℓ, i, j]` from there. A tile of 8 warps
    (relational attention's 8 heads, 16 rows each), or of 7, keeps an SM's
    registers alone (the rule dat-gpu-kernel-occupancy applies too), so its
    buffers may take `whole-sm-shared-memory` bytes. So may any tile whose
    own buffers (before staging) exceed `shared-memory` but fit in that
    much, with `shared-over-scratch`: one block on the SM reading shared
    memory beats two whose buffers make round trips through global memory
    (HYLA's block-wide tile, position-relative symbols' relational tile).

    With `async-copies`, a key loop's staging copies into shared memory are
    issued as soon as their buffers are free: each right after the barrier
    before it (the first of the body in the previous iteration, for the
    next key block, and before the loop), while its barrier stays where the
    copy was (`pipelineStagingCopies`,
    lib/Conversion/GPU/PipelineStagingCopies.cpp). On the GPU the copies'
    16-byte vectors are `nvgpu.device_async_copy` (cp.async), committed as
    a group, and each such barrier waits for them first; emulated, they
    stay synchronous in the new order.

    With `emulate`, blocks and threads become sequential loops and shared
    memory one buffer the blocks reuse, so the same mapping (index
    arithmetic, the shared and scratch layouts, the distribution) runs on
    the CPU and is checked against the golden cases there.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256", "Threads per block">,
    Option<"sharedMemory", "shared-memory", "int64_t", "98304",
           "Bytes of shared memory per block for tile buffers">,
    Option<"emulate", "emulate", "bool", "false",
           "Sequential loops for blocks and threads (runs on the CPU)">,
    Option<"mma", "mma", "bool", "true",
           "bf16 contractions as warp MMA tiles (vector IR for mma.sync)">,
    Option<"warpRows", "warp-rows", "bool", "true",
           "With mma: a warp per 16 rows of an online-softmax tile, its rows "
           "of the per-row buffers in registers (FlashAttention-2)">,
    Option<"vectorCopies", "vector-copies", "bool", "true",
           "Copies of whole 16-byte vectors a thread at a time (aligned at "
           "run time)">,
    Option<"wideTiles", "wide-tiles", "bool", "true",
           "With mma: 32×64 warp tiles where the output has one for every "
           "warp (else strips of 16×32)">,
    Option<"wholeSMSharedMemory", "whole-sm-shared-memory", "int64_t",
           "232432",
           "Bytes of shared memory for a warp-row tile alone on its SM (7 or "
           "8 warps: its registers, rowsInRegistersBlocksPerSM); the larger "
           "of this and shared-memory">,
    Option<"asyncCopies", "async-copies", "bool", "true",
           "A key loop's staging copies issued as soon as their buffers are "
           "free, each waited for at the barrier that followed it (cp.async "
           "on the GPU)">,
    Option<"sharedOverScratch", "shared-over-scratch", "bool", "true",
           "A tile whose own buffers exceed shared-memory but fit in "
           "whole-sm-shared-memory takes that much (one block per SM) "
           "instead of putting the rest in global scratch">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def DatGPUWarpMmaToNVVM : Pass<"dat-gpu-warp-mma-to-nvvm"> {
  let summary = "Warp MMA vector tiles to nvvm.mma.sync (bf16 m16n8k16)";
  let description = [{
    Distributes the vector program that `dat-gpu-map-tiles` writes for a
    tile's bf16 contractions (per warp: `vector.transfer_read` of 16×16 A,
    8×16 (n×k) B and 16×8 f32 C tiles, `arith.extf`/`arith.truncf` on them,
    `vector.contract`, `vector.transfer_write` of C, inside `scf.for`) over
    the lanes of the warp: each lane loads and stores its fragment in the
    layout of PTX's `mma.m16n8k16` (`gpu.lane_id`), and the contraction
    becomes `nvvm.mma.sync` with bf16 operands and f32 accumulators. Runs in
    the device module, before `convert-gpu-to-nvvm`. Upstream's vector →
    nvgpu conversion has no bf16 case in LLVM 22, hence this pass.

    With `ldmatrix` (default), an A or B tile in shared memory (a tile
    buffer the block stages) is read with one `nvgpu.ldmatrix` (`.x4` for
    A, `.x2` for B; `.trans` where the tile's rows are the buffer's
    contiguous dim, as for the value block of P·V) where its rows are
    16-byte aligned by construction; where the tile may run past the
    buffer's end, under a warp-uniform check of the whole tile, the lanes'
    scalar loads otherwise. Two B tiles side by side (a 16×16 read split in
    halves) are one `.x4` whose registers come in B-pair order with
    `b-pair-order` (default): each tile's two registers side by side, as
    `mma.sync` takes them, rather than registers 0 and 2 of the A order,
    which ptxas had to move into aligned pairs (4 moves per read).
    `convert-nvgpu-to-nvvm`, or `convert-gpu-to-nvvm` with dat's nvgpu
    interface registered (the GPU pipeline), must follow.
  }];
  let options = [
    Option<"ldmatrix", "ldmatrix", "bool", "true",
           "Read operand tiles in shared memory with ldmatrix">,
    Option<"bPairOrder", "b-pair-order", "bool", "true",
           "With ldmatrix: two B tiles read as one 16x16 tile come in "
           "B-pair register order">,
    Option<"pairs", "pairs", "bool", "true",
           "Load and store a lane's two neighbouring fragment elements with "
           "one access where the buffer allows (checked at run time)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def DatGPUSwizzleSharedTiles : Pass<"dat-gpu-swizzle-shared-tiles"> {
  let summary = "XOR-swizzle tile buffers in shared memory against bank conflicts";
  let description = [{
    A tile buffer in dynamic shared memory whose rows are a multiple of 128
    bytes (64 bf16: a head of 64 or 128) keeps each row's 16-byte chunk c at
    chunk c ^ (r mod 8), r the row (the buffer's second-last index), so that
    the 8 rows an `ldmatrix` matrix reads, or the 8 rows of a fragment's
    scalar loads, lie in different banks (unswizzled, every row starts in
    the same four banks: an 8-way conflict). Rows of 64 bytes (32 bf16),
    two to a 128-byte line, take c ^ ((r / 2) mod 4) (unswizzled, a 4-way
    conflict), and rows of 32 bytes c ^ ((r / 4) mod 2). Every access takes the
    swizzle: a buffer is rewritten only where each use is a `memref.load`,
    a `memref.store` (of an element), a `vector.load` or `vector.store`, or
    an `nvgpu.device_async_copy` into it, of a power of two of elements,
    at most 16 bytes, from a column known to be a multiple of that count
    (the vectorized staging copies, the fragments' paired loads), an
    `nvgpu.ldmatrix`, or a size or address query, directly or through
    `memref.memory_space_cast` or `memref.cast`, and no other view of the
    shared memory overlaps it; others are left alone. With
    `report-conflicts`, each view of such a buffer with rows the swizzle
    would take that `ldmatrix` reads gets a remark (bank conflicts: session 41's
    Nsight Compute found K1's key block so, a 16-way average conflict).
    Runs after `dat-gpu-warp-mma-to-nvvm`, in the device module.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let options = [
    Option<"reportConflicts", "report-conflicts", "bool", "false",
           "Remark on each ldmatrix-read buffer left unswizzled">
  ];
}

def DatGPUKernelOccupancy : Pass<"dat-gpu-kernel-occupancy"> {
  let summary = "Tell ptxas how many blocks per SM each kernel must fit";
  let description = [{
    Sets `nvvm.minctasm` (PTX `.minnctapersm`) on every kernel that has none.
    A kernel with a known block size but no such bound gets a register cap
    from ptxas's own occupancy heuristic: 48 registers for 256 threads,
    where a tile kernel with tensor-core (mma.sync) loops then spills a few
    values (measured with ptxas 13.0). The tile kernels' shared memory (96
    KiB each by default) fits two blocks per SM, so two is the bound by
    default: up to 128 registers for 256 threads. Kernels of smaller
    blocks (a warp-row tile's 128 threads) get as many blocks as the
    register file holds at `registers-per-thread` each, where that is
    more: 3 for 128 threads at 168. (A warp-row attention tile's registers
    vary with its unrolled key block: the K1 tile took 154, and 182 with
    swizzled ldmatrix addresses before its B tiles were read in pairs; past
    170, 128-thread blocks would fit only 2 per SM.) A kernel that keeps
    its rows in its warps' registers (it has `gpu.shuffle`s: their row
    reductions) gets `registers-per-thread` even where fewer than
    `blocks-per-sm` blocks then fit: a relational attention tile's 256
    threads (a warp for each of 8 heads) get one block per SM, up to 255
    registers, where two would cap them at 128 and spill. These are rules;
    `dat-gpu-register-budget` later checks each tile kernel's bound against
    ptxas and lowers it where the kernel spills.
  }];
  let options = [
    Option<"blocksPerSM", "blocks-per-sm", "int64_t", "2",
           "Blocks of each kernel that must fit on one SM at once">,
    Option<"registersPerThread", "registers-per-thread", "int64_t",
           "::mlir::dat::kTileKernelRegisters",
           "Registers per thread a kernel of small blocks may keep">
  ];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def DatGPUIndexWidth : Pass<"dat-gpu-index-width", "::mlir::ModuleOp"> {
  let summary = "32-bit indices in the kernels that are alone on their SM";
  let description = [{
    `index` lowers to the data layout's width, 64 bits by default: every
    address computation of a kernel then takes register pairs. Where a
    kernel already has all 255 registers (one block per SM: relational
    attention's tile of 8 warps) and still spills, 32-bit indices are what
    is left: M1's relational tiles (ptxas 13.0) keep 8 and 8 bytes of
    stack for spills with 64-bit indices and 32-bit shared pointers, none
    with 32-bit indices; at d_model 1024 with a causal mask, 32 bytes
    against none (docs/gpu-kernels.md, "32-bit addresses").
    Elsewhere they cost registers, a sign extension at each address (M2's
    attention tile 250 → 255 registers and 192 bytes of spills), and fewer
    blocks per SM (dat-gpu-register-budget) are the better remedy: by
    default only kernels with `nvvm.minctasm = 1` (dat-gpu-kernel-occupancy
    runs first) are taken; `all-kernels` takes every kernel that fits.

    Run after dat-gpu-kernel-occupancy, before the device code is lowered.
    A `gpu.module` gets a data layout with 32-bit `index` (`dlti.dl_spec`),
    which `convert-gpu-to-nvvm` lowers to, where every kernel in it has:
    - memref arguments of static shape, strides and offset, whose last
      element is less than 2^30 elements from the base (a loop over one,
      its bound and its last step past the end, stays under 2^31);
    - a known grid and block size (`known_grid_size`, `known_block_size`)
      whose threads number less than 2^31;
    - no arguments of other types but `index`, integers of at most 32 bits
      and floats, and no `index` constant outside 32 bits.
    Every value its index arithmetic takes is then an offset into such a
    buffer, a thread or block id, or a bound of a loop over them.
    The host still passes 64-bit values: the driver copies each kernel
    parameter at the size the kernel declares, from its own pointer
    (`cuLaunchKernel`'s `kernelParams`), so a 32-bit parameter gets the
    value's low half (little-endian hosts). An `index` argument's value is
    not known statically: each launch of such a kernel first asserts on the
    host (`cf.assert`) that its `index` operands fit 32 bits.
    With `report`, the pass remarks on each module it leaves at 64 bits
    and why.
  }];
  let options = [
    Option<"allKernels", "all-kernels", "bool", "false",
           "Every kernel that fits, not only those alone on their SM">,
    Option<"report", "report", "bool", "false",
           "Remark on each module left with 64-bit indices, and why">
  ];
  let dependentDialects = ["::mlir::DLTIDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::arith::ArithDialect"];
}

def DatGPURegisterBudget : Pass<"dat-gpu-register-budget", "::mlir::ModuleOp"> {
  let summary = "Fewer blocks per SM for a kernel that ptxas would spill";
  let description = [{
    dat-gpu-kernel-occupancy bounds each kernel's registers before any
    machine code exists: a warp-row tile's 128 threads are asked to fit 3
    blocks per SM (`nvvm.minctasm`), which caps them at 168 registers. What
    a tile needs depends on its head size, masks and partial tiles: at a
    head of 128, with a causal mask, or at lengths no key block divides (a
    ViT's 197 tokens), ptxas spills at that cap. This pass asks ptxas.

    Run on the lowered device code (LLVM and NVVM dialects, targets
    attached), before `gpu-module-to-binary`. For each `gpu.module` with a
    kernel whose bound leaves it under 255 registers, the module is
    serialized to PTX through its own target attribute (the serializer
    `gpu-module-to-binary` uses) and assembled by `TOOLKIT/bin/ptxas -v`.
    Each kernel that spills more than `tolerated-spills` bytes (ptxas's
    spill stores and loads together) gets one block per SM fewer, and the
    module is assembled again, until no kernel spills more or none can get
    more registers; a kernel keeps the fewer blocks only where they spill
    fewer bytes. One ptxas run per module without spills (the common case);
    the result is deterministic (ptxas's answer for the same PTX).

    A few spilled bytes cost less than a third of the SM's warps: on an
    H200 (session 46) K1's attention tile at heads of 128, whose 3 blocks
    per SM spill 8 bytes of stores and 8 of loads, ran 1.09× faster than
    at 2 blocks without spills, in the same run. Hence the default of 32
    bytes; a tile that spills more (a causal one at heads of 128: 84 bytes
    of stores) has not been measured either way.

    A kernel whose bound already leaves it 255 registers (a relational
    attention tile of 8 warps, one block per SM) is not assembled for this:
    fewer blocks cannot help it. With `report`, the pass remarks on each
    change it makes and on a kernel that still spills after one.
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", "\"\"",
           "CUDA toolkit folder (its bin/ptxas); default $CUDA_HOME, else "
           "the toolkit dat was configured with">,
    Option<"report", "report", "bool", "false",
           "Remark on each kernel whose blocks per SM change, and on any "
           "left spilling">,
    Option<"toleratedSpills", "tolerated-spills", "int64_t", "32",
           "Spill bytes (stores and loads) a kernel may keep at its blocks "
           "per SM">
  ];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def DatGPUStageConstants : Pass<"dat-gpu-stage-constants", "::mlir::ModuleOp"> {
  let summary = "Copy host constants into allocated buffers before kernels read them";
  let description = [{
    A kernel cannot read the host's constant data (`memref.global`): every
    `memref.get_global` outside kernels becomes a `memref.alloc` and a copy
    of the constant. Run before buffer deallocation (which then frees the
    copies), dat-gpu-device-copies (which makes the copies device copies)
    and dat-gpu-device-allocations (which puts the buffers in device
    memory).
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def DatGPUDeviceAllocations : Pass<"dat-gpu-device-allocations", "::mlir::ModuleOp"> {
  let summary = "Host-side allocations of buffers in device memory";
  let description = [{
    The host code of a GPU program allocates every buffer that a kernel may
    touch: `memref.alloc`/`memref.dealloc` outside kernels become
    `gpu.alloc`/`gpu.dealloc` in device memory (no managed memory: the host
    touches no buffer's contents after dat-gpu-device-copies, and the
    runtime copies results out explicitly), each in the asynchronous form
    that the host waits for (gpu-to-llvm lowers only that). Buffers only
    the host uses stay host memory: those marked `dat.host_memory` and the
    deallocation helper's arrays of pointers and flags.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def DatGPUDeviceCopies : Pass<"dat-gpu-device-copies"> {
  let summary = "Host copies of buffers as device-side copies";
  let description = [{
    Bufferization leaves copies on the host: a cache argument copied before
    it is updated, a row inserted into a cache, constants staged into
    buffers. Each becomes a device-side copy: a `gpu.memcpy` (the copy
    engine) where both sides are contiguous, else a `linalg.copy` that the
    pipeline turns into a kernel. A `memref.load` on the host from a buffer
    that is not in host memory (a language model's position) reads a host
    copy of the buffer, made with `gpu.memcpy` just before (whole buffers of
    up to 4096 elements; larger ones are an error). Run after the tile
    loops are kernels and before the remaining linalg ops become loops.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def DatGPUCheckHostAccess : Pass<"dat-gpu-check-host-access"> {
  let summary = "Fail where host code reads or writes a device buffer";
  let description = [{
    After `dat-gpu-device-allocations`: host code (outside kernels) may
    allocate, free, view and pass buffers, but not access the contents of
    one in device memory — a function's argument (the runtime binds device
    buffers) or a `gpu.alloc`. A load, store, copy, linalg or vector
    transfer there is an error naming the op and where the buffer comes
    from. (The deallocation helper reads its own host arrays.)
  }];
}

def DatGPUApproximateExp : Pass<"dat-gpu-approximate-exp", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Kernels' f32 exponentials as the SFU's ex2.approx.ftz";
  let description = [{
    convert-gpu-to-nvvm lowers an f32 `math.exp` to libdevice's `__nv_expf`:
    accurate to 1 ulp, and 10 instructions (a range reduction by fused
    multiply-adds, a rounding, a shift and a scale around `ex2.approx`).
    The online softmax makes an exponential of every score: in K1's
    attention tile (heads of 64, bf16) that form was about a third of the
    key loop's 874 SASS instructions, on a kernel that Nsight Compute found
    bound by issuing instructions (BENCHMARKS.md, "Fifth lease"). This pass
    replaces every f32 `math.exp` of the module (vectors element by
    element) with `ex2.approx.ftz` of x · log2(e) — CUDA's `__expf` with
    subnormals flushed, 2 instructions (`llvm.nvvm.ex2.approx.ftz.f32`). Its
    error, at most 2 + floor(1.173·|x|) ulp (CUDA's documentation of
    `__expf`), stays far below the golden cases' 1e-4 relative tolerance
    for a softmax, whose arguments are at most 0 after the row max and
    where what large negative arguments lose is weighed by e^x; bf16
    programs round the probabilities to 8 bits anyway. Subnormal results
    (x below about -87.3) are 0. An online softmax's `exp(s - m)` (the
    operand an `arith.subf`) becomes ex2 of `fma(s, log2 e, m · -log2 e)`:
    FlashAttention-2's form, one fused multiply-add per score and, after
    CSE, one multiplication per row maximum. The rounding of m · log2 e
    adds about |m| · 6e-8 of relative error (1e-4 at |m| near 1600): of
    the order of the f32 rounding of the scores themselves, and far below
    a bf16 score's. Run after anything that makes exponentials (math
    expansions), before convert-gpu-to-nvvm.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def DatGPUStripCompileTimes : Pass<"dat-gpu-strip-compile-times", "::mlir::ModuleOp"> {
  let summary = "Drop the compile times gpu-module-to-binary records";
  let description = [{
    `gpu-module-to-binary` records how long LLVM and ptxas took in each
    `#gpu.object`'s properties (`LLVMIRToISATimeInMs`,
    `ISAToBinaryTimeInMs`). They change from run to run and nothing reads
    them; dropping them makes a GPU program's IR reproducible, so that
    `dat-opt --dat-program-pipeline` replays `datc` byte for byte.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

//===----------------------------------------------------------------------===//
// Programs: the interface between the compiled model and the runtime
//===----------------------------------------------------------------------===//

def DatProgramManifest : Pass<"dat-program-manifest", "::mlir::ModuleOp"> {
  let summary = "Write the program's manifest from its entry functions";
  let description = [{
    Reads the entry functions of a program, `@forward` (required) and the
    decode `@step` (where the model has one): the `#dat.program_value` of
    every argument and result with its shape and element type (f32, bf16,
    f16 or i64). Writes them as the JSON manifest the runtime reads
    (`include/dat/Runtime/ProgramABI.h`): the null-terminated constant
    global `dat_manifest`. Runs on tensors or buffers, after
    `dat-narrow-storage` (whose element types it records) and before the
    functions are lowered to LLVM.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def DatProfilePoints : Pass<"dat-profile-points", "::mlir::ModuleOp"> {
  let summary = "Time each op group of a CPU program (prog --profile)";
  let description = [{
    Brackets every op that does a program's work — each top-level op of a
    function body that is a tile loop (`scf.forall`: an attention op's
    tiles, a projection with its epilogue, as `dat.origin` names them), a
    linalg op or a dat op — with calls `dat_profile_begin(id)` and
    `dat_profile_end(id)`, and writes the constant global
    `dat_profile_points`: a null-terminated JSON array of `{"name", "bytes"}`
    per id (the op, its origin and result type; the bytes of its tensor
    operands and results, and for a tile loop of the tensors its body reads
    from above). The runtime's calls return at once unless the
    program runs with `--profile`. Runs on tensors, after fusion and before
    bufferization; calls of other functions are left to those functions'
    own points.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

def DatProgramEntry : Pass<"dat-program-entry", "::mlir::ModuleOp"> {
  let summary = "Add the program's generic entry points";
  let description = [{
    The runtime's `main` is generic over models: it calls
    `dat_entry(void **argv)`, which this pass generates in the LLVM dialect
    to unpack the pointer array into a call of `_mlir_ciface_forward` (one
    pointer per memref, a leading one for the results), and `dat_step` for
    `_mlir_ciface_step` where the module has it. Runs after the conversion
    to LLVM with C interfaces requested.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // DAT_CONVERSION_PASSES_TD
