#include "common/sql_type.hpp"

namespace tally {

uint32_t type_oid(TypeId id) {
  switch (id) {
    case TypeId::boolean: return oid::boolean;
    case TypeId::int2: return oid::int2;
    case TypeId::int4: return oid::int4;
    case TypeId::int8: return oid::int8;
    case TypeId::float4: return oid::float4;
    case TypeId::float8: return oid::float8;
    case TypeId::numeric: return oid::numeric;
    case TypeId::text: return oid::text;
    case TypeId::varchar: return oid::varchar;
    case TypeId::bpchar: return oid::bpchar;
    case TypeId::date: return oid::date;
    case TypeId::timestamp: return oid::timestamp;
    case TypeId::unknown: return oid::unknown;
    case TypeId::name: return oid::name;
    case TypeId::oid: return oid::oid;
    case TypeId::regclass: return oid::regclass;
    case TypeId::regtype: return oid::regtype;
    case TypeId::char_: return oid::char_;
    case TypeId::int2vector: return oid::int2vector;
    case TypeId::oidvector: return oid::oidvector;
    case TypeId::text_array: return oid::text_array;
    case TypeId::oid_array: return oid::oid_array;
    case TypeId::int2_array: return oid::int2_array;
    case TypeId::name_array: return oid::name_array;
    case TypeId::timestamptz: return oid::timestamptz;
    case TypeId::interval: return oid::interval;
    case TypeId::regnamespace: return oid::regnamespace;
    case TypeId::regproc: return oid::regproc;
    case TypeId::regoper: return oid::regoper;
    case TypeId::regprocedure: return oid::regprocedure;
    case TypeId::regoperator: return oid::regoperator;
    case TypeId::record: return oid::record;
    case TypeId::void_: return oid::void_;
    case TypeId::time: return oid::time;
    case TypeId::timetz: return oid::timetz;
    case TypeId::bytea: return oid::bytea;
  }
  return oid::unknown;
}

std::optional<TypeId> type_from_oid(uint32_t type_oid_value) {
  switch (type_oid_value) {
    case oid::boolean: return TypeId::boolean;
    case oid::int2: return TypeId::int2;
    case oid::int4: return TypeId::int4;
    case oid::int8: return TypeId::int8;
    case oid::float4: return TypeId::float4;
    case oid::float8: return TypeId::float8;
    case oid::numeric: return TypeId::numeric;
    case oid::text: return TypeId::text;
    case oid::varchar: return TypeId::varchar;
    case oid::bpchar: return TypeId::bpchar;
    case oid::date: return TypeId::date;
    case oid::timestamp: return TypeId::timestamp;
    case oid::unknown: return TypeId::unknown;
    case oid::name: return TypeId::name;
    case oid::oid: return TypeId::oid;
    case oid::regclass: return TypeId::regclass;
    case oid::regtype: return TypeId::regtype;
    case oid::char_: return TypeId::char_;
    case oid::int2vector: return TypeId::int2vector;
    case oid::oidvector: return TypeId::oidvector;
    case oid::text_array: return TypeId::text_array;
    case oid::oid_array: return TypeId::oid_array;
    case oid::int2_array: return TypeId::int2_array;
    case oid::name_array: return TypeId::name_array;
    case oid::timestamptz: return TypeId::timestamptz;
    case oid::interval: return TypeId::interval;
    case oid::regnamespace: return TypeId::regnamespace;
    case oid::regproc: return TypeId::regproc;
    case oid::regoper: return TypeId::regoper;
    case oid::regprocedure: return TypeId::regprocedure;
    case oid::regoperator: return TypeId::regoperator;
    case oid::record: return TypeId::record;
    case oid::void_: return TypeId::void_;
    case oid::time: return TypeId::time;
    case oid::timetz: return TypeId::timetz;
    case oid::bytea: return TypeId::bytea;
    default: return std::nullopt;
  }
}

int16_t type_len(TypeId id) {
  switch (id) {
    case TypeId::boolean: return 1;
    case TypeId::char_: return 1;
    case TypeId::int2: return 2;
    case TypeId::int4: return 4;
    case TypeId::date: return 4;
    case TypeId::float4: return 4;
    case TypeId::oid: return 4;
    case TypeId::regclass: return 4;
    case TypeId::regtype: return 4;
    case TypeId::regnamespace: return 4;
    case TypeId::regproc: return 4;
    case TypeId::regoper: return 4;
    case TypeId::regprocedure: return 4;
    case TypeId::regoperator: return 4;
    case TypeId::void_: return 4;
    case TypeId::int8: return 8;
    case TypeId::float8: return 8;
    case TypeId::timestamp: return 8;
    case TypeId::timestamptz: return 8;
    case TypeId::time: return 8;
    case TypeId::timetz: return 12;
    case TypeId::name: return 64;
    case TypeId::interval: return 16;
    case TypeId::unknown: return -2;
    default: return -1;
  }
}

std::string format_type(SqlType type) {
  switch (type.id) {
    case TypeId::boolean: return "boolean";
    case TypeId::int2: return "smallint";
    case TypeId::int4: return "integer";
    case TypeId::int8: return "bigint";
    case TypeId::float4: return "real";
    case TypeId::float8: return "double precision";
    case TypeId::numeric:
      if (type.typmod < 0) return "numeric";
      return "numeric(" + std::to_string(type.numeric_precision()) + "," +
             std::to_string(type.numeric_scale()) + ")";
    case TypeId::text: return "text";
    case TypeId::varchar:
      if (type.typmod < 0) return "character varying";
      return "character varying(" + std::to_string(type.char_length()) + ")";
    case TypeId::bpchar:
      if (type.typmod < 0) return "character";
      return "character(" + std::to_string(type.char_length()) + ")";
    case TypeId::date: return "date";
    case TypeId::timestamp: return "timestamp without time zone";
    case TypeId::unknown: return "unknown";
    case TypeId::name: return "name";
    case TypeId::oid: return "oid";
    case TypeId::regclass: return "regclass";
    case TypeId::regtype: return "regtype";
    case TypeId::char_: return "\"char\"";
    case TypeId::int2vector: return "int2vector";
    case TypeId::oidvector: return "oidvector";
    case TypeId::text_array: return "text[]";
    case TypeId::oid_array: return "oid[]";
    case TypeId::int2_array: return "smallint[]";
    case TypeId::name_array: return "name[]";
    case TypeId::timestamptz: return "timestamp with time zone";
    case TypeId::interval: return "interval";
    case TypeId::regnamespace: return "regnamespace";
    case TypeId::regproc: return "regproc";
    case TypeId::regoper: return "regoper";
    case TypeId::regprocedure: return "regprocedure";
    case TypeId::regoperator: return "regoperator";
    case TypeId::record: return "record";
    case TypeId::void_: return "void";
    case TypeId::time:
      if (type.typmod < 0) return "time without time zone";
      return "time(" + std::to_string(type.typmod) + ") without time zone";
    case TypeId::timetz:
      if (type.typmod < 0) return "time with time zone";
      return "time(" + std::to_string(type.typmod) + ") with time zone";
    case TypeId::bytea: return "bytea";
  }
  return "unknown";
}

int storage_width(TypeId id) {
  switch (id) {
    case TypeId::boolean: return 1;
    case TypeId::int2: return 2;
    case TypeId::int4:
    case TypeId::date:
    case TypeId::float4:
    case TypeId::text:
    case TypeId::varchar:
    case TypeId::bpchar:
    case TypeId::bytea: return 4;
    case TypeId::int8:
    case TypeId::time:
    case TypeId::timetz:
    case TypeId::float8:
    case TypeId::numeric:
    case TypeId::timestamp:
    case TypeId::timestamptz: return 8;
    default: return 0;
  }
}

bool is_integer(TypeId id) {
  return id == TypeId::int2 || id == TypeId::int4 || id == TypeId::int8;
}
bool is_float(TypeId id) { return id == TypeId::float4 || id == TypeId::float8; }
bool is_numeric_kind(TypeId id) {
  return is_integer(id) || is_float(id) || id == TypeId::numeric;
}
bool is_text_kind(TypeId id) {
  return id == TypeId::text || id == TypeId::varchar || id == TypeId::bpchar ||
         id == TypeId::name || id == TypeId::unknown;
}
bool is_string_stored(TypeId id) { return is_text_kind(id) || id == TypeId::bytea; }

}  // namespace tally
