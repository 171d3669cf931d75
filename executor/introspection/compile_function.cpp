// The catalog functions clients call (format_type, pg_get_expr,
// pg_table_is_visible, current_schema(s), array helpers, ...).
#include <algorithm>

#include "common/error.hpp"
#include "executor/introspection/query_compiler.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::introspection::detail {

Expr Compiler::func_call(const json& f, const Scope& scope) {
  const std::string name = last_name(f["funcname"]);
  if (f.contains("over")) unsupported("window functions");
  if (f.value("agg_star", false) || f.value("agg_distinct", false)) unsupported("aggregate " + name);
  std::vector<Expr> args;
  for (const auto& a : f.value("args", json::array())) args.push_back(compile(a, scope));
  auto arity = [&](size_t lo, size_t hi) {
    if (args.size() < lo || args.size() > hi) {
      throw Error(SqlState::undefined_function, "function " + name + " with " + std::to_string(args.size()) +
                                                    " arguments does not exist");
    }
  };
  auto constant_fn = [&](SqlType type, Value v) {
    return Expr{type, [v](const Env&) -> Value { return v; }, name};
  };
  if (name == "format_type") {
    arity(2, 2);
    Expr t = cast_to(args[0], SqlType{TypeId::oid}), m = cast_to(args[1], SqlType{TypeId::int4});
    return {SqlType{TypeId::text}, [t, m](const Env& env) -> Value {
              Value type = t.eval(env);
              if (is_null(type)) return Null{};
              Value mod = m.eval(env);
              const int32_t typmod = is_null(mod) ? -1 : static_cast<int32_t>(std::get<int64_t>(mod));
              const auto oid = static_cast<uint32_t>(std::get<int64_t>(type));
              if (auto id = type_from_oid(oid)) return format_type(SqlType{*id, typmod});
              if (auto n = type_name_of(oid)) return *n;
              return std::string(oid == 0 ? "-" : "???");  // 0: InvalidOid, as a prefix operator's oprleft
            }, name};
  }
  if (name == "pg_table_is_visible") {
    // The default search path reaches pg_catalog and public, not information_schema.
    arity(1, 1);
    Expr a = cast_to(args[0], SqlType{TypeId::oid});
    return {SqlType{TypeId::boolean}, [a](const Env& env) -> Value {
              Value v = a.eval(env);
              if (is_null(v)) return Null{};
              const auto relation = catalog_relation_name(std::get<int64_t>(v));
              return !(relation && relation->starts_with("information_schema."));
            }, name};
  }
  if (name == "pg_type_is_visible" || name == "pg_function_is_visible" || name == "pg_operator_is_visible" ||
      name == "pg_opclass_is_visible" || name == "pg_opfamily_is_visible" || name == "pg_collation_is_visible" ||
      name == "pg_conversion_is_visible" || name == "pg_statistics_obj_is_visible" ||
      name == "pg_ts_parser_is_visible" || name == "pg_ts_dict_is_visible" || name == "pg_ts_template_is_visible" ||
      name == "pg_ts_config_is_visible" || name == "has_table_privilege" || name == "has_schema_privilege" || name == "has_database_privilege" ||
      name == "has_column_privilege") {
    Expr a = args.empty() ? constant_fn(SqlType{TypeId::boolean}, true) : args.back();
    Expr first = args.empty() ? a : args.front();
    return {SqlType{TypeId::boolean}, [first](const Env& env) -> Value {
              if (is_null(first.eval(env))) return Null{};
              return true;
            }, name};
  }
  if (name == "pg_get_userbyid") {
    arity(1, 1);
    Expr a = cast_to(args[0], SqlType{TypeId::oid});
    const std::string user = source_.user;
    return {SqlType{TypeId::name}, [a, user](const Env& env) -> Value {
              Value v = a.eval(env);
              if (is_null(v)) return Null{};
              const int64_t id = std::get<int64_t>(v);
              if (id == kBootstrapUserOid) return user;
              if (id == 6171) return std::string("pg_database_owner");
              return "unknown (OID=" + std::to_string(id) + ")";
            }, name};
  }
  if (name == "pg_encoding_to_char") {
    arity(1, 1);
    Expr a = args[0];
    return {SqlType{TypeId::name}, [a](const Env& env) -> Value {
              Value v = a.eval(env);
              if (is_null(v)) return Null{};
              return std::string(std::get<int64_t>(v) == 6 ? "UTF8" : "");
            }, name};
  }
  if (name == "pg_get_expr" || name == "obj_description" || name == "col_description" ||
      name == "shobj_description" || name == "pg_get_indexdef" || name == "pg_get_constraintdef" ||
      name == "pg_get_viewdef" || name == "pg_get_partkeydef" || name == "pg_get_triggerdef") {
    // NULL here: the engine's functions (executor/scalar/catalog_functions.cpp)
    // print definitions; this evaluator answers only what the engine refuses.
    return constant_fn(SqlType{TypeId::text}, Null{});
  }
  if (name == "array_to_string") {
    arity(2, 3);
    if (args[0].type.id != TypeId::text_array) unsupported("array_to_string of " + format_type(args[0].type));
    Expr a = args[0];
    Expr separator = cast_to(args[1], SqlType{TypeId::text});
    return {SqlType{TypeId::text}, [a, separator](const Env& env) -> Value {
              Value v = a.eval(env), sep = separator.eval(env);
              if (is_null(v) || is_null(sep)) return Null{};
              std::string out;
              const auto elements = array_elements(std::get<std::string>(v));
              for (size_t i = 0; i < elements.size(); ++i) {
                if (i > 0) out += std::get<std::string>(sep);
                out += elements[i];
              }
              return out;
            }, name};
  }
  if (name == "current_database") return constant_fn(SqlType{TypeId::name}, source_.database);
  if (name == "current_schema") return constant_fn(SqlType{TypeId::name}, std::string("public"));
  if (name == "lower" || name == "upper" || name == "quote_ident" || name == "length") {
    arity(1, 1);
    Expr a = cast_to(args[0], SqlType{TypeId::text});
    const bool lower = name == "lower", upper = name == "upper", len = name == "length";
    return {len ? SqlType{TypeId::int4} : SqlType{TypeId::text}, [a, lower, upper, len](const Env& env) -> Value {
              Value v = a.eval(env);
              if (is_null(v)) return v;
              std::string s = std::get<std::string>(v);
              if (len) return static_cast<int64_t>(s.size());
              if (lower) std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
              else if (upper) std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
              else {
                const bool plain = !s.empty() && (std::islower(static_cast<unsigned char>(s[0])) || s[0] == '_') &&
                                   std::all_of(s.begin(), s.end(), [](unsigned char c) {
                                     return std::islower(c) || std::isdigit(c) || c == '_';
                                   });
                if (!plain) {
                  std::string q = "\"";
                  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
                  s = q + "\"";
                }
              }
              return s;
            }, name};
  }
  unsupported("function " + name + "()");
}

}  // namespace tally::executor::introspection::detail
