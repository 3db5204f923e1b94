//===- Program.h - calling a compiled model from a program ------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The pieces of a program's main shared by a plain run and generation: the
// manifest's slots, memref descriptors, and one compiled function's call
// (arguments bound to buffers, results copied out contiguously).
//
//===----------------------------------------------------------------------===//

#ifndef DAT_RUNTIME_CPU_PROGRAM_H
#define DAT_RUNTIME_CPU_PROGRAM_H

#include "dat/Support/SafeTensors.h"
#include "dat/Support/TinyJson.h"

#include "ProgramMemory.h"

#include <functional>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace datrt {

extern const char *gProgram;

/// Storage on 64-byte boundaries. The compiled code reads packed weights
/// with 64-byte vector loads; from a plain std::vector (glibc's large
/// blocks start 16 bytes past a page) every one of them spans two cache
/// lines.
template <typename T> struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};
  CacheLineAllocator() = default;
  template <typename U> CacheLineAllocator(const CacheLineAllocator<U> &) {}
  T *allocate(size_t n) {
    return static_cast<T *>(::operator new(n * sizeof(T), kAlignment));
  }
  void deallocate(T *p, size_t) { ::operator delete(p, kAlignment); }
  template <typename U> bool operator==(const CacheLineAllocator<U> &) const {
    return true;
  }
};
using AlignedBytes = std::vector<uint8_t, CacheLineAllocator<uint8_t>>;

/// An error the runtime reports to its caller: the program's main prints it
/// and exits 1; the C API (dat_program.h) returns it. Thrown only from host
/// code, never through the compiled model's frames.
class Failure : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};
[[noreturn]] void fail(const std::string &message);

struct Slot {
  enum Kind { Input, Weight, Cache, Result } kind = Input;
  std::string name;
  dat::DType dtype = dat::DType::F32;
  std::vector<int64_t> shape;
  bool hasRange = false;
  int64_t lo = 0, hi = 0;
  /// A packed weight: dimension i of `shape` is dimension permutation[i] of
  /// the tensor in the weights file (empty: the same layout).
  std::vector<int64_t> permutation;
  /// The weights file's shape where it is not the permutation's source
  /// (a blocked layout: that source is the file's tensor reshaped).
  std::vector<int64_t> referenceShape;
  /// Per dimension, the name of a dynamic one ("" static; empty: none);
  /// `shape` is then the current call's, `maxShape` the largest.
  std::vector<std::string> dims;
  std::vector<int64_t> maxShape;
  bool isDynamic() const { return !dims.empty(); }
  /// The name of dimension `d` if it is dynamic, else "".
  const std::string &dimName(size_t d) const {
    static const std::string none;
    return d < dims.size() ? dims[d] : none;
  }
  int64_t numElements() const;
  /// The shape the weights file holds.
  std::vector<int64_t> fileShape() const;
};

std::string shapeString(const std::vector<int64_t> &shape);
/// A slot's shape with its dynamic dimensions: "[batch <= 3, seq <= 200, 64]".
std::string dimsString(const Slot &s);

/// Checks the values of a buffer bound to slot `s` (`what` names it in
/// errors): integer inputs that index tables must be in the slot's range;
/// float inputs must be finite unless `allowNonFinite` (`nonFiniteHint` says
/// how to allow them).
void checkValues(const Slot &s, const void *data, const std::string &what,
                 bool allowNonFinite, const std::string &nonFiniteHint);

/// One compiled function (`forward` or `step`) and its call array.
class Call {
public:
  Call(const dat::json::Value &section, void (*entry)(void **));
  std::vector<Slot> args, results;

  /// Binds argument `i` to a contiguous row-major buffer.
  void bind(size_t i, const void *data);
  /// Binds every weight argument from `weights` (checked against the slots).
  void bindWeights(const dat::SafeTensorsFile &weights);
  /// Binds argument `i` to tensor `key` of `file`, checking dtype, shape and
  /// (for integer inputs that index tables) the accepted range.
  void bindChecked(size_t i, const dat::SafeTensorsFile &file,
                   const std::string &key, bool allowNonFinite = false);
  void run();
  /// Whether an argument or result has dynamic dimensions.
  bool isDynamic() const;
  /// Sizes the dynamic dimensions from the inputs' shapes (`shapes[i]` for
  /// input argument i; other entries and empty ones are ignored): static
  /// dimensions must match, dynamic ones lie in [1, max] and agree between
  /// inputs that share a name. `what(i)` names argument i in errors. Sets every
  /// slot's shape for the next calls.
  void shapeInputs(const std::vector<std::vector<int64_t>> &shapes,
                   const std::function<std::string(size_t)> &what);
  /// The dynamic dimensions by name, with their largest sizes.
  std::map<std::string, int64_t> dimMaxima() const;
  /// Sets every slot's dynamic dimensions from `sizes` (by name; each
  /// checked against its maximum, every one required) for the next calls.
  void setDims(const std::map<std::string, int64_t> &sizes);
  /// Shares `other`'s packed weights (a weight both read transposed is
  /// packed once): forward and step of one program.
  void sharePacking(const Call &other) { packed = other.packed; }
  /// Copies result `r` of the last run into `out` (contiguous).
  void copyResult(size_t r, void *out) const;
  /// Result `r` of the last run as floats (F32 or BF16 results).
  std::vector<float> resultFloats(size_t r) const;
  /// Frees the results of the last run that the callee allocated (results
  /// never alias a bound argument's buffer in the functions freed this way),
  /// but those in `keep`, which the caller now owns.
  void freeResults(const std::set<size_t> &keep = {});
  /// Result `r` of the last run where the program left it, if it is a
  /// contiguous row-major buffer of its own: the allocation to free it by
  /// and the data; {null, null} otherwise.
  std::pair<void *, const void *> resultBuffer(size_t r) const;

private:
  void (*entry)(void **);
  std::vector<std::vector<int64_t>> argDescs;
  /// What the calls of one program share about its weights: the packed
  /// copies of weights with a permutation, bound in their place, by (file,
  /// key), aligned copies of tensors a file stores unaligned (by file and
  /// key), and the weights' copies where the program reads them.
  struct SharedWeights {
    std::map<std::pair<std::string, std::string>, AlignedBytes> packed;
    std::map<std::pair<std::string, std::string>, AlignedBytes> aligned;
    ArgumentCopies copies;
  };
  std::shared_ptr<SharedWeights> packed;
  /// The inputs' copies where the program reads them, by slot.
  std::shared_ptr<ArgumentCopies> inputCopies;
  std::vector<int64_t> resultDescs;
  std::vector<size_t> resultOffsets;
};

/// A language model's decode step with its KV caches: one token per batch
/// row at a time, at positions 0, 1, ...; the caches start zeroed and each
/// step's updated caches become the next step's arguments.
class Decoder {
public:
  /// `stepSection` is the manifest's "step"; `stepFn` the compiled step.
  Decoder(const dat::json::Value &stepSection, void (*stepFn)(void **));
  Decoder(const Decoder &) = delete;
  Decoder &operator=(const Decoder &) = delete;
  ~Decoder();
  Call call;
  int64_t batch() const { return call.args[idxSlot].shape[0]; }
  int64_t vocab() const { return call.results[0].shape[2]; }
  /// Positions the caches hold (max_block_size).
  int64_t maxLength() const { return call.args[posSlot].hi + 1; }
  /// The next position a step fills.
  int64_t position() const { return pos; }
  const Slot &tokens() const { return call.args[idxSlot]; }
  const Slot &logits() const { return call.results[0]; }
  /// Zeroes the caches; the next step is at position 0.
  void reset();
  /// Runs `tokens[b]` (range-checked; `what` names them in errors) at the
  /// current position and copies the logits [B, vocab] (the dtype of
  /// `logits()`) into `out`.
  void step(const int64_t *tokens, void *out, const std::string &what);

private:
  /// Frees the caches the last step returned.
  void releaseResident();

  size_t idxSlot, posSlot;
  /// The caches before the first step (zeros), by argument; after it, the
  /// buffers the last step returned stay where the program left them (on
  /// the GPU, in device memory) and are the next step's arguments.
  std::vector<std::vector<uint8_t>> caches;
  /// (allocation, data) of the caches the last step returned, by argument.
  std::vector<std::pair<void *, const void *>> resident;
  std::vector<std::pair<size_t, size_t>> cacheArgs; // (result, argument)
  int64_t pos = 0;
};

/// The slot named `name` (a corrupt manifest lacks it: an error).
size_t findSlot(const std::vector<Slot> &slots, const char *name);

/// `--generate N`: greedy decoding from the prompt input.idx, with the KV
/// cache (`step`) or, with `full`, by repeated forward passes.
int generate(const dat::json::Value &manifest,
             const dat::SafeTensorsFile &weights,
             const dat::SafeTensorsFile &inputs, long count, bool full);

} // namespace datrt

#endif // DAT_RUNTIME_CPU_PROGRAM_H
