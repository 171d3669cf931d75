// session_scheduling (config/config.hpp, server/server.cpp): the setting
// parses from every source with batch as the default, and a running server's
// session threads run under SCHED_BATCH exactly while batch is configured,
// the session is established and more sessions are open than hardware threads.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "config/config_loader.hpp"
#include "server/server.hpp"
#include "tests/common/eventually.hpp"
#include "tests/protocol/fake_handler.hpp"
#include "tests/protocol/wire_client.hpp"

namespace tally::server {
namespace {

using protocol::testing::FakeFactory;
using protocol::testing::WireClient;
namespace fe = protocol::frontend;
using namespace std::chrono_literals;

config::LoadResult load(std::vector<std::string> flags, std::map<std::string, std::string> env = {}) {
  flags.insert(flags.begin(), {"tallyd", "--data-dir", "/tmp/tally-session-scheduling-unused"});
  std::vector<const char*> argv;
  for (auto& f : flags) argv.push_back(f.c_str());
  return config::load_config(static_cast<int>(argv.size()), argv.data(), env);
}

TEST(SessionSchedulingSetting, ParsesWithBatchAsTheDefault) {
  EXPECT_EQ(load({}).config.session_scheduling, config::SessionScheduling::batch);
  EXPECT_EQ(load({"--session-scheduling", "normal"}).config.session_scheduling,
            config::SessionScheduling::normal);
  auto loaded = load({"--session-scheduling", "normal"}, {{"TALLY_SESSION_SCHEDULING", "batch"}});
  EXPECT_EQ(loaded.config.session_scheduling, config::SessionScheduling::batch);
  EXPECT_THROW(load({"--session-scheduling", "fifo"}), config::ConfigError);
  EXPECT_NE(config::help_text().find("--session-scheduling"), std::string::npos);
}

using testing::eventually;

// How many of this process's threads run under the policy (/proc's
// task/<tid>/stat, field 41).
int threads_with_policy(int policy) {
  int count = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(task.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t close = text.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(text.substr(close + 2));  // from field 3 (state) on
    std::string field;
    for (int number = 3; number <= 41 && fields >> field; ++number) {
      if (number == 41 && std::atoi(field.c_str()) == policy) ++count;
    }
  }
  return count;
}

class SessionScheduling : public ::testing::TestWithParam<config::SessionScheduling> {};

// Sends one query and reads its answer: afterwards the session has gone
// back to reading, where it follows the policy.
void round_trip(WireClient& client) {
  client.send(fe::encode(fe::Query{"rows 1"}));
  ASSERT_EQ(client.read_until_ready().size(), 4u);  // the session answers either way
}

TEST_P(SessionScheduling, BatchOnlyWhileSessionsOutnumberHardwareThreads) {
  config::Config config;
  config.port = 0;
  config.session_scheduling = GetParam();
  FakeFactory factory;
  Server server(config, factory);
  server.start();
  const int batch_before = threads_with_policy(SCHED_BATCH);
  const int many = static_cast<int>(server.busy_poll().hardware_threads()) + 1;
  {
    std::vector<std::unique_ptr<WireClient>> clients;
    clients.push_back(std::make_unique<WireClient>(server.port()));
    // Connected, no startup packet yet: the session thread keeps its policy.
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(threads_with_policy(SCHED_BATCH), batch_before);
    clients[0]->startup();
    clients[0]->read_until_ready();
    round_trip(*clients[0]);
    // One session: fewer than the hardware threads, never batch.
    EXPECT_EQ(threads_with_policy(SCHED_BATCH), batch_before);
    for (int i = 1; i < many; ++i) {
      clients.push_back(std::make_unique<WireClient>(server.port()));
      clients.back()->startup();
      clients.back()->read_until_ready();
    }
    for (auto& client : clients) round_trip(*client);
    // Every session read again with more sessions open than hardware threads.
    // A session changes its policy just before its next read, which may come
    // a moment after the client has its answer: wait for it (bounded).
    const int expected = GetParam() == config::SessionScheduling::batch ? many : 0;
    eventually([&] { return threads_with_policy(SCHED_BATCH) == batch_before + expected; }, 2s);
    EXPECT_EQ(threads_with_policy(SCHED_BATCH), batch_before + expected);
    // Back to one session: it returns to SCHED_OTHER at its next read.
    clients.resize(1);
    ASSERT_TRUE(eventually([&] { return server.busy_poll().open() == 1; }));
    round_trip(*clients[0]);
    eventually([&] { return threads_with_policy(SCHED_BATCH) == batch_before; }, 2s);
    EXPECT_EQ(threads_with_policy(SCHED_BATCH), batch_before);
  }
  server.stop(1s);
}

INSTANTIATE_TEST_SUITE_P(Policy, SessionScheduling,
                         ::testing::Values(config::SessionScheduling::batch,
                                           config::SessionScheduling::normal),
                         [](const auto& info) {
                           return info.param == config::SessionScheduling::batch ? "batch" : "normal";
                         });

}  // namespace
}  // namespace tally::server
