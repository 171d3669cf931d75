// statement_timeout through the protocol session with the real SQL session
// (executor::SqlSession) behind it: each statement arms the host's timer with
// the value in force when it starts (the server default, then what SET chose),
// and SET statement_timeout = 0 turns the server default off. A host records
// every arm and disarm; no statement here runs long enough to be cancelled
// (tests/protocol/server_test.cpp checks the cancellation itself).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tests/protocol/sql_session_harness.hpp"

namespace tally::protocol {
namespace {

namespace fe = frontend;
using testing::first_values;

// The server's statement_timeout_ms, then the armed timeouts in order, each
// rounded to the second it was set for (the deadline is measured a few
// microseconds after it was computed).
struct TimeoutHarness : testing::SqlSessionHarness {
  explicit TimeoutHarness(uint64_t server_timeout_ms) : SqlSessionHarness(false, server_timeout_ms) {}
  std::vector<int64_t> armed_seconds() const {
    std::vector<int64_t> out;
    for (const auto& call : host.calls) {
      if (call) out.push_back((*call + 500) / 1000);
    }
    return out;
  }
  size_t disarms() const { return std::count(host.calls.begin(), host.calls.end(), std::nullopt); }
};

TEST(StatementTimeout, SetValueArmsTheNextStatements) {
  TimeoutHarness h(7000);
  auto out = h.run(testing::encode_messages({fe::Query{"SHOW statement_timeout"}, fe::Query{"SET statement_timeout = '3s'"},
                                             fe::Query{"SELECT 1"}, fe::Query{"SHOW statement_timeout"},
                                             fe::Query{"RESET statement_timeout"}, fe::Query{"SELECT 2"}}));
  EXPECT_EQ(first_values(out), (std::vector<std::string>{"7s", "1", "3s", "2"}));
  // The SET itself still runs under the old value; RESET returns to the server's.
  EXPECT_EQ(h.armed_seconds(), (std::vector<int64_t>{7, 7, 3, 3, 3, 7}));
  EXPECT_EQ(h.disarms(), 6u);
}

TEST(StatementTimeout, ZeroDisablesTheServerDefault) {
  TimeoutHarness h(7000);
  auto out = h.run(testing::encode_messages({fe::Query{"SET statement_timeout = 0"}, fe::Query{"SELECT 1"},
                                             fe::Query{"SHOW statement_timeout"}, fe::Query{"SELECT 2"}}));
  EXPECT_EQ(first_values(out), (std::vector<std::string>{"1", "0", "2"}));
  // Only the SET ran with the server's 7 s; nothing was armed after it.
  EXPECT_EQ(h.armed_seconds(), (std::vector<int64_t>{7}));
}

TEST(StatementTimeout, WithoutServerDefaultOnlySetArms) {
  TimeoutHarness h(0);
  auto out = h.run(testing::encode_messages({fe::Query{"SELECT 1"}, fe::Query{"SET statement_timeout = 2000"},
                                             fe::Query{"SELECT 2"}, fe::Query{"SET statement_timeout TO DEFAULT"},
                                             fe::Query{"SELECT 3"}}));
  EXPECT_EQ(first_values(out), (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(h.armed_seconds(), (std::vector<int64_t>{2, 2}));
}

TEST(StatementTimeout, ExtendedProtocolArmsEachMessageWithTheSessionValue) {
  TimeoutHarness h(0);
  auto out = h.run(testing::encode_messages({
      fe::Query{"SET statement_timeout = '4s'"},
      fe::Parse{"", "SELECT $1::int4 + 1", {}},
      fe::Bind{"", "", {}, {std::string("41")}, {}},
      fe::Execute{"", 0},
      fe::Sync{},
  }));
  EXPECT_EQ(first_values(out), (std::vector<std::string>{"42"}));
  // Parse, Bind and Execute each run under the session's 4 s.
  EXPECT_EQ(h.armed_seconds(), (std::vector<int64_t>{4, 4, 4}));
  EXPECT_EQ(h.disarms(), 3u);
}

TEST(StatementTimeout, RolledBackSetRestoresTheTimeout) {
  TimeoutHarness h(0);
  auto out = h.run(testing::encode_messages({fe::Query{"BEGIN"}, fe::Query{"SET statement_timeout = '5s'"},
                                             fe::Query{"SELECT 1"}, fe::Query{"ROLLBACK"}, fe::Query{"SELECT 2"}}));
  EXPECT_EQ(first_values(out), (std::vector<std::string>{"1", "2"}));
  // SELECT 1 and the ROLLBACK ran with 5 s; after the rollback nothing is armed.
  EXPECT_EQ(h.armed_seconds(), (std::vector<int64_t>{5, 5}));
}

}  // namespace
}  // namespace tally::protocol
