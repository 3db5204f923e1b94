//===- Weights.cpp - where a model's parameters come from -----------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Frontend/Weights.h"
#include "dat/Support/BFloat16.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace llvm;

namespace dat {

Expected<std::unique_ptr<WeightSource>> WeightSource::open(StringRef path) {
  std::string error;
  std::unique_ptr<WeightSource> source(new WeightSource());
  source->file_ = SafeTensorsFile::open(path.str(), error);
  if (!source->file_)
    return createStringError("%s", error.c_str());
  auto it = source->file_->metadata().find("tied");
  if (it != source->file_->metadata().end()) {
    Expected<json::Value> tied = json::parse(it->second);
    const json::Array *groups = tied ? tied->getAsArray() : nullptr;
    if (!groups) {
      if (!tied)
        consumeError(tied.takeError());
      return createStringError(
          "%s: __metadata__.tied must be a JSON list of lists of keys",
          path.str().c_str());
    }
    for (const json::Value &g : *groups) {
      const json::Array *group = g.getAsArray();
      if (!group)
        return createStringError(
            "%s: __metadata__.tied must be a JSON list of lists of keys",
            path.str().c_str());
      std::vector<std::string> names;
      for (const json::Value &n : *group)
        if (std::optional<StringRef> s = n.getAsString())
          names.push_back(s->str());
      for (size_t i = 1; i < names.size(); ++i)
        source->addAlias(names[i], names[0]);
    }
  }
  return source;
}

std::unique_ptr<WeightSource> WeightSource::random(uint64_t seed) {
  std::unique_ptr<WeightSource> source(new WeightSource());
  source->seed_ = seed;
  return source;
}

std::string WeightSource::describe() const {
  return file_ ? file_->path()
               : "random weights (seed " + std::to_string(seed_) + ")";
}

const TensorView *WeightSource::lookup(StringRef name) const {
  if (const TensorView *t = file_->find(name))
    return t;
  auto it = tied_.find(name.str());
  if (it != tied_.end())
    for (const std::string &alias : *it->second)
      if (const TensorView *t = file_->find(alias))
        return t;
  return nullptr;
}

void WeightSource::addAlias(StringRef alias, StringRef target) {
  auto groupOf = [&](StringRef name) -> TiedGroup & {
    TiedGroup &g = tied_[name.str()];
    if (!g)
      g = std::make_shared<std::vector<std::string>>(
          std::vector<std::string>{name.str()});
    return g;
  };
  TiedGroup a = groupOf(target), b = groupOf(alias);
  if (a == b)
    return;
  if (a->size() < b->size())
    std::swap(a, b);
  // Merge the smaller group into the larger one.
  for (const std::string &n : *b) {
    a->push_back(n);
    tied_[n] = a;
  }
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  return "[" +
         join(map_range(shape, [](int64_t d) { return std::to_string(d); }),
              ", ") +
         "]";
}

Error WeightSource::require(StringRef name, ArrayRef<int64_t> shape) {
  used_.insert(name.str());
  if (!file_)
    return Error::success();
  const TensorView *t = lookup(name);
  if (!t)
    return createStringError("%s: missing weight '%s' (expected float32 %s)",
                             file_->path().c_str(), name.str().c_str(),
                             shapeString(shape).c_str());
  // Checkpoints as they are saved: converted to float32 in `fill`.
  if (t->dtype != DType::F32 && t->dtype != DType::BF16 &&
      t->dtype != DType::F16 && t->dtype != DType::F64)
    return createStringError("%s: weight '%s' has dtype %s, expected a float "
                             "(F32, BF16, F16 or F64)",
                             file_->path().c_str(), name.str().c_str(),
                             dtypeName(t->dtype));
  if (ArrayRef<int64_t>(t->shape) != shape)
    return createStringError("%s: weight '%s' has shape %s, expected %s",
                             file_->path().c_str(), name.str().c_str(),
                             shapeString(t->shape).c_str(),
                             shapeString(shape).c_str());
  return Error::success();
}

std::vector<std::string> WeightSource::unusedKeys() const {
  std::vector<std::string> unused;
  if (!file_)
    return unused;
  for (const TensorView &t : file_->tensors()) {
    bool used = used_.count(t.name);
    auto it = tied_.find(t.name);
    if (!used && it != tied_.end())
      for (const std::string &alias : *it->second)
        used = used || used_.count(alias);
    if (!used)
      unused.push_back(t.name);
  }
  return unused;
}

/// IEEE binary16 bits as a float (subnormals, infinities and NaN kept).
static float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f,
           mant = h & 0x3ff;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -f : f;
  }
  uint32_t bits = exp == 31 ? sign | 0x7f800000 | (mant << 13)
                            : sign | ((exp + 112) << 23) | (mant << 13);
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Element `i` of a float tensor of `dtype`, as a float.
static float floatAt(DType dtype, const uint8_t *data, int64_t i) {
  switch (dtype) {
  case DType::F64: {
    double d;
    std::memcpy(&d, data + 8 * i, 8);
    return static_cast<float>(d);
  }
  case DType::F16:
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, data + 2 * i, 2);
    return dtype == DType::F16 ? halfToFloat(h) : bf16ToFloat(h);
  }
  default: {
    float f;
    std::memcpy(&f, data + 4 * i, 4);
    return f;
  }
  }
}

/// splitmix64: a tiny, well-mixed hash for seeded random weights.
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void WeightSource::addDerived(
    StringRef name, ArrayRef<int64_t> shape,
    std::vector<std::pair<std::string, std::vector<int64_t>>> deps,
    Derivation compute) {
  derived_[name.str()] = {std::move(deps), std::move(compute)};
}

void WeightSource::fill(StringRef name, ArrayRef<int64_t> shape,
                        float *out) const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  auto derived = derived_.find(name.str());
  if (derived != derived_.end()) {
    std::vector<std::vector<float>> storage;
    std::vector<const float *> inputs;
    for (const auto &[dep, depShape] : derived->second.deps) {
      int64_t m = 1;
      for (int64_t d : depShape)
        m *= d;
      storage.emplace_back(m);
      fill(dep, depShape, storage.back().data());
      inputs.push_back(storage.back().data());
    }
    derived->second.compute(inputs, out);
    return;
  }
  if (file_) {
    const TensorView *t = lookup(name);
    const uint8_t *bytes = static_cast<const uint8_t *>(t->data);
    for (int64_t i = 0; i < n; ++i)
      out[i] = floatAt(t->dtype, bytes, i);
    return;
  }
  // Like a fresh model: norm scales (1-D `.weight`/`.scale`) are 1, biases
  // 0, everything else N(0, 0.02²) by Box-Muller, a function of (seed,
  // name, index) only.
  if (shape.size() == 1 &&
      (name.ends_with(".weight") || name.ends_with(".scale") ||
       name.ends_with(".bias"))) {
    std::fill(out, out + n, name.ends_with(".bias") ? 0.0f : 1.0f);
    return;
  }
  uint64_t base = mix(seed_ ^ mix(llvm::xxh3_64bits(name)));
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = mix(base + static_cast<uint64_t>(i));
    double u1 = ((r >> 11) + 1) * 0x1.0p-53, u2 = (mix(r) >> 11) * 0x1.0p-53;
    out[i] = static_cast<float>(0.02 * std::sqrt(-2.0 * std::log(u1)) *
                                std::cos(6.283185307179586 * u2));
  }
}

} // namespace dat
