//===- Passes.td - dat dialect transformation passes -------*- tablegen -*-===//

#ifndef DAT_DIALECT_DAT_TRANSFORMS_PASSES_TD
#define DAT_DIALECT_DAT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DatDecomposeToLinalg : Pass<"dat-decompose-to-linalg"> {
  let summary = "Lower dat ops to their reference linalg/tensor form";
  let description = [{
    Rewrites every dat op into linalg.generic/linalg.fill and tensor ops that
    compute exactly the op's documented math, step by step (for attention:
    scores, masking, a numerically stable softmax and the weighted sum). This
    is the simple, obviously-correct path: it materializes the full score
    tensor and exists to check the fused, tiled kernels against.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def DatTileAttention : Pass<"dat-tile-attention"> {
  let summary = "Tile the attention-family ops into query tiles";
  let description = [{
    Tiles `dat.attention`, `dat.relational_attention` and
    `dat.hyper_attention` over batch and blocks of `query-tile` query rows
    with their `TilingInterface`: an `scf.forall` marked `dat.origin` (the
    op's name), every head of a tile together (relations are shared by the
    RA heads, HYLA's `rms_head` normalizes across heads; plain attention's
    tiles take one group of query heads sharing a key/value head). Each
    tile holds the same op on slices of its operands — the flash form
    before decomposition: its key axis is still whole, and
    `dat-decompose-flash` turns it into a key loop. With `query-tile=0`
    the query tile is chosen per op from its static shape: 64 rows, or 32
    or 16 where that is what it takes to make `min-tiles` tiles (blocks for
    every SM of the GPU); relational attention at most 8·16/H rows for H
    heads (up to 8), so that its GPU warp-row program, a warp per 16 rows
    of each head, has at most 8 warps. With `balance-threads` (the CPU)
    instead: the largest of 64, 32 and 16 rows whose tiles the threads
    share within 5% as well as the best of them (counting the last,
    partial tiles as `dat-peel-tile-loops` leaves them: 700 queries at
    batch 1 on 2 threads are 10 tiles of 64 and 60 rows alone, or 22 of
    32), smaller tiles only where they keep 8192 query elements (32 KiB in f32). With `block-bytes`, a bf16 relational attention
    tile then takes fewer rows (halved, down to 1) until it fits that many
    bytes with a block of 16 keys, as `dat-decompose-flash` counts it
    (`relationalTileBytes`): symbols summed at d_model per head
    (`symbol_proj`) make its accumulators too wide for 16 rows in the SM's
    shared memory, and what does not fit would go to global scratch, read
    and written at every key block. The `*_weights` ops and `dat.relations`, whose
    results are N×N by definition, are left to the reference lowering.
  }];
  let options = [
    Option<"queryTile", "query-tile", "int64_t", "64",
           "Query rows per tile; 0: per op, the largest of 64, 32 and 16 "
           "that makes at least min-tiles tiles">,
    Option<"minTiles", "min-tiles", "int64_t", "264",
           "With query-tile=0: the tiles an op should make (264: two blocks "
           "per SM of an H200)">,
    Option<"balanceThreads", "balance-threads", "int64_t", "0",
           "With query-tile=0: choose each op's tile rows to share its "
           "tiles evenly among this many threads (the CPU) rather than by "
           "min-tiles; 0: off">,
    Option<"blockBytes", "block-bytes", "int64_t", "0",
           "With query-tile=0: bytes a bf16 relational attention tile with "
           "16 keys may take (the GPU's shared memory, as "
           "dat-decompose-flash's block-bytes): fewer rows (halved, down to "
           "1) until it fits; 0: no bound">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def DatDecomposeFlash : Pass<"dat-decompose-flash"> {
  let summary = "Decompose attention-family ops into key loops with an "
                "online softmax";
  let description = [{
    Rewrites each `dat.attention`, `dat.relational_attention` and
    `dat.hyper_attention` (normally the query tiles `dat-tile-attention`
    made) into a loop over blocks of `key-tile` keys carrying, per query
    row, the running max and sum of an online softmax and the unnormalized
    accumulators, rescaled by exp(m_old - m_new) at each block. No tensor
    with both a query and a key axis is larger than one block: the N×N
    scores, N×N×R relations and HYLA's N×N×d value network exist only as
    [Bq,Bk] tiles. Causal tiles skip the key blocks that no query of the
    tile can see; with `whole-key-blocks`, the last block they visit is a
    whole one (keys past the tile's last row masked). With
    `fuse-prologues`, the rotations that produce the queries and keys
    (`dat.rope`, `dat.orthogonal_map`) and the transposes after them are
    fused into the tile loads: computed per query tile and key block, never
    written whole (with `rotate-keys-once`, the keys' RoPE is computed once,
    before the tiles); so are elementwise producers marked
    `dat.recompute_per_tile` (APE's per-pair distance decay, computed from
    the positions), which would otherwise be N×N.
  }];
  let options = [
    Option<"keyTile", "key-tile", "int64_t", "64",
           "Keys per block of the online softmax">,
    Option<"fusePrologues", "fuse-prologues", "bool", "true",
           "Compute RoPE / orthogonal maps (and the transposes after them) "
           "per query tile and key block instead of on whole tensors">,
    Option<"blockBytes", "block-bytes", "int64_t", "0",
           "Bytes a bf16 relational attention tile's query tiles and key "
           "block may take (the GPU's shared memory): fewer keys per block "
           "(halved, down to 16) until they fit; likewise a bf16 HYLA "
           "tile's query tile, accumulator and key block (down to 8); 0: no "
           "bound">,
    Option<"rotateKeysOnce", "rotate-keys-once", "bool", "false",
           "With fuse-prologues: RoPE on the keys computed once, before the "
           "tiles, whose key blocks then copy them (the GPU's staging "
           "copies), not per key block (in every query tile: N/rows times "
           "the rotation's work)">,
    Option<"wholeKeyBlocks", "whole-key-blocks", "bool", "false",
           "A causal tile's key loop runs to the end of the block that "
           "holds its last visible key (the keys past it masked, like the "
           "diagonal block's), so that where the key count is a static "
           "multiple of the block every block is whole: static shapes, no "
           "bounds checks (the GPU's warp programs)">,
    Option<"narrowValueNetwork", "narrow-value-network", "bool", "false",
           "HYLA's generated value network z = φ(Σ_h a·v) kept in the "
           "values' element type (bf16 in a bf16 program) between its two "
           "products, so that o = Σ_j a·z has a bf16 operand and runs on "
           "tensor cores (which round it to bf16 anyway); false: f32">,
    Option<"relativeSymbolsAsProduct", "relative-symbols-as-product", "bool",
           "false",
           "Relational attention's position-relative symbols accumulated as "
           "a contraction per key block: the table rows its pairs use (one "
           "window of query-tile + key-block rows) times the probabilities "
           "skewed so that pair (i, j) sits in column j - i (the GPU's "
           "tensor cores); false: a gather per pair and element">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def DatFuseEpilogues : Pass<"dat-fuse-epilogues"> {
  let summary = "Fuse projections with their bias, activation and residual epilogues";
  let description = [{
    A projection (a linalg contraction, e.g. the frontend's `x·Wᵀ` on a
    broadcast bias) followed by elementwise ops — an activation, a gate, a
    residual add — is computed tile by tile: the last elementwise op of the
    chain is tiled over blocks of `rows` rows (every other leading dim one
    at a time, the last dim whole) in an `scf.forall`, and its producers of
    the same shape that have no other use (the elementwise ops, the
    contraction, the bias broadcast it accumulates onto) are fused into the
    tile. The projection's output never exists whole; on the GPU each chain
    becomes one kernel (dat-gpu-map-tiles). Chains without a contraction,
    and ops inside loops (the attention tiles), are left alone.

    With `threads` > 1 (the CPU's), where that many threads would share the
    row tiles unevenly (15 full tiles and a partial last one, which
    dat-peel-tile-loops runs in a loop of its own, on one thread), the row
    tile is the multiple of 8 from `rows` to twice that whose longest
    thread share is shortest, where that is 3% shorter: 1000 rows on two
    threads, tiles of 80 (520 rows on the longer thread, against 552).
    Row counts that `rows` divides keep `rows`.
  }];
  let options = [
    Option<"rows", "rows", "int64_t", "64", "Rows per tile">,
    Option<"threads", "threads", "int64_t", "0",
           "Threads the tiles are balanced for (0 or 1: whole rows)">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def DatNarrowStorage : Pass<"dat-narrow-storage", "::mlir::ModuleOp"> {
  let summary = "Store float tensors in bf16 or f16, compute in f32";
  let description = [{
    Mixed precision for the whole model (`datc --precision bf16`): every f32
    tensor of the frontend's IR — function arguments and results (inputs,
    weights, outputs), constants and the activations between ops — is stored
    in `element-type`, while the arithmetic stays f32. Elementwise
    `linalg.generic` bodies widen what they read and narrow what they
    write; contractions and reductions accumulate in f32 (their
    accumulator, and the fill or bias broadcast that starts it, stay f32)
    and their f32 result is read as is by elementwise consumers (one tile
    with them after dat-fuse-epilogues) and narrowed once for every other
    consumer. The dat ops take the narrow tensors and accumulate in f32
    themselves. Run it on the frontend's IR, before the pipeline: ops with
    regions other than `linalg.generic`, `linalg.fill` and
    `linalg.transpose`, and declarations with f32 tensors (another
    library's ABI), are refused with an error.
  }];
  let options = [
    Option<"elementType", "element-type", "std::string", "\"bf16\"",
           "Storage type of float tensors: bf16 or f16">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def DatGemmLibraryCalls : Pass<"dat-gemm-library-calls", "::mlir::ModuleOp"> {
  let summary = "Call the runtime's GEMM for the projections";
  let description = [{
    The library side of the GEMM strategy (`datc --gemm library`): every
    projection outside the attention tiles — a `linalg.generic` on
    contiguous buffers computing `y[..., o] += Σ_i x[..., i] · W[o, i]`
    (f32 accumulator; x and W both f32 or both bf16) — becomes a call
    `dat_gemm_f32` / `dat_gemm_bf16(x[M, K], W[N, K], y[M, N], β)`,
    y = x·Wᵀ + β·y, with M the product of the leading dims (C interface).
    The GPU runtime runs it with cuBLAS (tensor cores for bf16), the CPU
    runtime with OpenBLAS. Run after bufferization; projections already
    tiled with their epilogues (dat-fuse-epilogues) are inside loops and
    left alone.

    The call takes over what would otherwise be kernels streaming y around
    it on the GPU: y's zero fill just before it (nothing touching memory
    between) is dropped and β is 0 (else 1); where y is a fresh buffer whose
    only reader is its elementwise `truncf` copy to a fresh bf16 buffer
    (bf16 storage), the call is `dat_gemm_bf16_to_bf16` writing that buffer
    (the library rounds to nearest even, as the copy did), y's initial value
    — a zero fill, or the widening of a bf16 operand (a broadcast bias),
    which is then written to the bf16 buffer as it is, exactly — and the
    copy go, and so does y. `epilogues=false` leaves them as they are (β 1,
    f32 outputs).
  }];
  let options = [
    Option<"epilogues", "epilogues", "bool", /*default=*/"true",
           "Take zero fills before the calls (beta 0) and roundings of "
           "their outputs to bf16 storage">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def DatVectorizableLoops : Pass<"dat-vectorizable-loops"> {
  let summary = "Let LLVM vectorize the loops of reductions and exponentials";
  let description = [{
    The CPU's first vector step, before a tiled vector layer: the loops
    that linalg ops lower to are vectorized by LLVM's loop vectorizer,
    which needs two things it cannot assume. A floating-point reduction
    (the dot products of QKᵀ and of the projections, the softmax's row
    sums) may only be reassociated into vector lanes when its adds say so:
    this pass gives the arithmetic in the body of every `linalg.generic`
    with a reduction iterator the `reassoc` and `contract` fast-math flags
    (the sum's order changes, hence its last bits; reruns still agree bit
    for bit). `math.exp` (the online
    softmax), and `math.tanh` (the tanh-form GELU), become polynomials in
    plain arithmetic instead of libm calls that no loop or vector can use
    (`polynomial-exp`): f32 `exp` dat's own, 16 vector operations within
    2 ulp with exp(-inf) = 0 and exp(0) = 1 exactly (ExpApproximation.cpp),
    the rest MLIR's.
  }];
  let options = [
    Option<"polynomialExp", "polynomial-exp", "bool", "true",
           "Expand math.exp and math.tanh into polynomials (vectorizable arithmetic)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def DatPeelTileLoops : Pass<"dat-peel-tile-loops"> {
  let summary = "Split tile loops into full tiles and a partial last one";
  let description = [{
    Each `scf.forall` with static bounds whose step does not divide a
    dimension's extent (1040 rows in tiles of 64) is split into a loop over
    the full tiles and one over the last, partial tile, and the tile sizes
    (`affine.min` of the induction variables) in both are folded to
    constants. The vector layer (`dat-register-tiles`) needs static tiles:
    without this, every tile of such a loop has a dynamic size and is left
    to scalar code. (Upstream's `scf-for-loop-peeling` does the same for
    `scf.for`.) The second loop has the unit attribute `dat.rest_of_split`:
    its tiles are disjoint from those of the loop whose result it continues
    (dat-register-tiles moves a transpose of the result into both). Loops
    nested in a tile loop are split in the original only.

    With `overlap` (on in the CPU pipeline), an attention-family tile loop
    whose split-off loop would have a single iteration (batch 1, tiles that
    keep every head: relational attention, HYLA, APE), which would run on
    one thread while the others wait, is not split: its last tile becomes a
    full one ending at the last row, overlapping the tile before it, and
    inserts only the rows past that tile (each tile computes into a tensor of
    its own; the loop is marked `dat.overlapped_last_tile`). With `threads`,
    only where the full tiles do not divide evenly among that many threads:
    15 tiles on two threads take 8 rounds either way, and the overlapped
    tile removes the partial one's round alone after them; 12 tiles would
    take a 7th round instead of a short one. Over a dynamic length (where
    the alternative is a last tile padded to the whole tile), such a loop
    (one tile in its other dimensions, or a dynamic batch) is versioned: `scf.if (ub >= lb + step)` runs every tile full and
    static, the last one overlapping, and otherwise (fewer rows than a
    tile) the loop as it was.
  }];
  let options = [
    Option<"overlap", "overlap", "bool", "false",
           "Overlap the last tile of a loop whose partial tile would run alone">,
    Option<"threads", "threads", "int64_t", "0",
           "With overlap: the thread count the tiles are balanced for (0: "
           "any)">
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def DatPadTileBuffers : Pass<"dat-pad-tile-buffers"> {
  let summary = "Pad a flash tile's per-head buffers off the L1 set period";
  let description = [{
    CPU, on tensors just before bufferization: each `tensor.empty` inside a
    flash tile loop (attention, relational attention, HYLA) of rank 3 or
    more, static, whose innermost two dimensions take a multiple of 4 KiB
    (a `[.., H, rows, keys]` plane of 64 × 64 floats) and whose third
    innermost has at least 4 planes, is allocated with one more row and used
    through a slice of the original shape. 4 KiB is the period of an L1
    data cache's set index (64 sets of 64-byte lines): a loop over the
    heads at one row and key otherwise reads as many lines of one set as
    there are heads, more than its 8 or 12 ways (the relational tile's
    Σ_j p[h,i,j]·r[l,i,j] broadcasts p[h,i,j] for every head). Values are
    unchanged; the buffers are one row per plane larger.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def DatPadDynamicTiles : Pass<"dat-pad-dynamic-tiles"> {
  let summary = "Compute tiles of dynamic size on operands padded to their bound";
  let description = [{
    Over a dynamic length (a config's `dynamic_dims`), the last tile of a
    tile loop and the last key block of a key loop have a dynamic size,
    bounded by a constant (the tile). In functions with dynamically shaped
    arguments, each `linalg.generic` and `linalg.transpose` in a loop whose
    dynamic loop ranges are all so bounded is computed on its operands
    padded to the bounds (`tensor.pad`) and its results are sliced back
    (copied into the destination with `linalg.copy` where a loop carries
    it), so that the vector layer (`dat-register-tiles`, which needs static
    shapes) applies to it. A dimension the op reduces over is padded with
    the reduction's neutral element (0 for sums, -inf for maxima) where the
    body shows the padded element reaches the reduction as itself
    (`out ⊕ in`) or in a product (`out + a·b`); otherwise the padded op's
    body keeps its accumulators at the padded positions (a `select` on
    `linalg.index`). A projection's last row tile (`dat.origin =
    "projection"`, `dat.rest_of_split`) is first computed in blocks of 8
    rows, an `scf.for` of static blocks and the last block, so that only
    the last (at most 7 rows) is padded; likewise a key loop's last block
    (the block from scf-for-loop-peeling's split to the length, of size
    length - j) is computed in blocks of 16 keys, only the last (at most 15)
    padded.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def DatRegisterTiles : Pass<"dat-register-tiles"> {
  let summary = "Register-tile and vectorize the contractions (CPU)";
  let description = [{
    The CPU's vector layer (docs/cpu-codegen.md), on tensors after the
    flash tiling and the epilogue fusion:

    - every static f32 contraction (QKᵀ and PV in the attention tiles, the
      products of the relational and hypernetwork tiles, the projections)
      is tiled to a register tile of `rows` rows by two vectors of
      `vector-width` lanes along the innermost output dimension that only
      one input has, the reduction innermost in steps of 4; the tile
      becomes one `vector.contract` lowered to FMA outer products, and the
      accumulator is hoisted out of the reduction loop into registers.
      A projection (outside the key loops) runs its reduction in blocks of
      `reduction-tile` where that divides it, the outermost loop, and its
      row tiles inside its weight panels, so that each panel's block is
      read from L1 by every row tile.
      Rows that `rows` does not divide are split into full register tiles
      and a static rest; vectors have a power of two lanes, and extents
      with no such divisor of at least half a register get a partial last
      tile of whole registers with masked transfers; vector dimensions
      under 4 lanes keep their loops. A contraction whose vector would
      fill under half a register while its reduction is innermost in both
      inputs (the relational tile's Σ_j p·r over a few relations) is
      computed as dot products along the reduction instead;
    - the input read along the vector dimension is packed where that
      dimension is not its innermost one: transposed once where it is made
      (composed with the head-split transpose that made a key tile; a
      tensor made outside the tile loops packed whole before them);
    - a weight read whole on the vector side (a projection's) is blocked
      by register panels with `block-weights`: `[out/P][in][P]` for a tile
      of P lanes, each panel contiguous, the contraction given the lane as
      one more loop (dat-pack-weights moves the layout to bind time);
    - with `pack-blocks`, tiles that key loops slice from a tensor made
      outside them are packed block by block: keys blocked by the key
      block where it divides the keys (`[B, H, N/64, d, 64]`, the loop
      slicing one block), values head-major (`[B, H, N, d]`) where they
      would be read with their rows H·D apart;
    - transposes made inside a tile loop for an op of the same body are
      read in place through permuted indexing maps, and transposes of a
      tile loop's result (head merges, packed key heads) are moved into
      the loop, tile by tile;
    - the tile bodies' other static f32 ops (scale, row maxima and sums,
      `exp`, rescaling, the causal mask) are vectorized row by row;
    - other linalg generics outside every loop (layer norms, residual
      adds: not contractions) of at least 64K static iterations become
      tile loops over single indices of their outer parallel loops (up to
      the first reduction, at least 8 tiles), so that they run on every
      thread; their bodies are left to the loop vectorizer.
      A transpose of a tile loop's result moves into the loop even where
      slices after it read the loop's result: they read the transposed
      tensor, transposed back.

    Each output of a contraction is still one sum in the reduction's order
    and row sums are fixed trees: results are deterministic and do not
    depend on the thread count. With `outside-loops=false` (`--gemm
    library`) whole projections in the form dat-gemm-library-calls takes
    (`[out, in]` weights) are left to the library; other contractions
    outside loops (HYLA's `[in, out]` kernels) are still register-tiled.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", "16",
           "f32 lanes per vector register (16: AVX-512, 8: AVX2; 0: off)">,
    Option<"rows", "rows", "int64_t", "8",
           "Rows of a register tile (accumulators: rows × 2 vectors)">,
    Option<"outsideLoops", "outside-loops", "bool", "true",
           "Also the projections outside any loop that the library GEMM "
           "could take (off where they become library GEMM calls)">,
    Option<"vectorRegisters", "vector-registers", "int64_t", "2",
           "Vector registers per row of a register tile, where they divide "
           "the extent (else two, else one)">,
    Option<"packBlocks", "pack-blocks", "bool", "true",
           "Key and value tiles that key loops slice from a tensor made "
           "outside them packed block by block: keys [B, H, N/64, d, 64], "
           "values [B, H, N, d]">,
    Option<"blockWeights", "block-weights", "bool", "true",
           "Weights read whole by a contraction's vector side laid out in "
           "register panels ([out/32][in][32]), each panel contiguous">,
    Option<"reductionTile", "reduction-tile", "int64_t", "128",
           "Projections (contractions outside the key loops) whose "
           "reduction it divides: the reduction in blocks of this many, "
           "the outermost loop, and the rows innermost of the register "
           "tiles' loops, so that a weight panel's block stays in L1 "
           "across the row tiles (0: off)">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def DatPackWeights : Pass<"dat-pack-weights", "::mlir::ModuleOp"> {
  let summary = "Transpose weights once, when the program binds them";
  let description = [{
    A weight argument of a program's entry function that the program reads
    only through one `linalg.transpose` (the vector layer packs projection
    weights so that their output dimension is contiguous) takes the
    transposed type instead, and its `#dat.program_value` records the
    `permutation`: the runtime transposes the weight once, when it binds
    the weights file (which keeps the reference layout, so that trained
    weights can still be swapped in), and no call transposes it again. A
    private function's argument read only transposed moves the transpose
    to its call sites, so that weights passed down to outlined layers are
    packed too.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def DatExpandMath : Pass<"dat-expand-math"> {
  let summary = "Expand math ops that have no LLVM lowering";
  let description = [{
    `convert-to-llvm` has no lowering for `math.erf` (used by the exact,
    erf-based GELU of the APE models). This pass rewrites it into its
    polynomial approximation (upstream's, accurate to a few ulp in f32),
    leaving every other math op to LLVM's intrinsics.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // DAT_DIALECT_DAT_TRANSFORMS_PASSES_TD
