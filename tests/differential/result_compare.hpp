#pragma once
// Running a statement on PostgreSQL and comparing its outcome with Tally's:
// the same SQLSTATE when PostgreSQL fails, else the same result type OIDs and
// the same rows, in order when the query orders every column, else as a
// multiset; float4/float8 values within 1e-9 relative (absolute near zero,
// where sums in another order differ by rounding alone).
#include <libpq-fe.h>

#include <string>

#include "tests/executor/query_outcome.hpp"

namespace tally::testing {

executor::testing::QueryOutcome run_postgres(PGconn* conn, const std::string& sql);

// An empty string when the outcomes match, else what differs.
std::string compare_outcomes(const executor::testing::QueryOutcome& pg, const executor::testing::QueryOutcome& tally,
                             bool ordered);

}  // namespace tally::testing
