//===- TinyJson.h - a small JSON parser without dependencies ----*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The generated programs parse safetensors headers and must not depend on
// LLVM, so they cannot use llvm::json. This parser covers all of JSON
// (RFC 8259), keeps integers exact, bounds nesting depth, and reports the
// byte offset of the first error. The compiler itself uses llvm::json.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_SUPPORT_TINYJSON_H
#define DAT_SUPPORT_TINYJSON_H

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dat::json {

struct Value {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  double number = 0;
  /// Set when the number is an integer that fits int64 exactly.
  bool isInteger = false;
  int64_t integer = 0;
  std::string string;
  std::vector<Value> array;
  /// Members in document order (duplicates kept; callers decide).
  std::vector<std::pair<std::string, Value>> object;

  const Value *get(std::string_view key) const;
};

/// Parses `text` as one JSON document. Returns false and sets `error` (with
/// the byte offset) on malformed input.
bool parse(std::string_view text, Value &out, std::string &error);

} // namespace dat::json

#endif // DAT_SUPPORT_TINYJSON_H
