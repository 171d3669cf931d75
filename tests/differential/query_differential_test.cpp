// Differential test of the relational shapes: random joins, subqueries, WITH,
// window functions, set operations, DISTINCT [ON], grouping sets and ORDER BY
// ... LIMIT over tables with NULLs, duplicate keys and an empty table
// (query_shapes.hpp), run on Tally in process and on PostgreSQL 15. Answers
// must be identical (result_compare.hpp); a mismatch prints the seed and the
// query. --queries=N and --seed=S (or TALLY_DIFF_QUERIES / TALLY_DIFF_SEED)
// make a longer soak run; the default is what CI runs.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>

#include "tests/differential/differential_fixture.hpp"
#include "tests/differential/query_shapes.hpp"

namespace tally::testing {
namespace {

TEST(QueryDifferential, RandomRelationalQueriesMatchPostgres) {
  const uint64_t seed = differential_option("--seed", "TALLY_DIFF_SEED", 20261129);
  const uint64_t wanted = differential_option("--queries", "TALLY_DIFF_QUERIES", 2000);
  const bool verbose = std::getenv("TALLY_DIFF_VERBOSE") != nullptr;
  DifferentialServers servers(64);
  FuzzRandom data(seed);
  for (const auto& statement : fuzz_schema_statements(data)) ASSERT_EQ(servers.both(statement), "");
  // A runaway query fails (57014 on both) instead of hanging the run.
  ASSERT_EQ(servers.both("SET statement_timeout = '30s'"), "");

  QueryGenerator generator(seed);
  std::set<std::string> seen;
  std::map<std::string, size_t> errors_both;
  size_t mismatches = 0, errors = 0, rows = 0;
  const auto start = std::chrono::steady_clock::now();
  for (size_t attempts = 0; seen.size() < wanted && attempts < wanted * 10; ++attempts) {
    const GeneratedQuery query = generator.next();
    if (!seen.insert(query.sql).second) continue;
    const auto p = servers.postgres(query.sql);
    const auto t = servers.tally(query.sql);
    if (!p.ok) {
      ++errors;
      if (++errors_both[p.sqlstate] <= 3 && verbose) std::printf("PostgreSQL error: %s\n  %s", query.sql.c_str(), p.message.c_str());
    }
    rows += p.rows.size();
    const std::string diff = compare_outcomes(p, t, query.ordered);
    if (!diff.empty()) {
      ++mismatches;
      // A second run of both says whether the mismatch repeats (a wrong
      // answer) or came once (a race, or a server that was not itself).
      const std::string again = compare_outcomes(servers.postgres(query.sql), servers.tally(query.sql), query.ordered);
      if (mismatches <= 20) {
        ADD_FAILURE() << "seed " << seed << " query " << seen.size() << "\n" << query.sql << "\n" << diff
                      << (again.empty() ? "\non a second run both agree" : "\non a second run they differ again");
      }
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto version = servers.postgres("SHOW server_version");
  std::printf("query differential: %zu distinct queries in %.1f s, %zu rows, %zu mismatches, %zu PostgreSQL errors (seed %llu, PostgreSQL %s)\n",
              seen.size(), seconds, rows, mismatches, errors, static_cast<unsigned long long>(seed),
              version.rows.empty() || !version.rows[0][0] ? "?" : version.rows[0][0]->c_str());
  for (const auto& [code, n] : errors_both) std::printf("  PostgreSQL errors with SQLSTATE %s: %zu\n", code.c_str(), n);
  EXPECT_GE(seen.size(), wanted);
  EXPECT_EQ(mismatches, 0u) << "of " << seen.size() << " queries (seed " << seed << ")";
  // The generator writes valid SQL: errors must stay rare, or the test
  // compares error codes instead of answers.
  EXPECT_LT(errors, seen.size() / 20);
}

}  // namespace
}  // namespace tally::testing
