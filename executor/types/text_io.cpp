// Character types: varchar(n)/char(n) length rules and UTF-8 validation, as
// PostgreSQL 15's varchar_input/bpchar_input and pg_verify_mbstr do them.
#include <cstdio>

#include "executor/types/type_io.hpp"

namespace tally::types {

size_t utf8_length(std::string_view text) {
  size_t n = 0;
  for (const char c : text) n += (static_cast<uint8_t>(c) & 0xC0) != 0x80;
  return n;
}

namespace {

// Byte offset just past the first `chars` UTF-8 characters of text.
size_t utf8_prefix_bytes(std::string_view text, size_t chars) {
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<uint8_t>(text[i]) & 0xC0) != 0x80) {
      if (seen == chars) return i;
      ++seen;
    }
  }
  return text.size();
}

[[noreturn]] void bad_byte_sequence(std::string_view text, size_t at, size_t len) {
  std::string bytes;
  char buf[8];
  for (size_t k = 0; k < len && at + k < text.size(); ++k) {
    std::snprintf(buf, sizeof buf, k == 0 ? "0x%02x" : " 0x%02x", static_cast<uint8_t>(text[at + k]));
    bytes += buf;
  }
  throw Error(SqlState::character_not_in_repertoire, "invalid byte sequence for encoding \"UTF8\": " + bytes);
}

}  // namespace

void check_utf8(std::string_view text) {
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    // Fast path: 8 ASCII bytes at a time.
    if (i + 8 <= n) {
      uint64_t word;
      __builtin_memcpy(&word, p + i, 8);
      if ((word & 0x8080808080808080ULL) == 0 &&
          ((word - 0x0101010101010101ULL) & ~word & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    const uint8_t c = p[i];
    if (c == 0) bad_byte_sequence(text, i, 1);
    if (c < 0x80) { ++i; continue; }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else bad_byte_sequence(text, i, 1);
    if (i + len > n) bad_byte_sequence(text, i, n - i);
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) bad_byte_sequence(text, i, len);
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      bad_byte_sequence(text, i, len);
    i += len;
  }
}

std::string_view coerce_char(SqlType type, std::string_view text, std::string& scratch, bool explicit_cast) {
  if (type.id != TypeId::varchar && type.id != TypeId::bpchar) return text;
  const int max_len = type.char_length();
  if (max_len < 0) return text;
  const size_t limit = static_cast<size_t>(max_len);
  // Byte length bounds the character count: only count when it matters.
  size_t chars = text.size() <= limit && type.id == TypeId::varchar ? text.size() : utf8_length(text);
  if (chars > limit) {
    const size_t cut = utf8_prefix_bytes(text, limit);
    if (!explicit_cast) {
      for (size_t k = cut; k < text.size(); ++k) {
        if (text[k] != ' ')
          throw Error(SqlState::string_data_right_truncation,
                      std::string("value too long for type ") +
                          (type.id == TypeId::varchar ? "character varying(" : "character(") +
                          std::to_string(max_len) + ")");
      }
    }
    text = text.substr(0, cut);
    chars = limit;
  }
  if (type.id == TypeId::varchar || chars == limit) return text;
  scratch.assign(text);
  scratch.append(limit - chars, ' ');
  return scratch;
}

}  // namespace tally::types
