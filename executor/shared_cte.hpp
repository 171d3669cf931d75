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
#include <vector>

#include <nlohmann/json.hpp>

namespace tally::executor {

struct ExecContext;
struct PlanContext;
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

// Makes the WITH clause of `select` visible in `context` (a copy of the
// enclosing query's): each query as a WithQuery, shared where the statement
// names it more than once, a recursive one as the relation it computes
// (recursive_cte.hpp). Returns the shared ones, which the plan of `select`
// resets when it runs.
std::vector<std::shared_ptr<const SharedCte>> add_with_queries(const nlohmann::json& select, PlanContext& context);

}  // namespace tally::executor
