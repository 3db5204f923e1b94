//===- ModelKwargs.cpp - ModelBuilder: constructor kwargs -----------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//
//
// Reading the module's constructor kwargs and call options: typed, with a
// diagnostic naming the config file and key, and every kwarg read recorded
// so that unknown ones are reported rather than ignored.
//
//===----------------------------------------------------------------------===//

#include "dat/Frontend/ModelBuilder.h"

using namespace llvm;
using namespace mlir;

namespace dat {

const json::Value *ModelBuilder::kwarg(StringRef key) {
  readKwargs.insert(key.str());
  const json::Value *v = kwargs->get(key);
  return v && v->kind() != json::Value::Null ? v : nullptr;
}

std::string ModelBuilder::where(StringRef key) const {
  return config.path + ": " + kwargsPath + "." + key.str();
}

void ModelBuilder::reportUnread(const json::Object &object,
                                const std::set<std::string> &read,
                                StringRef className) {
  std::vector<std::string> keys;
  for (const auto &kv : object)
    keys.push_back(kv.first.str());
  llvm::sort(keys);
  for (const std::string &key : keys)
    if (!read.count(key))
      error(where(key) + ": not an argument of " + className);
}

void ModelBuilder::withKwargs(StringRef key, StringRef className,
                              llvm::function_ref<void()> body) {
  static const json::Object empty;
  const json::Value *v = kwarg(key);
  const json::Object *nested = v ? v->getAsObject() : &empty;
  if (!nested) {
    error(where(key) + ": expected an object");
    nested = &empty;
  }
  const json::Object *outer = kwargs;
  std::string outerPath = kwargsPath;
  std::set<std::string> outerRead = std::move(readKwargs);
  kwargs = nested;
  kwargsPath = outerPath + "." + key.str();
  readKwargs.clear();
  body();
  reportUnread(*nested, readKwargs, className);
  kwargs = outer;
  kwargsPath = outerPath;
  readKwargs = std::move(outerRead);
}

int64_t ModelBuilder::intArg(StringRef key) {
  if (!kwarg(key)) {
    error(where(key) + ": required by " + config.module + " but missing");
    return 1;
  }
  return intArg(key, 1);
}

int64_t ModelBuilder::layersArg(StringRef key) {
  int64_t n = intArg(key);
  if (!failed() && n > kMaxLayers) {
    error(where(key) + ": " + Twine(n) + " layers; dat builds at most " +
          Twine(kMaxLayers));
    return 0;
  }
  return n;
}

int64_t ModelBuilder::intArg(StringRef key, int64_t dflt) {
  return optIntArg(key).value_or(dflt);
}

std::optional<int64_t> ModelBuilder::optIntArg(StringRef key) {
  const json::Value *v = kwarg(key);
  if (!v)
    return std::nullopt;
  std::optional<int64_t> i = v->getAsInteger();
  if (!i) {
    error(where(key) + ": expected an integer");
    return std::nullopt;
  }
  if (*i < 0 || *i > (int64_t(1) << 31)) {
    error(where(key) + ": " + Twine(*i) + " is out of range [0, 2^31]");
    return std::nullopt;
  }
  return i;
}

bool ModelBuilder::boolArg(StringRef key, bool dflt) {
  const json::Value *v = kwarg(key);
  if (!v)
    return dflt;
  std::optional<bool> r = v->getAsBoolean();
  if (!r) {
    error(where(key) + ": expected true or false");
    return dflt;
  }
  return *r;
}

std::optional<double> ModelBuilder::optFloatArg(StringRef key) {
  const json::Value *v = kwarg(key);
  if (!v)
    return std::nullopt;
  std::optional<double> r = v->getAsNumber();
  if (!r)
    error(where(key) + ": expected a number");
  return r;
}

double ModelBuilder::floatArg(StringRef key, double dflt) {
  return optFloatArg(key).value_or(dflt);
}

std::string ModelBuilder::stringArg(StringRef key, StringRef dflt) {
  const json::Value *v = kwarg(key);
  if (!v)
    return dflt.str();
  std::optional<StringRef> s = v->getAsString();
  if (!s) {
    error(where(key) + ": expected a string");
    return dflt.str();
  }
  return s->str();
}

SmallVector<int64_t> ModelBuilder::intListArg(StringRef key, size_t n) {
  SmallVector<int64_t> out;
  const json::Value *v = kwarg(key);
  const json::Array *a = v ? v->getAsArray() : nullptr;
  if (a && a->size() == n)
    for (const json::Value &e : *a)
      if (std::optional<int64_t> i = e.getAsInteger();
          i && *i > 0 && *i <= (int64_t(1) << 31))
        out.push_back(*i);
  if (out.size() != n) {
    error(where(key) + ": expected a list of " + Twine(n) +
          " positive integers");
    out.assign(n, 1);
  }
  return out;
}

bool ModelBuilder::boolCall(StringRef key, bool dflt) {
  const json::Value *v = config.call.get(key);
  if (!v || v->kind() == json::Value::Null)
    return dflt;
  std::optional<bool> r = v->getAsBoolean();
  if (!r) {
    error(config.path + ": call." + key + ": expected true or false");
    return dflt;
  }
  return *r;
}

} // namespace dat
