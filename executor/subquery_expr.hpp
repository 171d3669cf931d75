#pragma once
// Subquery expressions: EXISTS, scalar subqueries, IN / op ANY / op ALL,
// uncorrelated or correlated. A correlated subquery's references to the
// enclosing query are OuterRefExprs: the subquery's plan reads them as extra
// parameters after the statement's own, and runs once per distinct tuple of
// outer values (cached for the statement's run; SelectPlan resets the cache
// when it starts). The planner turns the common correlated forms into semi
// and anti joins instead (from_planner.cpp); this is the form that is right
// for every query.
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "executor/expression.hpp"
#include "executor/subquery_decorrelation.hpp"

namespace tally::executor {

struct SelectPlan;

// A value of the enclosing query: parameter number (count - slot) from the
// end of the parameters the subquery runs with.
class OuterRefExpr final : public Expr {
 public:
  OuterRefExpr(SqlType type, size_t slot, std::shared_ptr<const size_t> count)
      : Expr(type), slot(slot), count(std::move(count)) {}
  Vector evaluate(const EvalInput& input) const override;
  size_t slot;
  std::shared_ptr<const size_t> count;  // the subquery's number of outer values
};

enum class SubqueryKind { exists, scalar, any, all, array };

class SubqueryExpr final : public Expr {
 public:
  SubqueryExpr(SqlType type, SubqueryKind kind, std::shared_ptr<const SelectPlan> plan)
      : Expr(type), kind(kind), plan(std::move(plan)) {}
  Vector evaluate(const EvalInput& input) const override;
  // Forgets the results of earlier runs (the tables may have changed).
  void reset() const;
  // Runs the subquery now if it runs once per statement (uncorrelated, or a
  // correlated aggregate planned as one GROUP BY), on this thread with the
  // worker pool: a scan whose filter holds it then starts its pieces with
  // the result made, instead of one worker making it while the others wait.
  void run_once_ahead(const std::vector<Value>& parameters) const;
  // A grouped subquery whose outer values all come from a few known rows (a
  // hash join's held side, TPC-H Q17's 200 parts of 200,000): its grouped
  // run reads only the rows of groups whose keys are among `keys` (one
  // Vector per key slot, rows in any number and order). Later lookups of
  // another key run the whole grouped run, so an answer never depends on
  // the keys given. The first restriction of a statement's run holds.
  // `positions`: the grouped keys (by position) `keys` holds, when not all.
  void restrict_groups(const std::vector<Value>& parameters, std::vector<Vector> keys,
                       std::vector<size_t> positions = {}) const;
  // An uncorrelated subquery's values (column 0), made once per statement.
  std::shared_ptr<const Vector> values_once(const std::vector<Value>& parameters) const;

  SubqueryKind kind;
  std::shared_ptr<const SelectPlan> plan;
  // The enclosing query's values the subquery reads, over the enclosing
  // query's input (OuterRefExpr slot i reads correlated[i]).
  std::vector<ExprPtr> correlated;
  // ANY / ALL: `compare` is the comparison over a two-column input [left
  // value, subquery value]; `left` the tested expression over the
  // enclosing query's input. `hashable`: the comparison is plain equality,
  // so the subquery's values are hashed once.
  ExprPtr left;
  ExprPtr compare;
  bool hashable = false;
  // (a, b) op ANY / ALL (SELECT x, y ...), and (a, b) op (SELECT x, y) as a
  // scalar kind: the row's elements (`left` is then null), `compare` over
  // [the elements, the subquery's columns].
  // `row_hashable`: = ANY with each pair of one type, so the subquery's rows
  // are hashed once as they are.
  std::vector<ExprPtr> row_left;
  bool row_hashable = false;
  // A correlated scalar aggregate planned as one GROUP BY over its
  // correlation keys (null: evaluated per distinct outer tuple).
  std::unique_ptr<GroupedSubquery> grouped;

 private:
  struct Result;
  struct Groups;
  std::shared_ptr<const Result> result_for(const std::vector<Value>& parameters) const;
  // The result for input row r: its outer values after `base` in
  // `parameters`; an uncorrelated subquery's one result once made.
  void result_at(size_t r, const std::vector<Value>& base, const std::vector<Vector>& outer,
                 std::vector<Value>& parameters, std::shared_ptr<const Result>& result) const;
  std::shared_ptr<const Result> make_result(const std::vector<Value>& parameters) const;
  std::shared_ptr<const Groups> groups_for(const std::vector<Value>& base) const;
  // The grouped run; over the keys `restricted` holds when it is given.
  std::shared_ptr<Groups> make_groups(const std::vector<Value>& base, std::shared_ptr<Groups> restricted) const;
  Vector evaluate_grouped(const EvalInput& input, const std::vector<Value>& base, std::vector<Vector> outer) const;
  Vector evaluate_row(const EvalInput& input, const std::vector<Value>& base, const std::vector<Vector>& outer) const;
  mutable std::mutex mutex_;
  // Each result is made once: the first evaluation of a tuple makes it,
  // one of another thread waits for it. At most kCachedResults are kept (a
  // correlated subquery over a million distinct outer rows would otherwise
  // hold a million results, and take seconds to free when the statement
  // ends or is cancelled); past it the cache starts afresh.
  static constexpr size_t kCachedResults = size_t{1} << 16;
  mutable std::map<std::string, std::shared_future<std::shared_ptr<const Result>>> cache_;
  // Held while the grouped run is made, so concurrent evaluations wait for one run.
  mutable std::mutex groups_mutex_;
  mutable std::shared_ptr<const Groups> groups_;
  mutable std::shared_ptr<const Groups> restricted_;  // restrict_groups' run
};

}  // namespace tally::executor
