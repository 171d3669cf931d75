#include "executor/result_set.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "common/error.hpp"
#include "executor/cpu/worker_pool.hpp"
#include "executor/finalize.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor {

protocol::FieldDescription describe_column(const std::string& name, SqlType type) {
  protocol::FieldDescription field;
  field.name = name;
  field.type_oid = type_oid(type.id == TypeId::unknown ? TypeId::text : type.id);
  field.type_size = type_len(type.id == TypeId::unknown ? TypeId::text : type.id);
  field.type_modifier = type.typmod;
  return field;
}

std::vector<protocol::Format> expand_formats(std::span<const protocol::Format> formats, size_t columns) {
  if (formats.empty()) return std::vector<protocol::Format>(columns, protocol::Format::text);
  if (formats.size() == 1) return std::vector<protocol::Format>(columns, formats[0]);
  if (formats.size() != columns) {
    throw Error(SqlState::protocol_violation,
                "bind message has " + std::to_string(formats.size()) + " result formats but query has " +
                    std::to_string(columns) + " columns");
  }
  return {formats.begin(), formats.end()};
}

namespace {

// Bytes appended between calls to data_rows_appended(), which the wire
// writer turns into one send(): 1 MB rather than 64 KB cut tallyd's CPU for
// a 10M-row scan by a fifth and its context switches by 44% (2-core VM,
// 2026-11-22, bench/cpu/RESULTS.md); still small enough to start sending early.
constexpr size_t kAppendBatchBytes = 1024 * 1024;

// How one column's fields are written. Integers and booleans (text and
// binary), floats (binary) and text are written straight from the column;
// every other type goes through value_codec into a scratch string first.
enum class FieldCoder : uint8_t { int_text, int2_binary, int4_binary, int8_binary, bool_text, bool_binary,
                                  float4_binary, float8_binary, raw_text, numeric_text, numeric_binary,
                                  avg_text, avg_binary, generic_text, generic_binary };

FieldCoder coder_for(const Vector& v, protocol::Format format) {
  const bool binary = format == protocol::Format::binary;
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
size_t fixed_bound(FieldCoder c) {
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

// Numeric fields are written directly while they are in these bounds (every
// avg/sum result is); others go through value_codec.
constexpr int32_t kNumericFastMaxScale = 60;
constexpr size_t kNumericTextBound = 4 + 2 + kNumericFastMaxScale + 1;  // sign, point, digits
constexpr size_t kNumericBinaryBound = 4 + 8 + 2 * 12;                  // header + 12 base-10000 digits
const unsigned __int128 kNumericBinaryMaxMagnitude = static_cast<unsigned __int128>(1e34);

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
// are written tens of millions of times per large result (std::to_chars
// of int64 was 15% of tallyd's CPU returning 8M groups' sums).
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

unsigned __int128 magnitude(__int128 m) {
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

// The text of v / 10^scale with exactly `scale` fraction digits, for
// 0 <= scale <= 20. The 20 digits of v come from three independent 4/8-digit
// conversions (a loop of divisions by 100 is a 10-step dependency chain: it
// was 16% of tallyd's CPU returning 8M avg values, each 20 digits at scale
// 16), and are copied out in fixed 24-byte moves: the bytes written past the
// field's end stay inside its reserved bound (integer part <= 20 digits,
// '.', then 24 bytes: 46 of kNumericTextBound's 63) and are overwritten by
// what follows or cut when the buffer is trimmed.
inline char* write_scaled_uint(char* p, uint64_t v, int scale) {
  constexpr uint64_t kT8 = 100000000ULL, kT16 = kT8 * kT8;
  // avg of integers is at scale 16 (|avg| >= 1) or 20 (|avg| < 1): their
  // fraction digits are whole 4/8-digit conversions written in place, with
  // constant divisors (no staging buffer: the two unaligned 24-byte reloads
  // of freshly stored bytes below made this 17 ns a value, now 11 ns;
  // 8M avg values, 2-core VM, 2026-11-22).
  if (scale == 16) {
    const uint64_t frac = v % kT16;
    p = write_uint(p, v / kT16);
    *p++ = '.';
    write8(p, static_cast<uint32_t>(frac / kT8));
    write8(p + 8, static_cast<uint32_t>(frac % kT8));
    return p + 16;
  }
  if (scale == 20) {  // v < 2^64 < 10^20: "0." and 20 digits
    const uint64_t rest = v % kT16;
    std::memcpy(p, "0.", 2);
    write4(p + 2, static_cast<uint32_t>(v / kT16));
    write8(p + 6, static_cast<uint32_t>(rest / kT8));
    write8(p + 14, static_cast<uint32_t>(rest % kT8));
    return p + 22;
  }
  // d[4, 24): v zero-padded to 20 digits; zeros before (the "0" of 0.xxx at
  // scale 20) and after (what the fixed moves read past the digits).
  char d[52];
  constexpr uint64_t kTen8 = 100000000ULL, kTen16 = kTen8 * kTen8;
  const uint64_t rest = v % kTen16;
  std::memset(d, '0', 4);
  write4(d + 4, static_cast<uint32_t>(v / kTen16));  // <= 1844
  write8(d + 8, static_cast<uint32_t>(rest / kTen8));
  write8(d + 16, static_cast<uint32_t>(rest % kTen8));
  std::memset(d + 24, '0', 28);
  const int n = decimal_digits(v);
  const int int_digits = n > scale ? n - scale : 1;  // "0" when v < 10^scale
  std::memcpy(p, d + 24 - scale - int_digits, 24);
  p += int_digits;
  if (scale == 0) return p;
  *p++ = '.';
  std::memcpy(p, d + 24 - scale, 24);
  return p + scale;
}

// Numeric::append_to's text, written in place.
char* write_numeric_text(char* p, const Numeric& n) {
  const unsigned __int128 m = magnitude(n.mantissa);
  if (m <= UINT64_MAX && n.scale <= 20) {
    if (n.mantissa < 0) *p++ = '-';
    return write_scaled_uint(p, static_cast<uint64_t>(m), n.scale);
  }
  char digits[48];  // big-endian decimal digits of the magnitude
  int count;
  if (m <= UINT64_MAX) {
    count = static_cast<int>(write_uint(digits, static_cast<uint64_t>(m)) - digits);
  } else {
    // Above 64 bits: the high part, then the low 19 digits zero-padded.
    constexpr uint64_t kTen19 = 10000000000000000000ULL;
    const unsigned __int128 high = m / kTen19;
    const auto low = static_cast<uint64_t>(m % kTen19);
    char* q = high > UINT64_MAX ? std::to_chars(digits, digits + 20, static_cast<uint64_t>(high / kTen19)).ptr : digits;
    if (high > UINT64_MAX) {
      char block[20];
      const auto mid = static_cast<uint64_t>(high % kTen19);
      const int len = static_cast<int>(std::to_chars(block, block + 20, mid).ptr - block);
      std::memset(q, '0', static_cast<size_t>(19 - len));
      std::memcpy(q + 19 - len, block, static_cast<size_t>(len));
      q += 19;
    } else {
      q = std::to_chars(digits, digits + 20, static_cast<uint64_t>(high)).ptr;
    }
    char block[20];
    const int len = static_cast<int>(std::to_chars(block, block + 20, low).ptr - block);
    std::memset(q, '0', static_cast<size_t>(19 - len));
    std::memcpy(q + 19 - len, block, static_cast<size_t>(len));
    count = static_cast<int>(q + 19 - digits);
  }
  const int scale = n.scale;
  if (n.mantissa < 0) *p++ = '-';
  if (count <= scale) {  // 0.000ddd: at least one integer digit
    *p++ = '0';
    *p++ = '.';
    std::memset(p, '0', static_cast<size_t>(scale - count));
    p += scale - count;
    std::memcpy(p, digits, static_cast<size_t>(count));
    return p + count;
  }
  std::memcpy(p, digits, static_cast<size_t>(count - scale));
  p += count - scale;
  if (scale > 0) {
    *p++ = '.';
    std::memcpy(p, digits + count - scale, static_cast<size_t>(scale));
    p += scale;
  }
  return p;
}

// numeric_send: base-10000 digits aligned at the decimal point, leading and
// trailing zero digits stripped (value_codec's append_numeric_binary).
char* write_numeric_binary(char* p, const Numeric& n) {
  const int scale = n.scale;
  const int pad = (4 - scale % 4) % 4;  // fraction padded to whole base-10000 digits
  unsigned __int128 m = magnitude(n.mantissa);
  for (int i = 0; i < pad; ++i) m *= 10;
  uint16_t groups[16];  // little-endian
  int count = 0;
  while (m > UINT64_MAX) {
    groups[count++] = static_cast<uint16_t>(m % 10000);
    m /= 10000;
  }
  for (auto low = static_cast<uint64_t>(m); low != 0; low /= 10000) groups[count++] = static_cast<uint16_t>(low % 10000);
  int first = 0;  // least significant kept digit
  while (first < count && groups[first] == 0) ++first;
  const int ndigits = count - first;
  const int weight = ndigits == 0 ? 0 : -(scale + pad) / 4 + count - 1;
  char* const start = p;
  p = put_be32(p, static_cast<uint32_t>(8 + 2 * ndigits));
  p = put_be16(p, static_cast<uint16_t>(ndigits));
  p = put_be16(p, static_cast<uint16_t>(static_cast<int16_t>(weight)));
  p = put_be16(p, n.mantissa < 0 ? 0x4000 : 0x0000);
  p = put_be16(p, static_cast<uint16_t>(scale));
  for (int i = count - 1; i >= first; --i) p = put_be16(p, groups[i]);
  (void)start;
  return p;
}

bool numeric_fast(FieldCoder coder, const Numeric& n) {
  if (n.scale < 0 || n.scale > kNumericFastMaxScale) return false;
  return coder == FieldCoder::numeric_text || magnitude(n.mantissa) < kNumericBinaryMaxMagnitude;
}

struct ColumnCoder {
  const Vector* v;
  FieldCoder coder;
  std::string scratch;  // generic coders (and numerics out of bounds): this row's field
  bool use_scratch = false;
  Numeric avg;  // avg coders: this row's value, from the bound pass
};

// An AvgParts row's value (count > 0: NULL rows are marked in `nulls`).
inline Numeric avg_at(const Vector& v, size_t row) {
  return avg_of_int64(v.avg_parts->sum[row], v.avg_parts->counts()[row]);
}

// A growable byte buffer that, unlike std::string, does not zero what it
// grows into (encode_rows writes every byte it keeps): a helper's block of
// DataRows is written once, not zeroed first (zeroing the helpers' buffers
// was 4% of tallyd's CPU returning 8M rows of five aggregates).
class RawBuffer {
 public:
  size_t size() const { return size_; }
  char* data() { return data_.get(); }
  std::string_view view() const { return {data_.get(), size_}; }
  void clear() { size_ = 0; }
  void resize(size_t n) {
    if (n > capacity_) {
      const size_t capacity = std::max(n, capacity_ * 2);
      auto fresh = std::make_unique_for_overwrite<char[]>(capacity);
      if (size_ > 0) std::memcpy(fresh.get(), data_.get(), size_);
      data_ = std::move(fresh);
      capacity_ = capacity;
    }
    size_ = n;
  }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0, capacity_ = 0;
};

// Encodes rows [begin, end) as framed DataRow messages appended to `out` (a
// std::string or RawBuffer, grown as needed); calls `batch_done` every
// kAppendBatchBytes with `out` trimmed to what was written.
template <class Buffer, class BatchDone>
void encode_rows_generic(std::vector<ColumnCoder>& columns, size_t begin, size_t end, Buffer& out,
                         BatchDone batch_done) {
  const size_t ncols = columns.size();
  size_t fixed = 1 + 4 + 2;
  bool all_fixed = true;  // every field has a fixed bound: no per-row bound pass
  for (const auto& c : columns) {
    fixed += fixed_bound(c.coder);
    all_fixed &= c.coder < FieldCoder::raw_text;
  }
  size_t pos = out.size();
  size_t batch_start = pos;
  // The buffer is grown ahead of what is written: whatever ends this loop
  // (an encoding error included) must leave only whole messages in it.
  struct Trim {
    Buffer& out;
    size_t& pos;
    ~Trim() { out.resize(pos); }
  } trim{out, pos};
  for (size_t row = begin; row < end; ++row) {
    size_t bound = fixed;
    for (auto& c : columns) {
      if (all_fixed) break;
      if (c.coder < FieldCoder::raw_text || c.v->null_at(row)) continue;
      if (c.coder == FieldCoder::raw_text) { bound += c.v->texts[row].size(); continue; }
      if (c.coder == FieldCoder::avg_text || c.coder == FieldCoder::avg_binary) {
        c.avg = avg_at(*c.v, row);
        const FieldCoder as = c.coder == FieldCoder::avg_text ? FieldCoder::numeric_text : FieldCoder::numeric_binary;
        c.use_scratch = !numeric_fast(as, c.avg);
        if (!c.use_scratch) {
          bound += as == FieldCoder::numeric_text ? kNumericTextBound : kNumericBinaryBound;
          continue;
        }
        // Out of the direct writers' bounds (never for an avg of int2/int4
        // in practice): value_codec's text or binary of a one-value column.
        Vector one(c.v->type);
        one.numerics.push_back(c.avg);
        one.count = 1;
        c.scratch.clear();
        if (as == FieldCoder::numeric_text) append_text(c.scratch, one, 0);
        else append_binary(c.scratch, one, 0);
        bound += c.scratch.size();
        continue;
      }
      if (c.coder == FieldCoder::numeric_text || c.coder == FieldCoder::numeric_binary) {
        c.use_scratch = !numeric_fast(c.coder, c.v->numerics[row]);
        if (!c.use_scratch) {
          bound += c.coder == FieldCoder::numeric_text ? kNumericTextBound : kNumericBinaryBound;
          continue;
        }
      }
      c.scratch.clear();
      if (c.coder == FieldCoder::generic_text || c.coder == FieldCoder::numeric_text) append_text(c.scratch, *c.v, row);
      else append_binary(c.scratch, *c.v, row);
      bound += c.scratch.size();
    }
    // One resize per append batch (resizing zero-fills: grow once, not by doubling).
    if (out.size() < pos + bound) out.resize(pos + bound + (end - row > 1 ? kAppendBatchBytes : 0));
    char* const message = out.data() + pos;
    char* p = message + 5;
    p = put_be16(p, static_cast<uint16_t>(ncols));
    for (auto& c : columns) {
      const Vector& v = *c.v;
      if (v.null_at(row)) {
        p = put_be32(p, UINT32_MAX);  // -1: NULL
        continue;
      }
      if (c.coder < FieldCoder::raw_text) {
        p = write_fixed_field(p, c.coder, v.int_data(), v.floats.data(), row);
        continue;
      }
      switch (c.coder) {
        case FieldCoder::raw_text: {
          const std::string& s = v.texts[row];
          p = put_be32(p, static_cast<uint32_t>(s.size()));
          std::memcpy(p, s.data(), s.size());
          p += s.size();
          break;
        }
        case FieldCoder::avg_text:
        case FieldCoder::avg_binary:
        case FieldCoder::numeric_text:
        case FieldCoder::numeric_binary:
          if (!c.use_scratch) {
            // Within the direct writers' bounds (the bound pass decided).
            const bool avg = c.coder == FieldCoder::avg_text || c.coder == FieldCoder::avg_binary;
            const Numeric& n = avg ? c.avg : v.numerics[row];
            if (c.coder == FieldCoder::avg_binary || c.coder == FieldCoder::numeric_binary) {
              p = write_numeric_binary(p, n);
            } else {
              char* stop = write_numeric_text(p + 4, n);
              put_be32(p, static_cast<uint32_t>(stop - p - 4));
              p = stop;
            }
            break;
          }
          [[fallthrough]];  // the field the bound pass encoded into scratch
        case FieldCoder::generic_text:
        case FieldCoder::generic_binary:
          p = put_be32(p, static_cast<uint32_t>(c.scratch.size()));
          std::memcpy(p, c.scratch.data(), c.scratch.size());
          p += c.scratch.size();
          break;
        default:  // the fixed-width coders, written above
          break;
      }
    }
    message[0] = 'D';
    put_be32(message + 1, static_cast<uint32_t>(p - message - 1));
    pos = static_cast<size_t>(p - out.data());
    if (pos - batch_start >= kAppendBatchBytes) {
      out.resize(pos);
      batch_done();
      pos = batch_start = out.size();
    }
  }
}

// The lean row writer: results whose every field has a fixed bound
// (integers, booleans, binary floats) or is an avg left as int64 sums and
// counts (AvgParts) -- the shape of large GROUP BY results. One bound per
// row known up front (no per-row bound pass), the avg computed where it is
// written, and the column descriptors copied into a local array so that the
// byte stores into the message (char stores may alias anything) do not make
// the compiler reload every Vector's data pointer after each field: the
// generic writer above took ~70 ns a row for 8M rows of key, count, sum,
// min, max, avg (2-core VM, 2026-11-22, bench/cpu/RESULTS.md).
constexpr size_t kLeanMaxColumns = 32;

struct LeanColumn {
  FieldCoder coder;
  const int64_t* ints;    // integers and booleans; an avg's sums
  const int64_t* counts;  // an avg's counts
  const double* floats;
  const uint8_t* nulls;   // nullptr: no NULL in the column
};

bool lean_shape(const std::vector<ColumnCoder>& columns) {
  if (columns.size() > kLeanMaxColumns) return false;
  for (const ColumnCoder& c : columns) {
    if (c.coder >= FieldCoder::raw_text && c.coder != FieldCoder::avg_text && c.coder != FieldCoder::avg_binary) {
      return false;
    }
  }
  return true;
}

// An avg field out of the direct writers' bounds (never seen for an avg of
// int2/int4: its scale is at most 36 and its magnitude below 10^24), through
// value_codec; returns its bytes, length word included.
std::string avg_field_slow(const Vector& v, const Numeric& avg, bool binary) {
  Vector one(v.type);
  one.numerics.push_back(avg);
  one.count = 1;
  std::string value;
  if (binary) append_binary(value, one, 0);
  else append_text(value, one, 0);
  char length[4];
  put_be32(length, static_cast<uint32_t>(value.size()));
  value.insert(0, length, 4);
  return value;
}

// The text of an avg over groups of one or two rows at the scale
// avg_of_int64 chose, without the scaled mantissa: sum / 1 is the sum, and
// sum / 2 is the half of it ending in .5 or .0, exact at any scale >= 1
// (no rounding), followed by zeros. Most groups of a result with nearly as
// many groups as rows have one or two rows; this skips taking apart a
// 20-digit mantissa for each (8M groups over 10M rows).
constexpr int32_t kAvgExactMaxScale = 32;

inline char* write_exact_avg_text(char* p, int64_t sum, int64_t count, int32_t scale) {
  static constexpr char kZeros[kAvgExactMaxScale + 1] = "00000000000000000000000000000000";
  const uint64_t magnitude = sum < 0 ? 0 - static_cast<uint64_t>(sum) : static_cast<uint64_t>(sum);
  if (sum < 0) *p++ = '-';
  p = write_uint(p, count == 1 ? magnitude : magnitude / 2);
  if (scale == 0) return p;
  *p++ = '.';
  std::memcpy(p, kZeros, kAvgExactMaxScale);  // within the field's bound; the bytes past scale are overwritten
  if (count == 2 && (magnitude & 1) != 0) *p = '5';
  return p + scale;
}

template <class Buffer, class BatchDone>
void encode_rows_lean(const std::vector<ColumnCoder>& columns, size_t begin, size_t end, Buffer& out,
                      BatchDone batch_done) {
  LeanColumn cols[kLeanMaxColumns];
  const size_t ncols = columns.size();
  size_t bound = 1 + 4 + 2;
  for (size_t i = 0; i < ncols; ++i) {
    const Vector& v = *columns[i].v;
    const FieldCoder coder = columns[i].coder;
    cols[i] = LeanColumn{coder, v.int_data(), nullptr, v.floats.data(), v.nulls.empty() ? nullptr : v.nulls.data()};
    if (coder == FieldCoder::avg_text || coder == FieldCoder::avg_binary) {
      cols[i].ints = v.avg_parts->sum.data();
      cols[i].counts = v.avg_parts->counts();
      bound += coder == FieldCoder::avg_text ? kNumericTextBound : kNumericBinaryBound;
    } else {
      bound += fixed_bound(coder);
    }
  }
  size_t pos = out.size();
  size_t batch_start = pos;
  struct Trim {
    Buffer& out;
    size_t& pos;
    ~Trim() { out.resize(pos); }
  } trim{out, pos};
  // Grown a batch (or the rows left) at a time: a std::string zero-fills
  // what it grows into, so a small result must not grow it by a megabyte.
  const size_t batch_rows = kAppendBatchBytes / bound + 1;
  for (size_t row = begin; row < end; ++row) {
    if (out.size() < pos + bound) out.resize(pos + bound * std::min(end - row, batch_rows));
    char* message = out.data() + pos;
    char* p = message + 5;
    p = put_be16(p, static_cast<uint16_t>(ncols));
    for (size_t i = 0; i < ncols; ++i) {
      const LeanColumn& c = cols[i];
      if (c.nulls != nullptr && c.nulls[row] != 0) {
        p = put_be32(p, UINT32_MAX);  // -1: NULL
        continue;
      }
      if (c.coder < FieldCoder::raw_text) {
        p = write_fixed_field(p, c.coder, c.ints, c.floats, row);
        continue;
      }
      // The rest are avg_text and avg_binary (lean_shape admits nothing else).
      const int64_t sum = c.ints[row], count = c.counts[row];
      const Numeric avg = avg_of_int64(sum, count);
      const bool binary = c.coder == FieldCoder::avg_binary;
      if (!binary && avg.scale <= kAvgExactMaxScale && (count == 1 || (count == 2 && avg.scale >= 1))) {
        char* stop = write_exact_avg_text(p + 4, sum, count, avg.scale);
        put_be32(p, static_cast<uint32_t>(stop - p - 4));
        p = stop;
        continue;
      }
      if (numeric_fast(binary ? FieldCoder::numeric_binary : FieldCoder::numeric_text, avg)) {
        if (binary) {
          p = write_numeric_binary(p, avg);
        } else {
          char* stop = write_numeric_text(p + 4, avg);
          put_be32(p, static_cast<uint32_t>(stop - p - 4));
          p = stop;
        }
        continue;
      }
      // Longer than the bound this row reserved: grow, then go on at the same offsets.
      const std::string field = avg_field_slow(*columns[i].v, avg, binary);
      const size_t at = static_cast<size_t>(p - out.data());
      if (out.size() < at + field.size() + bound) out.resize(at + field.size() + bound);
      message = out.data() + pos;
      p = out.data() + at;
      std::memcpy(p, field.data(), field.size());
      p += field.size();
    }
    message[0] = 'D';
    put_be32(message + 1, static_cast<uint32_t>(p - message - 1));
    pos = static_cast<size_t>(p - out.data());
    if (pos - batch_start >= kAppendBatchBytes) {
      out.resize(pos);
      batch_done();
      pos = batch_start = out.size();
    }
  }
}

// Encodes rows [begin, end) as framed DataRow messages appended to `out`
// (lean or generic writer, byte for byte the same output).
template <class Buffer, class BatchDone>
void encode_rows(std::vector<ColumnCoder>& columns, size_t begin, size_t end, Buffer& out, BatchDone batch_done) {
  if (lean_shape(columns)) encode_rows_lean(columns, begin, end, out, batch_done);
  else encode_rows_generic(columns, begin, end, out, batch_done);
}

// Results of at least this many rows are encoded by several threads: the
// session's thread and helpers from the shared worker pool each encode whole
// blocks of rows into their own buffer, and the session's thread sends the
// blocks in row order. 16K rows: 65,536 GPU groups on the 16-core H100 host
// cost ~4 ms of single-threaded encoding and send, as much as the kernel.
constexpr size_t kParallelEncodeRows = size_t{1} << 14;
// Rows per block: at most 16K (~0.4-1.1 MB of DataRows for 2-6 columns, so
// the buffers in flight stay small and the hand-offs few), and small enough
// that every thread gets about four blocks, but no fewer than 2K rows (a
// hand-off costs a lock and a wake-up).
constexpr size_t kMaxEncodeBlockRows = size_t{1} << 14;
constexpr size_t kMinEncodeBlockRows = size_t{1} << 11;
constexpr size_t kBlocksPerThread = 4;
// How long a helper waits for a free slot before it leaves the job: sending
// a 1 MB block to a client that keeps up takes well under a millisecond,
// and a scheduling hiccup on a busy host must not send the helper away
// (the session's thread would then encode the rest alone).
constexpr std::chrono::milliseconds kHelperWindowWait{50};

// One parallel encoding, shared by the session's thread and its helpers.
// Block b is encoded by whoever claims it first (claims go in row order); a
// helper's block waits in slots[b % slots.size()] until the session's thread
// sends it. A helper claims a block only while its slot is free, so at most
// slots.size() blocks are buffered.
struct EncodeJob {
  std::vector<ColumnCoder> columns;  // copied by each helper (scratch strings are per thread)
  size_t begin = 0, end = 0, block_rows = 0, blocks = 0;
  std::mutex mutex;
  std::condition_variable changed;
  size_t next_block = 0;  // first block nobody has claimed
  size_t sent = 0;        // blocks the session's thread has sent
  int encoding = 0;       // helpers inside encode_rows (they read the result's columns)
  bool stop = false;      // the session's thread has left: claim nothing more
  struct Slot {
    RawBuffer bytes;
    size_t block = SIZE_MAX;  // the block whose bytes are ready; SIZE_MAX = free
    std::exception_ptr error;
  };
  std::vector<Slot> slots;

  std::pair<size_t, size_t> rows_of(size_t b) const {
    const size_t first = begin + b * block_rows;
    return {first, std::min(end, first + block_rows)};
  }

  // A pool task: claims and encodes blocks until none is left or the job stops.
  void help() {
    std::vector<ColumnCoder> mine;
    {
      std::lock_guard lock(mutex);
      if (stop) return;
      mine = columns;
    }
    while (true) {
      size_t b;
      {
        std::unique_lock lock(mutex);
        // A full window means the client reads slower than we encode: after
        // a while the helper gives its pool thread back (the session's
        // thread encodes what is left) rather than hold it for as long as
        // a slow client takes, while other sessions' results wait for helpers.
        const bool room = changed.wait_for(lock, kHelperWindowWait, [&] {
          return stop || next_block >= blocks || next_block < sent + slots.size();
        });
        if (!room || stop || next_block >= blocks) return;
        b = next_block++;
        ++encoding;
      }
      Slot& slot = slots[b % slots.size()];  // free: block b - slots.size() was sent
      slot.bytes.clear();
      try {
        const auto [first, last] = rows_of(b);
        encode_rows(mine, first, last, slot.bytes, [] {});
      } catch (...) {
        slot.error = std::current_exception();
      }
      {
        std::lock_guard lock(mutex);
        slot.block = b;
        --encoding;
      }
      changed.notify_all();
    }
  }
};

// encode_rows over [begin, end) with helpers from the worker pool; the
// calling thread sends every block in order (encoding those no helper has
// claimed yet itself), so the result is byte for byte what encode_rows writes.
void encode_rows_parallel(std::vector<ColumnCoder>& columns, size_t begin, size_t end, protocol::ResultWriter& writer) {
  cpu::WorkerPool& pool = cpu::WorkerPool::shared();
  const size_t rows = end - begin;
  const size_t threads = static_cast<size_t>(pool.workers()) + 1;
  auto job = std::make_shared<EncodeJob>();
  job->columns = columns;
  job->begin = begin;
  job->end = end;
  job->block_rows = std::clamp(rows / (threads * kBlocksPerThread), kMinEncodeBlockRows, kMaxEncodeBlockRows);
  job->blocks = (rows + job->block_rows - 1) / job->block_rows;
  const size_t helpers = std::min(threads - 1, job->blocks - 1);
  job->slots.resize(2 * helpers + 1);
  for (size_t h = 0; h < helpers; ++h) pool.submit([job] { job->help(); });
  // Whatever ends the loop (a send failing included), no helper reads the
  // result's columns after this function returns; helpers not yet started
  // find the job stopped.
  struct Stop {
    EncodeJob& job;
    ~Stop() {
      std::unique_lock lock(job.mutex);
      job.stop = true;
      job.changed.notify_all();
      job.changed.wait(lock, [&] { return job.encoding == 0; });
    }
  } stop{*job};
  RawBuffer own;
  for (size_t b = 0; b < job->blocks; ++b) {
    EncodeJob::Slot& slot = job->slots[b % job->slots.size()];
    bool claimed = false;
    while (true) {
      std::unique_lock lock(job->mutex);
      if (job->next_block == b) {  // nobody has it: straight into the writer's buffer
        job->next_block = b + 1;
        claimed = true;
        break;
      }
      if (slot.block == b) break;
      // A helper is still on block b: encode a later block into its slot
      // rather than wait (on two cores the helper and this thread take turns).
      if (job->next_block < job->blocks && job->next_block < job->sent + job->slots.size()) {
        const size_t later = job->next_block++;
        lock.unlock();
        EncodeJob::Slot& other = job->slots[later % job->slots.size()];
        other.bytes.clear();
        const auto [first, last] = job->rows_of(later);
        encode_rows(columns, first, last, other.bytes, [] {});
        lock.lock();
        other.block = later;
        continue;
      }
      job->changed.wait(lock, [&] {
        return slot.block == b || (job->next_block < job->blocks && job->next_block < job->sent + job->slots.size());
      });
    }
    if (claimed) {
      // Into this thread's own buffer, sent from there like a helper's
      // block: growing the writer's std::string zero-fills what it grows
      // into, a megabyte per append batch (a third of the memset in
      // tallyd's profile of 8M rows).
      const auto [first, last] = job->rows_of(b);
      own.clear();
      encode_rows(columns, first, last, own, [&] {
        writer.data_rows_encoded(own.view());
        own.clear();
      });
      if (own.size() > 0) writer.data_rows_encoded(own.view());
    } else {
      if (slot.error) std::rethrow_exception(slot.error);
      writer.data_rows_encoded(slot.bytes.view());  // sent from the block's buffer, not copied
      slot.bytes.clear();
    }
    {
      std::lock_guard lock(job->mutex);
      if (!claimed) slot.block = SIZE_MAX;
      job->sent = b + 1;
    }
    job->changed.notify_all();
  }
}

// Splits one framed DataRow message into field views (writers without a buffer).
void decode_fields(std::string_view message, std::vector<std::optional<std::string_view>>& fields) {
  const char* p = message.data() + 7;
  for (auto& f : fields) {
    uint32_t len;
    std::memcpy(&len, p, 4);
    len = __builtin_bswap32(len);
    p += 4;
    if (len == UINT32_MAX) {
      f = std::nullopt;
    } else {
      f = std::string_view(p, len);
      p += len;
    }
  }
}

}  // namespace

size_t stream_rows(const ResultSet& result, const std::vector<protocol::Format>& formats, size_t& position,
                   uint64_t max_rows, protocol::ResultWriter& out) {
  const size_t ncols = result.columns.size();
  size_t end = result.rows;
  if (max_rows > 0 && position + max_rows < end) end = position + static_cast<size_t>(max_rows);
  const size_t start = position;
  if (start >= end) {
    position = std::max(position, end);
    return 0;
  }
  std::vector<ColumnCoder> columns;
  columns.reserve(ncols);
  for (size_t c = 0; c < ncols; ++c) columns.push_back({&result.columns[c], coder_for(result.columns[c], formats[c]), {}, false, {}});
  if (std::string* buffer = out.data_row_buffer()) {
    // Fast path: DataRow messages straight into the writer's output.
    if (end - start >= kParallelEncodeRows && cpu::WorkerPool::shared().workers() > 0) {
      encode_rows_parallel(columns, start, end, out);
    } else {
      encode_rows(columns, start, end, *buffer, [&] { out.data_rows_appended(); });
    }
    out.data_rows_appended();
  } else {
    std::string message;
    std::vector<std::optional<std::string_view>> fields(ncols);
    for (size_t row = start; row < end; ++row) {
      message.clear();
      encode_rows(columns, row, row + 1, message, [] {});
      decode_fields(message, fields);
      out.data_row(fields);
    }
  }
  position = end;
  return end - start;
}

}  // namespace tally::executor
