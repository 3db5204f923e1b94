//===- SafeTensors.h - safetensors reader and writer ------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// A dependency-free (C++17 standard library only) reader and writer of the
// safetensors format, shared by the compiler (weights, golden data) and the
// generated programs (which must not depend on LLVM). The reader maps the
// file and validates the whole header before any tensor is used: offsets in
// range, sizes consistent with dtype and shape, tensors covering the data
// section exactly with no holes or overlaps, no duplicate names.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_SUPPORT_SAFETENSORS_H
#define DAT_SUPPORT_SAFETENSORS_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dat {

enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, Bool };

/// Bytes per element.
size_t dtypeSize(DType type);
/// The safetensors spelling ("F32", "I64", ...).
const char *dtypeName(DType type);
/// Parses a safetensors dtype spelling; false if unknown.
bool parseDType(std::string_view name, DType &type);

struct TensorView {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  /// Offsets into the data section, as in the header.
  uint64_t begin = 0, end = 0;
  /// Start of the tensor's bytes (little-endian, C order).
  const uint8_t *data = nullptr;

  int64_t numElements() const;
  uint64_t numBytes() const { return end - begin; }
};

class SafeTensorsFile {
public:
  /// Maps and validates `path`. On failure returns null and sets `error` to a
  /// message that names the file and, where there is one, the tensor.
  static std::unique_ptr<SafeTensorsFile> open(const std::string &path,
                                               std::string &error);
  /// Validates an in-memory file; `displayName` is used in messages.
  static std::unique_ptr<SafeTensorsFile>
  fromBuffer(std::string buffer, const std::string &displayName,
             std::string &error);

  ~SafeTensorsFile();
  SafeTensorsFile(const SafeTensorsFile &) = delete;
  SafeTensorsFile &operator=(const SafeTensorsFile &) = delete;

  /// Tensors in header order.
  const std::vector<TensorView> &tensors() const { return tensors_; }
  const TensorView *find(std::string_view name) const;
  const std::map<std::string, std::string> &metadata() const {
    return metadata_;
  }
  const std::string &path() const { return path_; }

private:
  SafeTensorsFile() = default;
  bool parse(std::string &error);

  std::string path_;
  const uint8_t *bytes_ = nullptr;
  uint64_t size_ = 0;
  void *mapping_ = nullptr; // mmap'ed region, or null for an owned buffer
  std::string owned_;
  std::vector<TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

struct TensorToWrite {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const void *data;
};

/// Writes `tensors` (sorted by name, as the reference tools do) to `path`
/// through a temporary file renamed into place, so a failure never leaves a
/// partial file behind. Returns false and sets `error` on failure.
bool writeSafeTensors(const std::string &path,
                      const std::vector<TensorToWrite> &tensors,
                      const std::map<std::string, std::string> &metadata,
                      std::string &error);

} // namespace dat

#endif // DAT_SUPPORT_SAFETENSORS_H
