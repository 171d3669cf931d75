// The process's shared analyses and statement history (executor/shared_analyses.hpp):
// a connection takes another connection's analysis of the same text only while
// the table is the one it read and the planning settings are its own; texts
// that differ in a constant each get their own answer; a history re-planned
// into a fresh cache serves a new connection's first statement, and one whose
// table is gone is skipped, never an error for the client.
#include <gtest/gtest.h>

#include "executor/session.hpp"
#include "executor/shared_analyses.hpp"
#include "executor/statement_shape.hpp"
#include "tests/protocol/sql_session_harness.hpp"

namespace tally::protocol {
namespace {

namespace fe = frontend;
namespace be = backend;
using testing::encode_messages;
using Values = std::vector<std::string>;

using testing::rows_text;

std::string queries(std::initializer_list<std::string> texts) {
  std::string out;
  for (const auto& t : texts) out += encode_messages({fe::Query{t}});
  return out;
}

const std::string kQ = "SELECT g, count(*), sum(v) FROM t GROUP BY g HAVING sum(v) < 100 ORDER BY g";

class SharedAnalysis : public ::testing::Test {
 protected:
  void SetUp() override {
    executor::clear_shared_analyses();
    h.run(queries({"CREATE TABLE t (g int4, v int4)", "INSERT INTO t VALUES (1, 10), (2, 200), (1, 5), (3, -7)"}));
  }
  void TearDown() override { executor::clear_shared_analyses(); }
  testing::SqlSessionHarness h{true};
};

TEST_F(SharedAnalysis, ASecondConnectionTakesTheFirstsAnalysis) {
  EXPECT_EQ(rows_text(h.run(queries({kQ}))), (Values{"1|2|15", "3|1|-7"}));
  const uint64_t before = executor::shared_analysis_reuses();
  EXPECT_EQ(rows_text(h.run(queries({kQ, kQ}))), (Values{"1|2|15", "3|1|-7", "1|2|15", "3|1|-7"}));
  // The first statement of the second connection took it; the second found it in its own cache.
  EXPECT_EQ(executor::shared_analysis_reuses() - before, 1u);
}

TEST_F(SharedAnalysis, AChangedTableIsAnalyzedAgain) {
  h.run(queries({kQ}));
  const uint64_t before = executor::shared_analysis_reuses();
  EXPECT_EQ(rows_text(h.run(queries({"INSERT INTO t VALUES (2, -150)", kQ}))), (Values{"1|2|15", "2|2|50", "3|1|-7"}));
  EXPECT_EQ(rows_text(h.run(queries({"TRUNCATE t", kQ}))), (Values{}));
  EXPECT_EQ(rows_text(h.run(queries({"DROP TABLE t", "CREATE TABLE t (g text, v int8)",
                                     "INSERT INTO t VALUES ('a', 5), ('a', 6)", kQ}))),
            (Values{"a|2|11"}));
  EXPECT_EQ(rows_text(h.run(queries({"DROP TABLE t", kQ}))), (Values{"error 42P01"}));
  EXPECT_EQ(executor::shared_analysis_reuses() - before, 0u);
}

TEST_F(SharedAnalysis, OnlySessionsWithTheSamePlanningSettingsShare) {
  h.run(queries({kQ}));
  uint64_t before = executor::shared_analysis_reuses();
  // extra_float_digits is one of the settings kept apart (whether or not this plan reads it).
  EXPECT_EQ(rows_text(h.run(queries({"SET extra_float_digits = 3", kQ}))), (Values{"1|2|15", "3|1|-7"}));
  EXPECT_EQ(executor::shared_analysis_reuses() - before, 0u);
  // The engine is the executor's: the analysis is the same.
  before = executor::shared_analysis_reuses();
  EXPECT_EQ(rows_text(h.run(queries({"SET tally.engine = cpu", kQ}))), (Values{"1|2|15", "3|1|-7"}));
  EXPECT_EQ(executor::shared_analysis_reuses() - before, 1u);
}

TEST_F(SharedAnalysis, TextsThatDifferInAConstantEachGetTheirAnswer) {
  const std::string other = "SELECT g, count(*), sum(v) FROM t GROUP BY g HAVING sum(v) < -1 ORDER BY g";
  const std::string third = "SELECT g, count(*), sum(v) FROM t GROUP BY g HAVING sum(v) < 1000 ORDER BY g";
  h.run(queries({kQ}));
  EXPECT_EQ(rows_text(h.run(queries({other, kQ, third}))), (Values{"3|1|-7", "1|2|15", "3|1|-7", "1|2|15", "2|1|200", "3|1|-7"}));
}

TEST_F(SharedAnalysis, TheHistoryKeepsRepeatedTextsAndReplansThem) {
  h.run(queries({kQ, kQ, kQ, "SELECT count(*) FROM t", "SELECT 1"}));
  const auto history = executor::statement_history();
  ASSERT_EQ(history.size(), 2u);  // SELECT 1 reads no table
  EXPECT_EQ(history[0].sql, kQ);  // most used first
  EXPECT_EQ(history[0].uses, 3u);
  EXPECT_EQ(history[1].uses, 1u);
  EXPECT_NE(history[0].settings.find("extra_float_digits="), std::string::npos);
  EXPECT_EQ(history[0].settings.find("tally.engine="), std::string::npos);

  // A restarted process: nothing shared, the history planned again.
  executor::clear_shared_analyses();
  const auto outcome = executor::replan_statement_history(*h.database, history);
  EXPECT_EQ(outcome.planned, 2u);
  EXPECT_EQ(outcome.failed, 0u);
  EXPECT_EQ(executor::statement_history().at(0).uses, 3u);  // the recorded count carries on
  const uint64_t before = executor::shared_analysis_reuses();
  EXPECT_EQ(rows_text(h.run(queries({kQ}))), (Values{"1|2|15", "3|1|-7"}));
  EXPECT_EQ(executor::shared_analysis_reuses() - before, 1u);

  // A re-planned analysis is a cached one: a change of the table retires it.
  EXPECT_EQ(rows_text(h.run(queries({"INSERT INTO t VALUES (3, 1)", kQ}))), (Values{"1|2|15", "3|2|-6"}));
  executor::clear_shared_analyses();
  h.run(queries({"DROP TABLE t"}));
  const auto gone = executor::replan_statement_history(*h.database, history);
  EXPECT_EQ(gone.planned, 0u);
  EXPECT_EQ(gone.failed, 2u);
  EXPECT_TRUE(executor::statement_history().empty());
}

TEST_F(SharedAnalysis, OneOffTextsPushOutEachOtherNotRepeatedOnes) {
  h.run(queries({kQ, kQ}));
  std::string many;
  for (size_t i = 0; i < executor::kMaxSharedAnalyses + 10; ++i) {
    // Each a text of its own shape (an alias, not a literal, differs).
    many += encode_messages({fe::Query{"SELECT g AS g" + std::to_string(i) + ", sum(v) FROM t GROUP BY g"}});
  }
  h.run(many);
  const auto history = executor::statement_history();
  EXPECT_EQ(history.size(), executor::kMaxSharedAnalyses);
  EXPECT_EQ(history.at(0).sql, kQ);
}

}  // namespace
}  // namespace tally::protocol

namespace tally::protocol {
namespace {

// Texts that differ from an analyzed one only in integer literals compared in
// WHERE or HAVING run from a copy of its plan (executor/statement_shape.hpp);
// every answer is the one its own analysis gives, whatever the literal.
class ShapedText : public ::testing::Test {
 protected:
  void SetUp() override {
    executor::clear_shared_analyses();
    h.run(queries({"CREATE TABLE s (g int4, v int4, w int8, x int2)",
                   "INSERT INTO s VALUES (1, 10, 100, 1), (2, 200, -5, 2), (1, 5, 7, 3), (3, -7, 0, 4), (2, -1, 9, 5)"}));
  }
  void TearDown() override { executor::clear_shared_analyses(); }
  // Runs `texts` on one connection; returns their rows and how many were shaped.
  std::pair<Values, uint64_t> run(std::initializer_list<std::string> texts) {
    const uint64_t before = executor::shape_analyses();
    Values rows = rows_text(h.run(queries(texts)));
    return {rows, executor::shape_analyses() - before};
  }
  testing::SqlSessionHarness h{true};
};

TEST_F(ShapedText, HavingConstantsEachGetTheirAnswer) {
  const auto [rows, shaped] =
      run({"SELECT g, count(*), sum(v) FROM s GROUP BY g HAVING sum(v) < -95377 ORDER BY g",
           "SELECT g, count(*), sum(v) FROM s GROUP BY g HAVING sum(v) < 16 ORDER BY g",
           "SELECT g, count(*), sum(v) FROM s GROUP BY g HAVING sum(v) < -6 ORDER BY g",
           "SELECT g, count(*), sum(v) FROM s GROUP BY g HAVING sum(v) < 0 ORDER BY g",
           "SELECT g, count(*), sum(v) FROM s GROUP BY g HAVING sum(v) < 2147483647 ORDER BY g",
           // Larger than int4: another literal class, analyzed on its own.
           "SELECT g, count(*), sum(v) FROM s GROUP BY g HAVING sum(v) < 2147483648 ORDER BY g",
           "SELECT g, count(*), sum(v) FROM s GROUP BY g HAVING sum(v) < - 15 ORDER BY g"});
  EXPECT_EQ(rows, (Values{"1|2|15", "3|1|-7", "3|1|-7", "3|1|-7", "1|2|15", "2|2|199", "3|1|-7", "1|2|15", "2|2|199",
                          "3|1|-7"}));
  // -6 after -95377; 0 and 2147483647 after 16 (a '-' is part of the shape);
  // the int8-sized literal and "- 15" make shapes of their own.
  EXPECT_EQ(shaped, 3u);
}

TEST_F(ShapedText, WhereConstantsOverEachIntegerWidth) {
  const auto [rows, shaped] = run({"SELECT g, sum(v) FROM s WHERE v > 0 AND w <= 100 GROUP BY g ORDER BY g",
                                   "SELECT g, sum(v) FROM s WHERE v > 6 AND w <= 8 GROUP BY g ORDER BY g",
                                   "SELECT g, sum(v) FROM s WHERE v > -2 AND w <= 0 GROUP BY g ORDER BY g",
                                   "SELECT count(*) FROM s WHERE x = 3", "SELECT count(*) FROM s WHERE x = 4",
                                   "SELECT count(*) FROM s WHERE x <> 1"});
  EXPECT_EQ(rows, (Values{"1|15", "2|200", "2|200", "2|200", "1", "1", "4"}));
  // The second; the third has a '-' the first lacks. An int2 column's
  // literal may be cast to int2 by the binder (then it is not shaped).
  EXPECT_GE(shaped, 1u);
}

TEST_F(ShapedText, LiteralsElsewhereMustBeEqual) {
  const auto [rows, shaped] = run({"SELECT g, sum(v) + 1 FROM s GROUP BY 1 HAVING count(*) > 1 ORDER BY 1 LIMIT 5",
                                   "SELECT g, sum(v) + 2 FROM s GROUP BY 1 HAVING count(*) > 1 ORDER BY 1 LIMIT 5",
                                   "SELECT g, sum(v) + 2 FROM s GROUP BY 1 HAVING count(*) > 1 ORDER BY 1 LIMIT 1",
                                   "SELECT g, sum(v) + 2 FROM s GROUP BY 1 HAVING count(*) > 0 ORDER BY 1 LIMIT 1",
                                   "SELECT g, sum(v) + 2 FROM s GROUP BY 1 HAVING count(*) > 0 ORDER BY 2 LIMIT 1",
                                   "SELECT g, sum(v) FROM s GROUP BY g HAVING 1 < 2 ORDER BY g",
                                   "SELECT g, sum(v) FROM s GROUP BY g HAVING 3 < 2 ORDER BY g"});
  EXPECT_EQ(rows, (Values{"1|16", "2|200", "1|17", "2|201", "1|17", "1|17", "3|-5", "1|15", "2|199", "3|-7"}));
  EXPECT_EQ(shaped, 1u);  // count(*) > 0 after > 1 (the LIMIT is the same)
}

TEST_F(ShapedText, AChangedTableOrSettingIsAnalyzedAgain) {
  const auto [rows, shaped] = run({"SELECT count(*) FROM s WHERE v > 0", "INSERT INTO s VALUES (9, 50, 1, 1)",
                                   "SELECT count(*) FROM s WHERE v > 20", "SELECT count(*) FROM s WHERE v > 30",
                                   "SET extra_float_digits = 3", "SELECT count(*) FROM s WHERE v > 5",
                                   "DROP TABLE s", "SELECT count(*) FROM s WHERE v > 6"});
  EXPECT_EQ(rows, (Values{"3", "2", "2", "3", "error 42P01"}));
  EXPECT_EQ(shaped, 1u);  // v > 30 after v > 20 on the new snapshot
}

TEST_F(ShapedText, PlanReuseOffParsesAndPlansEveryText) {
  const auto [rows, shaped] = run({"SET tally.plan_reuse = off", "SELECT count(*) FROM s WHERE v > 0",
                                   "SELECT count(*) FROM s WHERE v > 6", "SET tally.plan_reuse = on",
                                   "SELECT count(*) FROM s WHERE v > 7", "SELECT count(*) FROM s WHERE v > 10"});
  EXPECT_EQ(rows, (Values{"3", "2", "2", "1"}));
  EXPECT_EQ(shaped, 1u);  // v > 10 after v > 7
}

// Every expression kind the plan copy handles, and literals in and out of
// the positions that may change: each text's rows with shapes are those of
// its own parse and analysis (tally.plan_reuse = off).
TEST_F(ShapedText, AnswersAreThoseOfAFreshAnalysis) {
  std::vector<std::string> texts;
  for (const int c : {-100, -6, 0, 6, 2147483647}) {
    const std::string k = std::to_string(c);
    texts.push_back("SELECT g, sum(CASE WHEN v > 0 THEN v ELSE 0 END), coalesce(max(w), 0), count(*) FILTER (WHERE w > 1) "
                    "FROM s WHERE x IN (1, 2, 3, 4, 5) AND w IS NOT NULL AND v > " + k + " GROUP BY g ORDER BY g");
    texts.push_back("SELECT g, avg(v), min(w) FROM s WHERE NOT (w >= " + k + ") OR v = " + k +
                    " GROUP BY g HAVING count(*) >= 1 AND max(v) <> " + k + " ORDER BY 2 DESC, 1 LIMIT 2");
    texts.push_back("SELECT count(*), sum(w) FROM s WHERE " + k + " < w");
  }
  std::string script;
  for (const auto& t : texts) script += queries({t});
  const uint64_t before = executor::shape_analyses();
  const Values with = rows_text(h.run(script));
  const uint64_t shaped = executor::shape_analyses() - before;
  const Values without = rows_text(h.run(queries({"SET tally.plan_reuse = off"}) + script));
  EXPECT_EQ(with, without);
  EXPECT_GE(with.size(), texts.size());
  // Per kind of text: -6 after -100, and 6 and 2147483647 after 0 (a '-' is part of a shape).
  EXPECT_EQ(shaped, 9u);
}

TEST_F(ShapedText, ANewConnectionTakesAnotherConnectionsShape) {
  // Texts no other test sends (the parse cache is the process's).
  run({"SELECT count(*), 'a' FROM s WHERE v > 0"});
  const auto [rows, shaped] = run({"SELECT count(*), 'a' FROM s WHERE v > 6"});
  EXPECT_EQ(rows, (Values{"2|a"}));
  EXPECT_EQ(shaped, 1u);
  // Other planning settings: its own analysis.
  const auto [other, other_shaped] = run({"SET extra_float_digits = 3", "SELECT count(*), 'a' FROM s WHERE v > 7"});
  EXPECT_EQ(other, (Values{"2|a"}));
  EXPECT_EQ(other_shaped, 0u);
  // A changed table: its own analysis.
  const auto [changed, changed_shaped] = run({"INSERT INTO s VALUES (5, 300, 1, 1)", "SELECT count(*), 'a' FROM s WHERE v > 8"});
  EXPECT_EQ(changed, (Values{"3|a"}));
  EXPECT_EQ(changed_shaped, 0u);
}

TEST(StatementShape, LexesOnlyWhatItFollows) {
  const auto shape = executor::shape_of("SELECT a1, $1, 'x''5', \"c 7\" /* 8 /* 9 */ */ -- 10\nFROM t WHERE b < - 42 AND c > 1.5");
  ASSERT_TRUE(shape.has_value());
  ASSERT_EQ(shape->literals.size(), 1u);
  EXPECT_EQ(shape->literals[0].value, 42);
  EXPECT_GE(shape->literals[0].minus, 0);
  EXPECT_FALSE(executor::shape_of("SELECT 1e5, 2.5, 99999999999"));  // no integer literal
  EXPECT_FALSE(executor::shape_of("SELECT E'\\\\', 1"));                // escape strings are the parser's
  EXPECT_FALSE(executor::shape_of("SELECT $$5$$, 1"));
  EXPECT_FALSE(executor::shape_of("SELECT 1abc"));
  EXPECT_EQ(executor::shape_of("SELECT 3 FROM t")->key, executor::shape_of("SELECT 44 FROM t")->key);
  EXPECT_NE(executor::shape_of("SELECT 3 FROM t")->key, executor::shape_of("SELECT -3 FROM t")->key);
}

}  // namespace
}  // namespace tally::protocol
