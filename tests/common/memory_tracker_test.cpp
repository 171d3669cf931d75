// MemoryTracker: reservations count against the budget, a request past it is
// 53200 and adds nothing, statements count against the server's tracker too,
// scopes install and restore the thread's tracker.
#include <gtest/gtest.h>

#include <memory>

#include "common/error.hpp"
#include "common/memory_tracker.hpp"

namespace tally {
namespace {

TEST(MemoryTracker, ReservationsCountAndRelease) {
  auto tracker = std::make_shared<MemoryTracker>(1000);
  {
    MemoryReservation a(tracker);
    a.resize(600);
    EXPECT_EQ(tracker->used(), 600u);
    EXPECT_THROW(MemoryReservation{a}, Error);  // a copy holds as much again: past the budget
    a.resize(400);
    MemoryReservation b = a;
    EXPECT_EQ(tracker->used(), 800u);
    MemoryReservation c = std::move(b);  // a move hands the bytes over
    EXPECT_EQ(c.bytes(), 400u);
    EXPECT_EQ(tracker->used(), 800u);
  }
  EXPECT_EQ(tracker->used(), 0u);
}

TEST(MemoryTracker, OverBudgetIs53200AndAddsNothing) {
  auto tracker = std::make_shared<MemoryTracker>(1000);
  MemoryReservation a(tracker);
  a.resize(900);
  try {
    a.resize(1100);
    FAIL() << "no error past the budget";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::out_of_memory);
    EXPECT_NE(e.detail().find("Failed on request of size 200"), std::string::npos) << e.detail();
  }
  EXPECT_EQ(a.bytes(), 900u);
  EXPECT_EQ(tracker->used(), 900u);
  EXPECT_EQ(tracker->peak(), 900u);
  a.resize(100);  // shrinking never throws
  EXPECT_EQ(tracker->used(), 100u);
}

TEST(MemoryTracker, ZeroBudgetCountsWithoutLimit) {
  auto tracker = std::make_shared<MemoryTracker>(0);
  MemoryReservation a(tracker);
  a.resize(uint64_t{1} << 40);
  EXPECT_EQ(tracker->used(), uint64_t{1} << 40);
}

TEST(MemoryTracker, StatementsTogetherCountAgainstTheServer) {
  auto server = std::make_shared<MemoryTracker>(1000, nullptr, "server_memory_budget");
  auto first = std::make_shared<MemoryTracker>(800, server);
  auto second = std::make_shared<MemoryTracker>(800, server);
  MemoryReservation a(first), b(second);
  a.resize(600);
  EXPECT_EQ(server->used(), 600u);
  try {
    b.resize(500);  // within its own 800, past the server's 1000 with the first's 600
    FAIL() << "no error past the server's budget";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::out_of_memory);
    EXPECT_NE(e.detail().find("server_memory_budget 1000"), std::string::npos) << e.detail();
  }
  EXPECT_EQ(second->used(), 0u);  // the refused request added nothing, here or to the server
  EXPECT_EQ(server->used(), 600u);
  b.resize(400);
  EXPECT_EQ(server->used(), 1000u);
  a.resize(0);  // released bytes go back to the server too
  EXPECT_EQ(server->used(), 400u);
  try {
    b.resize(900);  // the server has room, its own budget has not
    FAIL() << "no error past the statement's budget";
  } catch (const Error& e) {
    EXPECT_NE(e.detail().find("cpu_memory_budget 800"), std::string::npos) << e.detail();
  }
  EXPECT_EQ(server->used(), 400u);
}

TEST(MemoryTracker, ScopeInstallsAndRestores) {
  EXPECT_EQ(current_memory_tracker(), nullptr);
  auto outer = std::make_shared<MemoryTracker>(0);
  auto inner = std::make_shared<MemoryTracker>(0);
  {
    const MemoryScope a(outer);
    EXPECT_EQ(current_memory_tracker(), outer);
    {
      const MemoryScope b(inner);
      MemoryReservation r;  // the thread's current tracker
      r.grow(64);
      EXPECT_EQ(inner->used(), 64u);
      EXPECT_EQ(outer->used(), 0u);
    }
    EXPECT_EQ(current_memory_tracker(), outer);
  }
  EXPECT_EQ(current_memory_tracker(), nullptr);
  MemoryReservation none;  // no tracker: counts nothing, never throws
  none.resize(uint64_t{1} << 50);
  EXPECT_EQ(none.bytes(), uint64_t{1} << 50);
}

}  // namespace
}  // namespace tally
