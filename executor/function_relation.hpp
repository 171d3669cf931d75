#pragma once
// Set-returning functions in FROM, for the ones clients' set-up queries use:
// generate_series(start, stop[, step]) over integers (pgbench -i's server-side
// data generation) and unnest(current_schemas(bool)) (pgcli's search path).
// With constant arguments the rows are materialized at planning and scanned
// like a catalog relation; arguments that read an enclosing query's columns
// (in a subquery) or parameters are evaluated when the scan runs. Anything
// else (LATERAL) answers 0A000.
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
