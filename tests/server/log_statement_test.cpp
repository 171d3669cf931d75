// The query log's log_statement (server/metrics_query_log.hpp): which
// statements get a "query" line at info level (none, scans, all), that debug
// level logs every statement, that failures are logged whatever the setting,
// and that the latency histogram counts every statement either way.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/engine_counters.hpp"
#include "common/log.hpp"
#include "protocol/discarding_result_writer.hpp"
#include "server/metrics.hpp"
#include "server/metrics_query_log.hpp"
#include "tests/server/json_log_capture.hpp"

namespace tally::server {
namespace {

struct NoStatement final : tally::PreparedStatement {
  std::vector<uint32_t> parameter_types() const override { return {}; }
  std::optional<std::vector<tally::FieldDescription>> result_fields() const override { return std::nullopt; }
};

// Statements with "GROUP BY" scan a table the way the executor reports it; "1/0" fails.
struct ScanPortal final : tally::Portal {
  explicit ScanPortal(bool scans) : scans(scans) {}
  std::optional<std::vector<tally::FieldDescription>> result_fields() const override { return std::nullopt; }
  bool execute(uint64_t, tally::ResultWriter&) override {
    if (scans) count_scan(100, 800);
    return true;
  }
  bool scans;
};

class Handler final : public tally::QueryHandler {
 public:
  std::vector<std::pair<std::string, std::string>> initial_parameter_status() override { return {}; }
  void simple_query(std::string_view sql, tally::ResultWriter&) override {
    if (sql.find("1/0") != std::string_view::npos) throw Error(SqlState::division_by_zero, "division by zero");
    if (sql.find("GROUP BY") != std::string_view::npos) count_scan(100, 800);
  }
  std::unique_ptr<tally::PreparedStatement> prepare(std::string_view sql, std::span<const uint32_t>) override {
    last_prepared_ = std::string(sql);
    return std::make_unique<NoStatement>();
  }
  std::unique_ptr<tally::Portal> bind(tally::PreparedStatement&, std::span<const tally::ParameterValue>,
                                         std::span<const tally::Format>) override {
    return std::make_unique<ScanPortal>(last_prepared_.find("GROUP BY") != std::string::npos);
  }
  tally::TransactionStatus transaction_status() const override { return tally::TransactionStatus::idle; }
  void on_error() override {}
  void sync() override {}
  std::optional<uint64_t> statement_timeout_ms() const override { return std::nullopt; }

 private:
  std::string last_prepared_;
};

struct Factory final : tally::QueryHandlerFactory {
  std::unique_ptr<tally::QueryHandler> create(const tally::SessionInfo&) override {
    return std::make_unique<Handler>();
  }
};

class LogStatement : public ::testing::Test {
 protected:
  void SetUp() override {
    session_.user = "u";
    session_.database = "tally";
    session_.process_id = 7;
  }
  void TearDown() override { set_log_statement(config::LogStatement::all); }
  // Runs SELECT 1, a GROUP BY (simple), the same two through Parse/Bind/Execute,
  // and a failing statement; returns the commands of the "query" lines.
  std::vector<std::string> run_workload() {
    log_.clear();
    auto handler = factory_.create(session_);
    handler->simple_query("SELECT 1", writer_);
    handler->simple_query("SELECT k, sum(v) FROM t GROUP BY k", writer_);
    for (const char* sql : {"SELECT 2", "INSERT INTO t SELECT k FROM u GROUP BY k"}) {
      auto statement = handler->prepare(sql, {});
      handler->bind(*statement, {}, {})->execute(0, writer_);
    }
    EXPECT_THROW(handler->simple_query("SELECT 1/0", writer_), Error);
    std::vector<std::string> commands;
    for (const auto& line : log_.events("query"))
      commands.push_back(line["command"].get<std::string>() + "/" + line["protocol"].get<std::string>());
    return commands;
  }
  size_t count(const std::string& event) const { return log_.count(event); }

  Factory inner_;
  QueryLogFactory factory_{inner_};
  tally::SessionInfo session_;
  protocol::DiscardingResultWriter writer_;
  testing_log::JsonLogCapture log_;
};

TEST_F(LogStatement, NoneWritesNoQueryLineButConnectionsAndErrors) {
  set_log_statement(config::LogStatement::none);
  EXPECT_TRUE(run_workload().empty());
  EXPECT_EQ(count("connection"), 1u);
  EXPECT_EQ(count("disconnection"), 1u);
  EXPECT_EQ(count("query_failed"), 1u);
}

TEST_F(LogStatement, ScansLogsOnlyStatementsThatReadTableRows) {
  set_log_statement(config::LogStatement::scans);
  EXPECT_EQ(run_workload(), (std::vector<std::string>{"SELECT/simple", "INSERT/extended"}));
  EXPECT_EQ(count("query_failed"), 1u);
}

TEST_F(LogStatement, AllLogsEveryStatement) {
  set_log_statement(config::LogStatement::all);
  EXPECT_EQ(run_workload(),
            (std::vector<std::string>{"SELECT/simple", "SELECT/simple", "SELECT/extended", "INSERT/extended"}));
}

TEST_F(LogStatement, DebugLevelLogsEveryStatementWithItsText) {
  set_log_statement(config::LogStatement::none);
  log::set_level(log::Level::debug);
  EXPECT_EQ(run_workload().size(), 4u);
  for (const auto& line : log_.events("query")) EXPECT_TRUE(line.contains("statement"));
}

TEST_F(LogStatement, WarningLevelWritesNoQueryLineEvenWithAll) {
  set_log_statement(config::LogStatement::all);
  log::set_level(log::Level::warning);
  EXPECT_TRUE(run_workload().empty());
  EXPECT_EQ(count("query_failed"), 1u) << "errors are logged at error level";
}

TEST_F(LogStatement, TheHistogramCountsStatementsThatWriteNoLine) {
  set_log_statement(config::LogStatement::none);
  const uint64_t before = metrics::query_duration_seconds(metrics::Engine::cpu).count();
  run_workload();
  EXPECT_EQ(metrics::query_duration_seconds(metrics::Engine::cpu).count() - before, 5u);
}

}  // namespace
}  // namespace tally::server
