//===- ConfigFuzzer.cpp - fuzz the model-description frontend -------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// A config.json (any bytes) with seeded random weights goes through the
// frontend (buildProgram, decode steps included): either a diagnostic about
// the input, or a module that verifies
// and has a bf16 form that verifies too (dat-narrow-storage).
// Building the IR allocates nothing in proportion to the model's dimensions
// (weights are not materialized), so absurd sizes must be diagnosed, not
// attempted.
//
//===----------------------------------------------------------------------===//

#include "dat/Dialect/Dat/Transforms/Patterns.h"
#include "dat/Driver/Driver.h"
#include "dat/Frontend/Config.h"
#include "dat/Frontend/Frontend.h"
#include "dat/Frontend/Weights.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/JSON.h"

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    dat::registerDriverDialects(*r);
    return r;
  }();
  llvm::Expected<dat::ModelConfig> config = dat::parseModelConfig(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.json");
  if (!config) {
    llvm::consumeError(config.takeError());
    return 0;
  }
  mlir::MLIRContext ctx(*registry);
  ctx.printOpOnDiagnostic(false);
  auto weights = dat::WeightSource::random(1);
  auto module = dat::buildProgram(ctx, *config, *weights);
  if (!module) {
    std::string message = llvm::toString(module.takeError());
    // A rejection must say why, and must be about the input: IR that fails
    // to verify ("internal error") is a frontend bug.
    if (message.empty() || message.find("internal error") != std::string::npos)
      std::abort();
    return 0;
  }
  if (mlir::failed(mlir::verify(**module)))
    std::abort(); // finish() verified it; this would be a bug
  // Every model the frontend builds has a bf16 form (--precision bf16).
  if (mlir::failed(mlir::dat::narrowFloatStorage(
          **module, mlir::BFloat16Type::get(&ctx))) ||
      mlir::failed(mlir::verify(**module)))
    std::abort();
  return 0;
}

// Structure-aware mutation: parse the JSON, change one to three values
// (numbers to boundary values, strings to names the frontend knows, keys
// dropped or arrays shortened), print it back. Inputs that are not JSON are
// left to the byte-level mutations.
namespace {
struct JsonMutator {
  std::mt19937 rng;
  size_t pick(size_t n) { return n ? rng() % n : 0; }

  void mutateValue(llvm::json::Value &v) {
    static const int64_t ints[] = {0,  1,    2,         3,         -1,
                                   7,  64,   1 << 20,   1ll << 31, 1ll << 40,
                                   -4, 1023, 2147483647};
    static const char *strings[] = {"softmax",
                                    "relu",
                                    "gelu",
                                    "swiglu",
                                    "identity",
                                    "rmsnorm",
                                    "layernorm",
                                    "none",
                                    "RoPE",
                                    "pos_emb",
                                    "symbolic_attention",
                                    "positional_symbols",
                                    "position_relative",
                                    "rel_sym_attn",
                                    "rms_head",
                                    "mlp_relu",
                                    "mlp_linear",
                                    "default",
                                    "cls",
                                    "mean",
                                    "int64",
                                    "float32",
                                    "GELU",
                                    "ReLU",
                                    "",
                                    "Attention",
                                    "RelationalAttention",
                                    "DualAttnTransformerLM",
                                    "Branching + Encoder"};
    if (auto *o = v.getAsObject()) {
      if (o->empty())
        return;
      auto it = o->begin();
      std::advance(it, pick(o->size()));
      if (pick(6) == 0) {
        o->erase(it);
        return;
      }
      return mutateValue(it->second);
    }
    if (auto *a = v.getAsArray()) {
      if (a->empty())
        return;
      size_t i = pick(a->size());
      switch (pick(5)) {
      case 0:
        a->erase(a->begin() + i);
        return;
      case 1:
        a->push_back((*a)[i]);
        return;
      default:
        return mutateValue((*a)[i]);
      }
    }
    if (v.getAsNumber() || v.getAsInteger()) {
      v = pick(5) ? llvm::json::Value(ints[pick(std::size(ints))])
                  : llvm::json::Value(0.5 * int64_t(pick(9)) - 1.0);
      return;
    }
    if (v.getAsBoolean()) {
      v = !*v.getAsBoolean();
      return;
    }
    if (v.getAsString()) {
      v = strings[pick(std::size(strings))];
      return;
    }
    v = int64_t(pick(3)); // null -> a number
  }
};
} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned int seed) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(
      llvm::StringRef(reinterpret_cast<const char *>(data), size));
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return size;
  }
  JsonMutator m{std::mt19937(seed)};
  for (size_t edits = 1 + m.pick(3); edits > 0; --edits)
    m.mutateValue(*parsed);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << *parsed;
  if (text.size() > maxSize)
    return size;
  std::memcpy(data, text.data(), text.size());
  return text.size();
}
