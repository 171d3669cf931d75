#pragma once
// A restarted tallyd's warm start: the most-used statements of its history
// (statement_history.hpp) run twice each, before the listener accepts (tallyd
// waits for them, bounded: StatementHistoryKeeper::kWarmStartWait), results
// dropped, so that a client's first query after a restart is not the
// process's first run of its statement. Re-planning alone (statement_history.hpp) removes the
// parse and planning of a new text; what is left is every other first-of-
// process cost on that statement's path (H100, issue 6: the first Q after a
// restart 1.05x of the best fixed configuration where the same process's
// later Qs ran at 0.97x; the engine's start path, launches and the result's
// first encoding all slower in the first run): the engine's aggregator and
// tuner for its signature, the column cache filled with its columns, the
// DataRow encoder's first run of its result shape.
//
// Safe to run unasked: only statements whose analysis is reusable over one
// table run (SELECTs over one table: no writes, no volatile functions in the
// executor), under the planning settings they were recorded with, in a
// private session; their results go nowhere. They are queries like a
// client's: they use and refine the tuning cache as any query does. Bounded:
// at most `limit` statements, and none starts once `budget` has passed
// (one that started runs to its end: a query of a table that takes longer
// than the budget delays only the history thread and a shutdown).
#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

#include "executor/shared_analyses.hpp"

namespace tally::executor {
class Database;
}

namespace tally::server {

struct HistoryRunOutcome {
  size_t ran = 0;      // statements run to their end
  size_t failed = 0;   // statements that threw (a dropped table, ...) or were not reusable over a table
  size_t skipped = 0;  // left out: over the limit, over the budget, or stopping
  double micros = 0;
};

// Runs up to `limit` of `statements`, most-used first, twice each
// (kWarmRunsPerStatement); stops early
// when `stopping()` turns true (checked between statements). Never throws.
HistoryRunOutcome run_statement_history(executor::Database& database, std::vector<executor::HistoryStatement> statements,
                                        size_t limit, std::chrono::milliseconds budget,
                                        const std::function<bool()>& stopping);

}  // namespace tally::server
