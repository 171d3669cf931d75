// tallyd's query log (server/metrics_query_log.hpp) around a scripted
// QueryHandler: one line per connection, per statement (with duration, engine,
// variant and scan figures from the thread's StatementTrace) and per error,
// the latency histogram, statement text and the engines' detail lines only
// at debug level, and the executor's
// own PreparedStatement passed back to it unchanged.
#include "server/metrics_query_log.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/engine_counters.hpp"
#include "common/log.hpp"
#include "server/metrics.hpp"
#include "tests/admin/prometheus_text.hpp"
#include "protocol/discarding_result_writer.hpp"

namespace tally::server {
namespace {

using nlohmann::json;
using testing_prom::parse_exposition;

using NullWriter = protocol::DiscardingResultWriter;

struct FakePrepared final : tally::PreparedStatement {
  std::vector<uint32_t> parameter_types() const override { return {}; }
  std::optional<std::vector<tally::FieldDescription>> result_fields() const override { return std::nullopt; }
};

struct FakePortal final : tally::Portal {
  std::optional<std::vector<tally::FieldDescription>> result_fields() const override { return std::nullopt; }
  bool execute(uint64_t, tally::ResultWriter&) override {
    count_scan(10, 80);
    return true;
  }
};

// Pretends to scan and aggregate the way the executor does on the session thread.
class FakeHandler final : public tally::QueryHandler {
 public:
  explicit FakeHandler(const tally::PreparedStatement** bound) : bound_(bound) {}
  std::vector<std::pair<std::string, std::string>> initial_parameter_status() override { return {}; }
  void simple_query(std::string_view sql, tally::ResultWriter&) override {
    if (sql.find("1/0") != std::string_view::npos) throw Error(SqlState::division_by_zero, "division by zero");
    if (sql.find("GROUP BY") != std::string_view::npos) {
      count_scan(1000, 8000);
      const std::vector<std::string> details = {"CPU: 1.0 ms on all threads", "Actual groups: 3"};
      note_aggregation("cpu", "hash-partitioned", log::enabled(log::Level::debug) ? &details : nullptr);
    }
  }
  std::unique_ptr<tally::PreparedStatement> prepare(std::string_view sql, std::span<const uint32_t>) override {
    if (sql.find("syntax") != std::string_view::npos) throw Error(SqlState::syntax_error, "syntax error");
    return std::make_unique<FakePrepared>();
  }
  std::unique_ptr<tally::Portal> bind(tally::PreparedStatement& statement, std::span<const tally::ParameterValue>,
                                         std::span<const tally::Format>) override {
    *bound_ = &statement;
    return std::make_unique<FakePortal>();
  }
  tally::TransactionStatus transaction_status() const override { return tally::TransactionStatus::idle; }
  void on_error() override {}
  void sync() override {}
  std::optional<uint64_t> statement_timeout_ms() const override { return 1234; }

 private:
  const tally::PreparedStatement** bound_;
};

class FakeFactory final : public tally::QueryHandlerFactory {
 public:
  std::unique_ptr<tally::QueryHandler> create(const tally::SessionInfo&) override {
    return std::make_unique<FakeHandler>(&bound);
  }
  const tally::PreparedStatement* bound = nullptr;
};

class QueryLog : public ::testing::Test {
 protected:
  void SetUp() override {
    log::set_sink([this](std::string_view line) { lines_.push_back(json::parse(line)); });
    log::set_format(log::Format::json);
    log::set_level(log::Level::info);
    session_.user = "alice";
    session_.database = "tally";
    session_.process_id = 4242;
    session_.startup_parameters = {{"application_name", "psql"}};
  }
  void TearDown() override {
    log::set_sink(nullptr);
    log::set_format(log::Format::text);
    log::set_level(log::Level::info);
  }
  std::vector<json> events(const std::string& name) const {
    std::vector<json> out;
    for (const auto& l : lines_)
      if (l.value("event", "") == name) out.push_back(l);
    return out;
  }

  FakeFactory inner_;
  QueryLogFactory factory_{inner_};
  tally::SessionInfo session_;
  NullWriter writer_;
  std::vector<json> lines_;
};

TEST_F(QueryLog, OneLinePerConnectionStatementAndError) {
  {
    auto handler = factory_.create(session_);
    handler->simple_query("select k, sum(v) from t GROUP BY k", writer_);
    EXPECT_THROW(handler->simple_query("SELECT 1/0", writer_), Error);
    EXPECT_EQ(handler->statement_timeout_ms(), 1234u);  // forwarded: statement_timeout still applies
  }
  auto connection = events("connection");
  ASSERT_EQ(connection.size(), 1u);
  EXPECT_EQ(connection[0]["user"], "alice");
  EXPECT_EQ(connection[0]["database"], "tally");
  EXPECT_EQ(connection[0]["pid"], 4242);
  EXPECT_EQ(connection[0]["application_name"], "psql");

  auto queries = events("query");
  ASSERT_EQ(queries.size(), 1u);
  EXPECT_EQ(queries[0]["command"], "SELECT");
  EXPECT_EQ(queries[0]["engine"], "cpu");
  EXPECT_EQ(queries[0]["variant"], "hash-partitioned");
  EXPECT_EQ(queries[0]["rows_scanned"], 1000);
  EXPECT_EQ(queries[0]["bytes_scanned"], 8000);
  EXPECT_GE(queries[0]["duration_ms"].get<double>(), 0.0);
  EXPECT_FALSE(queries[0].contains("statement")) << "statement text is for debug level only";

  auto failed = events("query_failed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]["sqlstate"], "22012");
  EXPECT_EQ(failed[0]["level"], "error");

  auto disconnection = events("disconnection");
  ASSERT_EQ(disconnection.size(), 1u);
  EXPECT_EQ(disconnection[0]["statements"], 2);
}

TEST_F(QueryLog, TheTraceIsResetBetweenStatements) {
  auto handler = factory_.create(session_);
  handler->simple_query("SELECT k FROM t GROUP BY k", writer_);
  handler->simple_query("SELECT 1", writer_);
  auto queries = events("query");
  ASSERT_EQ(queries.size(), 2u);
  EXPECT_EQ(queries[1]["engine"], "none");
  EXPECT_EQ(queries[1]["rows_scanned"], 0);
}

TEST_F(QueryLog, AggregationDetailsAreLoggedAtDebugLevelOnly) {
  auto handler = factory_.create(session_);
  handler->simple_query("SELECT k FROM t GROUP BY k", writer_);
  EXPECT_TRUE(events("query_detail").empty());
  log::set_level(log::Level::debug);
  handler->simple_query("SELECT k FROM t GROUP BY k", writer_);
  handler->simple_query("SELECT 1", writer_);  // no aggregation: no detail lines
  const auto details = events("query_detail");
  ASSERT_EQ(details.size(), 2u);
  EXPECT_EQ(details[0]["line"], "CPU: 1.0 ms on all threads");
  EXPECT_EQ(details[1]["line"], "Actual groups: 3");
  EXPECT_EQ(details[1]["pid"], 4242);
}

TEST_F(QueryLog, ExtendedProtocolExecuteIsLoggedWithItsTextAtDebugLevel) {
  log::set_level(log::Level::debug);
  auto handler = factory_.create(session_);
  auto statement = handler->prepare("  /* c */ INSERT INTO t VALUES ($1)", {});
  auto portal = handler->bind(*statement, {}, {});
  EXPECT_EQ(inner_.bound, statement.get()) << "the executor must get its own statement object back";
  EXPECT_TRUE(portal->execute(0, writer_));
  EXPECT_THROW(handler->prepare("syntax", {}), Error);
  auto queries = events("query");
  ASSERT_EQ(queries.size(), 1u);
  EXPECT_EQ(queries[0]["protocol"], "extended");
  EXPECT_EQ(queries[0]["command"], "INSERT");
  EXPECT_EQ(queries[0]["rows_scanned"], 10);
  EXPECT_EQ(queries[0]["statement"], "  /* c */ INSERT INTO t VALUES ($1)");
  ASSERT_EQ(events("query_failed").size(), 1u);
  EXPECT_EQ(events("query_failed")[0]["sqlstate"], "42601");
}

TEST_F(QueryLog, StatementsFeedTheLatencyHistogram) {
  auto count = [] { return metrics::query_duration_seconds(metrics::Engine::cpu).count(); };
  const uint64_t before = count();
  auto handler = factory_.create(session_);
  handler->simple_query("SELECT 1", writer_);
  EXPECT_THROW(handler->simple_query("SELECT 1/0", writer_), Error);
  EXPECT_EQ(count() - before, 2u);
  EXPECT_EQ(parse_exposition(metrics::global().exposition()).at("tally_query_duration_seconds_count{engine=\"cpu\"}"),
            double(count()));
}

TEST(CommandWord, FirstKeywordAfterSpaceCommentsAndParentheses) {
  EXPECT_EQ(command_word("select 1"), "SELECT");
  EXPECT_EQ(command_word("\n  -- note\n  /* block */ (SELECT 1) UNION (SELECT 2)"), "SELECT");
  EXPECT_EQ(command_word("copy t from stdin"), "COPY");
  EXPECT_EQ(command_word(""), "");
  EXPECT_EQ(command_word("   ;"), "");
  EXPECT_EQ(command_word("/* unterminated"), "");
}

}  // namespace
}  // namespace tally::server
