//===- WarpMma.h - tile contractions on warp-level tensor cores -*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The bf16 contractions of a tile kernel (QKᵀ, PV, ...) run as mma.sync
// m16n8k16 tiles over the block's warps, in two steps each checkable on its
// own: buildWarpMmaContraction writes the warp's work as vector IR (which
// the CPU emulation of the GPU mapping runs), and the warp-mma-to-NVVM
// patterns distribute that vector IR over the warp's lanes as mma.sync.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_CONVERSION_WARPMMA_H
#define DAT_CONVERSION_WARPMMA_H

#include "dat/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::dat {

/// The MMA shape: m16n8k16, bf16 operands, f32 accumulators.
inline constexpr int64_t kWarpMmaM = 16;
inline constexpr int64_t kWarpMmaN = 8;
inline constexpr int64_t kWarpMmaK = 16;
/// A warp's strip: up to this many 16×8 output tiles side by side (n), so
/// that each step's A fragment serves them all.
inline constexpr int64_t kWarpMmaStrip = 4;
/// Where a contraction has work for every warp in tiles this large (a
/// projection's 64 rows × d_out), a warp computes 2 rows of 16 by 8 tiles
/// of 8 (32×64): per 16-wide step 2 A and 8 B fragment reads for 16 mma,
/// where a 16×32 strip needs 1 and 4 for 4.
inline constexpr int64_t kWarpMmaWideRows = 32;
inline constexpr int64_t kWarpMmaWideColumns = 64;

/// Whether `op` is a contraction the warps can run on tensor cores:
/// `C[.., m, n] += A[.., m, k] · B[.., n or k ...]` on buffers (one m, n and
/// k loop, any batch loops), a multiply-add body, bf16 operands (one may be
/// f32, rounded to bf16), an f32 accumulator.
bool isWarpMmaContraction(linalg::LinalgOp op);

/// The indexing maps of an MMA tile's vector.contract: (m, k), (n, k),
/// (m, n).
SmallVector<AffineMap> warpMmaIndexingMaps(MLIRContext *ctx);

/// The m, n, k and batch loops of a contraction isWarpMmaContraction takes
/// (one each of m, n and k).
std::optional<linalg::ContractionDimensions> warpMmaDims(linalg::LinalgOp op);

/// Reads `operand` of `op` as a vector of `shape` whose dims are the loops
/// `rows` and `cols`, every loop at `ivs` (one per loop of `op`); a dim not
/// `inBounds` is padded with zeros past the operand's end.
Value readWarpMmaTile(OpBuilder &b, Location loc, linalg::LinalgOp op,
                      OpOperand &operand, ArrayRef<Value> ivs, unsigned rows,
                      unsigned cols, ArrayRef<int64_t> shape,
                      ArrayRef<bool> inBounds);

/// `count` (1 or 2) B tiles (8×16, n×k) of `operand` side by side along
/// `rows` (n) from `ivs`: two are read as one 16×16 tile and split in
/// halves, so that the lanes load both with one ldmatrix.x4.
SmallVector<Value> readWarpMmaBTiles(OpBuilder &b, Location loc,
                                     linalg::LinalgOp op, OpOperand &operand,
                                     ArrayRef<Value> ivs, unsigned rows,
                                     unsigned cols, int64_t count,
                                     ArrayRef<bool> inBounds);

/// A 16×16 or 8×16 operand tile as the f32 of its bf16 values (an f32 tile
/// is rounded to bf16 first).
Value warpMmaOperand(OpBuilder &b, Location loc, Value tile);

/// `acc + a·bᵀ` of an A (16×16), a B (8×16, n×k) and a C (16×8) tile: the
/// vector.contract that becomes one mma.sync.
Value buildWarpMmaContract(OpBuilder &b, Location loc, Value a, Value bTile,
                           Value acc);

/// Rewrites the body of the flash tile loop `forall` in FlashAttention-2's
/// structure, where it is an online softmax around bf16 contractions: each
/// warp owns 16 rows of the tile and keeps its rows of every per-row tile
/// buffer (scores, probabilities, row maxima and sums, the output
/// accumulator) in registers, as MMA accumulator tiles (vector<16x8xT>) and
/// row vectors (vector<16xT>); the contractions become mma tiles (the
/// probabilities are the A operand straight from registers), the row
/// reductions in-register reductions, and the linalg ops left are the
/// staging copies of the blocks all warps read. Returns the warps the block
/// needs (one per 16 rows); fails, changing nothing, where the body is not
/// of that form. With `emulate`, the warps run one after another.
FailureOr<int64_t> buildWarpRowProgram(RewriterBase &rewriter,
                                       scf::ForallOp forall, bool emulate);

/// The warps buildWarpRowProgram would give `forall`'s block, without
/// changing it; fails where it would not take the body.
FailureOr<int64_t> countWarpRowWarps(scf::ForallOp forall);

/// The most warps a warp-row program takes (256 threads, 128 rows). A block
/// of that many holds an SM's registers alone
/// (rowsInRegistersBlocksPerSM).
inline constexpr int64_t kMaxWarpRowWarps = 8;

/// Replaces the contraction `op` by its warp tiles: the warp `warp` of
/// `warps` computes every `warps`-th strip of up to kWarpMmaStrip 16×8
/// output tiles (batch loops outermost; with `wide`, a 32×64 block of them
/// where the extents are known multiples of that with a block for every
/// warp) as a
/// loop of 16-wide steps, each one A fragment per 16 rows and a
/// vector.contract per tile (A 16×16, B
/// 8×16 as n×k, C 16×8, the bf16 operands widened to f32). Partial tiles are
/// padded: their reads past the op's extents give zeros and their writes
/// stop there. A null `warp` runs the warps one after another (the CPU
/// emulation). With `fromZeros` the accumulators start at zero instead of
/// the output's values (a zero fill before it made redundant); each op of
/// `epilogue` (in-place elementwise generics on the output,
/// isWarpMmaEpilogue) is applied to the accumulators before they are
/// written, and erased. With `narrowing` (isWarpMmaNarrowing), the tiles go
/// through its body into its output instead of the contraction's, and it is
/// erased too. Fails, changing nothing, where `op` is not such a
/// contraction.
LogicalResult buildWarpMmaContraction(RewriterBase &rewriter,
                                      linalg::LinalgOp op, Value warp,
                                      int64_t warps, bool wide = true,
                                      bool fromZeros = false,
                                      ArrayRef<linalg::GenericOp> epilogue = {},
                                      linalg::GenericOp narrowing = nullptr);

/// The scalar op `inner` of an elementwise body on vectors of `shape`: its
/// operands looked up in `map` (a value from outside the body broadcast),
/// a constant splat; the result is mapped too and returned.
Value vectorizeScalarOp(OpBuilder &b, Location loc, Operation &inner,
                        IRMapping &map, ArrayRef<int64_t> shape);

/// Whether the body of `op` is arith and math ops on scalars (and, with
/// `allowIndex`, linalg.index), which apply to tiles element by element
/// (vectorizeScalarOp).
bool hasScalarElementwiseBody(linalg::GenericOp op, bool allowIndex);

/// Whether `generic` can be applied to `contraction`'s accumulator tiles in
/// registers: it reads and writes the contraction's output in place
/// (identity map, every loop parallel, no other operand) with a body of
/// scalar arith and math ops (a scale, an activation).
bool isWarpMmaEpilogue(linalg::LinalgOp contraction, linalg::GenericOp generic);

/// The in-place epilogue generics that follow `contraction` (in order).
SmallVector<linalg::GenericOp>
collectWarpMmaEpilogue(linalg::LinalgOp contraction);

/// Whether `generic` writes an elementwise function of `contraction`'s
/// output alone (a rounding to bf16, say) into another buffer of the same
/// shape: identity maps, every loop parallel, a body of scalar arith and
/// math ops that does not read its output. The contraction's tiles can then
/// go there directly, its own output never written.
bool isWarpMmaNarrowing(linalg::LinalgOp contraction,
                        linalg::GenericOp generic);

/// The fragment a lane holds of an MMA operand tile (vector<16x16xT>: 8
/// elements, vector<8x16xT>: 4, vector<16x8xT>: 4) or of a row vector of a
/// 16-row tile (vector<16xT>, vector<16x1xT>: 2, rows g and g + 8); other
/// types unchanged.
void populateWarpMmaTypeConversions(TypeConverter &converter);

/// Distributes buildWarpMmaContraction's vector IR over the lanes of a warp
/// (gpu.lane_id): transfers of operand tiles become the lane's loads and
/// stores of its fragment, the bf16 widening and rounding act on fragments,
/// vector.contract becomes nvvm.mma.sync m16n8k16; buildWarpRowProgram's
/// elementwise ops, masks, row broadcasts and row reductions (two shuffles
/// across the four lanes that share a row) act on fragments. With
/// `ldmatrix`, bf16 operand tiles in shared memory are read with one
/// nvgpu.ldmatrix each (lowered by convert-nvgpu-to-nvvm). With `pairs`, a
/// lane's loads and stores of other tiles take two neighbouring elements at
/// once where the buffer allows (a warp-uniform run-time check).
void populateWarpMmaToNVVMPatterns(const TypeConverter &converter,
                                   RewritePatternSet &patterns,
                                   bool ldmatrix = true, bool pairs = true);

} // namespace mlir::dat

#endif // DAT_CONVERSION_WARPMMA_H
