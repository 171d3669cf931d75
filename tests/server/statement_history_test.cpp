// tallyd's statement history file (server/statement_history.hpp): records
// survive any text (newlines, quotes), a torn tail loses only itself, and a
// keeper that stops saves what ran so that the next keeper on the directory
// re-plans it before a client asks.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "executor/database.hpp"
#include "executor/parser.hpp"
#include "executor/session.hpp"
#include "protocol/discarding_result_writer.hpp"
#include "server/statement_history.hpp"

namespace tally::server {
namespace {

using executor::HistoryStatement;

TEST(StatementHistoryFile, RoundTripsAnyText) {
  const std::vector<HistoryStatement> statements = {
      {"SELECT g, sum(v)\nFROM t -- 'x'\nGROUP BY g", "datestyle=ISO, MDY\nsearch_path=\"$user\", public\n", 7},
      {"SELECT 1 FROM \"a\nb\"", "", 1}};
  const auto decoded = decode_statement_history(encode_statement_history(statements));
  ASSERT_EQ(decoded.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(decoded[i].sql, statements[i].sql);
    EXPECT_EQ(decoded[i].settings, statements[i].settings);
    EXPECT_EQ(decoded[i].uses, statements[i].uses);
  }
}

TEST(StatementHistoryFile, ATornTailLosesOnlyItself) {
  const std::string bytes = encode_statement_history({{"SELECT a FROM t", "x=1\n", 2}, {"SELECT b FROM t", "x=1\n", 1}});
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    const auto decoded = decode_statement_history(bytes.substr(0, cut));
    const size_t whole_first = encode_statement_history({{"SELECT a FROM t", "x=1\n", 2}}).size();
    EXPECT_EQ(decoded.size(), cut >= whole_first ? 1u : 0u) << cut;
  }
  EXPECT_TRUE(decode_statement_history("garbage\n").empty());
  EXPECT_TRUE(decode_statement_history("1 999999999999 5\nSELECT").empty());
}

TEST(StatementHistoryKeeper, ARestartedKeeperReplansWhatRanBefore) {
  char pattern[] = "/tmp/tally-history-XXXXXX";
  const std::string dir = mkdtemp(pattern);
  config::Config config;
  config.gpu_device = -2;
  config.data_dir = dir;
  const std::string q = "SELECT g, sum(v) FROM t GROUP BY g";
  const auto run = [](executor::Database& database, const std::string& sql) {
    protocol::SessionInfo info;
    info.user = "tally";
    info.database = "tally";
    executor::Session session(&database, &database.tables(), info);
    protocol::DiscardingResultWriter out;
    session.simple_query(sql, out);
  };
  executor::clear_shared_analyses();
  {
    auto database = executor::Database::open(config);
    StatementHistoryKeeper keeper(*database, dir);
    run(*database, "CREATE TABLE t (g int4, v int4)");
    run(*database, "INSERT INTO t VALUES (1, 2)");
    run(*database, q);
    keeper.stop();
  }
  const auto saved = load_statement_history(dir);
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved[0].sql, q);

  executor::clear_shared_analyses();  // a new process
  {
    auto database = executor::Database::open(config);
    StatementHistoryKeeper keeper(*database, dir);
    for (int i = 0; i < 500 && !keeper.replanned(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(keeper.replanned());
    const uint64_t before = executor::shared_analysis_reuses();
    run(*database, q);
    EXPECT_EQ(executor::shared_analysis_reuses() - before, 1u);
  }
  executor::clear_shared_analyses();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tally::server
