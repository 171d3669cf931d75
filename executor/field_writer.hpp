#pragma once
// How the executor writes one field of a DataRow: the coder chosen per column
// and format, the big-endian length words, and the inlined integer and
// fixed-width writers every row encoder shares.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "executor/value.hpp"
#include "common/query_handler.hpp"

namespace tally::executor::row_encoding {

// How one column's fields are written. Integers and booleans (text and
// binary), floats (binary) and text are written straight from the column;
// every other type goes through value_codec into a scratch string first.
enum class FieldCoder : uint8_t { int_text, int2_binary, int4_binary, int8_binary, bool_text, bool_binary,
                                  float4_binary, float8_binary, raw_text, numeric_text, numeric_binary,
                                  avg_text, avg_binary, generic_text, generic_binary };

inline FieldCoder coder_for(const Vector& v, tally::Format format) {
  const bool binary = format == tally::Format::binary;
  if (v.avg_parts) return binary ? FieldCoder::avg_binary : FieldCoder::avg_text;
  switch (v.type.id) {
    case TypeId::int2: return binary ? FieldCoder::int2_binary : FieldCoder::int_text;
    case TypeId::int4: return binary ? FieldCoder::int4_binary : FieldCoder::int_text;
    case TypeId::int8: return binary ? FieldCoder::int8_binary : FieldCoder::int_text;
    case TypeId::oid: return binary ? FieldCoder::generic_binary : FieldCoder::int_text;
    case TypeId::boolean: return binary ? FieldCoder::bool_binary : FieldCoder::bool_text;
    case TypeId::float4: return binary ? FieldCoder::float4_binary : FieldCoder::generic_text;
    case TypeId::float8: return binary ? FieldCoder::float8_binary : FieldCoder::generic_text;
    case TypeId::text:
    case TypeId::varchar: return FieldCoder::raw_text;  // send/recv of text is its bytes
    case TypeId::numeric: return binary ? FieldCoder::numeric_binary : FieldCoder::numeric_text;
    default: return binary ? FieldCoder::generic_binary : FieldCoder::generic_text;
  }
}

// Upper bound of a field's bytes (length word included) for the fixed coders.
inline size_t fixed_bound(FieldCoder c) {
  switch (c) {
    case FieldCoder::int_text: return 4 + 20;
    case FieldCoder::int2_binary: return 4 + 2;
    case FieldCoder::int4_binary: return 4 + 4;
    case FieldCoder::int8_binary: return 4 + 8;
    case FieldCoder::bool_text:
    case FieldCoder::bool_binary: return 4 + 1;
    case FieldCoder::float4_binary: return 4 + 4;
    case FieldCoder::float8_binary: return 4 + 8;
    default: return 4;  // variable part added per row
  }
}

inline char* put_be16(char* p, uint16_t v) {
  v = __builtin_bswap16(v);
  std::memcpy(p, &v, 2);
  return p + 2;
}
inline char* put_be32(char* p, uint32_t v) {
  v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
  return p + 4;
}
inline char* put_be64(char* p, uint64_t v) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
  return p + 8;
}

// Decimal digits of an unsigned 64-bit value (1 for 0).
inline int decimal_digits(uint64_t v) {
  int n = 1;
  while (v >= 10000) { v /= 10000; n += 4; }
  return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

constexpr char kDigitPairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// std::to_chars of an unsigned value, inlined: group keys, counts and sums
// are written tens of millions of times per large result, where the
// library call's overhead shows.
inline char* write_uint(char* p, uint64_t v) {
  const int n = decimal_digits(v);
  char* q = p + n;
  while (v >= 100) {
    const auto pair = static_cast<size_t>(v % 100) * 2;
    v /= 100;
    *--q = kDigitPairs[pair + 1];
    *--q = kDigitPairs[pair];
  }
  if (v >= 10) {
    *--q = kDigitPairs[v * 2 + 1];
    *--q = kDigitPairs[v * 2];
  } else {
    *--q = static_cast<char>('0' + v);
  }
  return p + n;
}

inline char* write_int(char* p, int64_t v) {
  if (v < 0) {
    *p++ = '-';
    return write_uint(p, 0 - static_cast<uint64_t>(v));
  }
  return write_uint(p, static_cast<uint64_t>(v));
}

// One non-NULL field of a fixed-width coder (those before raw_text: integer,
// boolean and binary float kinds), length word included, from its column's
// integer or float values; both row writers share it.
inline char* write_fixed_field(char* p, FieldCoder coder, const int64_t* ints, const double* floats, size_t row) {
  switch (coder) {
    case FieldCoder::int_text: {
      char* stop = write_int(p + 4, ints[row]);
      put_be32(p, static_cast<uint32_t>(stop - p - 4));
      return stop;
    }
    case FieldCoder::int2_binary: return put_be16(put_be32(p, 2), static_cast<uint16_t>(static_cast<int16_t>(ints[row])));
    case FieldCoder::int4_binary: return put_be32(put_be32(p, 4), static_cast<uint32_t>(static_cast<int32_t>(ints[row])));
    case FieldCoder::int8_binary: return put_be64(put_be32(p, 8), static_cast<uint64_t>(ints[row]));
    case FieldCoder::bool_text:
      p = put_be32(p, 1);
      *p++ = ints[row] ? 't' : 'f';
      return p;
    case FieldCoder::bool_binary:
      p = put_be32(p, 1);
      *p++ = ints[row] ? 1 : 0;
      return p;
    case FieldCoder::float4_binary: {
      const float f = static_cast<float>(floats[row]);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      return put_be32(put_be32(p, 4), bits);
    }
    case FieldCoder::float8_binary: {
      uint64_t bits;
      std::memcpy(&bits, &floats[row], 8);
      return put_be64(put_be32(p, 8), bits);
    }
    default: return p;  // not a fixed-width coder: callers never pass one
  }
}

inline unsigned __int128 magnitude(__int128 m) {
  return m < 0 ? -static_cast<unsigned __int128>(m) : static_cast<unsigned __int128>(m);
}

// Four and eight decimal digits of x (x < 10^4, x < 10^8), zero-padded.
inline void write4(char* q, uint32_t x) {
  std::memcpy(q, kDigitPairs + (x / 100) * 2, 2);
  std::memcpy(q + 2, kDigitPairs + (x % 100) * 2, 2);
}
inline void write8(char* q, uint32_t x) {
  write4(q, x / 10000);
  write4(q + 4, x % 10000);
}

}  // namespace tally::executor::row_encoding
