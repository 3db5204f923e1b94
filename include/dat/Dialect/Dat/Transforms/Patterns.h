//===- Patterns.h - dat rewrite patterns ------------------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_DIALECT_DAT_TRANSFORMS_PATTERNS_H
#define DAT_DIALECT_DAT_TRANSFORMS_PATTERNS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dat {

/// Patterns that rewrite dat ops into their reference linalg/tensor form
/// (the math of each op, one step at a time). Used by
/// `--dat-decompose-to-linalg` and by the CPU pipeline.
void populateDecomposeToLinalgPatterns(RewritePatternSet &patterns);

/// The reference lowering of each op family (all included above).
void populateAttentionToLinalgPatterns(RewritePatternSet &patterns);
void populateRopeToLinalgPatterns(RewritePatternSet &patterns);
void populateOrthogonalMapToLinalgPatterns(RewritePatternSet &patterns);
void populateHyperAttentionToLinalgPatterns(RewritePatternSet &patterns);
void populateRelationalAttentionToLinalgPatterns(RewritePatternSet &patterns);

/// Key-block loops with an online softmax for dat.attention,
/// dat.relational_attention and dat.hyper_attention (see dat-tile-attention).
/// With `blockBytes` (0: no bound), a bf16 relational attention tile takes
/// fewer keys per block (halved, down to 16) until its query tiles and one
/// key block of keys, relation keys, symbols and relations fit in that many
/// bytes (the GPU block's shared memory); a bf16 HYLA tile likewise (down to
/// 8 keys) for its query tile, accumulator and key block's keys, values,
/// weights and value network. With `wholeKeyBlocks`, a causal
/// tile's key loop ends with the block holding its last visible key, whole
/// (the keys past it masked), and where the key count is a static multiple
/// of the block every block has a static size. With `narrowValueNetwork`,
/// HYLA's generated value network z is stored in the values' element type
/// between its two products (the second then has a bf16 operand: a
/// tensor-core contraction on the GPU). With `relativeSymbolsAsProduct`,
/// position-relative symbols are accumulated as a contraction with a window
/// of their table (accumulateRelativeSymbolsAsProduct).
void populateFlashAttentionPatterns(RewritePatternSet &patterns,
                                    int64_t keyTile, int64_t blockBytes = 0,
                                    bool wholeKeyBlocks = false,
                                    bool narrowValueNetwork = false,
                                    bool relativeSymbolsAsProduct = false);

class RelationalAttentionOp;
/// The GPU's shared-memory layout of a bf16 relational attention tile, in
/// bytes (what `blockBytes` above is checked against): `fixed` whatever the
/// key block, then per key of a block `perKey` and, for symbols read per
/// key (per position or per pair), `perKeySymbols`. The tile reads symbols
/// per pair in place where they do not fit.
struct RelationalTileBytes {
  int64_t fixed, perKey, perKeySymbols;
};
/// That layout for a tile of `rows` query rows of one batch row (0: the
/// bound of `op`'s own rows and batch); nullopt where `op` is not bf16 or a
/// shape is not static.
std::optional<RelationalTileBytes>
relationalTileBytes(RelationalAttentionOp op, int64_t rows,
                    bool relativeSymbolsAsProduct);

/// Fuses the prologues of the tiled attention ops under `root` — RoPE,
/// orthogonal maps and the transposes between them and attention — into the
/// query tiles and key blocks that read them (tileAndFuseProducerOfSlice on
/// the tiles' slices).
/// With `rotateKeysOnce`, a key loop's RoPE is not fused: the keys are
/// rotated once, before the tiles, and the key blocks read them.
void fuseAttentionPrologues(RewriterBase &rewriter, Operation *root,
                            bool rotateKeysOnce = false);

/// Tiles each chain "contraction → elementwise ops" in `root` over blocks of
/// `rows` rows (or, where `threads` > 1 would share those unevenly, a row
/// tile they share better), its single-use same-shape producers fused into
/// the tile (see dat-fuse-epilogues). Returns the number of chains tiled.
FailureOr<int64_t> fuseLinearEpilogues(RewriterBase &rewriter, Operation *root,
                                       int64_t rows, int64_t threads = 0);

/// Stores every f32 tensor of `module` (the frontend's flat IR) as
/// `storage` while computing in f32 (see dat-narrow-storage). Fails with a
/// diagnostic on IR outside that form.
LogicalResult narrowFloatStorage(ModuleOp module, FloatType storage);

/// Replaces each projection on contiguous buffers in `module` by a call to
/// the runtime's GEMM (see dat-gemm-library-calls), which with `epilogues`
/// takes the zero fill before it and the rounding of its output to bf16
/// storage where it can. Returns the number of calls made.
FailureOr<int64_t> outlineProjectionGemms(ModuleOp module,
                                          bool epilogues = true);

/// Whether `op` is a projection y[..., o] += Σ_i x[..., i] · W[o, i] (f32 or
/// bf16 operands, f32 result) in the form dat-gemm-library-calls calls the
/// runtime's GEMM for (on contiguous buffers outside loops).
bool hasProjectionGemmForm(linalg::GenericOp op);

/// f32 `math.exp`, scalar or vector, as 16 vectorizable arithmetic ops
/// (within 2 ulp; exp(-inf) = 0 and exp(0) = 1 exactly; NaN stays NaN;
/// subnormal results flush to zero). Other element types are left alone.
void populateExpApproximationPatterns(RewritePatternSet &patterns,
                                      PatternBenefit benefit = 1);

/// f32 `vector.multi_reduction`s (add, max) of R rows along their inner
/// dimension, R a power of two up to `lanes` and the rows whole registers
/// of `lanes`: the rows' horizontal trees share their steps (pairs of
/// registers shuffled into one, each row half as long, until one register
/// holds them all), and a reduced product's chunks are multiply-added.
/// IEEE maxima (`maximumf`) combine with `maxFlags` (nnan, nsz: plain vector
/// max instructions, where NaN and the sign of zero may be ignored).
void populateTransposingReductionPatterns(
    RewritePatternSet &patterns, int64_t lanes,
    arith::FastMathFlags maxFlags = arith::FastMathFlags::none,
    PatternBenefit benefit = 1);

/// Where contraction `op`, in a key loop and register-tiled by `tileSizes`
/// into `loops` (its tiled dimensions in `interchange` order), reads its
/// vector operand in place (a slice of a function argument) in strips far
/// apart (each reduction step `vectorTile` floats of a row at least 4 times
/// as long: the position-relative symbols), and the loops step one at a
/// time through a dimension both inputs read: prefetches, at each step,
/// every line of the next index's block in memory order (when that block
/// is at least 16 KiB). Fails, changing nothing, otherwise.
LogicalResult prefetchNextStridedBlock(
    RewriterBase &rewriter, linalg::GenericOp op, unsigned vectorOperand,
    int64_t vectorTile, ArrayRef<int64_t> tileSizes,
    ArrayRef<int64_t> interchange, ArrayRef<LoopLikeOpInterface> loops);

/// The options of the CPU's vector layer (dat-register-tiles' own).
struct RegisterTiling {
  /// f32 lanes per vector register.
  int64_t vectorWidth = 16;
  /// Rows of a register tile of two vectors.
  int64_t rows = 8;
  /// Also projections outside loops that the library GEMM could take.
  bool outsideLoops = true;
  /// Weights read whole on the vector side in contiguous register panels.
  bool blockWeights = true;
  /// Vector registers per row of a register tile, where they divide the
  /// extent (else 2, else 1).
  int64_t vectorRegisters = 2;
  /// Key and value tiles the key loops slice from a tensor made outside
  /// them packed so that each block's register panels are contiguous.
  bool packBlocks = true;
  /// Projections' reductions in blocks of this many (0: whole), the rows
  /// innermost of the register tiles' loops.
  int64_t reductionTile = 128;
};

/// The CPU's vector layer on `root` (see dat-register-tiles): static f32
/// contractions register-tiled (rows × two vectors of `vectorWidth` lanes)
/// and lowered to FMA outer products with their accumulators in registers
/// (with `outsideLoops`, also those outside any loop; without, still those
/// that are not in the library's projection form), weights blocked by
/// register panels, the tile bodies' other ops vectorized row by row,
/// transposes of tile loops' results moved into the loops.
LogicalResult registerTileAndVectorize(Operation *root,
                                       const RegisterTiling &options);

/// Splits each dimension of `forall` whose step does not divide its static
/// extent into a loop over the full tiles and one over the partial last
/// tile, and folds the tile sizes in both. Returns the number of loops
/// added; fails, changing nothing, on dynamic bounds.
FailureOr<int64_t> peelPartialTiles(RewriterBase &rewriter,
                                    scf::ForallOp forall);

/// Splits each dimension of `forall` with a dynamic upper bound (constant
/// lower bound and step above 1: a tile loop over a dynamic length) into a
/// loop over the full tiles and one over the partial last tile, whose tile
/// sizes (`affine.min`) fold to the step in the first. Returns the number
/// of loops added.
FailureOr<int64_t> peelDynamicTiles(RewriterBase &rewriter,
                                    scf::ForallOp forall);

/// Computes `op` (a linalg op in a loop, whose dynamic loop ranges are
/// bounded by constants: a partial tile) on operands padded to those bounds,
/// its results sliced back (dat-pad-dynamic-tiles). Returns the padded op;
/// fails, changing nothing, where a range is unbounded or an indexing map
/// is not a projected permutation.
FailureOr<linalg::LinalgOp> padDynamicTile(RewriterBase &rewriter,
                                           linalg::LinalgOp op);

/// In `loop`, a tile loop whose one insert is a generic over a dynamic
/// number of rows (a projection's last row tile over a dynamic length):
/// the generic computed in blocks of `rows` rows (an scf.for of static
/// blocks), then the last, so that only it has a dynamic size. Fails,
/// changing nothing, otherwise.
LogicalResult splitRowBlocks(RewriterBase &rewriter, scf::ForallOp loop,
                             int64_t rows);

/// In `loop`, a tile loop whose body's tensors are sized by one dynamic
/// number of rows bounded by a constant (a flash tile loop's last query
/// tile over a dynamic length), the whole tile computed at that bound: the
/// slices it takes of tensors from outside padded with zeros, its own
/// tensors made at the bound, its result sliced to the rows before the
/// insert. Once canonicalized, the body is the full tiles' (static), where
/// padding each op inside the key loop pads and copies the row state every
/// key block. Fails, changing nothing, where the rows are used otherwise.
LogicalResult padTileRows(RewriterBase &rewriter, scf::ForallOp loop);

/// Where `loop` runs from a dynamic split to a dynamic length in steps of a
/// multiple of `keys` and its body uses the length only for its block's
/// size, length - iv (a key loop's last block, as scf-for-loop-peeling
/// leaves it): steps of `keys` with sizes min(keys, length - iv), the full
/// blocks peeled off (static once canonicalized). Fails, changing nothing,
/// otherwise.
LogicalResult splitLastKeyBlock(RewriterBase &rewriter, scf::ForOp loop,
                                int64_t keys);

/// `forall`'s lower bounds, upper bounds and steps, where all are constants.
struct ConstantBounds {
  SmallVector<int64_t> lbs, ubs, steps;
};
std::optional<ConstantBounds> constantBounds(scf::ForallOp forall);

/// Where `forall` is an attention-family tile loop (dat.origin) over one
/// dimension with a partial last tile, its other dimensions one tile each,
/// and outputs that start as tensor.empty: makes every tile full, the last
/// one starting at ub - step (overlapping the tile before it) and inserting
/// only its rows past that tile; each tile computes into a tensor of its
/// own. Marks the loop dat.overlapped_last_tile. With `threads` > 0, only
/// where the full tiles do not divide evenly among that many threads (else
/// the overlapped tile would add a round). Fails, changing nothing,
/// otherwise.
LogicalResult overlapLastTile(RewriterBase &rewriter, scf::ForallOp forall,
                              int64_t threads = 0);

/// overlapLastTile's rule: a partial last tile after `fullTiles` full ones,
/// with `otherTiles` tiles per block of rows (batch, head groups), is
/// overlapped only where it would otherwise run alone (`otherTiles` 1) and
/// the full tiles do not divide evenly among `threads` (0: any number).
bool overlapsLastTile(int64_t fullTiles, int64_t otherTiles, int64_t threads);

/// The same for a tile loop over a dynamic bound (a dynamic length), as
/// `scf.if (ub >= lb + step)`: then every tile full (sizes folded to the
/// step, the last tile overlapping the one before it), else the loop as it
/// was (its one partial tile, for dat-pad-dynamic-tiles). Fails, changing
/// nothing, where the loop is not an attention-family tile loop with fresh
/// outputs, one such dimension and, besides it, one tile per dimension (or
/// a dynamic batch).
LogicalResult overlapDynamicLastTile(RewriterBase &rewriter,
                                     scf::ForallOp forall);

/// Lets `op`, inside a loop, read inputs that transposes in its block made
/// through permuted indexing maps instead (no per-iteration copy).
void foldTransposedInputs(RewriterBase &rewriter, linalg::GenericOp op);

/// Makes input `operand` of contraction `op` hold loop dimension
/// `vectorDim` innermost, transposing it once where it is made (composed
/// with a transpose that made it; a whole tensor made outside the tile
/// loops when the operand is a slice of it).
LogicalResult packVectorOperand(RewriterBase &rewriter, linalg::GenericOp op,
                                unsigned operand, unsigned vectorDim,
                                bool packBlocks = false);

/// Where input `operand` of contraction `op` holds loop dimension
/// `vectorDim` innermost (packVectorOperand) and is a weight read whole
/// (a function argument, possibly transposed): a layout blocked by register
/// panels instead — the vector dimension split into [extent / panel, panel],
/// the panel index before the reduction dimensions, so that each register
/// tile's panel is contiguous ([out/32][in][32] for a projection) — and `op`
/// rewritten with the lane in the panel as one more loop (its output
/// expanded and collapsed back). Returns the new op; fails, changing
/// nothing, where `op` does not have that form.
FailureOr<linalg::GenericOp>
blockVectorOperand(RewriterBase &rewriter, linalg::GenericOp op,
                   unsigned operand, unsigned vectorDim, int64_t panel);

/// Moves `transpose` of a tile loop's result (through expand_shapes that
/// split a tile's dimensions whole, or a tiled dimension into blocks of the
/// tile) into the loop, and into a folded partial last tile: each tile is
/// transposed into its place in the transposed result (made there where
/// only unit dimensions move). Other readers of the loop's result that are
/// slices after the transpose read the transposed tensor instead, each
/// slice transposed back. Fails, changing nothing, where the loops do not
/// have that form.
LogicalResult sinkTransposeIntoForall(RewriterBase &rewriter,
                                      linalg::TransposeOp transpose);

/// Where `transpose`, in a tile loop, swaps its input's innermost dimension
/// with another, both multiples of `width`: loops over width × width blocks,
/// each read as rows, transposed in registers (vector.transpose) and written
/// as rows. Returns the block's vector transpose (null where it does not
/// apply, nothing changed).
vector::TransposeOp vectorizeTileTranspose(RewriterBase &rewriter,
                                           linalg::TransposeOp transpose,
                                           int64_t width);

/// Makes a large transpose left outside the tile loops (not a weight's
/// packing) a tile loop over its outermost dimensions that are not 1, so
/// that it runs on every thread. Fails, changing nothing, otherwise.
LogicalResult parallelizeTranspose(RewriterBase &rewriter,
                                   linalg::TransposeOp op);

/// Tiles `op` (of loop `extents`) into a tile loop (`scf.forall`, named
/// `origin` in `prog --profile`) over single indices of its outermost loops
/// among the first `outerLoops`, skipping unit ones, until there are
/// `minTiles` tiles, so that it runs on every thread. Fails, changing
/// nothing, where there would be fewer.
LogicalResult tileOuterIndices(RewriterBase &rewriter, TilingInterface op,
                               ArrayRef<int64_t> extents, size_t outerLoops,
                               int64_t minTiles, StringRef origin);

/// Makes `op`, a linalg generic outside every loop (the ops between the
/// tile loops: layer norms, residual adds) of at least `minIterations`
/// static iterations, a tile loop (`scf.forall`) over single indices of its
/// outermost parallel loops before any reduction, so that it runs on every
/// thread, where that gives at least `minTiles` tiles. Fails, changing
/// nothing, otherwise.
LogicalResult parallelizeGlue(RewriterBase &rewriter, linalg::GenericOp op,
                              int64_t minIterations, int64_t minTiles);

/// Gives each weight argument of `module`'s entry functions that is read
/// only through one transpose the transposed type and a `permutation` in its
/// #dat.program_value (see dat-pack-weights), moving transposes of private
/// functions' arguments to their call sites first.
void packTransposedWeights(ModuleOp module);

} // namespace mlir::dat

#endif // DAT_DIALECT_DAT_TRANSFORMS_PATTERNS_H
