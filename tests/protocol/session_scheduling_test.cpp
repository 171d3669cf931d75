// session_scheduling (config/config.hpp, server/server.cpp): the setting
// parses from every source with batch as the default, and a running server's
// session thread has exactly the configured Linux policy once the session is
// established (start-up and authentication keep the thread's own policy).
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "config/config_loader.hpp"
#include "server/server.hpp"
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

TEST_P(SessionScheduling, TheSessionThreadRunsUnderTheConfiguredPolicy) {
  config::Config config;
  config.port = 0;
  config.session_scheduling = GetParam();
  FakeFactory factory;
  Server server(config, factory);
  server.start();
  const int batch_before = threads_with_policy(SCHED_BATCH);
  {
    WireClient client(server.port());
    // Connected, no startup packet yet: the session thread keeps its policy.
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(threads_with_policy(SCHED_BATCH), batch_before);
    client.startup();
    client.read_until_ready();
    client.send(fe::encode(fe::Query{"rows 1"}));
    ASSERT_EQ(client.read_until_ready().size(), 4u);  // the session answers either way
    // The session thread is alive (its client is connected): count it.
    const int batch_now = threads_with_policy(SCHED_BATCH);
    if (GetParam() == config::SessionScheduling::batch) {
      EXPECT_EQ(batch_now, batch_before + 1);
    } else {
      EXPECT_EQ(batch_now, batch_before);
    }
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
