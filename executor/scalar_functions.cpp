#include "executor/scalar_functions.hpp"

#include <optional>
#include <utility>

#include "common/error.hpp"
#include "executor/cast.hpp"
#include "executor/scalar/array_functions.hpp"
#include "executor/scalar/bytea_functions.hpp"
#include "executor/scalar/catalog_functions.hpp"
#include "executor/scalar/digest_functions.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar/interval_functions.hpp"
#include "executor/scalar/time_functions.hpp"

namespace tally::executor {
namespace {

// The types a one-argument call may be named after (pg_type's names, which
// is how PostgreSQL looks the name up), without a type modifier.
std::optional<SqlType> type_named(const std::string& name) {
  static const std::pair<const char*, TypeId> kTypes[] = {
      {"int2", TypeId::int2},         {"int4", TypeId::int4},         {"int8", TypeId::int8},
      {"float4", TypeId::float4},     {"float8", TypeId::float8},     {"numeric", TypeId::numeric},
      {"bool", TypeId::boolean},      {"text", TypeId::text},         {"varchar", TypeId::varchar},
      {"bpchar", TypeId::bpchar},     {"char", TypeId::char_},        {"name", TypeId::name},
      {"date", TypeId::date},         {"time", TypeId::time},         {"timetz", TypeId::timetz},
      {"timestamp", TypeId::timestamp},
      {"timestamptz", TypeId::timestamptz}, {"interval", TypeId::interval}, {"bytea", TypeId::bytea},
      {"oid", TypeId::oid},           {"regclass", TypeId::regclass}, {"regtype", TypeId::regtype},
      {"regnamespace", TypeId::regnamespace}, {"regproc", TypeId::regproc}, {"regoper", TypeId::regoper},
      {"regoperator", TypeId::regoperator}};
  for (const auto& [type_name, id] : kTypes) {
    if (name == type_name) return SqlType{id};
  }
  return std::nullopt;
}

// A function-style cast: int8(x), date(ts), text(n) is the type's explicit
// cast when no function takes the argument, as PostgreSQL resolves such a
// call (func_get_detail's coercion case; its cast functions int8(integer)
// ... are the same conversions). nullptr when the name is no type's or the
// cast does not exist.
ExprPtr function_style_cast(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  if (args.size() != 1) return nullptr;
  const auto target = type_named(name);
  if (!target || !can_cast(args[0]->type.id, target->id, CastContext::explicit_)) return nullptr;
  return coerce_to(std::move(args[0]), *target, CastContext::explicit_, context, "argument");
}

}  // namespace

// Functions by family (executor/scalar/): system information, math, text,
// bytea, time, text editing, regular expressions, to_char, interval, date and
// timestamp.
ExprPtr make_function(const std::string& name, std::vector<ExprPtr> args, BindContext& context) {
  if (ExprPtr e = scalar::make_system_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_catalog_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_array_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_math_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_logarithm_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_trigonometric_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_bytea_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_digest_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_time_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_text_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_text_edit_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_regex_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_format_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_interval_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_datetime_function(name, args, context)) return e;
  if (ExprPtr e = scalar::make_to_date_function(name, args, context)) return e;
  if (name == "to_date" || name == "to_timestamp" || name == "to_number") {
    throw Error(SqlState::feature_not_supported, "function " + name + " is not supported");
  }
  if (ExprPtr e = function_style_cast(name, args, context)) return e;
  throw scalar::no_function(name, args);
}

}  // namespace tally::executor
