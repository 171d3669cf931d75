#pragma once
// Parse-tree nodes (libpg_query's JSON form) that the rewrites build:
// UPDATE and DELETE read their rows, UPDATE ... FROM and MERGE their
// subqueries, through SELECTs made of these; the SELECT rewrites
// (dependent_group_columns, lateral_top_n) their joins and conditions.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tally::executor::dml {

// A column reference: one name, or a qualified one ({"t", "c"}).
inline nlohmann::json column_ref(const std::vector<std::string>& names) {
  nlohmann::json fields = nlohmann::json::array();
  for (const auto& n : names) fields.push_back({{"String", {{"sval", n}}}});
  return {{"ColumnRef", {{"fields", std::move(fields)}}}};
}

inline nlohmann::json int_const(int64_t v) { return {{"A_Const", {{"ival", {{"ival", v}}}}}}; }

// An output column; named where `name` is not empty.
inline nlohmann::json res_target(nlohmann::json value, const std::string& name = {}) {
  nlohmann::json t = {{"val", std::move(value)}};
  if (!name.empty()) t["name"] = name;
  return {{"ResTarget", std::move(t)}};
}

// a <op> b, a binary operator.
inline nlohmann::json operator_expr(const std::string& op, nlohmann::json a, nlohmann::json b) {
  return {{"A_Expr",
           {{"kind", "AEXPR_OP"},
            {"name", nlohmann::json::array({{{"String", {{"sval", op}}}}})},
            {"lexpr", std::move(a)},
            {"rexpr", std::move(b)},
            {"location", -1}}}};
}

// The conjunction of `conjuncts` (at least one): the one itself, or an AND.
inline nlohmann::json and_of(std::vector<nlohmann::json> conjuncts) {
  if (conjuncts.size() == 1) return std::move(conjuncts[0]);
  return {{"BoolExpr", {{"boolop", "AND_EXPR"}, {"args", std::move(conjuncts)}, {"location", -1}}}};
}

// SELECT <targets> FROM <from> [WHERE <where>].
inline nlohmann::json select_stmt(nlohmann::json targets, nlohmann::json from, const nlohmann::json* where) {
  nlohmann::json s = {{"targetList", std::move(targets)}, {"fromClause", std::move(from)},
                      {"limitOption", "LIMIT_OPTION_DEFAULT"}, {"op", "SETOP_NONE"}};
  if (where) s["whereClause"] = *where;
  return s;
}

}  // namespace tally::executor::dml
