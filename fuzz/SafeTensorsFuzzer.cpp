//===- SafeTensorsFuzzer.cpp - fuzz the safetensors reader ----------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Any byte string is either rejected with a message or accepted as a file
// whose every tensor lies inside it with a consistent dtype, shape and size.
//
//===----------------------------------------------------------------------===//

#include "dat/Support/SafeTensors.h"

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  auto file = dat::SafeTensorsFile::fromBuffer(
      std::string(reinterpret_cast<const char *>(data), size), "fuzz", error);
  if (!file) {
    if (error.empty())
      std::abort(); // a rejection must say why
    return 0;
  }
  for (const dat::TensorView &t : file->tensors()) {
    // The byte size, saturating (a shape whose product overflows must have
    // been rejected, unless a dimension is 0).
    unsigned __int128 n = dat::dtypeSize(t.dtype);
    for (int64_t d : t.shape) {
      if (d < 0)
        std::abort();
      n *= static_cast<uint64_t>(d);
      if (n > (static_cast<unsigned __int128>(1) << 64))
        n = static_cast<unsigned __int128>(1) << 64;
    }
    if (n != t.numBytes())
      std::abort();
    // Touch the first and last byte: they must be inside the buffer.
    if (n) {
      volatile uint8_t first = static_cast<const uint8_t *>(t.data)[0];
      volatile uint8_t last = static_cast<const uint8_t *>(t.data)[n - 1];
      (void)first;
      (void)last;
    }
    if (file->find(t.name) == nullptr)
      std::abort();
  }
  return 0;
}
