// Subqueries in catalog SELECTs: scalar, EXISTS, IN / = ANY, correlated too.
#include "common/error.hpp"
#include "executor/introspection/query_compiler.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::introspection::detail {

Expr Compiler::sub_link(const json& s, const Scope& scope) {
  const std::string kind = s.value("subLinkType", "");
  auto query = std::make_shared<Query>(compile_select(s["subselect"], &scope));
  if (kind == "EXISTS_SUBLINK") {
    return {SqlType{TypeId::boolean}, [query](const Env& env) -> Value { return !query->run(&env).empty(); }, "exists"};
  }
  if (query->targets.size() != 1) throw Error(SqlState::syntax_error, "subquery must return only one column");
  if (kind == "EXPR_SUBLINK") {
    SqlType type = query->targets[0].type;
    if (type.id == TypeId::unknown) type = SqlType{TypeId::text};
    return {type, [query](const Env& env) -> Value {
              auto rows = query->run(&env);
              if (rows.size() > 1) {
                throw Error(SqlState::cardinality_violation, "more than one row returned by a subquery used as an expression");
              }
              return rows.empty() ? Value{Null{}} : rows[0][0];
            }, query->targets[0].name};
  }
  if (kind == "ARRAY_SUBLINK") {
    if (!text_kind(query->targets[0].type.id)) unsupported("ARRAY() of " + format_type(query->targets[0].type));
    return {SqlType{TypeId::text_array}, [query](const Env& env) -> Value {
              std::vector<std::string> elements;
              for (const auto& row : query->run(&env)) {
                if (is_null(row[0])) unsupported("NULL elements in ARRAY()");
                elements.push_back(std::get<std::string>(row[0]));
              }
              return array_text(elements);
            }, "array"};
  }
  if (kind == "ANY_SUBLINK") {
    Expr test = compile(s["testexpr"], scope);
    const std::string op = s.contains("operName") ? last_name(s["operName"]) : "=";
    // The comparison sees the subquery's value through a one-column scope.
    auto holder = std::make_shared<Value>();
    Expr right{query->targets[0].type, [holder](const Env&) -> Value { return *holder; }, "?column?"};
    Expr cmp = compare(op, test, right);
    return {SqlType{TypeId::boolean}, [query, holder, cmp](const Env& env) -> Value {
              bool saw_null = false;
              for (const auto& row : query->run(&env)) {
                *holder = row[0];
                Value v = cmp.eval(env);
                if (is_null(v)) saw_null = true;
                else if (std::get<bool>(v)) return true;
              }
              return saw_null ? Value{Null{}} : Value{false};
            }, "?column?"};
  }
  unsupported("subquery kind " + kind);
}

}  // namespace tally::executor::introspection::detail
