// Type-dispatching entry points over native values: text and binary output,
// text and binary input, and the names PostgreSQL's input errors use.
#include <bit>
#include <cstring>

#include "executor/types/time_zone.hpp"
#include "executor/types/timetz.hpp"
#include "executor/types/type_io.hpp"
#include "storage/numeric_slot.hpp"

namespace tally::types {
namespace {

template <class T>
T load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class T>
void store(void* p, T v) { std::memcpy(p, &v, sizeof v); }

template <class U>
void put_be(std::string& out, U v) {
  char buf[sizeof(U)];
  for (size_t k = 0; k < sizeof(U); ++k) buf[k] = static_cast<char>(v >> (8 * (sizeof(U) - 1 - k)));
  out.append(buf, sizeof buf);
}

template <class U>
U get_be(std::string_view bytes) {
  U v = 0;
  for (size_t k = 0; k < sizeof(U); ++k) v = static_cast<U>((v << 8) | static_cast<uint8_t>(bytes[k]));
  return v;
}

[[noreturn]] void not_fixed(SqlType type) {
  throw Error(SqlState::internal_error, "type " + format_type(type) + " has no fixed-width native value");
}

void check_size(std::string_view bytes, size_t want) {
  // PostgreSQL's pq_getmsg* family: short input is "insufficient data left in
  // message", trailing bytes "incorrect binary data format".
  if (bytes.size() < want) throw Error(SqlState::invalid_binary_representation, "insufficient data left in message");
  if (bytes.size() > want) throw Error(SqlState::invalid_binary_representation, "incorrect binary data format");
}

}  // namespace

std::string_view input_type_name(TypeId id) {
  switch (id) {
    case TypeId::boolean: return "boolean";
    case TypeId::int2: return "smallint";
    case TypeId::int4: return "integer";
    case TypeId::int8: return "bigint";
    case TypeId::float4: return "real";
    case TypeId::float8: return "double precision";
    case TypeId::numeric: return "numeric";
    case TypeId::date: return "date";
    case TypeId::timestamp: return "timestamp";
    case TypeId::timestamptz: return "timestamp with time zone";
    case TypeId::time: return "time";
    case TypeId::timetz: return "time with time zone";
    case TypeId::bytea: return "bytea";
    case TypeId::text: return "text";
    case TypeId::varchar: return "character varying";
    case TypeId::bpchar: return "character";
    case TypeId::oid: return "oid";
    default: return "unknown";
  }
}

void append_text_value(std::string& out, SqlType type, const void* value) {
  switch (type.id) {
    case TypeId::boolean: append_bool(out, load<uint8_t>(value) != 0); return;
    case TypeId::int2: append_int(out, load<int16_t>(value)); return;
    case TypeId::int4: append_int(out, load<int32_t>(value)); return;
    case TypeId::int8: append_int(out, load<int64_t>(value)); return;
    case TypeId::float4: append_float4(out, load<float>(value)); return;
    case TypeId::float8: append_float8(out, load<double>(value)); return;
    case TypeId::numeric: {
      const storage::StoredNumeric n = storage::load_numeric(type, value);
      append_numeric(out, n.mantissa, n.scale);
      return;
    }
    case TypeId::date: append_date(out, load<int32_t>(value)); return;
    case TypeId::timestamp: append_timestamp(out, load<int64_t>(value)); return;
    case TypeId::timestamptz: append_timestamptz(out, load<int64_t>(value)); return;
    case TypeId::time: append_time(out, load<int64_t>(value)); return;
    case TypeId::timetz: append_timetz(out, load<int64_t>(value)); return;
    case TypeId::oid: append_int(out, load<uint32_t>(value)); return;
    default: not_fixed(type);
  }
}

void append_binary_value(std::string& out, SqlType type, const void* value) {
  switch (type.id) {
    case TypeId::boolean: out += static_cast<char>(load<uint8_t>(value) != 0); return;
    case TypeId::int2: put_be(out, static_cast<uint16_t>(load<int16_t>(value))); return;
    case TypeId::int4:
    case TypeId::date: put_be(out, static_cast<uint32_t>(load<int32_t>(value))); return;
    case TypeId::oid: put_be(out, load<uint32_t>(value)); return;
    case TypeId::int8:
    case TypeId::timestamp:
    case TypeId::timestamptz:
    case TypeId::time: put_be(out, static_cast<uint64_t>(load<int64_t>(value))); return;
    case TypeId::timetz: send_timetz(out, load<int64_t>(value)); return;
    case TypeId::float4: put_be(out, std::bit_cast<uint32_t>(load<float>(value))); return;
    case TypeId::float8: put_be(out, std::bit_cast<uint64_t>(load<double>(value))); return;
    case TypeId::numeric: {
      const storage::StoredNumeric n = storage::load_numeric(type, value);
      send_numeric(out, n.mantissa, n.scale);
      return;
    }
    default: not_fixed(type);
  }
}

void parse_text_value(SqlType type, std::string_view text, void* out) {
  switch (type.id) {
    case TypeId::boolean: store<uint8_t>(out, parse_bool(text) ? 1 : 0); return;
    case TypeId::int2: store(out, parse_int2(text)); return;
    case TypeId::int4: store(out, parse_int4(text)); return;
    case TypeId::int8: store(out, parse_int8(text)); return;
    case TypeId::float4: store(out, parse_float4(text)); return;
    case TypeId::float8: store(out, parse_float8(text)); return;
    case TypeId::numeric:
      if (type.typmod < 4) {
        const NumericValue n = parse_numeric_any(text);
        storage::store_numeric(type, out, n.mantissa, n.scale);
      } else {
        storage::store_numeric(type, out, parse_numeric128(text, type.numeric_precision(), type.numeric_scale()),
                               type.numeric_scale());
      }
      return;
    case TypeId::date: store(out, parse_date(text)); return;
    case TypeId::timestamp: store(out, parse_timestamp(text)); return;
    case TypeId::timestamptz: store(out, parse_timestamptz(text)); return;
    case TypeId::time: store(out, parse_time(text, type.typmod)); return;
    case TypeId::timetz: store(out, parse_timetz(text, type.typmod)); return;
    default: not_fixed(type);
  }
}

void recv_binary_value(SqlType type, std::string_view bytes, void* out) {
  switch (type.id) {
    case TypeId::boolean:
      check_size(bytes, 1);
      store<uint8_t>(out, bytes[0] != 0);
      return;
    case TypeId::int2: check_size(bytes, 2); store(out, static_cast<int16_t>(get_be<uint16_t>(bytes))); return;
    case TypeId::int4: check_size(bytes, 4); store(out, static_cast<int32_t>(get_be<uint32_t>(bytes))); return;
    case TypeId::int8: check_size(bytes, 8); store(out, static_cast<int64_t>(get_be<uint64_t>(bytes))); return;
    case TypeId::float4: check_size(bytes, 4); store(out, std::bit_cast<float>(get_be<uint32_t>(bytes))); return;
    case TypeId::float8: check_size(bytes, 8); store(out, std::bit_cast<double>(get_be<uint64_t>(bytes))); return;
    case TypeId::date: {
      check_size(bytes, 4);
      const auto v = static_cast<int32_t>(get_be<uint32_t>(bytes));
      // date_recv: infinities pass, anything else must be a valid date.
      if (v != date_neg_infinity && v != date_pos_infinity && (v < -2451545 || v >= 2147483494 - 2451545))
        throw Error(SqlState::datetime_field_overflow, "date out of range");
      store(out, v);
      return;
    }
    case TypeId::timestamp:
    case TypeId::timestamptz: {
      check_size(bytes, 8);
      const auto v = static_cast<int64_t>(get_be<uint64_t>(bytes));
      if (v != timestamp_neg_infinity && v != timestamp_pos_infinity &&
          (v < -2451545LL * usecs_per_day || v >= (109203528LL - 2451545LL) * usecs_per_day))
        throw Error(SqlState::datetime_field_overflow, "timestamp out of range");
      store(out, v);
      return;
    }
    case TypeId::time: store(out, recv_time(bytes, type.typmod)); return;
    case TypeId::timetz: store(out, recv_timetz(bytes, type.typmod)); return;
    case TypeId::numeric: {
      const NumericValue n = recv_numeric_any(bytes);
      if (type.typmod < 4) {
        storage::store_numeric(type, out, n.mantissa, n.scale);
      } else {
        storage::store_numeric(type, out,
                               rescale_numeric128(n.mantissa, n.scale, type.numeric_precision(), type.numeric_scale()),
                               type.numeric_scale());
      }
      return;
    }
    default: not_fixed(type);
  }
}

int64_t recv_time(std::string_view bytes, int32_t typmod) {
  check_size(bytes, 8);
  const auto v = static_cast<int64_t>(get_be<uint64_t>(bytes));
  // time_recv: 0 .. 24:00:00, then the typmod's rounding.
  if (v < 0 || v > usecs_per_day) throw Error(SqlState::datetime_field_overflow, "time out of range");
  return round_time(v, typmod);
}

}  // namespace tally::types
