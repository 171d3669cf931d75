// HostTimeline (gpu/host_steps.hpp): the named points EXPLAIN ANALYZE's
// "GPU: start path" / "GPU: end path" lines print. Host-only.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

#include "gpu/host_steps.hpp"

namespace tally::gpu::test {
namespace {

TEST(HostTimeline, MarksOnlyWhileActiveInOrderAndBounded) {
  host_mark("nobody listens");  // no active timeline: nothing happens
  EXPECT_EQ(active_host_timeline(), nullptr);
  HostTimeline t;
  {
    HostTimelineScope scope(&t);
    host_mark("first");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    host_mark("second");
    {
      // A nested scope without a timeline (a GpuRun past its first kernels)
      // marks nothing and gives the outer one back.
      HostTimelineScope off(nullptr);
      host_mark("hidden");
    }
    host_mark("third");
  }
  EXPECT_EQ(active_host_timeline(), nullptr);
  host_mark("after the scope");
  ASSERT_EQ(t.size(), 3);
  EXPECT_EQ(std::string(t[0].label), "first");
  EXPECT_EQ(std::string(t[2].label), "third");
  EXPECT_GE(t[1].us - t[0].us, 150.0);  // the sleep lies between them
  EXPECT_LE(t[1].us, t[2].us);
  ASSERT_NE(t.find("second"), nullptr);
  EXPECT_EQ(t.find("hidden"), nullptr);
  HostTimelineScope scope(&t);
  for (int i = 0; i < 2 * HostTimeline::kMaxMarks; ++i) host_mark("many");
  EXPECT_EQ(t.size(), HostTimeline::kMaxMarks);
}

TEST(HostTimeline, TimesAreAfterTheOrigin) {
  const auto origin = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::microseconds(300));
  HostTimeline t(origin);
  t.mark("late");
  ASSERT_EQ(t.size(), 1);
  EXPECT_GE(t[0].us, 250.0);
}

TEST(HostTimeline, MarksCarryACountAndItsUnit) {
  HostTimeline t;
  HostTimelineScope scope(&t);
  host_mark("plain");
  host_mark("keys", 12, "faults");
  ASSERT_EQ(t.size(), 2);
  EXPECT_LT(t[0].count, 0);  // no count
  EXPECT_EQ(t[1].count, 12);
  EXPECT_EQ(std::string(t[1].unit), "faults");
}

// thread_usage() counts this thread's first touches of fresh pages: what the
// end path's result build reports per region.
TEST(HostTimeline, ThreadUsageCountsFirstTouchesOfFreshPages) {
  constexpr size_t kPages = 256;
  const size_t page = 4096;
  void* p = mmap(nullptr, kPages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  auto* bytes = static_cast<volatile char*>(p);
  const ThreadUsage before = thread_usage();
  for (size_t i = 0; i < kPages; ++i) bytes[i * page] = 1;
  const ThreadUsage touched = thread_usage();
  for (size_t i = 0; i < kPages; ++i) bytes[i * page] = 2;  // mapped now: no fault
  const ThreadUsage again = thread_usage();
  munmap(p, kPages * page);
  // Huge pages (THP "always") would map the range in a few faults.
  EXPECT_GE(touched.minor_faults - before.minor_faults, 1);
  EXPECT_LE(touched.minor_faults - before.minor_faults, static_cast<long>(kPages) + 8);
  EXPECT_LE(again.minor_faults - touched.minor_faults, 2);
}

TEST(HostTimeline, ClockProbeGivesAPlausibleFrequency) {
  long mhz = 0;  // the best of several: a preempted probe reads low (CI shares its cores)
  for (int i = 0; i < 50; ++i) mhz = std::max(mhz, clock_probe_mhz());
  EXPECT_GT(mhz, 100);     // a 3-cycle multiply chain at under 0.1 GHz: the probe is broken
  EXPECT_LT(mhz, 20000);   // or it was optimized away
}

}  // namespace
}  // namespace tally::gpu::test
