// Lifecycle helpers: real signals to this process, the graceful shutdown
// sequence and its grace period, and SIGHUP's configuration reload.
#include "server/lifecycle.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <random>

#include "common/log.hpp"
#include "config/config_loader.hpp"
#include "server/lifecycle_runtime.hpp"
#include "tests/common/eventually.hpp"
#include "tests/admin/http_client.hpp"

namespace tally::server {
namespace {

using namespace std::chrono_literals;

// Waits (bounded) until `done` holds.
using testing::eventually;

TEST(SignalWatcher, DeliversReloadAndShutdownRequests) {
  std::atomic<int> reloads{0};
  std::mutex m;
  std::vector<std::pair<int, bool>> shutdowns;
  SignalWatcher watcher({.on_shutdown = [&](int sig, bool hurry) {
                           std::lock_guard lock(m);
                           shutdowns.emplace_back(sig, hurry);
                         },
                         .on_reload = [&] { ++reloads; }});
  watcher.start();
  ASSERT_EQ(kill(getpid(), SIGHUP), 0);
  ASSERT_TRUE(eventually([&] { return reloads == 1; }));
  ASSERT_EQ(kill(getpid(), SIGTERM), 0);
  ASSERT_TRUE(eventually([&] { std::lock_guard lock(m); return shutdowns.size() == 1; }));
  ASSERT_EQ(kill(getpid(), SIGINT), 0);
  ASSERT_TRUE(eventually([&] { std::lock_guard lock(m); return shutdowns.size() == 2; }));
  watcher.stop();
  std::lock_guard lock(m);
  EXPECT_EQ(shutdowns[0], std::make_pair(SIGTERM, false));
  EXPECT_EQ(shutdowns[1], std::make_pair(SIGINT, true)) << "a second signal asks to hurry";
  EXPECT_EQ(reloads.load(), 1);
}

struct FakeServer {
  std::mutex m;
  std::vector<std::string> calls;
  std::atomic<size_t> running{0};
  void record(const std::string& call) {
    std::lock_guard lock(m);
    calls.push_back(call);
  }
  ShutdownSteps steps() {
    return {.stop_accepting = [this] { record("stop_accepting"); },
            .running_queries = [this] { return running.load(); },
            .cancel_queries = [this] { record("cancel"); running = 0; },
            .close_sessions = [this] { record("close_sessions"); },
            .flush = [this] { record("flush"); }};
  }
};

TEST(Shutdown, QueriesThatFinishInTheGracePeriodAreNotCancelled) {
  FakeServer server;
  server.running = 2;
  std::thread finisher([&] {
    std::this_thread::sleep_for(150ms);
    server.running = 0;
  });
  ShutdownReport report = run_shutdown(server.steps(), 5000ms);
  finisher.join();
  EXPECT_EQ(report.queries_at_start, 2u);
  EXPECT_EQ(report.queries_cancelled, 0u);
  EXPECT_GE(report.waited, 100ms);
  EXPECT_LT(report.waited, 4000ms) << "did not wait out the whole grace period";
  EXPECT_EQ(server.calls, (std::vector<std::string>{"stop_accepting", "close_sessions", "flush"}));
}

TEST(Shutdown, QueriesStillRunningAfterTheGracePeriodAreCancelled) {
  FakeServer server;
  server.running = 3;
  ShutdownReport report = run_shutdown(server.steps(), 300ms);
  EXPECT_EQ(report.queries_cancelled, 3u);
  EXPECT_GE(report.waited, 300ms);
  EXPECT_LT(report.waited, 3000ms);
  EXPECT_EQ(server.calls, (std::vector<std::string>{"stop_accepting", "cancel", "close_sessions", "flush"}));
}

TEST(Shutdown, HurryEndsTheGracePeriod) {
  FakeServer server;
  server.running = 1;
  std::atomic<bool> hurry{false};
  std::thread impatient([&] {
    std::this_thread::sleep_for(100ms);
    hurry = true;
  });
  ShutdownReport report = run_shutdown(server.steps(), 60000ms, &hurry);
  impatient.join();
  EXPECT_EQ(report.queries_cancelled, 1u);
  EXPECT_LT(report.waited, 10000ms);
}

TEST(Shutdown, NoRunningQueriesMeansNoWait) {
  FakeServer server;
  ShutdownReport report = run_shutdown(server.steps(), 60000ms);
  EXPECT_LT(report.waited, 1000ms);
  EXPECT_EQ(report.queries_cancelled, 0u);
}

class Reload : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() / ("tally-reload-" + std::to_string(rd()));
    std::filesystem::create_directories(dir_);
    file_ = (dir_ / "tally.toml").string();
    env_ = {{"TALLY_DATA_DIR", (dir_ / "data").string()}};
    log::set_sink([](std::string_view) {});
  }
  void TearDown() override {
    log::set_sink(nullptr);
    log::set_level(log::Level::info);
    log::set_format(log::Format::text);
    std::filesystem::remove_all(dir_);
  }
  void write(const std::string& text) { std::ofstream(file_) << text; }

  std::filesystem::path dir_;
  std::string file_;
  std::map<std::string, std::string> env_;
};

TEST_F(Reload, AppliesRuntimeSettingsAndKeepsTheRest) {
  write("port = 5433\nlog_level = \"info\"\nstatement_timeout_ms = 0\n"
        "[[users]]\nname = \"a\"\nmethod = \"trust\"\n");
  const char* argv[] = {"tallyd", "--config", file_.c_str()};
  auto loaded = config::load_config(3, argv, env_);
  LiveConfig live(loaded.config);
  apply_logging(loaded.config);
  auto before = live.get();

  write("port = 6000\nlog_level = \"debug\"\nlog_format = \"json\"\nstatement_timeout_ms = 2500\n"
        "[tuning]\nexplore_rate = 0.5\n"
        "[[users]]\nname = \"a\"\nmethod = \"trust\"\n"
        "[[users]]\nname = \"b\"\nmethod = \"scram-sha-256\"\npassword = \"pw\"\n");
  ReloadOutcome outcome = reload_config(3, argv, env_, live);
  ASSERT_TRUE(outcome.ok) << outcome.error;
  auto after = live.get();
  EXPECT_EQ(after->port, 5433) << "the listener's port needs a restart";
  EXPECT_EQ(after->log_level, config::LogLevel::debug);
  EXPECT_EQ(after->statement_timeout_ms, 2500u);
  EXPECT_DOUBLE_EQ(after->tuning.explore_rate, 0.5);
  ASSERT_EQ(after->users.size(), 2u);
  EXPECT_EQ(after->users[1].name, "b");
  EXPECT_EQ(log::level(), log::Level::debug);
  EXPECT_EQ(log::format(), log::Format::json);
  auto has = [](const std::vector<std::string>& v, const std::string& k) {
    return std::find(v.begin(), v.end(), k) != v.end();
  };
  for (const char* key : {"log_level", "log_format", "statement_timeout_ms", "users", "tuning.explore_rate"})
    EXPECT_TRUE(has(outcome.applied, key)) << key;
  EXPECT_EQ(outcome.need_restart, std::vector<std::string>{"port"});
  // Snapshots taken before the reload stay as they were.
  EXPECT_EQ(before->users.size(), 1u);
  EXPECT_EQ(before->log_level, config::LogLevel::info);
}

TEST_F(Reload, ABadFileChangesNothing) {
  write("log_level = \"warning\"\n");
  const char* argv[] = {"tallyd", "--config", file_.c_str()};
  LiveConfig live(config::load_config(3, argv, env_).config);
  write("log_level = \"loud\"\nport = \"x\"\n");
  ReloadOutcome outcome = reload_config(3, argv, env_, live);
  EXPECT_FALSE(outcome.ok);
  EXPECT_NE(outcome.error.find("log_level"), std::string::npos) << outcome.error;
  EXPECT_NE(outcome.error.find("tally.toml:1"), std::string::npos) << outcome.error;
  EXPECT_EQ(live.get()->log_level, config::LogLevel::warning);
}

TEST(ReloadableSettings, EveryReloadableSettingIsCopiedByReload) {
  // reload_config copies reloadable settings by name; a setting declared
  // reloadable but not copied would be reported as applied and silently kept.
  for (const char* key : {"log_level", "log_format", "max_connections", "max_message_bytes",
                          "statement_timeout_ms", "shutdown_grace_ms", "users", "http_token",
                          "tuning.enabled", "tuning.b_max"})
    EXPECT_TRUE(reloadable_setting(key)) << key;
  for (const char* key : {"port", "listen_address", "http_port", "http_address", "data_dir",
                          "tls_cert_file", "gpu_device", "column_cache_bytes", "cpu_threads", "chunk_rows"})
    EXPECT_FALSE(reloadable_setting(key)) << key;
}

uint16_t free_port() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor a(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

TEST_F(Reload, OpsRuntimeServesAdminReloadsOnSighupAndReturnsTheShutdownSignal) {
  uint16_t http_port = free_port();
  write("http_port = " + std::to_string(http_port) + "\nhttp_token = \"first\"\n");
  const char* argv[] = {"tallyd", "--config", file_.c_str()};
  auto loaded = config::load_config(3, argv, env_);
  OpsRuntime ops(3, argv, env_, loaded);
  ops.start_admin([] { return std::string("{\"entries\":[]}"); });
  ASSERT_NE(ops.admin(), nullptr);
  using testing_admin::http_get;
  EXPECT_EQ(http_get(http_port, "/ready").status, 503);
  ops.mark_ready(true);
  EXPECT_EQ(http_get(http_port, "/ready").status, 200);
  EXPECT_EQ(http_get(http_port, "/tuning", "Bearer first").status, 200);

  write("http_port = " + std::to_string(http_port) + "\nhttp_token = \"second\"\nmax_connections = 7\n");
  std::atomic<int> reloaded_max{0};
  std::thread sender([&] {
    kill(getpid(), SIGHUP);
    eventually([&] { return reloaded_max.load() == 7; });
    kill(getpid(), SIGTERM);
  });
  int sig = ops.wait_for_shutdown_signal([&](const config::Config& c) { reloaded_max = c.max_connections; });
  sender.join();
  EXPECT_EQ(sig, SIGTERM);
  EXPECT_EQ(reloaded_max.load(), 7);
  EXPECT_EQ(ops.live().get()->max_connections, 7);
  EXPECT_EQ(http_get(http_port, "/tuning", "Bearer first").status, 401);
  EXPECT_EQ(http_get(http_port, "/tuning", "Bearer second").status, 200);
  ops.stop_admin();
}

TEST_F(Reload, OpsRuntimeWithoutHttpPortStartsNoEndpoint) {
  write("");
  const char* argv[] = {"tallyd", "--config", file_.c_str()};
  auto loaded = config::load_config(3, argv, env_);
  OpsRuntime ops(3, argv, env_, loaded);
  ops.start_admin();
  EXPECT_EQ(ops.admin(), nullptr);
  std::thread sender([] { kill(getpid(), SIGQUIT); });
  EXPECT_EQ(ops.wait_for_shutdown_signal(), SIGQUIT);
  sender.join();
}

}  // namespace
}  // namespace tally::server

// Signals must be blocked before gtest or anything else starts a thread.
int main(int argc, char** argv) {
  tally::server::block_lifecycle_signals();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
