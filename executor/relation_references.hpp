#pragma once
// Whether a parse tree (libpg_query's JSON) names a relation anywhere in
// it: a FROM item, a subquery's, a CTE's body.
#include <string_view>

#include <nlohmann/json.hpp>

namespace tally::executor {

// Whether `matches(range_var)` holds for any RangeVar under `node` (the
// RangeVar's own object: relname, schemaname, ...).
template <class Matches>
bool names_relation_where(const nlohmann::json& node, const Matches& matches) {
  if (node.is_object()) {
    if (node.contains("RangeVar")) return matches(node["RangeVar"]);
    for (const auto& [key, value] : node.items()) {
      if (names_relation_where(value, matches)) return true;
    }
  } else if (node.is_array()) {
    for (const auto& v : node) {
      if (names_relation_where(v, matches)) return true;
    }
  }
  return false;
}

// Whether any RangeVar under `node` is relation `name`; with
// `unqualified_only`, only one written without a schema counts (a WITH
// query is never named with one).
inline bool names_relation(const nlohmann::json& node, std::string_view name, bool unqualified_only = false) {
  return names_relation_where(node, [&](const nlohmann::json& rv) {
    return rv.value("relname", "") == name && !(unqualified_only && rv.contains("schemaname"));
  });
}

}  // namespace tally::executor
