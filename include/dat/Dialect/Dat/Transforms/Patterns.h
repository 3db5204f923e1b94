//===- Patterns.h - dat rewrite patterns ------------------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_DIALECT_DAT_TRANSFORMS_PATTERNS_H
#define DAT_DIALECT_DAT_TRANSFORMS_PATTERNS_H

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
void populateFlashAttentionPatterns(RewritePatternSet &patterns,
                                    int64_t keyTile);

/// Fuses the prologues of the tiled attention ops under `root` — RoPE,
/// orthogonal maps and the transposes between them and attention — into the
/// query tiles and key blocks that read them (tileAndFuseProducerOfSlice on
/// the tiles' slices).
void fuseAttentionPrologues(RewriterBase &rewriter, Operation *root);

/// Tiles each chain "contraction → elementwise ops" in `root` over blocks of
/// `rows` rows, its single-use same-shape producers fused into the tile (see
/// dat-fuse-epilogues). Returns the number of chains tiled.
FailureOr<int64_t> fuseLinearEpilogues(RewriterBase &rewriter, Operation *root,
                                       int64_t rows);

/// Stores every f32 tensor of `module` (the frontend's flat IR) as
/// `storage` while computing in f32 (see dat-narrow-storage). Fails with a
/// diagnostic on IR outside that form.
LogicalResult narrowFloatStorage(ModuleOp module, FloatType storage);

/// Replaces each projection on contiguous buffers in `module` by a call to
/// the runtime's GEMM (see dat-gemm-library-calls). Returns the number of
/// calls made.
FailureOr<int64_t> outlineProjectionGemms(ModuleOp module);

} // namespace mlir::dat

#endif // DAT_DIALECT_DAT_TRANSFORMS_PATTERNS_H
