#pragma once
// A FROM item that is a stored table (a RangeVar naming one, not a view, a
// WITH query or a catalog relation), for the parse-tree rewrites that need
// its columns and keys before the statement is planned.
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "executor/table_provider.hpp"

namespace tally::executor {

struct PlanContext;

struct FromTable {
  const nlohmann::json* range_var = nullptr;  // the FROM item ({"RangeVar": ...})
  std::string name;                           // what its columns are qualified with: alias or relation name
  std::shared_ptr<const TableSnapshot> table;

  // The column named `n`, or -1.
  int column(const std::string& n) const;
};

// `item` as a stored table, or nullopt where it is anything else (or an
// alias renames its columns).
std::optional<FromTable> from_table(const nlohmann::json& item, const PlanContext& context);

}  // namespace tally::executor
