#include "executor/dml/column_default.hpp"

#include "executor/ddl/session_sequences.hpp"
#include "executor/types/type_io.hpp"

namespace tally::executor::dml {
namespace {

std::string quote_literal(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// A DEFAULT of the statement's time as PostgreSQL prints it (pg_get_expr):
// now(), CURRENT_TIMESTAMP, CURRENT_DATE, LOCALTIMESTAMP, ...; empty: not one.
std::string time_function(const nlohmann::json& expr) {
  if (expr.contains("SQLValueFunction")) {
    const auto& f = expr["SQLValueFunction"];
    if (f.value("typmod", -1) != -1) return {};
    const std::string op = f.value("op", std::string());
    if (op == "SVFOP_CURRENT_TIMESTAMP") return "CURRENT_TIMESTAMP";
    if (op == "SVFOP_CURRENT_DATE") return "CURRENT_DATE";
    if (op == "SVFOP_LOCALTIMESTAMP") return "LOCALTIMESTAMP";
    return {};
  }
  if (!expr.contains("FuncCall") || expr["FuncCall"].contains("args")) return {};
  const auto& names = expr["FuncCall"].value("funcname", nlohmann::json::array());
  if (names.empty()) return {};
  const std::string name = names.back().at("String").value("sval", std::string());
  if (name == "now" || name == "transaction_timestamp" || name == "statement_timestamp") return name + "()";
  return {};
}

// The printed DEFAULT when it is one time_function() prints; empty otherwise.
std::string time_function_of(const std::string& default_expr) {
  for (const char* f : {"now()", "transaction_timestamp()", "statement_timestamp()", "CURRENT_TIMESTAMP",
                        "CURRENT_DATE", "LOCALTIMESTAMP"})
    if (default_expr == f) return default_expr;
  return {};
}

// The value of a time_function() DEFAULT: the statement's time, typed as
// PostgreSQL types the function (timestamptz, date, timestamp), in UTC.
ConstantValue time_value(const StatementContext& ctx, const std::string& printed) {
  const int64_t micros = ctx.statement_time();
  ConstantValue v;
  v.kind = ConstantValue::Kind::typed;
  if (printed == "CURRENT_DATE") {
    v.type = SqlType{TypeId::date};
    constexpr int64_t micros_per_day = 86'400'000'000;
    types::append_date(v.text, static_cast<int32_t>(micros >= 0 ? micros / micros_per_day
                                                                : (micros - micros_per_day + 1) / micros_per_day));
  } else {
    types::append_timestamp(v.text, micros);
    v.type = SqlType{printed == "LOCALTIMESTAMP" ? TypeId::timestamp : TypeId::timestamptz};
    if (v.type.id == TypeId::timestamptz) v.text += "+00";
  }
  return v;
}

}  // namespace

std::string nextval_argument(const nlohmann::json& expr) {
  if (!expr.contains("FuncCall")) return {};
  const auto& call = expr["FuncCall"];
  const auto& names = call.value("funcname", nlohmann::json::array());
  if (names.empty() || names.back().at("String").value("sval", std::string()) != "nextval") return {};
  const auto& args = call.value("args", nlohmann::json::array());
  if (args.size() != 1) return {};
  const nlohmann::json* arg = &args[0];
  if (arg->contains("TypeCast")) arg = &(*arg)["TypeCast"]["arg"];
  if (!arg->contains("A_Const") || !(*arg)["A_Const"].contains("sval")) return {};
  return (*arg)["A_Const"]["sval"].value("sval", std::string());
}

std::string nextval_sequence(const std::string& default_expr) {
  const std::string head = "nextval('", tail = "'::regclass)";
  if (default_expr.size() <= head.size() + tail.size() || default_expr.compare(0, head.size(), head) != 0 ||
      default_expr.compare(default_expr.size() - tail.size(), tail.size(), tail) != 0)
    return {};
  return default_expr.substr(head.size(), default_expr.size() - head.size() - tail.size());
}

std::string default_expression(const StatementContext& ctx, const nlohmann::json& raw_expr,
                               const catalog::ColumnDef& column) {
  if (std::string seq = nextval_argument(raw_expr); !seq.empty()) {
    if (!ctx.sequences) throw Error(SqlState::feature_not_supported, "sequences need the storage layer");
    const auto def = ctx.sequences->resolve(seq);  // 42P01 when missing
    return "nextval('" + def.name + "'::regclass)";
  }
  if (std::string printed = time_function(raw_expr); !printed.empty()) {
    cast_constant(ctx, time_value(ctx, printed), column.type, false, column.name);  // 42804 for another type
    return printed;
  }
  ConstantValue v;
  try {
    v = evaluate_constant(ctx, raw_expr);
  } catch (const Error& e) {
    if (e.state() != SqlState::feature_not_supported) throw;
    throw Error(SqlState::feature_not_supported,
                "DEFAULT expressions other than constants and nextval() are not supported by Tally");
  }
  if (v.kind == ConstantValue::Kind::null) return {};
  const ConstantValue cast = cast_constant(ctx, v, column.type, false, column.name);
  const TypeId id = column.type.id;
  const bool number = id == TypeId::int2 || id == TypeId::int4 || id == TypeId::int8 || id == TypeId::numeric ||
                      id == TypeId::float4 || id == TypeId::float8;
  // PostgreSQL prints a non-negative number bare and a boolean as true/false.
  if (number && !cast.text.empty() && std::isdigit(static_cast<unsigned char>(cast.text[0]))) return cast.text;
  if (id == TypeId::boolean) return cast.text == "t" ? "true" : "false";
  return quote_literal(cast.text) + "::" + format_type(SqlType{column.type.id == TypeId::varchar ? TypeId::varchar : id});
}

ConstantValue column_default(const StatementContext& ctx, const catalog::ColumnDef& column) {
  const std::string& expr = column.default_expr;
  if (expr.empty()) return ConstantValue{};
  if (std::string seq = nextval_sequence(expr); !seq.empty()) {
    if (!ctx.sequences) throw Error(SqlState::feature_not_supported, "sequences need the storage layer");
    ConstantValue n;
    n.kind = ConstantValue::Kind::unknown_literal;
    n.text = std::to_string(ctx.sequences->nextval(seq));
    return cast_constant(ctx, n, column.type, false, column.name);
  }
  if (const std::string time = time_function_of(expr); !time.empty())
    return cast_constant(ctx, time_value(ctx, time), column.type, false, column.name);
  // The printed constant back to a literal: 'text'::type or a bare word.
  ConstantValue literal;
  literal.kind = ConstantValue::Kind::unknown_literal;
  if (expr[0] == '\'') {
    for (size_t i = 1; i < expr.size(); ++i) {
      if (expr[i] == '\'' && i + 1 < expr.size() && expr[i + 1] == '\'') {
        literal.text += '\'';
        ++i;
      } else if (expr[i] == '\'') {
        break;
      } else {
        literal.text += expr[i];
      }
    }
  } else {
    literal.text = expr;
  }
  return cast_constant(ctx, literal, column.type, false, column.name);
}

}  // namespace tally::executor::dml
