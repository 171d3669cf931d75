#pragma once
// SQL types Tally stores and computes with, and their PostgreSQL 15 identities
// (type OIDs, typlen, typmod). Shared by storage, catalog, executor, gpu and
// the protocol's RowDescription, so that every layer agrees on one table.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tally {

enum class TypeId : uint8_t {
  boolean,
  int2,
  int4,
  int8,
  float4,
  float8,
  numeric,    // numeric(p,s): stored as int64 scaled by 10^s when p <= 18
  text,
  varchar,    // varchar(n): text with a length check
  bpchar,     // char(n): blank-padded text
  date,       // int32 days since 2000-01-01 (PostgreSQL's epoch)
  timestamp,  // int64 microseconds since 2000-01-01 00:00:00
  unknown,    // an untyped literal before coercion
  name,       // catalog type (pg_catalog queries)
  oid,        // catalog type
  regclass,   // catalog type
  regtype,    // catalog type
  char_,      // "char" (1 byte), catalog type
  int2vector, // catalog type
  oidvector,  // catalog type
  text_array, // text[] (catalog queries)
  timestamptz, // int64 microseconds since 2000-01-01 00:00:00 UTC (date_trunc results)
  interval,    // months, days, microseconds (computed values only: not a column type)
  regnamespace, // catalog type, like regclass
  regproc,      // catalog type
  regoper,      // catalog type
  oid_array,    // oid[] (catalog queries), held in its text form as text[] is
  name_array,   // name[] (array_agg of catalog names), held like text[]
  record,       // an anonymous record (executor/record_value.hpp), held in its text form
  void_,        // a function's result that is no value (pg_sleep): prints as the empty string
  time,         // time without time zone: int64 microseconds since midnight (0 .. 24:00:00)
  bytea,        // binary string: held and stored as its raw bytes (a dictionary-coded column)
  regprocedure, // catalog type: a function by name and argument types (psql's \sf f(args))
  timetz,       // time with time zone: a time of day and its UTC offset packed in one int64
                // whose order is PostgreSQL's (executor/types/timetz.hpp)
  int2_array,   // smallint[] (pg_constraint's conkey), held like oid[]
  regoperator,  // catalog type: an operator by name and operand types (psql's \dAo)
};

// PostgreSQL's type OIDs (pg_type.oid), as sent in RowDescription.
namespace oid {
constexpr uint32_t boolean = 16;
constexpr uint32_t bytea = 17;
constexpr uint32_t char_ = 18;
constexpr uint32_t name = 19;
constexpr uint32_t int8 = 20;
constexpr uint32_t int2 = 21;
constexpr uint32_t int2vector = 22;
constexpr uint32_t int4 = 23;
constexpr uint32_t regproc = 24;
constexpr uint32_t text = 25;
constexpr uint32_t oid = 26;
constexpr uint32_t oidvector = 30;
constexpr uint32_t json = 114;  // EXPLAIN (FORMAT JSON)'s column only: no json values yet
constexpr uint32_t xml = 142;   // EXPLAIN (FORMAT XML)'s column only
constexpr uint32_t float4 = 700;
constexpr uint32_t float8 = 701;
constexpr uint32_t unknown = 705;
constexpr uint32_t text_array = 1009;
constexpr uint32_t oid_array = 1028;
constexpr uint32_t int2_array = 1005;
constexpr uint32_t name_array = 1003;
constexpr uint32_t bpchar = 1042;
constexpr uint32_t varchar = 1043;
constexpr uint32_t date = 1082;
constexpr uint32_t time = 1083;
constexpr uint32_t timetz = 1266;
constexpr uint32_t timestamp = 1114;
constexpr uint32_t timestamptz = 1184;
constexpr uint32_t interval = 1186;
constexpr uint32_t numeric = 1700;
constexpr uint32_t regclass = 2205;
constexpr uint32_t regtype = 2206;
constexpr uint32_t regoper = 2203;
constexpr uint32_t regprocedure = 2202;
constexpr uint32_t regoperator = 2204;
constexpr uint32_t regnamespace = 4089;
constexpr uint32_t record = 2249;
constexpr uint32_t void_ = 2278;
}  // namespace oid

// A type with its modifier: numeric precision/scale or character length.
struct SqlType {
  TypeId id = TypeId::unknown;
  // PostgreSQL's atttypmod: -1 when absent; varchar/bpchar: n + 4;
  // numeric: ((precision << 16) | scale) + 4; time(p): p.
  int32_t typmod = -1;

  static SqlType numeric(int precision, int scale) {
    return {TypeId::numeric, ((precision << 16) | scale) + 4};
  }
  static SqlType varchar(int length) { return {TypeId::varchar, length + 4}; }
  static SqlType bpchar(int length) { return {TypeId::bpchar, length + 4}; }

  // numeric(p,s) accessors; valid only when typmod >= 0.
  int numeric_precision() const { return ((typmod - 4) >> 16) & 0xffff; }
  int numeric_scale() const { return (typmod - 4) & 0xffff; }
  // varchar(n)/char(n) length; -1 when unconstrained.
  int char_length() const { return typmod >= 4 ? typmod - 4 : -1; }

  bool operator==(const SqlType&) const = default;
};

uint32_t type_oid(TypeId id);
std::optional<TypeId> type_from_oid(uint32_t oid);
// pg_type.typlen: bytes for fixed-width types, -1 for varlena.
int16_t type_len(TypeId id);
// The name PostgreSQL's format_type() prints, with the modifier
// ("integer", "numeric(12,2)", "character varying(20)", "timestamp without time zone").
std::string format_type(SqlType type);
// Bytes per value in a stored column chunk (text kinds: the 4-byte dictionary code).
int storage_width(TypeId id);
bool is_integer(TypeId id);
bool is_float(TypeId id);
bool is_numeric_kind(TypeId id);  // integer, float or numeric
bool is_text_kind(TypeId id);     // text, varchar, bpchar, name, unknown
// Types whose stored column holds dictionary codes of strings: the text kinds
// and bytea (its raw bytes).
bool is_string_stored(TypeId id);

}  // namespace tally
