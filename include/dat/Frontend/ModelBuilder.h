//===- ModelBuilder.h - building dat IR from a model description *- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The state shared by the per-class frontends: the function being built
// (inputs first, then each weight as it is first used, as arguments; the
// requested outputs as results), typed access to the kwargs with defaults,
// and the layer helpers (linear, head split/merge). Errors are sticky: the
// first one is kept, later calls become no-ops, and `finish` reports it.
// Defined by job: the function, its arguments, caches and outlined layers
// in ModelBuilder.cpp; the kwargs readers in ModelKwargs.cpp; the layer
// library in ModelLayers.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_FRONTEND_MODELBUILDER_H
#define DAT_FRONTEND_MODELBUILDER_H

#include "dat/Frontend/Config.h"
#include "dat/Frontend/Weights.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <set>

namespace dat {

/// One argument or result of the generated function, in order (stamped on
/// the function as #dat.program_value by `finish`).
struct SignatureEntry {
  /// Cache: a decode step's state (e.g. attention keys), zeroed by the
  /// program at the start, passed in and returned updated at every step.
  enum Kind { Input, Weight, Cache, Output } kind;
  std::string name; // without the input./output. prefix
  std::vector<int64_t> shape;
  std::string dtype; // "float32" | "int64"
  /// For integer inputs: the values the model accepts (checked by the
  /// program before it runs), e.g. positions that index a table.
  std::optional<std::pair<int64_t, int64_t>> range;
  /// Per dimension, the name of a dynamic one ("" static; empty: none);
  /// `shape` then holds its largest size.
  std::vector<std::string> dims = {};
};

class ModelBuilder {
public:
  ModelBuilder(mlir::MLIRContext &ctx, const ModelConfig &config,
               WeightSource &weights);

  // Kwargs, read once each; `finishKwargs` reports the ones never read.
  int64_t intArg(llvm::StringRef key);
  int64_t intArg(llvm::StringRef key, int64_t dflt);
  std::optional<int64_t> optIntArg(llvm::StringRef key);
  /// A required count of layers, in [0, kMaxLayers]: every layer is built
  /// into the IR, so an absurd count is refused rather than attempted.
  int64_t layersArg(llvm::StringRef key);
  static constexpr int64_t kMaxLayers = 1024;
  bool boolArg(llvm::StringRef key, bool dflt);
  double floatArg(llvm::StringRef key, double dflt);
  std::optional<double> optFloatArg(llvm::StringRef key);
  std::string stringArg(llvm::StringRef key, llvm::StringRef dflt);
  /// Runs `body` with the nested kwargs object `key` (e.g. sa_kwargs, which
  /// the reference forwards to `className`) as the current kwargs; an absent
  /// or null object is empty. Keys `body` never read are reported.
  void withKwargs(llvm::StringRef key, llvm::StringRef className,
                  llvm::function_ref<void()> body);
  bool boolCall(llvm::StringRef key, bool dflt);
  /// A list of positive integers (e.g. image_shape); errors unless it has
  /// exactly `n` entries.
  llvm::SmallVector<int64_t> intListArg(llvm::StringRef key, size_t n);

  /// The function argument of input `name` (shape from the config), or null
  /// with an error if the config declares no such input.
  mlir::Value input(llvm::StringRef name);
  /// The same, requiring rank `rank` and `dtype` (an error naming the input
  /// otherwise).
  mlir::Value input(llvm::StringRef name, int64_t rank,
                    llvm::StringRef dtype = "float32");
  /// A [B, L, width] stream input whose width is kwarg `widthKey`.
  mlir::Value streamInput(llvm::StringRef name, int64_t width,
                          llvm::StringRef widthKey);
  bool hasInput(llvm::StringRef name) const;
  /// Input `name`, which must be int64 of `shape`, as an i1 tensor (nonzero =
  /// true, as the reference's bool conversion); null with an error otherwise.
  mlir::Value boolInput(llvm::StringRef name, llvm::ArrayRef<int64_t> shape);
  /// The same for a mask whose dimension i is dimension likeDims[i] of
  /// `like` (a dynamic one: the same named dimension), or a static 1 where
  /// likeDims[i] is kUnitDim.
  mlir::Value boolInput(llvm::StringRef name, mlir::Value like,
                        llvm::ArrayRef<int64_t> likeDims);
  static constexpr int64_t kUnitDim = -1;
  /// The function argument holding weight `name`, which must have `shape`.
  mlir::Value weight(llvm::StringRef name, llvm::ArrayRef<int64_t> shape);
  void aliasWeight(llvm::StringRef alias, llvm::StringRef target) {
    weights.addAlias(alias, target);
  }
  /// A weight computed at compile time from the weights `deps` (see
  /// WeightSource::addDerived); a function argument like any weight.
  mlir::Value
  derivedWeight(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                std::vector<std::pair<std::string, std::vector<int64_t>>> deps,
                WeightSource::Derivation compute);
  /// The values of weight `name` (which must have `shape`), read now, for
  /// decisions that depend on them; empty with an error if it is missing.
  std::vector<float> weightValues(llvm::StringRef name,
                                  llvm::ArrayRef<int64_t> shape);
  /// Restricts integer input `name` to [lo, hi] (checked at run time).
  void inputRange(llvm::StringRef name, int64_t lo, int64_t hi);
  /// Makes `value` the output `name`, if the config asks for it.
  void output(llvm::StringRef name, mlir::Value value);
  bool wantsOutput(llvm::StringRef name) const {
    return config.wantsOutput(name);
  }

  /// x ← layer(l, x) for l = 0..count-1. Each layer is built into a private
  /// function `<name><l>` and called; the values of the enclosing function
  /// it uses become the callee's arguments, and a layer identical to an
  /// earlier one reuses that function, so code size and compile time do not
  /// grow with the depth of a model. Null after an error.
  mlir::Value
  stack(llvm::StringRef name, int64_t count, mlir::Value x,
        llvm::function_ref<mlir::Value(int64_t, mlir::Value)> layer);
  /// `body` built into a private function `name` and called (one layer of
  /// `stack`; also work whose temporaries should be freed when it returns).
  /// A body identical to an earlier one reuses that function.
  mlir::Value outlined(llvm::StringRef name,
                       llvm::function_ref<mlir::Value()> body);

  // Decode steps (config.decodeStep): the function runs one token at the
  // global position `position` (input [1], int64) with the state of the
  // earlier tokens in caches of `maxLength` entries.
  bool decoding() const { return config.decodeStep; }
  /// Enables decoding with caches of `maxLength` positions; declares the
  /// position input. Call before building anything that uses it.
  void startDecoding(int64_t maxLength);
  int64_t decodeLength() const { return decodeMax; }
  /// The decode step's position as an index (null when not decoding).
  mlir::Value decodePosition() const { return position; }
  /// Forward: returns `fresh`. Decoding: `fresh` (size 1 on `axis`) is
  /// written at the position into the cache `name` (size maxLength on
  /// `axis`), which the step returns updated; returns the whole cache.
  mlir::Value cached(llvm::StringRef name, mlir::Value fresh, unsigned axis);

  void error(const llvm::Twine &message);
  bool failed() const { return !firstError.empty(); }

  /// Validates that every kwarg was read, every requested output produced
  /// and every weight used; on success returns the module, whose `forward`
  /// says what each argument and result is (#dat.program_value).
  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> finish();

  // Layer helpers on float32 tensors.
  /// y[..., o] = Σ_i x[..., i] · W[o, i] (+ b[o]); W is `prefix.weight`.
  mlir::Value linear(mlir::Value x, llvm::StringRef prefix, int64_t out,
                     bool bias);
  /// The same with the weight [out, in] and optional bias [out] given.
  mlir::Value linear(mlir::Value x, mlir::Value weight, mlir::Value bias);
  /// [B,L,H·d] -> [B,L,H,d] (head-major packing).
  mlir::Value splitHeads(mlir::Value x, int64_t heads);
  /// [B,L,H,d] <-> [B,H,L,d]
  mlir::Value swapSeqHeads(mlir::Value x);
  /// [B,H,L,d] -> [B,L,H·d]
  mlir::Value mergeHeads(mlir::Value x);
  mlir::Value emptyLike(llvm::ArrayRef<int64_t> shape);
  /// An empty f32 tensor of these sizes (dynamic ones as values).
  mlir::Value emptyLike(llvm::ArrayRef<mlir::OpFoldResult> shape);
  /// Dimension `d` of `x`: a constant, or `tensor.dim` where dynamic.
  mlir::OpFoldResult dimOf(mlir::Value x, int64_t d);
  /// LayerNorm over the last axis (biased two-pass variance), with
  /// `prefix.weight` and, if `bias`, `prefix.bias`.
  mlir::Value layerNorm(mlir::Value x, llvm::StringRef prefix, double eps,
                        bool bias = true);
  /// Elementwise activation: relu, gelu (tanh form), gelu_erf, silu,
  /// sigmoid, tanh, identity.
  mlir::Value activation(mlir::Value x, llvm::StringRef name);
  /// RMSNorm over the last axis: x · rsqrt(mean(x²) + eps) · weight.
  mlir::Value rmsNorm(mlir::Value x, llvm::StringRef prefix, double eps);
  /// Elementwise on two tensors of one shape (an error naming the config
  /// otherwise, e.g. a residual stream narrower than d_model).
  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);

  mlir::OpBuilder b;
  mlir::Location loc;
  const ModelConfig &config;

private:
  mlir::Value addArgument(SignatureEntry entry);
  /// The signature entry of a result `value`: its shape and, for dynamic
  /// dimensions, the inputs' names of them.
  SignatureEntry resultEntry(llvm::StringRef name, mlir::Value value);

public:
  /// The dynamic_dims name of dimension `d` of `v`: an input's, or one the
  /// IR proves equal to it; "" for a static dimension (or one not traced).
  std::string dimName(mlir::Value v, int64_t d);
  /// Dimension `d` of `v` for a diagnostic: its size, or its name.
  std::string sizeText(mlir::Value v, int64_t d);
  /// Dimension `d` of `v`: its size, or a dynamic one's largest.
  int64_t largestSize(mlir::Value v, int64_t d);
  /// Whether dimension `da` of `a` and `dc` of `c` have one size: equal
  /// static sizes, or dynamic dimensions of one name (which the program
  /// checks at run time).
  bool sameDim(mlir::Value a, int64_t da, mlir::Value c, int64_t dc);

private:
  bool sameShape(mlir::Value a, mlir::Value c);
  const llvm::json::Value *kwarg(llvm::StringRef key);
  /// "<config>: kwargs[.nested]." + key, for diagnostics.
  std::string where(llvm::StringRef key) const;
  void reportUnread(const llvm::json::Object &object,
                    const std::set<std::string> &read,
                    llvm::StringRef className);

  WeightSource &weights;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp func;
  std::vector<SignatureEntry> entries;
  std::map<std::string, mlir::Value> weightArgs;
  std::map<std::string, mlir::Value> outputs;
  // Decoding: the position, the cache length, updated caches by name.
  mlir::Value position;
  int64_t decodeMax = 0;
  std::vector<std::pair<std::string, mlir::Value>> cacheOutputs;
  /// Outlined functions by their printed form (with a placeholder name).
  std::map<std::string, mlir::func::FuncOp> outlinedBodies;
  // The kwargs scope being read: the object, its path, the keys read.
  const llvm::json::Object *kwargs;
  std::string kwargsPath = "kwargs";
  std::set<std::string> readKwargs;
  std::string firstError;
};

/// Builds the function of `config.module` into `builder`. Errors name the
/// config file and the offending key.
void buildModel(ModelBuilder &builder);

} // namespace dat

#endif // DAT_FRONTEND_MODELBUILDER_H
