//===- Config.cpp - model descriptions (config.json) ----------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Frontend/Config.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <set>

using namespace llvm;

namespace dat {

const TensorSpec *ModelConfig::findInput(StringRef name) const {
  for (const TensorSpec &t : inputs)
    if (t.name == name)
      return &t;
  return nullptr;
}

bool ModelConfig::wantsOutput(StringRef name) const {
  for (const TensorSpec &t : outputs)
    if (t.name == name)
      return true;
  return false;
}

int64_t ModelConfig::dynamicDimMax(StringRef name) const {
  for (const auto &[n, max] : dynamicDims)
    if (n == name)
      return max;
  return 0;
}

/// The largest dimension a description may ask for: larger is a typo or an
/// attack, and is refused before anything is allocated.
static constexpr int64_t kMaxDim = int64_t(1) << 31;

/// Reads the tensors of `key`; `shapeOptional` (outputs): a tensor without
/// a shape gets the one the module computes (left empty here).
static Error parseSpecs(const json::Object &root, StringRef key,
                        std::vector<TensorSpec> &out, StringRef path,
                        bool shapeOptional,
                        ArrayRef<std::pair<std::string, int64_t>> dynamic,
                        std::set<std::string> &used) {
  const json::Value *v = root.get(key);
  if (!v)
    return Error::success();
  const json::Object *obj = v->getAsObject();
  if (!obj)
    return createStringError("%s: '%s' must be an object of tensors",
                             path.str().c_str(), key.str().c_str());
  // Sorted by name: llvm::json::Object does not keep the file's order, and
  // the program's signature (and its manifest) must not depend on a hash.
  std::vector<std::string> names;
  for (const auto &kv : *obj)
    names.push_back(kv.first.str());
  llvm::sort(names);
  for (const std::string &name : names) {
    std::string where = (path + ": " + key + "." + name).str();
    const json::Object *spec = obj->get(name)->getAsObject();
    if (!spec)
      return createStringError("%s: must be an object", where.c_str());
    TensorSpec t;
    t.name = name;
    const json::Array *shape = spec->getArray("shape");
    if (!shape && (!shapeOptional || spec->get("shape")))
      return createStringError("%s.shape: missing or not an array",
                               where.c_str());
    int64_t elements = 1;
    for (const json::Value &d : shape ? *shape : json::Array()) {
      std::optional<int64_t> dim = d.getAsInteger();
      // A dynamic dimension, by name: its largest size from dynamic_dims.
      t.dims.emplace_back();
      if (std::optional<StringRef> symbol = d.getAsString()) {
        auto *it = llvm::find_if(
            dynamic, [&](const auto &e) { return e.first == *symbol; });
        if (it == dynamic.end())
          return createStringError(
              "%s.shape: '%s' is not a dimension of 'dynamic_dims' (%s)",
              where.c_str(), symbol->str().c_str(),
              dynamic.empty()
                  ? "the config has none"
                  : ("it has " + llvm::join(llvm::map_range(dynamic,
                                                            [](const auto &e) {
                                                              return "'" +
                                                                     e.first +
                                                                     "'";
                                                            }),
                                            ", "))
                        .c_str());
        used.insert(it->first);
        t.dims.back() = it->first;
        dim = it->second;
      }
      // No model takes an empty tensor; an empty one would only reach the
      // lowering as zero-sized slices.
      if (!dim || *dim < 1 || *dim > kMaxDim)
        return createStringError(
            "%s.shape: dimensions must be integers in [1, 2^31] or names "
            "of dynamic_dims",
            where.c_str());
      if (*dim && elements > (int64_t(1) << 40) / *dim)
        return createStringError("%s.shape: more than 2^40 elements",
                                 where.c_str());
      elements *= *dim;
      t.shape.push_back(*dim);
    }
    if (llvm::all_of(t.dims, [](const std::string &n) { return n.empty(); }))
      t.dims.clear();
    std::optional<StringRef> dtype = spec->getString("dtype");
    t.dtype = dtype ? dtype->str() : "float32";
    if (t.dtype != "float32" && t.dtype != "int64")
      return createStringError(
          "%s.dtype: '%s' is not supported (float32 or int64)", where.c_str(),
          t.dtype.c_str());
    out.push_back(std::move(t));
  }
  return Error::success();
}

Expected<ModelConfig> loadModelConfig(StringRef path) {
  auto buffer = MemoryBuffer::getFile(path);
  if (!buffer)
    return createStringError("%s: cannot read: %s", path.str().c_str(),
                             buffer.getError().message().c_str());
  return parseModelConfig((*buffer)->getBuffer(), path);
}

Expected<ModelConfig> parseModelConfig(StringRef text, StringRef path) {
  Expected<json::Value> parsed = json::parse(text);
  if (!parsed)
    return createStringError("%s: invalid JSON: %s", path.str().c_str(),
                             toString(parsed.takeError()).c_str());
  json::Object *root = parsed->getAsObject();
  if (!root)
    return createStringError("%s: the top level must be an object",
                             path.str().c_str());

  ModelConfig config;
  config.path = path.str();
  std::optional<StringRef> module = root->getString("module");
  if (!module)
    return createStringError(
        "%s: 'module' (the reference class name) is missing or not a string",
        path.str().c_str());
  config.module = module->str();
  config.name = root->getString("name").value_or("").str();
  if (const json::Value *kw = root->get("kwargs")) {
    if (!kw->getAsObject())
      return createStringError("%s: 'kwargs' must be an object",
                               path.str().c_str());
    config.kwargs = *kw->getAsObject();
  }
  if (const json::Value *call = root->get("call")) {
    if (!call->getAsObject())
      return createStringError("%s: 'call' must be an object",
                               path.str().c_str());
    config.call = *call->getAsObject();
  }
  // Dynamic dimensions: {"seq": 1024} (a name, the largest size).
  if (const json::Value *dyn = root->get("dynamic_dims")) {
    const json::Object *obj = dyn->getAsObject();
    if (!obj)
      return createStringError("%s: 'dynamic_dims' must be an object of "
                               "names and largest sizes, e.g. {\"seq\": 1024}",
                               path.str().c_str());
    for (const auto &kv : *obj) {
      std::optional<int64_t> max = kv.second.getAsInteger();
      if (kv.first.str().empty() || !max || *max < 1 || *max > kMaxDim)
        return createStringError("%s: dynamic_dims.%s: the largest size must "
                                 "be an integer in [1, 2^31]",
                                 path.str().c_str(), kv.first.str().c_str());
      config.dynamicDims.push_back({kv.first.str(), *max});
    }
    llvm::sort(config.dynamicDims);
  }
  std::set<std::string> used;
  if (Error e = parseSpecs(*root, "inputs", config.inputs, path,
                           /*shapeOptional=*/false, config.dynamicDims, used))
    return std::move(e);
  std::set<std::string> inputDims = used;
  if (Error e = parseSpecs(*root, "outputs", config.outputs, path,
                           /*shapeOptional=*/true, config.dynamicDims, used))
    return std::move(e);
  // A size the program takes from its inputs: one no input has could not be
  // known.
  for (const auto &[name, max] : config.dynamicDims)
    if (!inputDims.count(name))
      return createStringError(
          "%s: dynamic_dims.%s: no input has this dimension (name it in an "
          "input's shape, e.g. \"shape\": [1, \"%s\", 64])",
          path.str().c_str(), name.c_str(), name.c_str());
  // A program with no outputs would run and write nothing: refuse it.
  if (config.outputs.empty())
    return createStringError(
        "%s: 'outputs' is missing or empty: name the tensors the program "
        "writes, e.g. \"outputs\": {\"y\": {\"shape\": [1, 16, 64]}} or, "
        "with the shape the module computes, {\"y\": {}} "
        "(docs/config-format.md lists each module's outputs)",
        path.str().c_str());
  if (const json::Object *tol = root->getObject("tolerance")) {
    std::optional<double> rtol = tol->getNumber("rtol");
    std::optional<double> atol = tol->getNumber("atol");
    if ((tol->get("rtol") && !rtol) || (tol->get("atol") && !atol) ||
        (rtol && *rtol < 0) || (atol && *atol < 0))
      return createStringError(
          "%s: tolerance.rtol/atol must be non-negative numbers",
          path.str().c_str());
    config.rtol = rtol.value_or(config.rtol);
    config.atol = atol.value_or(config.atol);
  }
  return config;
}

} // namespace dat
