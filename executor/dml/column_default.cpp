#include "executor/dml/column_default.hpp"

#include "executor/ddl/session_sequences.hpp"

namespace tally::executor::dml {
namespace {

std::string quote_literal(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
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
