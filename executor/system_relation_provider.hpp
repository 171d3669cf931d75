#pragma once
// The seam through which the planner sees the pg_catalog / information_schema
// relations: each is a small relation materialized for the statement (from
// the catalog, the session and its settings) and scanned by SystemScan like
// any other relation, so joins, WHERE, GROUP BY, ORDER BY, subqueries and
// WITH over the catalog run on the same operators as over user tables.
// executor/introspection implements it; the planner only asks.
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "executor/operators/physical_operator.hpp"

namespace tally::executor {

struct MaterializedRelation {
  std::string name;  // as EXPLAIN shows it
  std::vector<OutputColumn> columns;
  // How many of the last columns are system columns (a catalog table's
  // tableoid): a name reaches them, `*` and NATURAL joins do not, as in
  // PostgreSQL.
  size_t system_columns = 0;
  DataChunk rows;  // one Vector per column
  // Set for a relation whose rows depend on the run's parameters (unnest of
  // an enclosing query's column, evaluated per outer row): the rows, made
  // when the scan runs; `rows` is then empty.
  std::function<DataChunk(const std::vector<Value>* parameters)> rows_at_run;
};

class SystemRelationProvider {
 public:
  virtual ~SystemRelationProvider() = default;
  // The relation `schema.name` ("" = unqualified: the search path, after the
  // user tables, as PostgreSQL resolves pg_catalog names); null when there
  // is none.
  virtual std::shared_ptr<const MaterializedRelation> find(std::string_view schema, std::string_view name) = 0;
};

}  // namespace tally::executor
