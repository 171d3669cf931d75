#pragma once
// tallyd's start-up preparation of the statement path. A process's first
// statement texts pay one-time costs that later texts do not: libpg_query's
// first parse (its memory contexts, the keyword and grammar tables touched for
// the first time), the binder's and planner's first use of the aggregate,
// comparison and cast lookups, the CPU engine's first run. On the 2-core VM
// the first SELECT of a fresh tallyd took ~200 us from receipt to executor
// start and its first HAVING text ~70 us more than a later new text
// (bench/cpu/RESULTS.md, "Session 8, parse"). warm_up_statement_path pays
// those once, before the listener accepts, on a private in-memory relation.
#include <cstddef>

namespace tally::server {

struct StatementWarmUp {
  size_t statements = 0;  // statements parsed, planned and run
  size_t failed = 0;      // statements that threw (logged by the caller; never fatal)
  double micros = 0;      // wall time of the whole preparation
};

// Parses, plans and runs (CPU engine, one thread) a fixed set of representative
// GROUP BY statements over a 64-row in-memory table that no catalog, tuning
// cache or session can see. Bounded (a few ms), never throws, changes no
// result: the parse cache keeps the few texts it parsed, which is what any
// client's statements would do.
StatementWarmUp warm_up_statement_path();

}  // namespace tally::server
