//===- Program.cpp - calling a compiled model from a program --------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "Program.h"
#include "ProgramMemory.h"

#include "dat/Runtime/ProgramABI.h"

#include "dat/Support/BFloat16.h"
#include "dat/Support/FiniteValues.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

namespace datrt {

const char *gProgram = "program";

void fail(const std::string &message) { throw Failure(message); }

int64_t Slot::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<int64_t> Slot::fileShape() const {
  return dat::weightFileShape(shape, permutation, referenceShape);
}

/// `src` (row-major, `fileShape`) transposed into `dst` so that dimension i
/// of the result is dimension perm[i] of the source.
static void transposeInto(uint8_t *dst, const uint8_t *src,
                          const std::vector<int64_t> &fileShape,
                          const std::vector<int64_t> &perm, size_t elt) {
  size_t rank = fileShape.size();
  std::vector<int64_t> srcStrides(rank, 1), shape(rank), strides(rank);
  for (size_t k = rank - 1; k-- > 0;)
    srcStrides[k] = srcStrides[k + 1] * fileShape[k + 1];
  int64_t n = 1;
  for (size_t i = 0; i < rank; ++i) {
    shape[i] = fileShape[perm[i]];
    strides[i] = srcStrides[perm[i]];
    n *= shape[i];
  }
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + i * elt, src + off * elt, elt);
    for (size_t k = rank; k-- > 0;) {
      off += strides[k];
      if (++idx[k] < shape[k])
        break;
      off -= strides[k] * shape[k];
      idx[k] = 0;
    }
  }
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

static std::vector<Slot> readSlots(const dat::json::Value *list, bool args) {
  if (!list)
    fail("corrupt manifest: a function without args or results");
  std::vector<Slot> slots;
  for (const dat::json::Value &v : list->array) {
    Slot s;
    s.name = v.get("name")->string;
    s.kind = Slot::Result;
    if (args) {
      const std::string &kind = v.get("kind")->string;
      s.kind = kind == "weight"  ? Slot::Weight
               : kind == "cache" ? Slot::Cache
                                 : Slot::Input;
    }
    if (const dat::json::Value *r = v.get("range")) {
      s.hasRange = true;
      s.lo = r->array[0].integer;
      s.hi = r->array[1].integer;
    }
    dat::parseDType(v.get("dtype")->string, s.dtype);
    for (const dat::json::Value &d : v.get("shape")->array)
      s.shape.push_back(d.integer);
    s.maxShape = s.shape;
    if (const dat::json::Value *dims = v.get("dims")) {
      for (const dat::json::Value &d : dims->array)
        s.dims.push_back(d.string);
      if (s.dims.size() != s.shape.size())
        fail("the program's manifest is corrupt: '" + s.name + "' has " +
             std::to_string(s.dims.size()) + " dims for rank " +
             std::to_string(s.shape.size()));
    }
    if (const dat::json::Value *p = v.get("permutation"))
      for (const dat::json::Value &d : p->array)
        s.permutation.push_back(d.integer);
    if (const dat::json::Value *r = v.get("reference_shape")) {
      for (const dat::json::Value &d : r->array)
        s.referenceShape.push_back(d.integer);
      int64_t n = 1;
      for (int64_t d : s.referenceShape)
        n *= d;
      if (s.permutation.size() != s.shape.size() || n != s.numElements())
        fail("the program's manifest is corrupt: weight '" + s.name +
             "' has a reference shape of " + std::to_string(n) +
             " elements for " + std::to_string(s.numElements()));
    }
    slots.push_back(std::move(s));
  }
  return slots;
}

/// A rank-r descriptor (3 + 2r words) of a contiguous row-major buffer.
static std::vector<int64_t> descriptor(const void *data,
                                       const std::vector<int64_t> &shape) {
  size_t r = shape.size();
  std::vector<int64_t> d(3 + 2 * r);
  d[0] = d[1] = reinterpret_cast<int64_t>(data);
  d[2] = 0;
  int64_t stride = 1;
  for (size_t i = r; i-- > 0;) {
    d[3 + i] = shape[i];
    d[3 + r + i] = stride;
    stride *= shape[i];
  }
  return d;
}

Call::Call(const dat::json::Value &section, void (*entry)(void **))
    : args(readSlots(section.get("args"), true)),
      results(readSlots(section.get("results"), false)), entry(entry),
      packed(std::make_shared<SharedWeights>()),
      inputCopies(std::make_shared<ArgumentCopies>()) {
  argDescs.resize(args.size());
  size_t words = 0;
  for (const Slot &s : results) {
    resultOffsets.push_back(words);
    words += 3 + 2 * s.shape.size();
  }
  resultDescs.resize(words);
}

void Call::bind(size_t i, const void *data) {
  size_t bytes = args[i].numElements() * dat::dtypeSize(args[i].dtype);
  bool weight = args[i].kind == Slot::Weight;
  const void *visible =
      weight ? visibleToProgram(data, bytes, packed->copies, data, true)
             : visibleToProgram(data, bytes, *inputCopies, &args[i], false);
  argDescs[i] = descriptor(visible, args[i].shape);
}

void checkValues(const Slot &s, const void *data, const std::string &what,
                 bool allowNonFinite, const std::string &nonFiniteHint) {
  if (s.hasRange && s.dtype == dat::DType::I64) {
    // Integer inputs index tables: one out of range would read outside
    // them, so it is an error here, not undefined behaviour later.
    const int64_t *v = static_cast<const int64_t *>(data);
    for (int64_t k = 0, n = s.numElements(); k < n; ++k)
      if (v[k] < s.lo || v[k] > s.hi)
        fail(what + " element " + std::to_string(k) + " is " +
             std::to_string(v[k]) + ", outside the accepted range [" +
             std::to_string(s.lo) + ", " + std::to_string(s.hi) + "]");
  }
  if (!allowNonFinite && s.kind == Slot::Input &&
      (s.dtype == dat::DType::F32 || s.dtype == dat::DType::BF16)) {
    // NaN/Inf inputs would come out as NaN outputs far from their cause.
    int64_t k = dat::firstNonFiniteOnThreads(s.dtype, data, s.numElements());
    if (k >= 0) {
      float v = dat::floatValues(s.dtype,
                                 static_cast<const uint8_t *>(data) +
                                     k * dat::dtypeSize(s.dtype),
                                 1)[0];
      fail(what + " element " + std::to_string(k) + " is " +
           (std::isnan(v) ? "NaN" : "infinite") + " (" + nonFiniteHint + ")");
    }
  }
}

void Call::bindChecked(size_t i, const dat::SafeTensorsFile &file,
                       const std::string &key, bool allowNonFinite) {
  const Slot &s = args[i];
  const dat::TensorView *t = file.find(key);
  if (!t)
    fail(file.path() + ": missing tensor '" + key + "' (" +
         dat::dtypeName(s.dtype) + " " + shapeString(s.shape) + ")");
  if (t->dtype != s.dtype || t->shape != s.fileShape())
    fail(file.path() + ": tensor '" + key + "' is " + dat::dtypeName(t->dtype) +
         " " + shapeString(t->shape) + ", the model was compiled for " +
         dat::dtypeName(s.dtype) + " " + shapeString(s.fileShape()));
  const void *data = t->data;
  size_t elt = dat::dtypeSize(s.dtype);
  if (reinterpret_cast<uintptr_t>(data) % elt != 0) {
    // The format does not align tensors (a writer that orders them by name
    // after a bool or bf16 tensor): such a tensor is read from an aligned
    // copy, made afresh at every bind (and dropped once a packed copy of it
    // is made, below).
    AlignedBytes &copy = packed->aligned[{file.path(), key}];
    const auto *bytes = static_cast<const uint8_t *>(data);
    copy.assign(bytes, bytes + s.numElements() * elt);
    data = copy.data();
  }
  checkValues(s, data, file.path() + ": tensor '" + key + "'", allowNonFinite,
              "pass --allow-nonfinite to run anyway");
  if (!s.permutation.empty()) {
    // Packed once, here: the program reads this weight transposed. Calls
    // that share their packing (forward and step) pack it once between them.
    AlignedBytes &copy = packed->packed[{file.path(), key}];
    if (copy.size() != s.numElements() * elt) {
      copy.assign(s.numElements() * elt, 0);
      transposeInto(copy.data(), static_cast<const uint8_t *>(data),
                    dat::weightFileShape(s.shape, s.permutation), s.permutation,
                    elt);
      packed->aligned.erase({file.path(), key});
    }
    bind(i, copy.data());
    return;
  }
  bind(i, data);
}

void Call::bindWeights(const dat::SafeTensorsFile &weights) {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].kind == Slot::Weight)
      bindChecked(i, weights, args[i].name);
}

void Call::run() {
  std::vector<void *> ptrs;
  if (!results.empty())
    ptrs.push_back(resultDescs.data());
  for (std::vector<int64_t> &d : argDescs) {
    if (d.empty())
      fail("internal error: an argument of the model is not bound");
    ptrs.push_back(d.data());
  }
  entry(ptrs.data());
  finishCall();
}

bool Call::isDynamic() const { return !dimMaxima().empty(); }

/// "[batch <= 3, seq <= 200, 64]": a slot's shape with its dynamic dims.
std::string dimsString(const Slot &s) {
  std::string out = "[";
  for (size_t d = 0; d < s.maxShape.size(); ++d) {
    out += d ? ", " : "";
    out += s.dimName(d).empty()
               ? std::to_string(s.maxShape[d])
               : s.dimName(d) + " <= " + std::to_string(s.maxShape[d]);
  }
  return out + "]";
}

void Call::shapeInputs(const std::vector<std::vector<int64_t>> &shapes,
                       const std::function<std::string(size_t)> &what) {
  std::map<std::string, int64_t> sizes;
  std::map<std::string, std::string> from; // the input that sized each
  for (size_t i = 0; i < args.size(); ++i) {
    const Slot &s = args[i];
    if (s.kind != Slot::Input || i >= shapes.size() || shapes[i].empty())
      continue;
    const std::vector<int64_t> &shape = shapes[i];
    bool fits = shape.size() == s.maxShape.size();
    for (size_t d = 0; fits && d < shape.size(); ++d)
      fits = s.dimName(d).empty() ? shape[d] == s.maxShape[d]
                                  : shape[d] >= 1 && shape[d] <= s.maxShape[d];
    if (!fits)
      fail(what(i) + " is " + shapeString(shape) +
           ", the model was compiled for " + dat::dtypeName(s.dtype) + " " +
           dimsString(s));
    for (size_t d = 0; d < shape.size(); ++d) {
      const std::string &name = s.dimName(d);
      if (name.empty())
        continue;
      auto [it, fresh] = sizes.insert({name, shape[d]});
      if (fresh)
        from[name] = what(i);
      else if (it->second != shape[d])
        fail(what(i) + " has " + name + " = " + std::to_string(shape[d]) +
             " (dimension " + std::to_string(d) + "), but " + from[name] +
             " has " + name + " = " + std::to_string(it->second));
    }
  }
  setDims(sizes);
}

std::map<std::string, int64_t> Call::dimMaxima() const {
  std::map<std::string, int64_t> maxima;
  for (const std::vector<Slot> *slots : {&args, &results})
    for (const Slot &s : *slots)
      for (size_t d = 0; d < s.dims.size(); ++d)
        if (!s.dimName(d).empty())
          maxima[s.dimName(d)] = s.maxShape[d];
  return maxima;
}

void Call::setDims(const std::map<std::string, int64_t> &sizes) {
  std::map<std::string, int64_t> maxima = dimMaxima();
  for (const auto &[name, size] : sizes) {
    auto it = maxima.find(name);
    if (it == maxima.end())
      fail("'" + name + "' is not a dynamic dimension of this program" +
           (maxima.empty() ? std::string(" (it has none)") : ""));
    if (size < 1 || size > it->second)
      fail("dimension '" + name + "' = " + std::to_string(size) +
           " is outside [1, " + std::to_string(it->second) + "]");
  }
  for (const auto &[name, max] : maxima)
    if (!sizes.count(name))
      fail("no size given for dynamic dimension '" + name + "'");
  for (std::vector<Slot> *slots : {&args, &results})
    for (Slot &s : *slots)
      for (size_t d = 0; d < s.dims.size(); ++d)
        if (!s.dimName(d).empty())
          s.shape[d] = sizes.at(s.dimName(d));
}

void Call::copyResult(size_t r, void *out) const {
  const Slot &s = results[r];
  size_t rank = s.shape.size();
  const int64_t *d = &resultDescs[resultOffsets[r]];
  // A dynamic result's sizes are the program's: they must be the ones its
  // inputs gave.
  for (size_t k = 0; s.isDynamic() && k < rank; ++k)
    if (d[3 + k] != s.shape[k])
      fail("internal error: output '" + s.name + "' came out with dimension " +
           std::to_string(k) + " of size " + std::to_string(d[3 + k]) +
           ", expected " + std::to_string(s.shape[k]));
  size_t elt = dat::dtypeSize(s.dtype);
  // The elements the view spans, read where the host can read them.
  int64_t span = d[2] + 1;
  for (size_t k = 0; k < rank; ++k)
    span += (s.shape[k] - 1) * d[3 + rank + k];
  if (s.numElements() == 0)
    return;
  const uint8_t *aligned = static_cast<const uint8_t *>(
      hostView(reinterpret_cast<const void *>(d[0]),
               reinterpret_cast<const void *>(d[1]), span * elt));
  const uint8_t *base = aligned + d[2] * elt;
  uint8_t *dst = static_cast<uint8_t *>(out);
  // The innermost dimensions the view lays out row-major (all of them, for
  // most results) are copied as one block per index of the others: one
  // memcpy where an element at a time took milliseconds for a few MB.
  size_t outer = rank;
  int64_t block = 1;
  while (outer > 0 &&
         (s.shape[outer - 1] == 1 || d[3 + rank + outer - 1] == block))
    block *= s.shape[--outer];
  std::vector<int64_t> idx(outer, 0);
  for (int64_t i = 0, n = s.numElements() / block; i < n; ++i) {
    int64_t off = 0;
    for (size_t k = 0; k < outer; ++k)
      off += idx[k] * d[3 + rank + k];
    std::memcpy(dst + i * block * elt, base + off * elt, block * elt);
    for (size_t k = outer; k-- > 0;)
      if (++idx[k] < s.shape[k])
        break;
      else
        idx[k] = 0;
  }
}

std::vector<float> Call::resultFloats(size_t r) const {
  const Slot &s = results[r];
  std::vector<uint8_t> bytes(s.numElements() * dat::dtypeSize(s.dtype));
  copyResult(r, bytes.data());
  return dat::floatValues(s.dtype, bytes.data(), s.numElements());
}

std::pair<void *, const void *> Call::resultBuffer(size_t r) const {
  const Slot &s = results[r];
  size_t rank = s.shape.size();
  const int64_t *d = &resultDescs[resultOffsets[r]];
  if (d[2] != 0 || d[0] == 0 || d[0] == 0xdeadbeef)
    return {nullptr, nullptr};
  int64_t stride = 1;
  for (size_t k = rank; k-- > 0;) {
    if (s.shape[k] != 1 && d[3 + rank + k] != stride)
      return {nullptr, nullptr};
    stride *= s.shape[k];
  }
  return {reinterpret_cast<void *>(d[0]), reinterpret_cast<const void *>(d[1])};
}

void Call::freeResults(const std::set<size_t> &keep) {
  std::set<int64_t> bound;
  for (const std::vector<int64_t> &d : argDescs)
    bound.insert(d[0]);
  // A result that is a constant (memref.get_global) carries MLIR's marker
  // 0xdeadbeef as its allocated pointer: not heap memory.
  std::set<int64_t> freed = {0, 0xdeadbeef};
  for (size_t r : keep)
    freed.insert(resultDescs[resultOffsets[r]]);
  for (size_t offset : resultOffsets) {
    int64_t allocated = resultDescs[offset];
    if (!bound.count(allocated) && freed.insert(allocated).second)
      freeProgramBuffer(reinterpret_cast<void *>(allocated));
  }
}

} // namespace datrt
