//===- ApePositions.h - APE's maps and distances from positions -*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_FRONTEND_MODULES_APEPOSITIONS_H
#define DAT_FRONTEND_MODULES_APEPOSITIONS_H

#include "dat/Frontend/ModelBuilder.h"

#include <optional>

namespace dat {

/// The deepest tree node the reference's path table holds (spec §9.2).
inline constexpr int64_t kMaxTreeDepth = 16;

/// The largest node id (0-based breadth-first) of depth <= kMaxTreeDepth in
/// a complete `branching`-ary tree, capped at INT64_MAX.
int64_t maxTreeNode(int64_t branching);

/// APE's Branching maps computed at run time from the node `positions`
/// [Bp, L] (int64; <= 0 is the root): M(n) = Id · P_{b_1}ᵀ ⋯ P_{b_t}ᵀ over
/// the root-first path of node n, P_b = expm(A_b − A_bᵀ) of the first
/// `branching` primitives, `Id` the module's frozen identity. Returns
/// [Bp, L, 1, d, d] (one map shared by the heads). No table, no bound but
/// the depth.
mlir::Value treeMapsAtRunTime(ModelBuilder &mb, mlir::Value positions,
                              int64_t branching, int64_t heads, int64_t d);

/// call.distance_decay, a number in (0, 1] (the APE models use 0.98), or
/// `dflt` when the config has none; nullopt with an error for a bad value
/// (check mb.failed()).
std::optional<double> readDistanceDecay(ModelBuilder &mb,
                                        std::optional<double> dflt);

/// How APE's models measure the distance between two positions (§9.5).
enum class ApeDistance {
  Sequence, // |p_i − p_j|
  Grid,     // floor of the Euclidean distance of (x, y)
  Tree,     // `steps`: 2T − 2·cpl of the padded paths (§9.2)
};

/// The small per-position tensors a distance needs, computed once; the
/// per-pair decay itself is built at each attention (`decayAt`) so that the
/// flash tiling computes it per tile, never as an N×N tensor.
struct ApeDecay {
  ApeDistance kind = ApeDistance::Sequence;
  double base = 1.0;
  int64_t branching = 0;
  // Sequence/grid: the query and key positions [Bp, L] (grid: x then y).
  // Tree: each side's node [Bp, L] and its ancestors at depths 1..16
  // (-1 below the node; the queries' [Bp, L, 16], the keys' depth-major
  // [Bp, 16, L]), and T, the deepest path of the call (a 0-d tensor).
  llvm::SmallVector<mlir::Value> qPositions, kPositions;
  mlir::Value qNode, qAncestors, kNode, kAncestors, longest;

  /// Self-attention over `positions` (one per axis).
  static ApeDecay make(ModelBuilder &mb, ApeDistance kind, double base,
                       llvm::ArrayRef<mlir::Value> positions,
                       int64_t branching);
  /// What a tree distance needs of one side's positions [Bp, L]: the
  /// nodes and their ancestors at depths 1..16 (-1 below the node), as
  /// [Bp, L, 16] (the query side's) and [Bp, 16, L] (the key side's).
  struct TreeSide {
    mlir::Value positions, node, ancestors, ancestorsByDepth;
  };
  static TreeSide treeSide(ModelBuilder &mb, mlir::Value positions,
                           int64_t branching);
  /// T: the longest path among all the nodes of `every` (a 0-d tensor).
  static mlir::Value longestPath(ModelBuilder &mb,
                                 llvm::ArrayRef<mlir::Value> every,
                                 int64_t branching);
  /// Tree attention from the query side `q` to the key side `k`, with T
  /// `longest` (TreeAlgebraic pads the paths of the encoder's and the
  /// decoder's nodes together).
  static ApeDecay makeTree(double base, const TreeSide &q, const TreeSide &k,
                           mlir::Value longest, int64_t branching);
  /// base^dist [Bp, Lq, Lk] (the attention's score_scale), marked for the
  /// flash tiling to compute per tile.
  mlir::Value decayAt(ModelBuilder &mb) const;
};

/// x[..., offset : offset + size] along the last axis.
mlir::Value sliceLast(ModelBuilder &mb, mlir::Value x, int64_t offset,
                      int64_t size);
/// [B,L,dh·H] (APE's head-minor features f = d·H + h) -> [B,H,L,dh].
mlir::Value headMinorSplit(ModelBuilder &mb, mlir::Value x, int64_t heads);
/// out[b,l,h,...] = table[index(pos[b,l]), first + h, ...] for positions
/// [Bp,L] and a table [size+1, count, ...]. Negative positions wrap like
/// Python indexing, or (`treeNodes`) all select node 0, the root.
mlir::Value gatherAtPositions(ModelBuilder &mb, mlir::Value table,
                              mlir::Value positions, int64_t size,
                              int64_t first, int64_t heads, bool treeNodes);
/// The positions [1, L] of a raster of `width` columns: each token's row
/// (`column` false) or column; with width 0, the token indices 0..L-1.
mlir::Value rasterPositions(ModelBuilder &mb, mlir::OpFoldResult L,
                            int64_t width, bool column);
/// [B,H,L,dh] -> [B,L,dh·H] (head-minor).
mlir::Value headMinorMerge(ModelBuilder &mb, mlir::Value x);

} // namespace dat

#endif // DAT_FRONTEND_MODULES_APEPOSITIONS_H
