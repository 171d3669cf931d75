#pragma once
// A view named in FROM, as the FROM planner plans it: the subquery the view
// stores, its column names, and the context it is planned in (the query's
// settings and parameters, none of its WITH queries: a view sees only the
// catalog, as in PostgreSQL).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "executor/select_plan.hpp"

namespace tally::executor {

struct ExpandedView {
  nlohmann::json select;    // the SelectStmt node
  nlohmann::json colnames;  // the names its columns take (String nodes), as an alias's colnames
  PlanContext context;
};

// The view schema.name (schema empty or "public") as seen from `context`, or
// nullopt when there is none. `alias_colnames` (null: none) rename the
// view's first columns, as `FROM v AS x(a, b)` does.
std::optional<ExpandedView> expand_view(const PlanContext& context, const std::string& schema,
                                        const std::string& name, const nlohmann::json* alias_colnames);

// Whether a FROM item's RangeVar names a view (no table of that name shadows it).
bool names_view(const PlanContext& context, const nlohmann::json& range_var);

}  // namespace tally::executor
