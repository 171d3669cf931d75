// A restarted tallyd's warm runs of its statement history
// (server/statement_history_run.hpp): only SELECTs over one table run, most
// used first, each through the executor to its end; a tampered history file
// (a write, a dropped table) runs nothing else; the limit, the budget and a
// stop leave the rest.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "executor/database.hpp"
#include "executor/session.hpp"
#include "server/statement_history.hpp"
#include "server/statement_history_run.hpp"
#include "tests/executor/recording_writer.hpp"

namespace tally::server {
namespace {

using executor::HistoryStatement;

class StatementHistoryRun : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tally-history-run-XXXXXX";
    dir_ = mkdtemp(pattern);
    config_.gpu_device = -2;
    config_.data_dir = dir_;
    executor::clear_shared_analyses();
    database_ = executor::Database::open(config_);
    run("CREATE TABLE t (g int4, v int4)");
    run("INSERT INTO t VALUES (1, 2), (1, 3), (2, 5)");
  }
  void TearDown() override {
    database_.reset();
    executor::clear_shared_analyses();
    std::filesystem::remove_all(dir_);
  }
  // A client's statement; the rows of its result as "a|b" lines.
  std::vector<std::string> run(const std::string& sql) {
    protocol::SessionInfo info;
    info.user = "tally";
    info.database = "tally";
    executor::Session session(database_.get(), &database_->tables(), info);
    executor::testing::RecordingWriter out;
    session.simple_query(sql, out);
    std::vector<std::string> rows;
    for (const auto& result : out.results)
      for (const auto& row : result.rows) {
        std::string line;
        for (const auto& field : row) line += (line.empty() ? "" : "|") + field.value_or("NULL");
        rows.push_back(line);
      }
    return rows;
  }
  HistoryRunOutcome warm(std::vector<HistoryStatement> statements, size_t limit,
                         std::chrono::milliseconds budget = std::chrono::seconds(10), bool stop = false) {
    return run_statement_history(*database_, std::move(statements), limit, budget, [stop] { return stop; });
  }

  std::string dir_;
  config::Config config_;
  std::unique_ptr<executor::Database> database_;
};

TEST_F(StatementHistoryRun, RunsTheMostUsedSelectsAndNothingElse) {
  const std::vector<HistoryStatement> history = {
      {"SELECT count(*) FROM t", "", 1},
      // A tampered or hand-edited file: a write is never run.
      {"INSERT INTO t VALUES (9, 9)", "", 100},
      {"SELECT g, sum(v) FROM t GROUP BY g", "", 5},
      {"SELECT g, sum(v) FROM gone GROUP BY g", "", 3},
      // Analyzes, fails while it runs: proof that the run executes.
      {"SELECT g, 1 / (sum(v) - sum(v)) FROM t GROUP BY g", "", 4},
  };
  const HistoryRunOutcome outcome = warm(history, 4);
  EXPECT_EQ(outcome.ran, 1u);     // sum(v)
  EXPECT_EQ(outcome.failed, 3u);  // the INSERT, the division by zero, the missing table
  EXPECT_EQ(outcome.skipped, 1u);  // count(*): the least used, over the limit of 4
  EXPECT_EQ(run("SELECT count(*) FROM t"), std::vector<std::string>{"3"});  // no row was inserted
  EXPECT_EQ(run("SELECT g, sum(v) FROM t GROUP BY g ORDER BY g"), (std::vector<std::string>{"1|5", "2|5"}));
}

TEST_F(StatementHistoryRun, TheBudgetTheLimitAndAStopLeaveTheRest) {
  const std::vector<HistoryStatement> history = {{"SELECT g, sum(v) FROM t GROUP BY g", "", 2},
                                                 {"SELECT g, min(v) FROM t GROUP BY g", "", 1}};
  HistoryRunOutcome o = warm(history, 0);
  EXPECT_EQ(o.ran, 0u);
  EXPECT_EQ(o.skipped, 2u);
  o = warm(history, 8, std::chrono::milliseconds(0));
  EXPECT_EQ(o.ran, 0u);
  EXPECT_EQ(o.skipped, 2u);
  o = warm(history, 8, std::chrono::seconds(10), /*stop=*/true);
  EXPECT_EQ(o.ran, 0u);
  EXPECT_EQ(o.skipped, 2u);
  o = warm(history, 8);
  EXPECT_EQ(o.ran, 2u);
  EXPECT_EQ(o.skipped, 0u);
}

TEST_F(StatementHistoryRun, ARestartedKeeperRunsItsHistoryOnce) {
  const std::string q = "SELECT g, sum(v) FROM t GROUP BY g";
  {
    StatementHistoryKeeper keeper(*database_, dir_);
    run(q);
    keeper.stop();
  }
  executor::clear_shared_analyses();  // a new process
  const uint64_t reuses = executor::shared_analysis_reuses();
  StatementHistoryKeeper keeper(*database_, dir_, /*warm_runs=*/8);
  ASSERT_TRUE(keeper.wait_until_warm(std::chrono::seconds(5)));
  // Its one run, through the analysis the re-planning shared (a client's path).
  EXPECT_EQ(executor::shared_analysis_reuses() - reuses, 1u);
  EXPECT_EQ(run(q + " ORDER BY g"), (std::vector<std::string>{"1|5", "2|5"}));
}

}  // namespace
}  // namespace tally::server
