//===- Pretrained.cpp - save_pretrained folders as model descriptions -----===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The reference models are saved with huggingface_hub's
// PyTorchModelHubMixin: a folder with `config.json`, the constructor's
// kwargs, and `model.safetensors`, the state_dict. The kwargs do not name
// the class; the language and vision models are told apart by the kwargs
// only they take, and get their natural signature (token ids → logits,
// images → logits).
//
//===----------------------------------------------------------------------===//

#include "dat/Frontend/Config.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace dat {

namespace {
/// The classes a folder's kwargs can describe, and what tells them apart.
struct PretrainedClass {
  const char *name;
  const char *kind;   // "lm" or "vision"
  const char *marker; // a kwarg only this kind has
  const char *heads;  // the heads kwarg: n_heads (standard) or n_heads_sa
};
constexpr PretrainedClass kClasses[] = {
    {"DualAttnTransformerLM", "lm", "vocab_size", "n_heads_sa"},
    {"TransformerLM", "lm", "vocab_size", "n_heads"},
    {"VisionDualAttnTransformer", "vision", "image_shape", "n_heads_sa"},
    {"VisionTransformer", "vision", "image_shape", "n_heads"},
};
} // namespace

bool isModelFolder(StringRef path) { return sys::fs::is_directory(path); }

Expected<ModelConfig> loadModelFolder(StringRef dir,
                                      const FolderOptions &options) {
  SmallString<256> path(dir);
  sys::path::append(path, "config.json");
  auto buffer = MemoryBuffer::getFile(path);
  if (!buffer)
    return createStringError(
        "%s: cannot read %s: %s (a model folder holds config.json and "
        "model.safetensors, as save_pretrained writes them)",
        dir.str().c_str(), path.c_str(), buffer.getError().message().c_str());
  Expected<json::Value> parsed = json::parse((*buffer)->getBuffer());
  if (!parsed)
    return createStringError("%s: invalid JSON: %s", path.c_str(),
                             toString(parsed.takeError()).c_str());
  json::Object *root = parsed->getAsObject();
  if (!root)
    return createStringError("%s: the top level must be an object",
                             path.c_str());
  // A model description of dat's own (a golden case's folder).
  if (root->get("module")) {
    if (!options.module.empty() || options.batch || options.seqLen)
      return createStringError(
          "%s: a model description (it names its module and tensors); "
          "--module, --batch and --seq-len apply to save_pretrained folders",
          path.c_str());
    return parseModelConfig((*buffer)->getBuffer(), path);
  }

  const PretrainedClass *cls = nullptr;
  std::string candidates =
      join(map_range(kClasses, [](const PretrainedClass &c) { return c.name; }),
           ", ");
  if (!options.module.empty()) {
    for (const PretrainedClass &c : kClasses)
      if (options.module == c.name)
        cls = &c;
    if (!cls)
      return createStringError(
          "--module %s: a save_pretrained folder gives kwargs only; dat "
          "knows the signature of %s (other modules: write a config, "
          "docs/config-format.md)",
          options.module.c_str(), candidates.c_str());
  } else {
    std::vector<const PretrainedClass *> matches;
    for (const PretrainedClass &c : kClasses)
      if (root->get(c.marker) && root->get(c.heads))
        matches.push_back(&c);
    if (matches.size() != 1)
      return createStringError(
          "%s: cannot tell the reference class from these kwargs (candidates: "
          "%s); pass it (datc --module NAME, dat.compile(..., module=NAME))",
          path.c_str(), candidates.c_str());
    cls = matches.front();
  }

  ModelConfig config;
  config.path = path.str().str();
  config.module = cls->name;
  config.name = sys::path::filename(dir).str();
  config.kwargs = std::move(*root);
  int64_t batch = options.batch ? options.batch : 1;
  if (StringRef(cls->kind) == "lm") {
    std::optional<int64_t> maxLen = config.kwargs.getInteger("max_block_size");
    if (!maxLen || *maxLen < 1)
      return createStringError("%s: max_block_size: expected a positive "
                               "integer (the longest sequence)",
                               path.c_str());
    int64_t len = options.seqLen ? options.seqLen : *maxLen;
    if (len > *maxLen)
      return createStringError("--seq-len %lld: longer than the model's "
                               "max_block_size (%lld)",
                               static_cast<long long>(len),
                               static_cast<long long>(*maxLen));
    config.inputs = {{"idx", {batch, len}, "int64"}};
    if (options.dynamic) {
      config.inputs[0].dims = {"batch", "seq"};
      config.dynamicDims = {{"batch", batch}, {"seq", len}};
    }
  } else {
    if (options.seqLen)
      return createStringError("--seq-len: %s takes images, whose size is "
                               "image_shape",
                               cls->name);
    const json::Array *image = config.kwargs.getArray("image_shape");
    std::vector<int64_t> shape = {batch};
    for (const json::Value &d : image ? *image : json::Array())
      if (std::optional<int64_t> v = d.getAsInteger(); v && *v > 0)
        shape.push_back(*v);
    if (!image || shape.size() != 4)
      return createStringError("%s: image_shape: expected [channels, height, "
                               "width]",
                               path.c_str());
    config.inputs = {{"image", shape, "float32"}};
    if (options.dynamic) {
      config.inputs[0].dims = {"batch", "", "", ""};
      config.dynamicDims = {{"batch", batch}};
    }
  }
  config.outputs = {{"logits", {}, "float32"}};
  return config;
}

} // namespace dat
