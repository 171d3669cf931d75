// Re-executed statements keep PostgreSQL's semantics while the session reuses
// parse trees and analyses (executor/parser.hpp's cache, SqlSession's analysis
// cache): a named statement over a table sees the rows of its Bind's time, a
// table whose columns changed type makes it fail with 0A000 "cached plan must
// not change result type", settings are read when a statement runs, now()
// moves, and repeated texts really are served from the parse cache. A SELECT
// over a table reuses its analysis while the table is unchanged
// (SqlSession::reads_current_table), and never once it changed.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "executor/parser.hpp"
#include "executor/sql_session.hpp"
#include "tests/protocol/sql_session_harness.hpp"

namespace tally::protocol {
namespace {

namespace fe = frontend;
namespace be = backend;
using testing::encode_messages;
using testing::first_values;
using Values = std::vector<std::string>;

std::string bind_execute_sync(const std::string& statement) {
  return encode_messages({fe::Bind{"", statement, {}, {}, {}}, fe::Execute{"", 0}, fe::Sync{}});
}

TEST(PreparedStatement, NamedStatementSeesRowsInsertedAfterParse) {
  testing::SqlSessionHarness h(true);
  auto out = h.run(encode_messages({fe::Query{"CREATE TABLE t (a int4)"}, fe::Query{"INSERT INTO t VALUES (1), (2)"},
                                    fe::Parse{"s", "SELECT count(*) FROM t", {}}, fe::Sync{}}) +
                   bind_execute_sync("s") + encode_messages({fe::Query{"INSERT INTO t VALUES (3)"}}) +
                   bind_execute_sync("s") + encode_messages({fe::Query{"TRUNCATE t"}}) + bind_execute_sync("s"));
  EXPECT_EQ(first_values(out), (Values{"2", "3", "0"}));
}

TEST(PreparedStatement, ChangedResultTypeIs0A000) {
  testing::SqlSessionHarness h(true);
  auto out = h.run(encode_messages({fe::Query{"CREATE TABLE t (a int4)"}, fe::Query{"INSERT INTO t VALUES (7)"},
                                    fe::Parse{"s", "SELECT a FROM t", {}}, fe::Sync{}}) +
                   bind_execute_sync("s") +
                   encode_messages({fe::Query{"DROP TABLE t"}, fe::Query{"CREATE TABLE t (a text)"},
                                    fe::Query{"INSERT INTO t VALUES ('x')"}}) +
                   bind_execute_sync("s") + encode_messages({fe::Query{"SELECT a FROM t"}}));
  // PostgreSQL 15 answers the same: the statement's result type is fixed at Parse.
  EXPECT_EQ(first_values(out), (Values{"7", "error 0A000", "x"}));
}

TEST(PreparedStatement, CachedStatementsReadSettingsWhenTheyRun) {
  testing::SqlSessionHarness h(false);
  const std::string show = "SHOW application_name";
  const std::string extended =
      encode_messages({fe::Parse{"", show, {}}, fe::Bind{"", "", {}, {}, {}}, fe::Execute{"", 0}, fe::Sync{}});
  auto out = h.run(encode_messages({fe::Query{show}}) + extended +
                   encode_messages({fe::Query{"SET application_name = 'second'"}, fe::Query{show}}) + extended +
                   encode_messages({fe::Query{"BEGIN"}, fe::Query{"SET application_name = 'third'"}, fe::Query{show},
                                    fe::Query{"ROLLBACK"}, fe::Query{show}}));
  EXPECT_EQ(first_values(out), (Values{"sql-session-test", "sql-session-test", "second", "second", "third", "second"}));
}

TEST(PreparedStatement, NowMovesBetweenExecutionsOfOneText) {
  testing::SqlSessionHarness h(false);
  const std::string now = "SELECT now()";
  const std::string extended =
      encode_messages({fe::Parse{"", now, {}}, fe::Bind{"", "", {}, {}, {}}, fe::Execute{"", 0}, fe::Sync{}});
  // One session, 5 ms between the messages: now() differs each time.
  auto values = first_values(h.run_parts({encode_messages({fe::Query{now}}), extended, encode_messages({fe::Query{now}}),
                                          extended},
                                         std::chrono::milliseconds(5)));
  ASSERT_EQ(values.size(), 4u);
  for (size_t i = 1; i < values.size(); ++i) EXPECT_NE(values[i - 1], values[i]) << i;
}

TEST(PreparedStatement, RepeatedTextsHitTheParseCache) {
  testing::SqlSessionHarness h(false);
  const std::string text = "SELECT 40 + 2 /* prepared_statement_test */";
  const auto before = executor::parse_cache_stats();
  std::string script;
  for (int i = 0; i < 10; ++i) {
    script += encode_messages({fe::Parse{"", text, {}}, fe::Bind{"", "", {}, {}, {}}, fe::Execute{"", 0}, fe::Sync{},
                               fe::Query{text}});
  }
  auto out = h.run(script);
  EXPECT_EQ(first_values(out), Values(20, "42"));
  const auto after = executor::parse_cache_stats();
  // At most the first look-up of the text misses (another test may have run it).
  EXPECT_LE(after.misses - before.misses, 1u);
  EXPECT_GE(after.hits - before.hits, 19u);
}

TEST(PreparedStatement, SyntaxErrorsAreReportedEveryTime) {
  testing::SqlSessionHarness h(false);
  auto out = h.run(encode_messages({fe::Query{"SELEC 1"}, fe::Query{"SELEC 1"}, fe::Parse{"", "SELEC 1", {}},
                                    fe::Sync{}, fe::Query{"SELECT 1"}}));
  EXPECT_EQ(first_values(out), (Values{"error 42601", "error 42601", "error 42601", "1"}));
}

using testing::rows_text;

TEST(PreparedStatement, AnalysisOverAnUnchangedTableIsReusedAndAChangedOneIsNot) {
  testing::SqlSessionHarness h(true);
  const std::string q = "SELECT g, sum(v) FROM t GROUP BY g ORDER BY g";
  const uint64_t before = executor::table_analysis_reuses();
  auto setup = h.run(encode_messages({fe::Query{"CREATE TABLE t (g int4, v int4)"},
                                      fe::Query{"INSERT INTO t VALUES (1, 10), (2, 20), (1, 5)"}, fe::Query{q},
                                      fe::Query{q}, fe::Query{q}}));
  EXPECT_EQ(rows_text(setup), (Values{"1|15", "2|20", "1|15", "2|20", "1|15", "2|20"}));
  // The first run analyzes; the next two find the same snapshot.
  EXPECT_EQ(executor::table_analysis_reuses() - before, 2u);
}

TEST(PreparedStatement, ReusedAnalysisSeesInsertsTruncateAndANewTable) {
  testing::SqlSessionHarness h(true);
  const std::string q = "SELECT g, sum(v) FROM t GROUP BY g ORDER BY g";
  auto out = h.run(encode_messages({fe::Query{"CREATE TABLE t (g int4, v int4)"},
                                    fe::Query{"INSERT INTO t VALUES (1, 10), (2, 20)"}, fe::Query{q}, fe::Query{q},
                                    fe::Query{"INSERT INTO t VALUES (3, 30), (1, 1)"}, fe::Query{q},
                                    fe::Query{"TRUNCATE t"}, fe::Query{q}, fe::Query{"INSERT INTO t VALUES (9, 9)"},
                                    fe::Query{q},
                                    // Same text, a table of other column types: no 0A000 for a simple query.
                                    fe::Query{"DROP TABLE t"}, fe::Query{"CREATE TABLE t (g text, v int8)"},
                                    fe::Query{"INSERT INTO t VALUES ('a', 5), ('a', 6)"}, fe::Query{q}, fe::Query{q},
                                    fe::Query{"DROP TABLE t"}, fe::Query{q}}));
  EXPECT_EQ(rows_text(out), (Values{"1|10", "2|20", "1|10", "2|20", "1|11", "2|20", "3|30", "9|9", "a|11", "a|11",
                                    "error 42P01"}));
}

TEST(PreparedStatement, NamedStatementOverAnUnchangedTableIsNotReplannedAtBind) {
  testing::SqlSessionHarness h(true);
  std::string script = encode_messages({fe::Query{"CREATE TABLE t (a int4)"}, fe::Query{"INSERT INTO t VALUES (1), (2)"},
                                        fe::Parse{"s", "SELECT count(*), sum(a) FROM t", {}}, fe::Sync{}});
  for (int i = 0; i < 3; ++i) script += bind_execute_sync("s");
  const uint64_t before = executor::table_analysis_reuses();
  auto out = h.run(script + encode_messages({fe::Query{"INSERT INTO t VALUES (4)"}}) + bind_execute_sync("s") +
                   bind_execute_sync("s"));
  EXPECT_EQ(rows_text(out), (Values{"2|3", "2|3", "2|3", "3|7", "3|7"}));
  // Binds after the Parse's Sync: three reuses, then the INSERT's new
  // snapshot (a new analysis, itself reused by the last Bind).
  EXPECT_EQ(executor::table_analysis_reuses() - before, 4u);
}

TEST(PreparedStatement, FunctionsOtherThanAggregatesAreAnalyzedEveryTime) {
  testing::SqlSessionHarness h(true);
  const std::string q = "SELECT now() FROM t";
  auto first = h.run(encode_messages({fe::Query{"CREATE TABLE t (a int4)"}, fe::Query{"INSERT INTO t VALUES (1)"}}));
  const uint64_t before = executor::table_analysis_reuses();
  auto values = rows_text(
      h.run_parts({encode_messages({fe::Query{q}}), encode_messages({fe::Query{q}}), encode_messages({fe::Query{q}})},
                  std::chrono::milliseconds(5)));
  ASSERT_EQ(values.size(), 3u);
  EXPECT_NE(values[0], values[1]);
  EXPECT_NE(values[1], values[2]);
  EXPECT_EQ(executor::table_analysis_reuses(), before);
}

}  // namespace
}  // namespace tally::protocol
