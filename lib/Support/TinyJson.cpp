//===- TinyJson.cpp - a small JSON parser without dependencies ------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Support/TinyJson.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace dat::json {

const Value *Value::get(std::string_view key) const {
  for (const auto &member : object)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

namespace {
constexpr int kMaxDepth = 64;

class Parser {
public:
  explicit Parser(std::string_view text) : text(text) {}

  bool document(Value &out, std::string &error) {
    skipSpace();
    bool ok = value(out, 0);
    if (ok) {
      skipSpace();
      if (pos != text.size())
        ok = fail("trailing characters");
    }
    if (!ok)
      error = message + " at byte " + std::to_string(pos);
    return ok;
  }

private:
  bool fail(const char *why) {
    if (message.empty())
      message = why;
    return false;
  }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool literal(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      return fail("invalid literal");
    pos += word.size();
    return true;
  }

  bool value(Value &out, int depth) {
    if (depth > kMaxDepth)
      return fail("nesting too deep");
    if (pos >= text.size())
      return fail("unexpected end of input");
    switch (text[pos]) {
    case '{':
      return objectValue(out, depth);
    case '[':
      return arrayValue(out, depth);
    case '"':
      out.kind = Value::String;
      return stringValue(out.string);
    case 't':
      out.kind = Value::Bool;
      out.boolean = true;
      return literal("true");
    case 'f':
      out.kind = Value::Bool;
      out.boolean = false;
      return literal("false");
    case 'n':
      out.kind = Value::Null;
      return literal("null");
    default:
      return numberValue(out);
    }
  }

  bool objectValue(Value &out, int depth) {
    out.kind = Value::Object;
    ++pos;
    skipSpace();
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '"')
        return fail("expected a string key");
      std::string key;
      if (!stringValue(key))
        return false;
      skipSpace();
      if (pos >= text.size() || text[pos] != ':')
        return fail("expected ':'");
      ++pos;
      skipSpace();
      Value member;
      if (!value(member, depth + 1))
        return false;
      out.object.emplace_back(std::move(key), std::move(member));
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  bool arrayValue(Value &out, int depth) {
    out.kind = Value::Array;
    ++pos;
    skipSpace();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      Value element;
      if (!value(element, depth + 1))
        return false;
      out.array.push_back(std::move(element));
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  bool hex4(uint32_t &code) {
    if (pos + 4 > text.size())
      return fail("truncated \\u escape");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos++];
      code <<= 4;
      if (c >= '0' && c <= '9')
        code |= c - '0';
      else if (c >= 'a' && c <= 'f')
        code |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        code |= c - 'A' + 10;
      else
        return fail("invalid \\u escape");
    }
    return true;
  }

  static void appendUtf8(std::string &s, uint32_t c) {
    if (c < 0x80) {
      s += char(c);
    } else if (c < 0x800) {
      s += char(0xC0 | (c >> 6));
      s += char(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      s += char(0xE0 | (c >> 12));
      s += char(0x80 | ((c >> 6) & 0x3F));
      s += char(0x80 | (c & 0x3F));
    } else {
      s += char(0xF0 | (c >> 18));
      s += char(0x80 | ((c >> 12) & 0x3F));
      s += char(0x80 | ((c >> 6) & 0x3F));
      s += char(0x80 | (c & 0x3F));
    }
  }

  bool stringValue(std::string &out) {
    ++pos; // opening quote
    while (pos < text.size()) {
      char c = text[pos++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= text.size())
        break;
      char e = text[pos++];
      switch (e) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t code;
        if (!hex4(code))
          return false;
        if (code >= 0xD800 && code < 0xDC00) {
          uint32_t low;
          if (text.substr(pos, 2) != "\\u" || (pos += 2, !hex4(low)) ||
              low < 0xDC00 || low >= 0xE000)
            return fail("unpaired surrogate in \\u escape");
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        } else if (code >= 0xDC00 && code < 0xE000) {
          return fail("unpaired surrogate in \\u escape");
        }
        appendUtf8(out, code);
        break;
      }
      default:
        return fail("invalid escape in string");
      }
    }
    return fail("unterminated string");
  }

  bool numberValue(Value &out) {
    size_t start = pos;
    if (pos < text.size() && text[pos] == '-')
      ++pos;
    auto digits = [&] {
      size_t s = pos;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
        ++pos;
      return pos - s;
    };
    if (pos >= text.size())
      return fail("expected a value");
    if (text[pos] == '0')
      ++pos;
    else if (digits() == 0)
      return fail("expected a value");
    bool integral = true;
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      integral = false;
      if (digits() == 0)
        return fail("expected digits after '.'");
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      ++pos;
      integral = false;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (digits() == 0)
        return fail("expected digits in exponent");
    }
    std::string token(text.substr(start, pos - start));
    out.kind = Value::Number;
    out.number = std::strtod(token.c_str(), nullptr);
    if (integral) {
      errno = 0;
      long long v = std::strtoll(token.c_str(), nullptr, 10);
      if (errno == 0) {
        out.isInteger = true;
        out.integer = v;
      }
    }
    return true;
  }

  std::string_view text;
  size_t pos = 0;
  std::string message;
};
} // namespace

bool parse(std::string_view text, Value &out, std::string &error) {
  out = Value();
  return Parser(text).document(out, error);
}

} // namespace dat::json
