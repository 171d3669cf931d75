// ChunkTuner::awaits_reports() on CPU: the engine keeps up to 8 launches in
// flight, so without waiting each proposal is made ~9 chunks before its time
// is known and a 16-chunk cold query never leaves its first configuration.
// A driver that behaves like GpuRun
// (reports arrive when the in-flight queue is full, or when the tuner asks
// for them) checks that honouring awaits_reports() makes the race and the
// search sequential again, at a bounded number of waits, and that exploiting
// proposals never wait.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <map>

#include "gpu/tuner/search_state_json.hpp"
#include "gpu/tuner/chunk_tuner.hpp"
#include "tests/tuner/reference_device.hpp"

namespace tally::gpu {
namespace {

using testing::reference_gpu;

ChunkTunerInput live_query() { return testing::live_count_sum_query(11); }

// Times shaped like a large GPU's at 2^16 groups: partitioned fastest (its
// optimum a few % better than its rule start, so the search has somewhere
// to go), global 2.6x and sort 3.9x slower than its optimum.
double fake_time(Variant v, const LaunchConfig& c) {
  static const std::map<Variant, double> factor = {{Variant::partitioned_hash, 1.0},
                                                   {Variant::global_hash, 2.6},
                                                   {Variant::sort, 3.9},
                                                   {Variant::shared_hash, 12.0},
                                                   {Variant::dense, 0.5}};
  if (v != Variant::partitioned_hash) return 0.019e-9 * factor.at(v);  // flat: the race compares rule starts
  const double dx = std::log2(c.threads_per_block) - std::log2(128.0), dy = std::log2(c.blocks_per_sm) - std::log2(8.0);
  return 0.019e-9 * (1 + 0.01 * (dx * dx + dy * dy));
}

struct Outcome {
  int configurations = 0;    // of the variant the query ends with
  size_t variants = 0;       // with a measured time
  int waits = 0;             // awaits_reports() answered true
  int uninformed_switch = 0;  // a new configuration proposed with reports outstanding
};

// Runs `chunks` chunks keeping up to `in_flight` proposals unreported, as
// GpuRun does; honour = wait (report the oldest) while awaits_reports().
Outcome run_query(ChunkTuner& tuner, int chunks, size_t in_flight, bool honour) {
  Outcome out;
  std::deque<TunedChoice> flight;
  const auto report_oldest = [&] {
    tuner.report(flight.front(), fake_time(flight.front().variant, flight.front().config.launch));
    flight.pop_front();
  };
  std::optional<std::pair<Variant, LaunchConfig>> last;
  for (int i = 0; i < chunks; ++i) {
    if (honour && tuner.awaits_reports()) {
      ++out.waits;
      while (!flight.empty() && tuner.awaits_reports()) report_oldest();
    }
    const size_t outstanding = tuner.unreported();
    const TunedChoice c = tuner.next();
    const auto proposal = std::make_pair(c.variant, c.config.launch);
    if (last && proposal != *last && outstanding > 0) ++out.uninformed_switch;
    last = proposal;
    flight.push_back(c);
    if (flight.size() > in_flight) report_oldest();
  }
  while (!flight.empty()) report_oldest();
  for (const auto& r : tuner.records()) {
    ++out.variants;
    if (r.variant == variant_name(tuner.current_variant()))
      out.configurations = static_cast<int>(nlohmann::json::parse(r.search_state)["measured"].size());
  }
  return out;
}

TEST(ChunkTunerFeedback, ColdQueryRacesAndSearchesOnlyWhenProposalsWaitForTimes) {
  // 8 in flight and no waiting for times: one configuration.
  ChunkTuner ahead(live_query());
  const Outcome blind = run_query(ahead, 16, 8, /*honour=*/false);
  EXPECT_EQ(blind.configurations, 1);

  // Searching every chunk: each configuration takes its window and one
  // run-ahead chunk.
  ChunkTuner sequential(live_query());
  const Outcome o = run_query(sequential, 16, 8, /*honour=*/true);
  EXPECT_EQ(sequential.current_variant(), Variant::partitioned_hash);
  EXPECT_GE(o.variants, 3u);  // partitioned, global and sort raced
  EXPECT_GE(o.configurations, 3);  // the search left the rule configuration
  EXPECT_EQ(o.uninformed_switch, 0);  // every new configuration knew every earlier time that mattered
  // Waits: at most two per measurement (after its first chunk, after its window).
  EXPECT_LE(o.waits, 2 * (o.configurations + static_cast<int>(o.variants)));
  EXPECT_GT(o.waits, 0);
}

TEST(ChunkTunerFeedback, AMeasurementWindowRunsAheadUntilItsFirstTimeCouldEndIt) {
  ChunkTuner tuner(live_query());
  // Nothing measured yet: the rule configuration's three window chunks and
  // one more (kWindowRunAhead) go out without waiting; the fifth proposal
  // waits for their times.
  std::vector<TunedChoice> out;
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(tuner.awaits_reports()) << i;
    out.push_back(tuner.next());
  }
  EXPECT_EQ(out[3].config.launch, out[0].config.launch);
  EXPECT_EQ(tuner.unreported(), 4u);
  EXPECT_TRUE(tuner.awaits_reports());
  // Three equal times end the window: the run-ahead chunk still in flight
  // no longer counts (its time changes nothing), so nothing waits for it.
  for (int i = 0; i < 3; ++i) tuner.report(out[i], fake_time(out[i].variant, out[i].config.launch));
  EXPECT_EQ(tuner.unreported(), 0u);
  EXPECT_FALSE(tuner.awaits_reports());
  // Now a best exists: the raced variant's first chunk may end its
  // measurement (abandon_factor), so the next proposal waits for it.
  const TunedChoice raced = tuner.next();
  EXPECT_NE(raced.variant, Variant::partitioned_hash);
  EXPECT_TRUE(tuner.awaits_reports());
  tuner.report(raced, fake_time(raced.variant, raced.config.launch));
  EXPECT_FALSE(tuner.awaits_reports());
  EXPECT_NE(tuner.next().variant, raced.variant);  // 2.6x slower: abandoned after one chunk
  tuner.report(out[3], fake_time(out[3].variant, out[3].config.launch));  // the run-ahead chunk's late time: dropped
}

TEST(ChunkTunerFeedback, ASearchNeighboursSecondChunkGoesOutBeforeItsFirstTime) {
  // After the race a neighbour of the best configuration is abandoned only
  // at 2x: its first two chunks go out back to back (the second must not
  // start on an idle GPU), the third waits for the first's time.
  ChunkTuner tuner(live_query());
  for (int i = 0; i < 40 && !(tuner.unreported() == 0 && tuner.current_variant() == Variant::partitioned_hash &&
                               tuner.records().size() >= 3); ++i) {
    const TunedChoice c = tuner.next();
    tuner.report(c, fake_time(c.variant, c.config.launch));
  }
  ASSERT_EQ(tuner.unreported(), 0u);
  const TunedChoice first = tuner.next();
  ASSERT_EQ(first.variant, Variant::partitioned_hash);
  EXPECT_FALSE(tuner.awaits_reports());
  const TunedChoice second = tuner.next();
  EXPECT_EQ(second.config.launch, first.config.launch);
  EXPECT_TRUE(tuner.awaits_reports());
  tuner.report(first, fake_time(first.variant, first.config.launch));
  EXPECT_FALSE(tuner.awaits_reports());
}

TEST(ChunkTunerFeedback, ExploitingProposalsNeverWait) {
  // A converged cache: every chunk exploits, nothing counts as unreported.
  ChunkTuner cold(live_query());
  for (int i = 0; i < 4000 && !cold.converged(); ++i) {
    const TunedChoice c = cold.next();
    cold.report(c, fake_time(c.variant, c.config.launch));
  }
  ASSERT_TRUE(cold.converged());
  ChunkTunerInput in = live_query();
  in.records = cold.records();
  ChunkTuner warm(in);
  ASSERT_TRUE(warm.warm());
  for (int i = 0; i < 200; ++i) {
    EXPECT_FALSE(warm.awaits_reports()) << i;
    (void)warm.next();
    EXPECT_TRUE(warm.exploiting()) << i;
  }
  EXPECT_EQ(warm.unreported(), 0u);
}

TEST(ChunkTunerFeedback, AWarmQueryNeverWaitsAndStillSearches) {
  // An unconverged cache, every chunk drawn for the search (share 1): a
  // proposal that would first need earlier reports runs the cached best
  // instead, so the device is never stalled; the search goes on once the
  // reports are in. With share 0 nothing is measured at all.
  ChunkTuner cold(live_query());
  for (int i = 0; i < 12; ++i) {
    const TunedChoice c = cold.next();
    cold.report(c, fake_time(c.variant, c.config.launch));
  }
  ASSERT_FALSE(cold.converged());
  ChunkTunerInput in = live_query();
  in.records = cold.records();
  in.tuning.warm_search_share = 0.0;
  ChunkTuner none(in);
  ASSERT_TRUE(none.warm());
  for (int i = 0; i < 50; ++i) {
    EXPECT_FALSE(none.awaits_reports());
    (void)none.next();
  }
  EXPECT_EQ(none.unreported(), 0u);
  in.tuning.warm_search_share = 1.0;
  ChunkTuner all(in);
  // Reports arrive three chunks late, as launches in flight complete.
  std::deque<TunedChoice> flight;
  long exploited = 0;
  for (int i = 0; i < 200; ++i) {
    EXPECT_FALSE(all.awaits_reports()) << i;
    flight.push_back(all.next());
    exploited += all.exploiting() ? 1 : 0;
    EXPECT_LE(all.unreported(), 3u) << i;
    if (flight.size() > 3) {
      all.report(flight.front(), fake_time(flight.front().variant, flight.front().config.launch));
      flight.pop_front();
    }
  }
  EXPECT_GT(exploited, 0);               // chunks that would have waited
  EXPECT_GT(all.chunks_searching(), 0);  // and the search still ran
  EXPECT_GT(all.records().size(), 0u);
}

}  // namespace
}  // namespace tally::gpu
