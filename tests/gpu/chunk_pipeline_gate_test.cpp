// The chunk pipeline's launch gate (gpu/chunk_pipeline.hpp hold_gate): a run
// enqueued behind a held gate is timed from the gate's opening, not from
// when the host started to enqueue it; any host wait opens the gate first;
// a gate nobody opens opens itself after its timeout. Needs a device (skips
// without one): the gate is a kernel and the times are CUDA events.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "gpu/chunk_pipeline.hpp"
#include "gpu/device_info.hpp"

namespace tally::gpu::test {
namespace {

using namespace std::chrono_literals;

// A run whose host enqueue takes `enqueue` (the body sleeps: a slow host
// path such as a cold query's first launches) and which has no GPU work:
// its event time is pure host trickle unless a gate hides it.
double timed_run_ms(ChunkPipeline& p, std::chrono::milliseconds enqueue) {
  StagedChunk chunk;
  const uint64_t ticket = p.run(chunk, [&] { std::this_thread::sleep_for(enqueue); });
  p.open_gate();
  for (const ChunkTiming& t : p.completed(true))
    if (t.ticket == ticket) return t.ms;
  ADD_FAILURE() << "no timing for the run";
  return -1;
}

TEST(ChunkPipelineGate, AGatedRunIsTimedWithoutTheHostsEnqueue) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  ChunkPipeline p(0, nullptr);
  // Control: on an idle stream the start event fires at once, so the time
  // includes the host's 20 ms in the body.
  EXPECT_GE(timed_run_ms(p, 20ms), 15.0);
  ASSERT_TRUE(p.hold_gate(1s));
  EXPECT_FALSE(p.hold_gate(1s)) << "one gate per thread";
  EXPECT_LT(timed_run_ms(p, 20ms), 5.0);
  EXPECT_EQ(p.gates(), 1u);
  EXPECT_EQ(p.gate_timeouts(), 0u);
}

TEST(ChunkPipelineGate, AHostWaitOpensTheGateFirst) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  ChunkPipeline p(0, nullptr);
  ASSERT_TRUE(p.hold_gate(10s));
  StagedChunk chunk;
  (void)p.run(chunk, [] {});
  const auto t0 = std::chrono::steady_clock::now();
  (void)p.completed(true);  // never opened by the caller: the wait must open it
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_EQ(p.gate_timeouts(), 0u);
  EXPECT_TRUE(p.device_idle());
  EXPECT_TRUE(p.hold_gate(1s)) << "the wait released this thread's gate";
  p.open_gate();
  (void)p.completed(true);
}

TEST(ChunkPipelineGate, AGateNobodyOpensOpensByItsTimeout) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  ChunkPipeline p(0, nullptr);
  // Held by a thread that ends without opening it (its waits would open it).
  std::thread holder([&] { EXPECT_TRUE(p.hold_gate(50ms)); });
  holder.join();
  StagedChunk chunk;
  (void)p.run(chunk, [] {});
  const auto t0 = std::chrono::steady_clock::now();
  (void)p.completed(true);
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, 30ms);
  EXPECT_LT(waited, 5s);
  EXPECT_EQ(p.gate_timeouts(), 1u);
  EXPECT_TRUE(p.device_idle());
}

}  // namespace
}  // namespace tally::gpu::test
