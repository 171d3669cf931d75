#pragma once
// Constant expressions of INSERT ... VALUES (literals, signed numbers, casts of
// constants, NULL, DEFAULT) and PostgreSQL's cast rules between the storable
// types: explicit casts (::type, CAST) and assignment casts to a column.
#include <string>

#include <nlohmann/json.hpp>

#include "common/sql_type.hpp"
#include "executor/ddl/statement_context.hpp"

namespace tally::executor {

struct ConstantValue {
  enum class Kind { null, unknown_literal, typed };
  Kind kind = Kind::null;
  // typed: the value's type; numeric with typmod -1 is an unconstrained numeric.
  SqlType type;
  // unknown_literal: the string as written; typed: PostgreSQL's text output
  // of the value (bool: "t"/"f").
  std::string text;
  int location = -1;
  bool is_default = false;
};

// Whether evaluate_constant takes a VALUES item: a literal, NULL, $n,
// DEFAULT, a signed number, nextval('s'), or a cast of one of them. Any
// other item is an expression the query engine evaluates (INSERT ... SELECT).
bool is_constant_item(const nlohmann::json& expr);

// Evaluates a VALUES item. Throws 0A000 (with position) for non-constant expressions.
ConstantValue evaluate_constant(const StatementContext& ctx, const nlohmann::json& expr);

// Casts value to target. explicit_cast: the rules of ::type; otherwise the
// assignment rules of INSERT, where `column` names the target in 42804.
ConstantValue cast_constant(const StatementContext& ctx, const ConstantValue& value, SqlType target,
                            bool explicit_cast, const std::string& column = "");

}  // namespace tally::executor
