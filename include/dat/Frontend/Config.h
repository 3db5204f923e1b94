//===- Config.h - model descriptions (config.json) --------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// A model description names the reference class (`module`) and its
// constructor kwargs exactly as the reference takes them, plus the tensors
// the compiled program reads and writes.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_FRONTEND_CONFIG_H
#define DAT_FRONTEND_CONFIG_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace dat {

struct TensorSpec {
  std::string name;
  /// A dynamic dimension's entry is its largest size.
  std::vector<int64_t> shape;
  std::string dtype; // "float32" | "int64"
  /// Per dimension: "" (static) or the name of a dynamic dimension
  /// (`dynamic_dims`), whose size the program takes at run time, up to the
  /// maximum. Empty where every dimension is static.
  std::vector<std::string> dims;
};

struct ModelConfig {
  std::string path; // the config file, for diagnostics
  std::string name;
  std::string module;
  llvm::json::Object kwargs;
  llvm::json::Object call;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  /// `dynamic_dims`: each dynamic dimension's name and largest size, sorted
  /// by name.
  std::vector<std::pair<std::string, int64_t>> dynamicDims;
  double rtol = 1e-4;
  double atol = 1e-5;
  /// Build the one-token decode step of a language model instead of its
  /// forward pass (see ModelBuilder::decoding).
  bool decodeStep = false;
  /// Apply APE's sequence and grid maps as d×d matrices instead of their
  /// rotary normal form (datc --general-maps).
  bool generalOrthogonalMaps = false;

  const TensorSpec *findInput(llvm::StringRef name) const;
  /// The largest size of dynamic dimension `name` (0 if there is none).
  int64_t dynamicDimMax(llvm::StringRef name) const;
  bool wantsOutput(llvm::StringRef name) const;
};

/// Reads and validates `path`. Errors name the file and the offending key.
llvm::Expected<ModelConfig> loadModelConfig(llvm::StringRef path);
/// The same for the text of a config; `path` names it in messages.
llvm::Expected<ModelConfig> parseModelConfig(llvm::StringRef text,
                                             llvm::StringRef path);

/// How a save_pretrained folder becomes a model description.
struct FolderOptions {
  std::string module; // the reference class; "" infers it from the kwargs
  int64_t batch = 0;  // 0: 1
  int64_t seqLen = 0; // language models; 0: max_block_size
  /// idx ["batch", "seq"] (language models), dynamic up to batch and
  /// seqLen; image ["batch", C, H, W] (vision models) up to batch.
  bool dynamic = false;
};

/// Whether `path` is a folder (a model folder, or an error to report).
bool isModelFolder(llvm::StringRef path);

/// A folder with `config.json`: a model description of dat's own (a golden
/// case), or a `save_pretrained` folder of a reference language or vision
/// model (the constructor's kwargs; the class given or inferred from them,
/// the inputs from `options`, the output `logits`). Its weights are
/// `model.safetensors` beside it.
llvm::Expected<ModelConfig> loadModelFolder(llvm::StringRef dir,
                                            const FolderOptions &options);

} // namespace dat

#endif // DAT_FRONTEND_CONFIG_H
