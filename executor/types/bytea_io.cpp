// bytea text input and output as PostgreSQL 15's byteain/byteaout (with
// bytea_output 'hex', its default, or 'escape'), and the escape format
// encode/decode use.
#include "executor/types/bytea_output.hpp"
#include "executor/types/type_io.hpp"

namespace tally::types {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_hex_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

bool is_octal(char c, char high) { return c >= '0' && c <= high; }

// PostgreSQL's hex_decode: pairs of digits, whitespace skipped between pairs.
std::string decode_hex(std::string_view hex) {
  std::string out;
  out.reserve(hex.size() / 2);
  size_t i = 0;
  while (i < hex.size()) {
    if (is_hex_space(hex[i])) { ++i; continue; }
    const int high = hex_value(hex[i]);
    if (high < 0)
      throw Error(SqlState::invalid_parameter_value, "invalid hexadecimal digit: \"" + std::string(hex.substr(i, 1)) + "\"");
    if (i + 1 >= hex.size())
      throw Error(SqlState::invalid_parameter_value, "invalid hexadecimal data: odd number of digits");
    const int low = hex_value(hex[i + 1]);
    if (low < 0)
      throw Error(SqlState::invalid_parameter_value, "invalid hexadecimal digit: \"" + std::string(hex.substr(i + 1, 1)) + "\"");
    out += static_cast<char>((high << 4) | low);
    i += 2;
  }
  return out;
}

}  // namespace

std::string parse_bytea_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '\\') {
      out += text[i++];
      continue;
    }
    if (i + 3 < text.size() && is_octal(text[i + 1], '3') && is_octal(text[i + 2], '7') &&
        is_octal(text[i + 3], '7')) {
      out += static_cast<char>(((text[i + 1] - '0') << 6) | ((text[i + 2] - '0') << 3) | (text[i + 3] - '0'));
      i += 4;
    } else if (i + 1 < text.size() && text[i + 1] == '\\') {
      out += '\\';
      i += 2;
    } else {
      throw Error(SqlState::invalid_text_representation, "invalid input syntax for type bytea");
    }
  }
  return out;
}

std::string parse_bytea(std::string_view text) {
  if (text.size() >= 2 && text[0] == '\\' && text[1] == 'x') return decode_hex(text.substr(2));
  return parse_bytea_escape(text);
}

void append_bytea(std::string& out, std::string_view bytes) {
  out.reserve(out.size() + 2 + 2 * bytes.size());
  out += "\\x";
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out += kHexDigits[b >> 4];
    out += kHexDigits[b & 0xF];
  }
}

void append_bytea_escape(std::string& out, std::string_view bytes) {
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (b == '\\') {
      out += "\\\\";
    } else if (b == 0 || b >= 0x80) {
      out += '\\';
      out += static_cast<char>('0' + (b >> 6));
      out += static_cast<char>('0' + ((b >> 3) & 7));
      out += static_cast<char>('0' + (b & 7));
    } else {
      out += c;
    }
  }
}

std::string_view stored_string(TypeId type, std::string_view text, std::string& scratch) {
  if (type != TypeId::bytea) return text;
  scratch = parse_bytea(text);
  return scratch;
}

namespace {
thread_local ByteaOutput thread_bytea_output = ByteaOutput::hex;
}  // namespace

std::optional<ByteaOutput> bytea_output_named(std::string_view name) {
  if (name == "hex") return ByteaOutput::hex;
  if (name == "escape") return ByteaOutput::escape;
  return std::nullopt;
}

ByteaOutput current_bytea_output() { return thread_bytea_output; }

ByteaOutputScope::ByteaOutputScope(ByteaOutput output) : previous_(thread_bytea_output) {
  thread_bytea_output = output;
}

ByteaOutputScope::~ByteaOutputScope() { thread_bytea_output = previous_; }

void append_bytea_escape_output(std::string& out, std::string_view bytes) {
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b > 0x7e) {
      out += '\\';
      out += static_cast<char>('0' + (b >> 6));
      out += static_cast<char>('0' + ((b >> 3) & 7));
      out += static_cast<char>('0' + (b & 7));
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += c;
    }
  }
}

void append_bytea_out(std::string& out, std::string_view bytes) {
  if (thread_bytea_output == ByteaOutput::escape) append_bytea_escape_output(out, bytes);
  else append_bytea(out, bytes);
}

void append_stored_string(std::string& out, TypeId type, std::string_view bytes) {
  if (type == TypeId::bytea) append_bytea_out(out, bytes);
  else out += bytes;
}

}  // namespace tally::types
