#pragma once
// The ExecContext of the statement a thread runs, for the plans that run
// below its expressions and relations with no context of their own (scalar,
// IN and EXISTS subqueries, a set-returning function's inner plan, WITH
// RECURSIVE's steps): they run with the statement's engine settings (SET
// tally.engine, tally.lookup_joins, jit, a forced variant or launch
// configuration), its GPU engine and its memory budget. A subquery over a
// join then takes the lookup form the GPU runs, as the statement itself
// does (TPC-H Q11's HAVING subquery), and a session's `SET tally.engine =
// 'cpu'` holds in its subqueries too.
//
// The statement's outermost run_select installs it on its thread. A plan
// first run on a pool worker (a subquery a scan's read-ahead evaluates)
// finds none there and runs with the defaults: the same answers, its
// engine chosen as for a session that set nothing.
#include <vector>

#include "executor/select_plan.hpp"

namespace tally::executor {

// The installed statement's context on this thread; null where none is.
const ExecContext* current_statement_context();

// Installs `context` for this thread while it lives, unless a statement's
// context is installed already (a nested run_select keeps the outermost).
class StatementContextScope {
 public:
  explicit StatementContextScope(const ExecContext& context);
  ~StatementContextScope();
  StatementContextScope(const StatementContextScope&) = delete;
  StatementContextScope& operator=(const StatementContextScope&) = delete;

 private:
  bool installed_ = false;
};

// A context for a nested plan's run: `parameters`, this thread's cancel
// token, and the installed statement's engine settings, GPU engine and
// memory budget.
ExecContext nested_context(const std::vector<Value>* parameters);

}  // namespace tally::executor
