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
  /// With DualAttention's share_attn_params, SA's wq/wk are RA's modules.
  std::string queryWeights, keyWeights;
  bool sharedKeyBias = false;
};

/// Reads the kwargs `Attention` takes besides d_model/n_heads/total_n_heads
/// (key_dim, n_kv_heads, add_bias_kv, add_bias_out) from the current kwargs
/// scope and validates the divisibility rules the reference asserts.
AttentionParams makeAttentionParams(ModelBuilder &mb, int64_t dModel,
                                    int64_t nHeads, int64_t totalHeads);
/// All of `Attention`'s kwargs.
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
                              bool causal, bool wantWeights,
                              mlir::Value mask = {});

/// dual_attention `RelationalAttention` kwargs after defaults (§3.2).
struct RelationalAttentionParams {
  AttentionParams attn; // d_model, heads, head/key dims, kv heads, biases
  int64_t relations = 0, relProjDim = 0;
  std::string activation;
  bool symmetric = false, relativeSymbols = false;
};
/// RelationalAttention's kwargs besides d_model/n_heads/total_n_heads.
RelationalAttentionParams makeRelationalAttentionParams(ModelBuilder &mb,
                                                        int64_t dModel,
                                                        int64_t nHeads,
                                                        int64_t totalHeads);

struct RelationalAttentionResult {
  mlir::Value out;       // [B,L,n_heads*head_dim], after wo
  mlir::Value weights;   // [B,H,L,L], when requested
  mlir::Value relations; // [B,L,L,R], when requested
};

/// The forward of `RelationalAttention` (§3.3/3.4): x [B,L,D]; symbols
/// [B,L,D], or [L,L,D] with relative positional symbols.
RelationalAttentionResult
emitRelationalAttention(ModelBuilder &mb, const RelationalAttentionParams &p,
                        llvm::StringRef prefix, mlir::Value x,
                        mlir::Value symbols, mlir::Value ropeCos,
                        mlir::Value ropeSin, bool causal, bool wantWeights,
                        bool wantRelations);

/// Applies RoPE to [B,L,H,k] when tables are given (k must be head_dim).
mlir::Value applyRope(ModelBuilder &mb, mlir::Value x, mlir::Value cos,
                      mlir::Value sin, const AttentionParams &p);

/// The optional freqs_cos/freqs_sin inputs of op-level cases.
std::pair<mlir::Value, mlir::Value> ropeInputs(ModelBuilder &mb);

/// DualAttention (§5): returns [B,L,D] = concat(SA, RA) and records the
/// attention weights / relations as outputs `<prefix>sa_attn_scores`, ...
struct DualAttentionResult {
  mlir::Value out, saWeights, raWeights, raRelations;
};
DualAttentionResult emitDualAttention(ModelBuilder &mb, llvm::StringRef prefix,
                                      mlir::Value x, mlir::Value symbols,
                                      mlir::Value cos, mlir::Value sin,
                                      bool causal, bool wantWeights,
                                      llvm::StringRef dropoutKey);

/// Concatenates [..., a] and [..., b] along the last axis.
mlir::Value concatLast(ModelBuilder &mb, mlir::Value a, mlir::Value b);
/// Broadcasts a [rows, D] weight slice to [B, rows, D].
mlir::Value broadcastBatch(ModelBuilder &mb, mlir::Value x,
                           mlir::OpFoldResult batch);

void buildAttentionModule(ModelBuilder &mb);
/// APE: `Sequential + SelfMHA` and `Grid + SelfMHA` (spec §9).
void buildApeSequentialSelfMHA(ModelBuilder &mb);
void buildApeGridSelfMHA(ModelBuilder &mb);
void buildApeSequentialEncoder(ModelBuilder &mb);
void buildApeGridEncoder(ModelBuilder &mb);
void buildApeBranchingSelfMHA(ModelBuilder &mb);
void buildApeBranchingEncoder(ModelBuilder &mb);
void buildApeTreeAlgebraic(ModelBuilder &mb);
void buildApeMTAlgebraic(ModelBuilder &mb);
void buildApeAlgebraicCCT(ModelBuilder &mb);
void buildApeAlgebraicSeqCCT(ModelBuilder &mb);
void buildSeq2SeqTransformer(ModelBuilder &mb);
void buildSeq2SeqDualAttnTransformer(ModelBuilder &mb);
void buildDualAttentionModule(ModelBuilder &mb);
/// The kwargs every block takes (spec §6), as the blocks and the models
/// that build them pass them.
struct BlockCommon {
  int64_t dModel = 0;
  std::optional<int64_t> dff;
  std::string activation, normType;
  bool normFirst = false, bias = true, causal = false;
};
/// The kwargs every block takes; `dModel`, when given, is passed by the
/// enclosing model instead of read (e.g. Block(d_model, **encoder_kwargs)).
BlockCommon readBlockCommon(ModelBuilder &mb, bool causalDefault,
                            std::optional<int64_t> dModel = std::nullopt);
mlir::Value blockNorm(ModelBuilder &mb, const BlockCommon &c, mlir::Value x,
                      llvm::StringRef name);
/// x[b,t,:] = table[idx[b,t], :]; ids are range-checked by the program.
mlir::Value embedTokens(ModelBuilder &mb, mlir::Value idx, mlir::Value table);
/// scale·x + rows[t, :] broadcast over the batch (x [B,T,d], rows [T,d]).
mlir::Value addPositions(ModelBuilder &mb, mlir::Value x, mlir::Value rows,
                         float scale = 1.0f);
/// EncoderBlock's kwargs (n_heads, attn_kwargs and the common ones).
struct EncoderParams {
  BlockCommon c;
  AttentionParams attn;
};
EncoderParams readEncoderParams(ModelBuilder &mb,
                                std::optional<int64_t> dModel = std::nullopt);
/// DecoderBlock: causal or not self-attention, cross-attention, FFN.
struct DecoderParams {
  BlockCommon c;
  AttentionParams self, cross;
};
DecoderParams readDecoderParams(ModelBuilder &mb,
                                std::optional<int64_t> dModel = std::nullopt);
mlir::Value decoderBlock(ModelBuilder &mb, const DecoderParams &d,
                         llvm::StringRef prefix, mlir::Value x,
                         mlir::Value context);
/// DualAttnDecoderBlock: dual self-attention, cross-attention, FFN.
struct DualDecoderParams {
  BlockCommon c;
  AttentionParams cross;
};
DualDecoderParams
readDualDecoderParams(ModelBuilder &mb,
                      std::optional<int64_t> dModel = std::nullopt);
mlir::Value dualDecoderBlock(ModelBuilder &mb, const DualDecoderParams &d,
                             llvm::StringRef prefix, mlir::Value x,
                             mlir::Value context, mlir::Value symbols);
/// EncoderBlock / DualAttnEncoderBlock forwards, weights under `prefix`.
mlir::Value encoderBlock(ModelBuilder &mb, const BlockCommon &c,
                         const AttentionParams &p, llvm::StringRef prefix,
                         mlir::Value x, mlir::Value cos, mlir::Value sin);
mlir::Value dualEncoderBlock(ModelBuilder &mb, const BlockCommon &c,
                             llvm::StringRef prefix, mlir::Value x,
                             mlir::Value symbols, mlir::Value cos,
                             mlir::Value sin);
void buildTransformerLM(ModelBuilder &mb);
void buildDualAttnTransformerLM(ModelBuilder &mb);
/// Whether a language model's program gets the one-token decode step: it
/// needs token ids in and logits out, and no softmax relations (normalized
/// over every key, future ones included: spec §3.3).
bool languageModelHasDecodeStep(const ModelConfig &config);
void buildVisionTransformer(ModelBuilder &mb);
void buildVisionDualAttnTransformer(ModelBuilder &mb);
/// PositionalSymbolRetriever / PositionRelativeSymbolRetriever forwards
/// (kwargs from the current scope, weights under `prefix`).
/// (The positional symbols of the stream `x` [B, L, D]: its batch and
/// length, dynamic ones included.)
mlir::Value emitPositionalSymbols(ModelBuilder &mb, llvm::StringRef prefix,
                                  mlir::Value x);
mlir::Value emitRelativeSymbols(ModelBuilder &mb, llvm::StringRef prefix,
                                mlir::OpFoldResult length);
/// The position-relative symbol table [2M+1, symbol_dim] itself: the models
/// pass it to relational attention, which gathers the rows per pair.
mlir::Value emitRelativeSymbolTable(ModelBuilder &mb, llvm::StringRef prefix);

/// Blocks (spec §6): EncoderBlock, DecoderBlock, DualAttnEncoderBlock,
/// DualAttnDecoderBlock.
void buildEncoderBlock(ModelBuilder &mb);
void buildDecoderBlock(ModelBuilder &mb);
void buildDualAttnEncoderBlock(ModelBuilder &mb);
void buildDualAttnDecoderBlock(ModelBuilder &mb);
/// HYLA's MultiHeadDotProductAttention (Flax), self-attention.
void buildHylaAttentionModule(ModelBuilder &mb);
void buildSymbolicAttentionModule(ModelBuilder &mb);
void buildRelationalSymbolicAttentionModule(ModelBuilder &mb);

/// SymbolicAttention with its kwargs (d_model, n_heads, n_symbols, dropout,
/// scale, trainable_symbols) read from the current scope.
mlir::Value emitSymbolicAttentionFromKwargs(ModelBuilder &mb,
                                            llvm::StringRef prefix,
                                            mlir::Value x);
/// The retriever `kind` (symbolic_attention, rel_sym_attn,
/// positional_symbols, position_relative) with weights under `prefix` and
/// its kwargs from the current scope, applied to the stream x [B,L,d].
/// Whether `kind` names a retriever the model accepts (rel_sym_attn only
/// where `allowRelSymAttn`); an error listing them otherwise.
bool checkSymbolRetrieval(ModelBuilder &mb, llvm::StringRef kind,
                          bool allowRelSymAttn);
mlir::Value emitSymbolRetriever(ModelBuilder &mb, llvm::StringRef kind,
                                llvm::StringRef prefix, mlir::Value x);
/// RelationalSymbolicAttention (spec §4.4) with weights under `prefix`, from
/// the current kwargs: symbols [B,L,d] from the stream x.
mlir::Value emitRelationalSymbolicAttentionFromKwargs(ModelBuilder &mb,
                                                      llvm::StringRef prefix,
                                                      mlir::Value x);
/// SymbolicAttention (§4.1) on x [B,L,d], weights under `prefix`.
mlir::Value emitSymbolicAttention(ModelBuilder &mb, llvm::StringRef prefix,
                                  mlir::Value x, int64_t d, int64_t heads,
                                  int64_t symbols, double dropout,
                                  std::optional<double> scale);
void buildPositionalSymbolRetrieverModule(ModelBuilder &mb);
void buildPositionRelativeSymbolRetrieverModule(ModelBuilder &mb);
void buildRelationalAttentionModule(ModelBuilder &mb);

} // namespace dat

#endif // DAT_LIB_FRONTEND_MODULES_MODULES_H
