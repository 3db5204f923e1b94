//===- ApeLayers.h - the attention and FFN layers of ape's models -*- C++
//-*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_FRONTEND_MODULES_APELAYERS_H
#define DAT_FRONTEND_MODULES_APELAYERS_H

#include "dat/Frontend/ModelBuilder.h"

#include <optional>
#include <string>

namespace dat {

/// What one APE attention reads besides its inputs.
struct ApeAttention {
  mlir::Value qMaps, kMaps;   // [B, L, 1|H, d, d]; a grid's x axis
  mlir::Value qMapsY, kMapsY; // a grid's y axis: each head's second half
  mlir::Value scoreScale;     // [B, Lq, Lk]
  mlir::Value mask;           // [Lq, Lk] i1, or null
  mlir::Value keyMask;        // [B, Lk] i1, or null
  bool causal = false;
};

/// SelfMHA (`prefix`linear: q | k | v) or, with `cross`, CrossMHA
/// (`prefix`lin_q and lin_kv: k | v) from `xq` to `xkv`, head-minor heads,
/// the maps on queries and keys, masked logits -1e10 (spec §9.3-9.4).
mlir::Value apeMHA(ModelBuilder &mb, llvm::StringRef prefix, bool cross,
                   mlir::Value xq, mlir::Value xkv, int64_t heads, int64_t dim,
                   const ApeAttention &in);

/// The FFN of ape's layers: Linear → activation → Linear, then the
/// post-norm (`p`ffn_ln).
mlir::Value apeFFN(ModelBuilder &mb, const std::string &p, mlir::Value x,
                   int64_t dim, int64_t ratio = 4,
                   llvm::StringRef activation = "relu");

} // namespace dat

#endif // DAT_FRONTEND_MODULES_APELAYERS_H
