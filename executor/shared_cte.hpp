#pragma once
// A WITH query that its statement names more than once is run once per run
// of the query it belongs to, as PostgreSQL materializes it: every
// reference reads the same rows (a volatile function's values too) and the
// work is done once (TPC-H Q15 names its revenue query in FROM and again in
// a scalar subquery over it). One that reads an enclosing query's columns
// is planned at each reference instead. NOT MATERIALIZED changes nothing:
// PostgreSQL folds such a query into each reference only where it calls no
// volatile function, which then makes the same rows either way.
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

namespace tally::executor {

struct ExecContext;
struct ResultSet;
struct SelectPlan;

class SharedCte {
 public:
  // Planned at the first reference (null until then); `correlated` once
  // that plan was found to read an enclosing query, which leaves every
  // reference its own plan.
  std::shared_ptr<const SelectPlan> plan;
  bool correlated = false;

  // The rows of this run of the owning query: the first scan runs the plan,
  // a concurrent one waits for it.
  std::shared_ptr<const ResultSet> rows(ExecContext& context) const;
  // Forgets the rows: the owning query calls it when it starts a run.
  void reset() const;

 private:
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const ResultSet> rows_;
};

// The WITH query `common_table_expr` (a CommonTableExpr node) of the SELECT
// `select` as a shared one, or null: where it is named once, or is not a
// SELECT.
std::shared_ptr<SharedCte> shared_cte(const nlohmann::json& select, const nlohmann::json& common_table_expr);

}  // namespace tally::executor
