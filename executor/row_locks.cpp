#include "executor/row_locks.hpp"

#include <algorithm>
#include <utility>

#include "common/error.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

// PostgreSQL's spelling of a LockClauseStrength, as its messages use it.
std::string strength_words(const json& clause) {
  const std::string strength = clause.value("strength", "");
  if (strength == "LCS_FORKEYSHARE") return "FOR KEY SHARE";
  if (strength == "LCS_FORSHARE") return "FOR SHARE";
  if (strength == "LCS_FORNOKEYUPDATE") return "FOR NO KEY UPDATE";
  return "FOR UPDATE";
}

// FROM's tables: (name in the query: alias or table name, table name).
void collect_from(const json& node, std::vector<std::pair<std::string, std::string>>& tables) {
  if (node.contains("RangeVar")) {
    const json& rv = node["RangeVar"];
    const std::string schema = rv.value("schemaname", "");
    const std::string name = rv.value("relname", "");
    const std::string alias = rv.contains("alias") ? rv["alias"].value("aliasname", name) : name;
    if (schema.empty() || schema == "public") tables.emplace_back(alias, name);
  } else if (node.contains("JoinExpr")) {
    collect_from(node["JoinExpr"].at("larg"), tables);
    collect_from(node["JoinExpr"].at("rarg"), tables);
  }
}

}  // namespace

void check_locking_clause(const json& select) {
  for (const auto& item : select.at("lockingClause")) {
    const json& clause = item.at("LockingClause");
    const std::string words = strength_words(clause);
    const std::string wait = clause.value("waitPolicy", "LockWaitBlock");
    if (wait != "LockWaitBlock")
      throw Error(SqlState::feature_not_supported,
                  words + (wait == "LockWaitSkip" ? " SKIP LOCKED" : " NOWAIT") + " is not supported by Tally");
    if (select.value("op", "SETOP_NONE") != "SETOP_NONE")
      throw Error(SqlState::feature_not_supported, words + " is not allowed with UNION/INTERSECT/EXCEPT");
    for (const auto& [key, what] : {std::pair{"distinctClause", "DISTINCT clause"},
                                    std::pair{"groupClause", "GROUP BY clause"},
                                    std::pair{"havingClause", "HAVING clause"},
                                    std::pair{"windowClause", "window functions"}}) {
      if (select.contains(key))
        throw Error(SqlState::feature_not_supported, words + " is not allowed with " + what);
    }
  }
}

std::vector<std::string> locked_table_names(const json& select) {
  std::vector<std::pair<std::string, std::string>> from;
  for (const auto& item : select.value("fromClause", json::array())) collect_from(item, from);
  std::vector<std::string> named;  // FOR UPDATE OF a, b: names as FROM spells them
  for (const auto& item : select.value("lockingClause", json::array())) {
    for (const auto& rel : item.at("LockingClause").value("lockedRels", json::array()))
      if (rel.contains("RangeVar")) named.push_back(rel["RangeVar"].value("relname", ""));
  }
  std::vector<std::string> names;
  for (const auto& [as_written, table] : from) {
    if (named.empty() || std::find(named.begin(), named.end(), as_written) != named.end()) names.push_back(table);
  }
  return names;
}

json without_row_identity(const json& select) {
  json copy = select;
  if (!copy.contains("targetList")) return copy;
  for (auto& target : copy["targetList"]) {
    json& rt = target["ResTarget"];
    const json& val = rt["val"];
    if (!val.contains("ColumnRef")) continue;
    const json& fields = val["ColumnRef"]["fields"];
    if (fields.empty() || fields.size() > 2 || !fields.back().contains("String") ||
        fields.back()["String"].value("sval", "") != "ctid")
      continue;
    if (!rt.contains("name")) rt["name"] = "ctid";
    rt["val"] = {{"A_Const", {{"isnull", true}}}};
  }
  return copy;
}

void throw_row_identity_error() {
  throw Error(SqlState::feature_not_supported,
              "column \"ctid\" is not supported by Tally: UPDATE and DELETE rewrite a table, so a row has no stable "
              "position to name (postgres_fdw needs it for an UPDATE or DELETE it cannot send whole)");
}

}  // namespace tally::executor
