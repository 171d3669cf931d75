// The process's shared analyses (executor/shared_analyses.hpp): a connection
// takes another connection's analysis of the same text only while the table
// is the one it read and the planning settings are its own; texts that differ
// in a constant each get their own answer; one-off texts push out each other,
// not the texts that repeat.
#include <gtest/gtest.h>

#include "executor/sql_session.hpp"
#include "executor/shared_analyses.hpp"
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

TEST_F(SharedAnalysis, OneOffTextsPushOutEachOtherNotRepeatedOnes) {
  h.run(queries({kQ, kQ}));
  std::string many;
  for (size_t i = 0; i < executor::kMaxSharedAnalyses + 10; ++i) {
    // Each a text of its own (an alias differs).
    many += encode_messages({fe::Query{"SELECT g AS g" + std::to_string(i) + ", sum(v) FROM t GROUP BY g"}});
  }
  h.run(many);
  // A new connection still takes kQ's analysis: it was used twice, the others once.
  const uint64_t before = executor::shared_analysis_reuses();
  EXPECT_EQ(rows_text(h.run(queries({kQ}))), (Values{"1|2|15", "3|1|-7"}));
  EXPECT_EQ(executor::shared_analysis_reuses() - before, 1u);
}

}  // namespace
}  // namespace tally::protocol
