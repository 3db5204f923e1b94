//===- SafeTensors.cpp - safetensors reader and writer --------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Support/SafeTensors.h"
#include "dat/Support/TinyJson.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dat {

namespace {
struct DTypeInfo {
  DType type;
  const char *name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F64, "F64", 8},   {DType::F32, "F32", 4}, {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2}, {DType::I64, "I64", 8}, {DType::I32, "I32", 4},
    {DType::I16, "I16", 2},   {DType::I8, "I8", 1},   {DType::U8, "U8", 1},
    {DType::Bool, "BOOL", 1}};

/// The largest header the reader accepts (the reference implementation's
/// limit): a bigger one is a corrupt or hostile file, not a model.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;
} // namespace

size_t dtypeSize(DType type) {
  for (const DTypeInfo &info : kDTypes)
    if (info.type == type)
      return info.size;
  return 0;
}

const char *dtypeName(DType type) {
  for (const DTypeInfo &info : kDTypes)
    if (info.type == type)
      return info.name;
  return "?";
}

bool parseDType(std::string_view name, DType &type) {
  for (const DTypeInfo &info : kDTypes)
    if (name == info.name) {
      type = info.type;
      return true;
    }
  return false;
}

int64_t TensorView::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

SafeTensorsFile::~SafeTensorsFile() {
  if (mapping_)
    munmap(mapping_, size_);
}

std::unique_ptr<SafeTensorsFile> SafeTensorsFile::open(const std::string &path,
                                                       std::string &error) {
  std::unique_ptr<SafeTensorsFile> file(new SafeTensorsFile());
  file->path_ = path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = path + ": cannot open: " + std::strerror(errno);
    return nullptr;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = path + ": not a regular file";
    ::close(fd);
    return nullptr;
  }
  file->size_ = static_cast<uint64_t>(st.st_size);
  if (file->size_ > 0) {
    void *map = mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      error = path + ": cannot map: " + std::strerror(errno);
      ::close(fd);
      return nullptr;
    }
    file->mapping_ = map;
    file->bytes_ = static_cast<const uint8_t *>(map);
  }
  ::close(fd);
  if (!file->parse(error))
    return nullptr;
  return file;
}

std::unique_ptr<SafeTensorsFile>
SafeTensorsFile::fromBuffer(std::string buffer, const std::string &displayName,
                            std::string &error) {
  std::unique_ptr<SafeTensorsFile> file(new SafeTensorsFile());
  file->path_ = displayName;
  file->owned_ = std::move(buffer);
  file->bytes_ = reinterpret_cast<const uint8_t *>(file->owned_.data());
  file->size_ = file->owned_.size();
  if (!file->parse(error))
    return nullptr;
  return file;
}

const TensorView *SafeTensorsFile::find(std::string_view name) const {
  for (const TensorView &t : tensors_)
    if (t.name == name)
      return &t;
  return nullptr;
}

static bool readU64(const json::Value &v, uint64_t &out) {
  if (v.kind != json::Value::Number || !v.isInteger || v.integer < 0)
    return false;
  out = static_cast<uint64_t>(v.integer);
  return true;
}

bool SafeTensorsFile::parse(std::string &error) {
  auto fail = [&](const std::string &what) {
    error = path_ + ": " + what;
    return false;
  };
  // A PyTorch checkpoint (torch.save: a zip archive, or a bare pickle
  // before PyTorch 1.6) is the likeliest wrong file: say how to convert it.
  // (Its first bytes can also be a safetensors header length, e.g. 0x280;
  // a safetensors header then starts with '{'.)
  bool jsonHeader = size_ > 8 && bytes_[8] == '{';
  bool zip = !jsonHeader && size_ >= 4 && bytes_[0] == 'P' &&
             bytes_[1] == 'K' && bytes_[2] == 3 && bytes_[3] == 4;
  bool pickle = !jsonHeader && size_ >= 2 && bytes_[0] == 0x80 &&
                bytes_[1] >= 2 && bytes_[1] <= 5;
  if (zip || pickle)
    return fail(std::string("this is a PyTorch checkpoint (torch.save, ") +
                (zip ? "a zip archive" : "a pickle") +
                "), not a safetensors file; convert it with: python3 -c "
                "\"import torch; from safetensors.torch import save_file; "
                "save_file(torch.load('IN.pt', map_location='cpu'), "
                "'OUT.safetensors')\" (a state_dict; for a module: "
                "save_file(model.state_dict(), 'OUT.safetensors'))");
  if (size_ < 8)
    return fail("too small for a safetensors file (" + std::to_string(size_) +
                " bytes; the header length alone takes 8)");
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = (headerLen << 8) | bytes_[i];
  if (headerLen > kMaxHeaderBytes)
    return fail("header length " + std::to_string(headerLen) +
                " exceeds the 100 MiB limit");
  if (headerLen > size_ - 8)
    return fail("header length " + std::to_string(headerLen) +
                " runs past the end of the file (" + std::to_string(size_) +
                " bytes)");
  std::string_view headerText(reinterpret_cast<const char *>(bytes_ + 8),
                              headerLen);
  json::Value header;
  std::string jsonError;
  if (!json::parse(headerText, header, jsonError))
    return fail("header is not valid JSON: " + jsonError);
  if (header.kind != json::Value::Object)
    return fail("header is not a JSON object");

  const uint8_t *data = bytes_ + 8 + headerLen;
  uint64_t dataSize = size_ - 8 - headerLen;
  for (const auto &[name, entry] : header.object) {
    std::string where = "tensor '" + name + "': ";
    if (name == "__metadata__") {
      if (entry.kind != json::Value::Object)
        return fail("__metadata__ is not an object");
      for (const auto &[key, value] : entry.object) {
        if (value.kind != json::Value::String)
          return fail("__metadata__ entry '" + key + "' is not a string");
        metadata_[key] = value.string;
      }
      continue;
    }
    if (entry.kind != json::Value::Object)
      return fail(where + "entry is not an object");
    for (const TensorView &t : tensors_)
      if (t.name == name)
        return fail(where + "appears twice in the header");
    TensorView view;
    view.name = name;
    const json::Value *dtype = entry.get("dtype");
    if (!dtype || dtype->kind != json::Value::String)
      return fail(where + "missing string 'dtype'");
    if (!parseDType(dtype->string, view.dtype))
      return fail(where + "unsupported dtype '" + dtype->string + "'");
    const json::Value *shape = entry.get("shape");
    if (!shape || shape->kind != json::Value::Array)
      return fail(where + "missing array 'shape'");
    uint64_t elements = 1;
    bool overflow = false;
    for (const json::Value &d : shape->array) {
      uint64_t dim;
      if (!readU64(d, dim))
        return fail(where + "shape entries must be non-negative integers");
      view.shape.push_back(static_cast<int64_t>(dim));
      if (dim != 0 && elements > (uint64_t(1) << 62) / dim)
        overflow = true;
      elements *= dim;
    }
    const json::Value *offsets = entry.get("data_offsets");
    if (!offsets || offsets->kind != json::Value::Array ||
        offsets->array.size() != 2 || !readU64(offsets->array[0], view.begin) ||
        !readU64(offsets->array[1], view.end))
      return fail(where + "'data_offsets' must be two non-negative integers");
    for (const auto &member : entry.object)
      if (member.first != "dtype" && member.first != "shape" &&
          member.first != "data_offsets")
        return fail(where + "unexpected field '" + member.first + "'");
    if (view.begin > view.end)
      return fail(where + "data_offsets [" + std::to_string(view.begin) + ", " +
                  std::to_string(view.end) + "] are reversed");
    if (view.end > dataSize)
      return fail(where + "data_offsets [" + std::to_string(view.begin) + ", " +
                  std::to_string(view.end) + "] run past the data section (" +
                  std::to_string(dataSize) + " bytes)");
    uint64_t expected = elements * dtypeSize(view.dtype);
    if (overflow || view.end - view.begin != expected)
      return fail(
          where + "holds " + std::to_string(view.end - view.begin) +
          " bytes, but dtype " + dtypeName(view.dtype) + " and shape " +
          (overflow ? "(too large)" : "need " + std::to_string(expected)) +
          (overflow ? "" : " bytes"));
    view.data = data + view.begin;
    tensors_.push_back(std::move(view));
  }

  // The tensors must tile the data section: sorted by offset, each starts
  // where the previous one ended, and the last ends at the end of the file.
  std::vector<const TensorView *> byOffset;
  for (const TensorView &t : tensors_)
    byOffset.push_back(&t);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const TensorView *a, const TensorView *b) {
              return a->begin != b->begin ? a->begin < b->begin
                                          : a->end < b->end;
            });
  uint64_t cursor = 0;
  for (const TensorView *t : byOffset) {
    if (t->begin < cursor)
      return fail("tensor '" + t->name + "' overlaps the previous tensor (" +
                  "starts at " + std::to_string(t->begin) + ", before " +
                  std::to_string(cursor) + ")");
    if (t->begin > cursor)
      return fail("hole in the data section before tensor '" + t->name +
                  "' (bytes " + std::to_string(cursor) + " to " +
                  std::to_string(t->begin) + " belong to no tensor)");
    cursor = t->end;
  }
  if (cursor != dataSize)
    return fail("data section has " + std::to_string(dataSize - cursor) +
                " trailing bytes that belong to no tensor");
  return true;
}

static void appendJsonString(std::string &out, const std::string &s) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  out += '"';
}

bool writeSafeTensors(const std::string &path,
                      const std::vector<TensorToWrite> &tensors,
                      const std::map<std::string, std::string> &metadata,
                      std::string &error) {
  std::vector<const TensorToWrite *> sorted;
  for (const TensorToWrite &t : tensors)
    sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(),
            [](auto *a, auto *b) { return a->name < b->name; });

  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto &[key, value] : metadata) {
      if (!first)
        header += ',';
      first = false;
      appendJsonString(header, key);
      header += ':';
      appendJsonString(header, value);
    }
    header += '}';
  }
  uint64_t offset = 0;
  for (const TensorToWrite *t : sorted) {
    uint64_t bytes = dtypeSize(t->dtype);
    for (int64_t d : t->shape)
      bytes *= static_cast<uint64_t>(d);
    if (header.size() > 1)
      header += ',';
    appendJsonString(header, t->name);
    header += ":{\"dtype\":\"";
    header += dtypeName(t->dtype);
    header += "\",\"shape\":[";
    for (size_t i = 0; i < t->shape.size(); ++i)
      header += (i ? "," : "") + std::to_string(t->shape[i]);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += '}';
  while (header.size() % 8)
    header += ' ';

  std::string tmp = path + ".tmp." + std::to_string(getpid());
  FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    error = path + ": cannot write: " + std::strerror(errno);
    return false;
  }
  uint8_t len[8];
  for (int i = 0; i < 8; ++i)
    len[i] = static_cast<uint8_t>(uint64_t(header.size()) >> (8 * i));
  bool ok = std::fwrite(len, 1, 8, f) == 8 &&
            std::fwrite(header.data(), 1, header.size(), f) == header.size();
  for (const TensorToWrite *t : sorted) {
    uint64_t bytes = dtypeSize(t->dtype);
    for (int64_t d : t->shape)
      bytes *= static_cast<uint64_t>(d);
    ok = ok && (bytes == 0 || std::fwrite(t->data, 1, bytes, f) == bytes);
  }
  ok = (std::fclose(f) == 0) && ok;
  if (ok && std::rename(tmp.c_str(), path.c_str()) == 0)
    return true;
  error = path + ": cannot write: " + std::strerror(errno);
  std::remove(tmp.c_str());
  return false;
}

} // namespace dat
