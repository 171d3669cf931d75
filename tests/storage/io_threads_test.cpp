// storage/io_threads.hpp: every task runs once, side by side, callers at the
// same time each get their own tasks back, and a task's exception comes back
// after the others have run.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "storage/io_threads.hpp"

namespace tally::storage {
namespace {

TEST(IoThreads, EveryTaskRunsOnce) {
  for (size_t n : {0, 1, 2, 7, 40}) {
    std::vector<std::atomic<int>> runs(n);
    run_io_tasks(n, [&](size_t i) { runs[i].fetch_add(1); });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(runs[i].load(), 1) << "task " << i << " of " << n;
  }
}

// Tasks that wait (as an fsync does) overlap: eight 50 ms waits end well
// before 400 ms.
TEST(IoThreads, TasksWaitSideBySide) {
  const auto start = std::chrono::steady_clock::now();
  run_io_tasks(8, [](size_t) { std::this_thread::sleep_for(std::chrono::milliseconds(50)); });
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::milliseconds(300));
}

TEST(IoThreads, CallersAtOnceEachRunTheirOwnTasks) {
  constexpr int kCallers = 6, kRounds = 200, kTasks = 5;
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int r = 0; r < kRounds; ++r) {
        std::vector<int> seen(kTasks, 0);
        run_io_tasks(kTasks, [&](size_t i) { seen[i] += c + 1; });
        for (int s : seen) wrong += s != c + 1;
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(IoThreads, AFailedTaskIsRethrownAfterTheOthersRan) {
  std::atomic<int> ran{0};
  EXPECT_THROW(run_io_tasks(6,
                            [&](size_t i) {
                              if (i == 2) throw std::runtime_error("fsync failed");
                              std::this_thread::sleep_for(std::chrono::milliseconds(5));
                              ++ran;
                            }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 5);
  // The threads still serve the next caller.
  std::atomic<int> after{0};
  run_io_tasks(4, [&](size_t) { ++after; });
  EXPECT_EQ(after.load(), 4);
}

}  // namespace
}  // namespace tally::storage
