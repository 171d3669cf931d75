// HostTimeline (gpu/host_steps.hpp): the named points EXPLAIN ANALYZE's
// "GPU: start path" / "GPU: end path" lines print. Host-only.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tally::gpu::test
