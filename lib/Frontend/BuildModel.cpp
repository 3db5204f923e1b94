//===- BuildModel.cpp - dispatch on the reference class name --------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "Modules/Modules.h"

#include "llvm/ADT/StringExtras.h"

namespace dat {

namespace {
struct ModuleEntry {
  const char *name;
  void (*build)(ModelBuilder &);
};
constexpr ModuleEntry kModules[] = {
    {"Attention", buildAttentionModule},
    {"Sequential + SelfMHA", buildApeSequentialSelfMHA},
    {"Grid + SelfMHA", buildApeGridSelfMHA},
    {"Sequential + Encoder", buildApeSequentialEncoder},
    {"Grid + Encoder", buildApeGridEncoder},
    {"Branching + SelfMHA", buildApeBranchingSelfMHA},
    {"Branching + Encoder", buildApeBranchingEncoder},
    {"Seq2SeqTransformer", buildSeq2SeqTransformer},
    {"Seq2SeqDualAttnTransformer", buildSeq2SeqDualAttnTransformer},
    {"RelationalAttention", buildRelationalAttentionModule},
    {"DualAttention", buildDualAttentionModule},
    {"EncoderBlock", buildEncoderBlock},
    {"TransformerLM", buildTransformerLM},
    {"DualAttnTransformerLM", buildDualAttnTransformerLM},
    {"VisionTransformer", buildVisionTransformer},
    {"VisionDualAttnTransformer", buildVisionDualAttnTransformer},
    {"DecoderBlock", buildDecoderBlock},
    {"DualAttnEncoderBlock", buildDualAttnEncoderBlock},
    {"DualAttnDecoderBlock", buildDualAttnDecoderBlock},
    {"MultiHeadDotProductAttention", buildHylaAttentionModule},
    {"SymbolicAttention", buildSymbolicAttentionModule},
    {"RelationalSymbolicAttention", buildRelationalSymbolicAttentionModule},
    {"PositionalSymbolRetriever", buildPositionalSymbolRetrieverModule},
    {"PositionRelativeSymbolRetriever",
     buildPositionRelativeSymbolRetrieverModule},
};
} // namespace

void buildModel(ModelBuilder &mb) {
  for (const ModuleEntry &m : kModules)
    if (mb.config.module == m.name) {
      m.build(mb);
      return;
    }
  std::string known = llvm::join(
      llvm::map_range(kModules, [](const ModuleEntry &m) { return m.name; }),
      ", ");
  mb.error(mb.config.path + ": module: unknown module '" + mb.config.module +
           "' (supported: " + known + ")");
}

} // namespace dat
