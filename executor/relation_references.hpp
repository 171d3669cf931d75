#pragma once
// Whether a parse tree (libpg_query's JSON) names a relation anywhere in
// it: a FROM item, a subquery's, a CTE's body.
#include <string_view>

#include <nlohmann/json.hpp>

namespace tally::executor {

// Whether any RangeVar under `node` is relation `name`; with
// `unqualified_only`, only one written without a schema counts (a WITH
// query is never named with one).
inline bool names_relation(const nlohmann::json& node, std::string_view name, bool unqualified_only = false) {
  if (node.is_object()) {
    if (node.contains("RangeVar")) {
      const auto& rv = node["RangeVar"];
      return rv.value("relname", "") == name && !(unqualified_only && rv.contains("schemaname"));
    }
    for (const auto& [key, value] : node.items()) {
      if (names_relation(value, name, unqualified_only)) return true;
    }
  } else if (node.is_array()) {
    for (const auto& v : node) {
      if (names_relation(v, name, unqualified_only)) return true;
    }
  }
  return false;
}

}  // namespace tally::executor
