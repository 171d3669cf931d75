// Operators and functions of bytea with PostgreSQL 15's results and errors:
// byteacat (||), length and octet_length (bytes), and encode/decode in the
// hex, base64 and escape formats (src/backend/utils/adt/encode.c).
#include "executor/scalar/bytea_functions.hpp"

#include <strings.h>

#include "common/base64_digits.hpp"
#include "common/error.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar_functions.hpp"
#include "executor/types/type_io.hpp"

namespace tally::executor::scalar {
namespace {

constexpr size_t kBase64Line = 76;  // characters per line of encode(…, 'base64'), as PostgreSQL breaks them

const std::string& bytes_of(const Value& v) { return std::get<std::string>(v); }

enum class Format { hex, base64, escape };

Format format_named(const std::string& name) {
  if (strcasecmp(name.c_str(), "hex") == 0) return Format::hex;
  if (strcasecmp(name.c_str(), "base64") == 0) return Format::base64;
  if (strcasecmp(name.c_str(), "escape") == 0) return Format::escape;
  throw Error(SqlState::invalid_parameter_value, "unrecognized encoding: \"" + name + "\"");
}

// pg_base64_encode: a newline each time a line reaches 76 characters.
std::string base64_encode(std::string_view bytes) {
  std::string out;
  size_t line_start = 0;
  int pos = 2;
  uint32_t buf = 0;
  for (const char c : bytes) {
    buf |= static_cast<uint32_t>(static_cast<unsigned char>(c)) << (pos * 8);
    if (--pos < 0) {
      for (int shift = 18; shift >= 0; shift -= 6) out += kBase64Digits[(buf >> shift) & 0x3f];
      pos = 2;
      buf = 0;
    }
    if (out.size() - line_start >= kBase64Line) {
      out += '\n';
      line_start = out.size();
    }
  }
  if (pos != 2) {
    out += kBase64Digits[(buf >> 18) & 0x3f];
    out += kBase64Digits[(buf >> 12) & 0x3f];
    out += pos == 0 ? kBase64Digits[(buf >> 6) & 0x3f] : '=';
    out += '=';
  }
  return out;
}

// pg_base64_decode: whitespace skipped, '=' ends the data.
std::string base64_decode(std::string_view text) {
  std::string out;
  uint32_t buf = 0;
  int pos = 0, end = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    int b = 0;
    if (c == '=') {
      if (end == 0) {
        if (pos == 2) end = 1;
        else if (pos == 3) end = 2;
        else throw Error(SqlState::invalid_parameter_value, "unexpected \"=\" while decoding base64 sequence");
      }
    } else {
      b = base64_digit_value(c);
      if (b < 0) {
        // The whole UTF-8 character is named.
        size_t len = 1;
        while (i + len < text.size() && (static_cast<unsigned char>(text[i + len]) & 0xC0) == 0x80) ++len;
        throw Error(SqlState::invalid_parameter_value,
                    "invalid symbol \"" + std::string(text.substr(i, len)) + "\" found while decoding base64 sequence");
      }
    }
    buf = (buf << 6) + static_cast<uint32_t>(b);
    if (++pos == 4) {
      out += static_cast<char>((buf >> 16) & 0xff);
      if (end == 0 || end > 1) out += static_cast<char>((buf >> 8) & 0xff);
      if (end == 0 || end > 2) out += static_cast<char>(buf & 0xff);
      buf = 0;
      pos = 0;
    }
  }
  if (pos != 0) {
    throw Error(SqlState::invalid_parameter_value, "invalid base64 end sequence")
        .with_hint("Input data is missing padding, is truncated, or is otherwise corrupted.");
  }
  return out;
}

std::string encode(std::string_view bytes, Format format) {
  std::string out;
  switch (format) {
    case Format::hex:
      types::append_bytea(out, bytes);
      out.erase(0, 2);  // encode's hex has no \x
      return out;
    case Format::base64: return base64_encode(bytes);
    case Format::escape: types::append_bytea_escape(out, bytes); return out;
  }
  return out;
}

std::string decode(std::string_view text, Format format) {
  switch (format) {
    case Format::hex: return types::parse_bytea("\\x" + std::string(text));
    case Format::base64: return base64_decode(text);
    case Format::escape: return types::parse_bytea_escape(text);
  }
  return {};
}

}  // namespace

ExprPtr make_bytea_operator(const std::string& op, ExprPtr& left, ExprPtr& right, BindContext& context) {
  if (op != "||") return nullptr;
  const TypeId l = left->type.id, r = right->type.id;
  if (!((l == TypeId::bytea && (r == TypeId::bytea || r == TypeId::unknown)) ||
        (r == TypeId::bytea && l == TypeId::unknown))) {
    return nullptr;
  }
  left = to_type(std::move(left), TypeId::bytea, context);
  right = to_type(std::move(right), TypeId::bytea, context);
  return call({TypeId::bytea}, "byteacat", pack(std::move(left), std::move(right)),
              [](std::span<const Value> a) -> Value { return bytes_of(a[0]) + bytes_of(a[1]); });
}

ExprPtr make_bytea_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  const size_t n = args.size();
  if ((name == "length" || name == "octet_length" || name == "bit_length") && n == 1 &&
      args[0]->type.id == TypeId::bytea) {
    const int64_t unit = name == "bit_length" ? 8 : 1;
    return call({TypeId::int4}, name, std::move(args), [unit](std::span<const Value> a) -> Value {
      return static_cast<int64_t>(bytes_of(a[0]).size()) * unit;
    });
  }
  if (name == "encode" && n == 2) {
    args[0] = to_type(std::move(args[0]), TypeId::bytea, context);
    args[1] = to_type(std::move(args[1]), TypeId::text, context);
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return encode(bytes_of(a[0]), format_named(bytes_of(a[1])));
    });
  }
  if (name == "decode" && n == 2) {
    for (auto& a : args) a = to_type(std::move(a), TypeId::text, context);
    return call({TypeId::bytea}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return decode(bytes_of(a[0]), format_named(bytes_of(a[1])));
    });
  }
  return nullptr;
}

}  // namespace tally::executor::scalar
