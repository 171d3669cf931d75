#include "executor/result_set.hpp"

#include <charconv>
#include <cstring>

#include "common/error.hpp"
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

// Bytes appended between calls to data_rows_appended(): large enough that the
// writer's flush check is rare, small enough to start sending early.
constexpr size_t kAppendBatchBytes = 64 * 1024;

// How one column's fields are written. Integers and booleans (text and
// binary), floats (binary) and text are written straight from the column;
// every other type goes through value_codec into a scratch string first.
enum class FieldCoder : uint8_t { int_text, int2_binary, int4_binary, int8_binary, bool_text, bool_binary,
                                  float4_binary, float8_binary, raw_text, generic_text, generic_binary };

FieldCoder coder_for(const Vector& v, protocol::Format format) {
  const bool binary = format == protocol::Format::binary;
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

struct ColumnCoder {
  const Vector* v;
  FieldCoder coder;
  std::string scratch;  // generic coders: this row's field
};

// Encodes rows [begin, end) as framed DataRow messages appended to `out`
// (grown as needed); calls `batch_done` every kAppendBatchBytes with `out`
// trimmed to what was written.
template <class BatchDone>
void encode_rows(std::vector<ColumnCoder>& columns, size_t begin, size_t end, std::string& out, BatchDone batch_done) {
  const size_t ncols = columns.size();
  size_t fixed = 1 + 4 + 2;
  for (const auto& c : columns) fixed += fixed_bound(c.coder);
  size_t pos = out.size();
  size_t batch_start = pos;
  // The buffer is grown ahead of what is written: whatever ends this loop
  // (an encoding error included) must leave only whole messages in it.
  struct Trim {
    std::string& out;
    size_t& pos;
    ~Trim() { out.resize(pos); }
  } trim{out, pos};
  for (size_t row = begin; row < end; ++row) {
    size_t bound = fixed;
    for (auto& c : columns) {
      if (c.coder < FieldCoder::raw_text || c.v->null_at(row)) continue;
      if (c.coder == FieldCoder::raw_text) { bound += c.v->texts[row].size(); continue; }
      c.scratch.clear();
      if (c.coder == FieldCoder::generic_text) append_text(c.scratch, *c.v, row);
      else append_binary(c.scratch, *c.v, row);
      bound += c.scratch.size();
    }
    if (out.size() < pos + bound) out.resize(std::max(pos + bound, out.size() * 2 + 4096));
    char* const message = out.data() + pos;
    char* p = message + 5;
    p = put_be16(p, static_cast<uint16_t>(ncols));
    for (auto& c : columns) {
      const Vector& v = *c.v;
      if (v.null_at(row)) {
        p = put_be32(p, UINT32_MAX);  // -1: NULL
        continue;
      }
      switch (c.coder) {
        case FieldCoder::int_text: {
          char* digits = p + 4;
          char* stop = std::to_chars(digits, digits + 20, v.ints[row]).ptr;
          put_be32(p, static_cast<uint32_t>(stop - digits));
          p = stop;
          break;
        }
        case FieldCoder::int2_binary:
          p = put_be16(put_be32(p, 2), static_cast<uint16_t>(static_cast<int16_t>(v.ints[row])));
          break;
        case FieldCoder::int4_binary:
          p = put_be32(put_be32(p, 4), static_cast<uint32_t>(static_cast<int32_t>(v.ints[row])));
          break;
        case FieldCoder::int8_binary: p = put_be64(put_be32(p, 8), static_cast<uint64_t>(v.ints[row])); break;
        case FieldCoder::bool_text:
          p = put_be32(p, 1);
          *p++ = v.ints[row] ? 't' : 'f';
          break;
        case FieldCoder::bool_binary:
          p = put_be32(p, 1);
          *p++ = v.ints[row] ? 1 : 0;
          break;
        case FieldCoder::float4_binary: {
          const float f = static_cast<float>(v.floats[row]);
          uint32_t bits;
          std::memcpy(&bits, &f, 4);
          p = put_be32(put_be32(p, 4), bits);
          break;
        }
        case FieldCoder::float8_binary: {
          uint64_t bits;
          std::memcpy(&bits, &v.floats[row], 8);
          p = put_be64(put_be32(p, 8), bits);
          break;
        }
        case FieldCoder::raw_text: {
          const std::string& s = v.texts[row];
          p = put_be32(p, static_cast<uint32_t>(s.size()));
          std::memcpy(p, s.data(), s.size());
          p += s.size();
          break;
        }
        case FieldCoder::generic_text:
        case FieldCoder::generic_binary:
          p = put_be32(p, static_cast<uint32_t>(c.scratch.size()));
          std::memcpy(p, c.scratch.data(), c.scratch.size());
          p += c.scratch.size();
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
  for (size_t c = 0; c < ncols; ++c) columns.push_back({&result.columns[c], coder_for(result.columns[c], formats[c]), {}});
  if (std::string* buffer = out.data_row_buffer()) {
    // Fast path: DataRow messages straight into the writer's output.
    encode_rows(columns, start, end, *buffer, [&] { out.data_rows_appended(); });
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
