#include "executor/ddl/type_name.hpp"

#include <map>

#include "executor/types/type_io.hpp"
#include "storage/column_layout.hpp"

namespace tally::executor {
namespace {

// Storable types by the internal name PostgreSQL's grammar produces
// (pg_catalog.int4 for "integer") and the names users may write directly.
std::optional<TypeId> storable(std::string_view name) {
  static const std::map<std::string_view, TypeId> names = {
      {"bool", TypeId::boolean},    {"boolean", TypeId::boolean}, {"int2", TypeId::int2},
      {"smallint", TypeId::int2},   {"int4", TypeId::int4},       {"int", TypeId::int4},
      {"integer", TypeId::int4},    {"int8", TypeId::int8},       {"bigint", TypeId::int8},
      {"float4", TypeId::float4},   {"real", TypeId::float4},     {"float8", TypeId::float8},
      {"numeric", TypeId::numeric}, {"decimal", TypeId::numeric}, {"text", TypeId::text},
      {"varchar", TypeId::varchar}, {"bpchar", TypeId::bpchar},
      {"date", TypeId::date},       {"timestamp", TypeId::timestamp}, {"timestamptz", TypeId::timestamptz},
      {"time", TypeId::time},       {"timetz", TypeId::timetz},   {"bytea", TypeId::bytea},
  };
  auto it = names.find(name);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

}  // namespace

std::string_view internal_type_name(TypeId id) {
  switch (id) {
    case TypeId::boolean: return "bool";
    case TypeId::int2: return "int2";
    case TypeId::int4: return "int4";
    case TypeId::int8: return "int8";
    case TypeId::float4: return "float4";
    case TypeId::float8: return "float8";
    case TypeId::numeric: return "numeric";
    case TypeId::text: return "text";
    case TypeId::varchar: return "varchar";
    case TypeId::bpchar: return "bpchar";
    case TypeId::date: return "date";
    case TypeId::timestamp: return "timestamp";
    case TypeId::timestamptz: return "timestamptz";
    case TypeId::time: return "time";
    case TypeId::timetz: return "timetz";
    case TypeId::bytea: return "bytea";
    default: return "";
  }
}

bool is_unsupported_postgres_type(std::string_view name) {
  // "char" (quoted; the grammar names char and character bpchar): the
  // catalogs' one-byte type, not a column type Tally stores.
  static const char* const names[] = {"char", "timetz", "interval", "json", "jsonb",
                                      "uuid", "inet", "cidr", "macaddr", "money", "bit", "varbit", "xml",
                                      "point", "line", "lseg", "box", "path", "polygon", "circle", "tsvector",
                                      "tsquery", "oid", "name", "serial", "bigserial", "smallserial", "int4range",
                                      "int8range", "numrange", "tsrange", "tstzrange", "daterange"};
  for (const char* n : names)
    if (name == n) return true;
  return false;
}

SqlType resolve_type_name(const StatementContext& ctx, const nlohmann::json& tn) {
  const int location = tn.value("location", -1);
  const auto& names = tn.at("names");
  std::string name = names.back().at("String").value("sval", std::string());
  std::string display = name;
  if (names.size() > 2 || (names.size() == 2 && names[0].at("String").value("sval", "") != "pg_catalog" &&
                           names[0].at("String").value("sval", "") != "public")) {
    display.clear();
    for (const auto& n : names) display += (display.empty() ? "" : ".") + n.at("String").value("sval", std::string());
    throw std::move(Error(SqlState::undefined_object, "type \"" + display + "\" does not exist")
                        .with_position(ctx.position(location)));
  }
  if (tn.contains("arrayBounds"))
    throw std::move(Error(SqlState::feature_not_supported, "array types are not supported")
                        .with_position(ctx.position(location)));
  if (tn.value("setof", false))
    throw std::move(Error(SqlState::feature_not_supported, "SETOF types are not supported")
                        .with_position(ctx.position(location)));
  const auto id = storable(name);
  if (!id) {
    if (is_unsupported_postgres_type(name))
      throw std::move(Error(SqlState::feature_not_supported, "type \"" + name + "\" is not supported by Tally")
                          .with_position(ctx.position(location)));
    throw std::move(Error(SqlState::undefined_object, "type \"" + name + "\" does not exist")
                        .with_position(ctx.position(location)));
  }
  std::vector<int64_t> mods;
  if (tn.contains("typmods")) {
    for (const auto& m : tn["typmods"]) {
      if (!m.contains("A_Const") || !m["A_Const"].contains("ival"))
        throw std::move(Error(SqlState::syntax_error, "type modifiers must be simple constants")
                            .with_position(ctx.position(location)));
      mods.push_back(const_int(m["A_Const"]["ival"]));
    }
  }
  switch (*id) {
    case TypeId::numeric: {
      // Unconstrained numeric: stored with each value's own display scale.
      if (mods.empty()) return SqlType{TypeId::numeric, -1};
      if (mods.size() > 2)
        throw std::move(Error(SqlState::invalid_parameter_value, "invalid NUMERIC type modifier")
                            .with_position(ctx.position(location)));
      const int64_t p = mods[0], s = mods.size() == 2 ? mods[1] : 0;
      if (p < 1 || p > 1000)
        throw std::move(Error(SqlState::invalid_parameter_value,
                              "NUMERIC precision " + std::to_string(p) + " must be between 1 and 1000")
                            .with_position(ctx.position(location)));
      if (s < -1000 || s > 1000)
        throw std::move(Error(SqlState::invalid_parameter_value,
                              "NUMERIC scale " + std::to_string(s) + " must be between -1000 and 1000")
                            .with_position(ctx.position(location)));
      if (p > numeric_max_stored_precision || s < 0 || s > p)
        throw std::move(Error(SqlState::feature_not_supported,
                              "numeric(" + std::to_string(p) + "," + std::to_string(s) +
                                  ") is not supported by Tally; precision must be at most " +
                                  std::to_string(numeric_max_stored_precision) + " and 0 <= scale <= precision")
                            .with_position(ctx.position(location)));
      return SqlType::numeric(static_cast<int>(p), static_cast<int>(s));
    }
    case TypeId::varchar:
    case TypeId::bpchar: {
      const char* type_word = *id == TypeId::varchar ? "varchar" : "char";
      if (mods.size() > 1)
        throw std::move(Error(SqlState::invalid_parameter_value,
                              std::string("invalid type modifier"))
                            .with_position(ctx.position(location)));
      if (mods.empty()) return *id == TypeId::varchar ? SqlType{TypeId::varchar, -1} : SqlType::bpchar(1);
      if (mods[0] < 1)
        throw std::move(Error(SqlState::invalid_parameter_value,
                              std::string("length for type ") + type_word + " must be at least 1")
                            .with_position(ctx.position(location)));
      if (mods[0] > 10485760)
        throw std::move(Error(SqlState::invalid_parameter_value,
                              std::string("length for type ") + type_word + " cannot exceed 10485760")
                            .with_position(ctx.position(location)));
      return *id == TypeId::varchar ? SqlType::varchar(static_cast<int>(mods[0]))
                                    : SqlType::bpchar(static_cast<int>(mods[0]));
    }
    case TypeId::time:
    case TypeId::timetz:
      try {
        return {*id, types::time_typmod(mods)};
      } catch (Error& e) {
        throw std::move(e.with_position(ctx.position(location)));
      }
    case TypeId::timestamp:
    case TypeId::timestamptz:
      if (!mods.empty())
        throw std::move(Error(SqlState::feature_not_supported, name + "(p) is not supported by Tally")
                            .with_position(ctx.position(location)));
      return {*id};
    default:
      if (!mods.empty())
        throw std::move(Error(SqlState::syntax_error, "type modifier is not allowed for type \"" + name + "\"")
                            .with_position(ctx.position(location)));
      return {*id};
  }
}

}  // namespace tally::executor
