// Differential test: a deterministic random generator (group_by_shapes.hpp)
// produces at least 2,000 distinct GROUP BY queries (some with ROLLUP / CUBE)
// and set operations (UNION / INTERSECT / EXCEPT [ALL]) over a table with
// NULLs, skewed and uniform keys, negative and extreme values, non-ASCII text
// keys, dates and numerics. Each runs on Tally (in-process session: CPU engine
// or generic path, as the planner picks) and on a PostgreSQL 15 started by the
// test; result_compare.hpp compares them. The seed and the query are printed
// on a mismatch. --seed / --queries (or TALLY_DIFF_SEED / TALLY_DIFF_QUERIES)
// override the defaults.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/differential/differential_fixture.hpp"
#include "tests/differential/group_by_shapes.hpp"

namespace tally::testing {
namespace {

using Result = executor::testing::QueryOutcome;

TEST(Differential, RandomGroupByQueriesMatchPostgres) {
  const uint64_t seed = differential_option("--seed", "TALLY_DIFF_SEED", 20261122);
  const uint64_t wanted = differential_option("--queries", "TALLY_DIFF_QUERIES", 2000);
  Generator gen(seed);
  DifferentialServers servers(1024);  // several chunks, so engines merge across chunks

  ASSERT_EQ(servers.both("CREATE TABLE d (k_small int, k_uni int, k_neg bigint, k_text text, k_date date, "
                         "k_num numeric(6,3), v_int int, v_big bigint, v_float float8, v_num numeric(10,2), "
                         "v_small smallint, flag boolean)"),
            "");
  const auto rows = gen.rows(6000);
  for (size_t i = 0; i < rows.size(); i += 500) {
    std::string insert = "INSERT INTO d VALUES ";
    for (size_t j = i; j < std::min(rows.size(), i + 500); ++j) insert += (j > i ? ", " : "") + rows[j];
    ASSERT_EQ(servers.both(insert), "");
  }

  std::set<std::string> seen;
  size_t mismatches = 0, errors_both = 0, limit_short_circuits = 0;
  std::map<std::string, size_t> error_codes;
  size_t attempts = 0;
  while (seen.size() < wanted && attempts < wanted * 20) {
    ++attempts;
    const std::string sql = gen.query();
    if (!seen.insert(sql).second) continue;
    const Result p = servers.postgres(sql);
    const Result t = servers.tally(sql);
    if (!p.ok && !t.ok) {
      ++errors_both;
      if (++error_codes[p.sqlstate] <= 3 && std::getenv("TALLY_DIFF_VERBOSE")) {
        std::printf("error on both: %s\n  %s\n", sql.c_str(), p.message.c_str());
      }
    }
    // With ORDER BY ... LIMIT over sorted input, PostgreSQL may stop before
    // aggregating later groups; an overflow there is an error only Tally sees.
    if (p.ok && !t.ok && t.sqlstate == "22003" && sql.find(" LIMIT ") != std::string::npos) {
      ++limit_short_circuits;
      continue;
    }
    const std::string diff = compare_outcomes(p, t, gen.last_ordered_);
    if (!diff.empty()) {
      ++mismatches;
      if (mismatches <= 20) ADD_FAILURE() << "seed " << seed << "\n" << sql << "\n" << diff;
    }
  }
  EXPECT_GE(seen.size(), wanted);
  EXPECT_EQ(mismatches, 0u) << "of " << seen.size() << " queries (seed " << seed << ")";
  // Errors are allowed only where PostgreSQL errs too, and must stay rare.
  EXPECT_LT(errors_both, seen.size() / 10);
  EXPECT_LT(limit_short_circuits, seen.size() / 100);
  std::printf("differential: %zu distinct queries, %zu mismatches, %zu errors on both (seed %llu)\n", seen.size(),
              mismatches, errors_both, static_cast<unsigned long long>(seed));
  for (const auto& [code, n] : error_codes) std::printf("  errors on both with SQLSTATE %s: %zu\n", code.c_str(), n);
}

}  // namespace
}  // namespace tally::testing
