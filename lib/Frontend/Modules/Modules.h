//===- Modules.h - the per-class frontends ----------------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// One function per reference class, and the pieces they share. Each reads
// its kwargs with the reference's defaults (../shared/spec/semantics.md).
//
//===----------------------------------------------------------------------===//

#ifndef DAT_LIB_FRONTEND_MODULES_MODULES_H
#define DAT_LIB_FRONTEND_MODULES_MODULES_H

#include "dat/Frontend/ModelBuilder.h"

namespace dat {

/// dual_attention `Attention` kwargs after defaults (§2).
struct AttentionParams {
  int64_t dModel = 0, nHeads = 0, totalHeads = 0, headDim = 0, keyDim = 0,
          kvHeads = 0;
  bool biasKV = false, biasOut = false;
};

/// Reads `Attention`'s kwargs (all of them) and validates the divisibility
/// rules the reference asserts.
AttentionParams readAttentionParams(ModelBuilder &mb);

struct AttentionResult {
  mlir::Value out;     // [B,L,n_heads*head_dim], after wo
  mlir::Value weights; // [B,H,Lq,Lk] softmax weights, when requested
};

/// The forward of `Attention` on query/key/value streams [B,L,D], weights
/// under `prefix` ("" or "self_attention."). RoPE tables [L,head_dim/2] when
/// given.
AttentionResult emitAttention(ModelBuilder &mb, const AttentionParams &p,
                              llvm::StringRef prefix, mlir::Value query,
                              mlir::Value key, mlir::Value value,
                              mlir::Value ropeCos, mlir::Value ropeSin,
                              bool causal, bool wantWeights);

void buildAttentionModule(ModelBuilder &mb);

} // namespace dat

#endif // DAT_LIB_FRONTEND_MODULES_MODULES_H
