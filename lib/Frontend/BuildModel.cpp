//===- BuildModel.cpp - dispatch on the reference class name --------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Model assembly: which functions a model's program has (`forward`, and the
// decode `step` of the models that have one), each built by the frontend of
// its reference class.
//
//===----------------------------------------------------------------------===//

#include "Modules/Modules.h"
#include "dat/Frontend/Frontend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"

namespace dat {

namespace {
struct ModuleEntry {
  const char *name;
  void (*build)(ModelBuilder &);
  /// Whether the program also gets a one-token decode step (null: never).
  bool (*hasDecodeStep)(const ModelConfig &) = nullptr;
};
constexpr ModuleEntry kModules[] = {
    {"Attention", buildAttentionModule},
    {"Sequential + SelfMHA", buildApeSequentialSelfMHA},
    {"Grid + SelfMHA", buildApeGridSelfMHA},
    {"Sequential + Encoder", buildApeSequentialEncoder},
    {"Grid + Encoder", buildApeGridEncoder},
    {"Branching + SelfMHA", buildApeBranchingSelfMHA},
    {"Branching + Encoder", buildApeBranchingEncoder},
    {"TreeAlgebraic", buildApeTreeAlgebraic},
    {"MTAlgebraic", buildApeMTAlgebraic},
    {"AlgebraicCCT", buildApeAlgebraicCCT},
    {"AlgebraicSeqCCT", buildApeAlgebraicSeqCCT},
    {"Seq2SeqTransformer", buildSeq2SeqTransformer},
    {"Seq2SeqDualAttnTransformer", buildSeq2SeqDualAttnTransformer},
    {"RelationalAttention", buildRelationalAttentionModule},
    {"DualAttention", buildDualAttentionModule},
    {"EncoderBlock", buildEncoderBlock},
    {"TransformerLM", buildTransformerLM, languageModelHasDecodeStep},
    {"DualAttnTransformerLM", buildDualAttnTransformerLM,
     languageModelHasDecodeStep},
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

static const ModuleEntry *findModule(llvm::StringRef name) {
  for (const ModuleEntry &m : kModules)
    if (name == m.name)
      return &m;
  return nullptr;
}

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

static llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildFunction(mlir::MLIRContext &ctx, const ModelConfig &config,
              WeightSource &weights) {
  ModelBuilder builder(ctx, config, weights);
  buildModel(builder);
  return builder.finish();
}

/// The decode step: the same kwargs and weights, one token of each batch
/// row at `position`; its functions are renamed (step, step_*) and moved
/// into `module`.
static llvm::Error addDecodeStep(mlir::MLIRContext &ctx, mlir::ModuleOp module,
                                 const ModelConfig &config,
                                 WeightSource &weights) {
  ModelConfig step = config;
  step.decodeStep = true;
  // (The step's batch is the forward's largest: a dynamic batch's maximum.)
  step.dynamicDims.clear();
  int64_t batch = config.findInput("idx")->shape.at(0);
  step.inputs = {{"idx", {batch, 1}, "int64"}};
  std::vector<int64_t> logits;
  for (const TensorSpec &out : config.outputs)
    if (out.name == "logits")
      logits = out.shape;
  if (logits.size() != 3)
    return llvm::createStringError("%s: outputs.logits: expected [B, T, vocab]",
                                   config.path.c_str());
  step.outputs = {{"logits", {batch, 1, logits[2]}, "float32"}};
  auto stepModule = buildFunction(ctx, step, weights);
  if (!stepModule)
    return stepModule.takeError();
  mlir::SymbolTable symbols(**stepModule);
  for (auto fn : llvm::make_early_inc_range(
           (*stepModule)->getBody()->getOps<mlir::func::FuncOp>())) {
    std::string name = fn.getSymName() == "forward"
                           ? "step"
                           : ("step_" + fn.getSymName()).str();
    if (mlir::failed(symbols.rename(fn, name)))
      return llvm::createStringError("internal error: cannot rename %s",
                                     fn.getSymName().str().c_str());
  }
  for (auto fn : llvm::make_early_inc_range(
           (*stepModule)->getBody()->getOps<mlir::func::FuncOp>()))
    fn->moveBefore(module.getBody(), module.getBody()->end());
  return llvm::Error::success();
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildProgram(mlir::MLIRContext &ctx, const ModelConfig &config,
             WeightSource &weights) {
  auto module = buildFunction(ctx, config, weights);
  if (!module)
    return module.takeError();
  const ModuleEntry *entry = findModule(config.module);
  if (entry && entry->hasDecodeStep && entry->hasDecodeStep(config)) {
    // The outputs declared without a shape have the forward's.
    ModelConfig known = config;
    auto forward = (*module)->lookupSymbol<mlir::func::FuncOp>("forward");
    for (auto [i, out] : llvm::enumerate(known.outputs))
      if (out.shape.empty()) {
        auto shape = mlir::cast<mlir::RankedTensorType>(
                         forward.getFunctionType().getResult(i))
                         .getShape();
        out.shape.assign(shape.begin(), shape.end());
      }
    if (llvm::Error e = addDecodeStep(ctx, **module, known, weights))
      return std::move(e);
  }
  return module;
}

} // namespace dat
