#pragma once
// Set-returning functions in FROM, for the ones clients' set-up queries use:
// generate_series(start, stop[, step]) over integers (pgbench -i's server-side
// data generation), unnest (pgcli's search path), pg_options_to_table and
// pg_partition_tree (psql's \d+ and \dP+).
// With constant arguments the rows are materialized at planning and scanned
// like a catalog relation; arguments that read an enclosing query's columns
// (in a subquery, or the FROM items before it: LATERAL, which from_planner
// plans as such a subquery) or parameters are evaluated when the scan runs.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "executor/system_relation_provider.hpp"

namespace tally::executor {

struct BindContext;

// The rows of a RangeFunction FROM item. `column` is the name of its one
// output column (PostgreSQL names it after the alias, else the function).
struct FunctionRelation {
  std::shared_ptr<const MaterializedRelation> relation;
  std::string alias;
};

FunctionRelation plan_function_relation(const nlohmann::json& range_function, BindContext& context);

}  // namespace tally::executor
