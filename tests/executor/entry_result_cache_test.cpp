// Results of an expression over a text column's dictionary entries are kept
// for the statements after (executor/entry_result_cache.hpp): a statement
// that repeats the expression reuses them and answers as the generic path
// (which evaluates every row) does; a column that grew, another constant,
// another time zone or a function that reads a setting never reads a
// result made for something else.
#include <gtest/gtest.h>

#include <string>

#include "executor/column_program_compiler.hpp"
#include "executor/entry_result_cache.hpp"
#include "tests/executor/embedded_database.hpp"
#include "tests/executor/query_outcome.hpp"

namespace tally::executor {
namespace {

using testing::QueryOutcome;
using testing::run_simple_query;

// Distinct URLs: more than the compiler lists codes for, so conditions are
// verdicts by code.
constexpr int kUrls = kTextConditionEntries + 5000;

class EntryResultCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clear_entry_result_cache();
    run("CREATE TABLE pages (id int, url text, seen text)");
    run("INSERT INTO pages SELECT g, CASE WHEN g % 40 = 0 THEN NULL ELSE 'http://site' || (g % 97) || '.example/p' || "
        "(g % " + std::to_string(kUrls) + ") END, '2024-03-' || (10 + g % 20) || ' 23:30:00' "
        "FROM generate_series(1, 60000) g");
  }
  QueryOutcome run(const std::string& sql) {
    QueryOutcome r = run_simple_query(db_.session(), sql);
    EXPECT_TRUE(r.ok) << sql << ": " << r.sqlstate << " " << r.message;
    return r;
  }
  // `sql`'s rows, as the generic path gives them and as the engines do.
  void expect(const std::string& sql) {
    run("SET tally.engine = 'generic'");
    const auto want = run(sql).rows;
    run("SET tally.engine = 'auto'");
    EXPECT_FALSE(want.empty()) << sql;
    EXPECT_EQ(run(sql).rows, want) << sql;
  }
  // `sql` answers as the generic path does before and after `change`, and
  // its answer differs between the two: nothing kept before it is read after.
  void expect_changed_by(const std::string& sql, const std::string& change) {
    expect(sql);
    const auto before = run(sql).rows;
    run(change);
    expect(sql);
    EXPECT_NE(run(sql).rows, before) << sql << " after " << change;
  }
  testing::EmbeddedDatabase db_{"tally-entry-cache", [](config::Config& c) { c.chunk_rows = 20000; }};
};

TEST_F(EntryResultCacheTest, ARepeatedExpressionReusesTheKeptResult) {
  const std::string q =
      "SELECT id % 7, count(*) FROM pages WHERE substring(url from 8 for 6) IN ('site1.', 'site42') GROUP BY 1 ORDER BY 1";
  expect(q);
  const EntryResultCacheStats first = entry_result_cache_stats();
  EXPECT_GE(first.results, 1u);
  EXPECT_GT(first.bytes, 0u);
  expect(q);
  EXPECT_GT(entry_result_cache_stats().hits, first.hits);
  // The same expression in another statement, its column at another place.
  expect("SELECT count(*), sum(id) FROM pages WHERE substring(url from 8 for 6) IN ('site1.', 'site42') AND id > 100");
  // Another constant is another expression.
  expect("SELECT count(*), sum(id) FROM pages WHERE substring(url from 8 for 6) IN ('site1.', 'site43') AND id > 100");
  expect("SELECT length(url), count(*) FROM pages GROUP BY 1 ORDER BY 1");
  expect("SELECT sum(length(url)) FROM pages");
}

TEST_F(EntryResultCacheTest, AScanFilterReadsTheVerdictsAnAggregateMade) {
  // Every row its own value: a scan tests such a column per row, unless
  // the entries' verdicts are kept.
  run("CREATE TABLE phones (id int, phone text)");
  run("INSERT INTO phones SELECT g, (10 + g % 25) || '-' || (1000000 + g) FROM generate_series(1, 50000) g");
  const std::string condition = "substring(phone from 1 for 2) IN ('13', '31', '23')";
  expect("SELECT count(*) FROM phones WHERE " + condition);
  const uint64_t hits = entry_result_cache_stats().hits;
  expect("SELECT id, phone FROM phones WHERE " + condition + " ORDER BY id");
  EXPECT_GT(entry_result_cache_stats().hits, hits);
  // A statement whose scalar subquery tests the same condition first.
  expect("SELECT count(*) FROM phones WHERE " + condition + " AND id > (SELECT avg(id) FROM phones WHERE " +
         condition + ")");
}

TEST_F(EntryResultCacheTest, AScanFilterOverDistinctValuesKeepsItsVerdicts) {
  // As many entries as rows (names of parts): the first statement tests
  // each entry once, as it would each row, and the next looks them up.
  run("CREATE TABLE names (id int, name text)");
  run("INSERT INTO names SELECT g, 'part ' || g || CASE WHEN g % 7 = 0 THEN ' green' ELSE ' blue' END "
      "FROM generate_series(1, 50000) g");
  const std::string q = "SELECT id FROM names WHERE name LIKE '%green%' ORDER BY id";
  expect(q);
  const EntryResultCacheStats first = entry_result_cache_stats();
  EXPECT_GE(first.results, 1u);
  expect(q);
  EXPECT_GT(entry_result_cache_stats().hits, first.hits);
}

TEST_F(EntryResultCacheTest, AColumnThatGrewIsEvaluatedAgain) {
  expect_changed_by("SELECT count(*), sum(id) FROM pages WHERE url LIKE '%p1234%' OR length(url) > 29",
                    "INSERT INTO pages SELECT g, 'http://new.example/p1234/' || g, '2024-01-01' "
                    "FROM generate_series(1, 3000) g");
  expect("SELECT regexp_replace(url, '^http://([^/]+)/.*$', '\\1') AS host, count(*) FROM pages GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5");
}

TEST_F(EntryResultCacheTest, ASettingReadByTheExpressionIsNotKept) {
  const std::string q = "SELECT count(*) FROM pages WHERE url || current_setting('application_name') LIKE '%p12z'";
  run("SET application_name = 'z'");
  const auto with_z = run(q).rows;
  run("SET application_name = 'y'");
  const auto with_y = run(q).rows;
  EXPECT_NE(with_z, with_y);
  run("SET tally.engine = 'generic'");
  EXPECT_EQ(run(q).rows, with_y);
  run("SET tally.engine = 'auto'");
}

TEST_F(EntryResultCacheTest, TheTimeZoneIsPartOfTheKey) {
  // A text cast to timestamptz reads the session's zone: the day it falls
  // on differs between the two (the 10th in UTC, the 11th in New York).
  const std::string q = "SELECT count(*) FROM pages WHERE extract(day from seen::timestamptz AT TIME ZONE 'UTC') = 10";
  run("SET TIME ZONE 'UTC'");
  const auto utc = run(q).rows;
  expect_changed_by(q, "SET TIME ZONE 'America/New_York'");
  run("SET TIME ZONE 'UTC'");
  EXPECT_EQ(run(q).rows, utc);
}

}  // namespace
}  // namespace tally::executor
