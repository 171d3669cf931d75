// ChunkTuner's measurements over launches of several joined chunks
// (ChunkTunerInput::measure_chunks, kMeasureChunks) on CPU: a
// measurement proposal opens a launch its next span - 1 chunks continue, it
// is reported once in that unit, the unit travels with the search state,
// and a fresh key whose first launch could not be joined measures single
// chunks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <string>

#include "gpu/tuner/search_state_json.hpp"
#include "gpu/tuner/chunk_tuner.hpp"
#include "tests/tuner/reference_device.hpp"

namespace tally::gpu {
namespace {

constexpr double kPerRow = 0.018e-9;

ChunkTunerInput paired_query() {
  ChunkTunerInput in = testing::live_count_sum_query(3);
  in.measure_chunks = 2;
  return in;
}

// A flat space: partitioned at kPerRow, every other variant 3x slower.
double time_of(const TunedChoice& c) { return c.variant == Variant::partitioned_hash ? kPerRow : 3 * kPerRow; }

// Drives `chunks` chunks as GpuRun does with joinable chunks: a proposal
// with span > 1 and its continuations make one launch, reported once.
void drive(ChunkTuner& tuner, int chunks) {
  std::optional<TunedChoice> open;
  int joined = 0;
  for (int i = 0; i < chunks; ++i) {
    const TunedChoice c = tuner.next();
    if (c.continues) {
      ASSERT_TRUE(open.has_value());
      EXPECT_EQ(c.variant, open->variant);
      EXPECT_EQ(c.config.launch, open->config.launch);
      if (++joined == open->span) {
        tuner.report(*open, time_of(*open));
        open.reset();
      }
      continue;
    }
    ASSERT_FALSE(open.has_value()) << "a new proposal before the open launch was complete";
    if (c.span > 1) {
      open = c;
      joined = 1;
    } else if (!tuner.exploiting() || tuner.measure_chunks() == 1) {
      tuner.report(c, time_of(c));
    }
  }
  if (open) tuner.drop(*open);
}

TEST(ChunkTunerSpan, AMeasurementIsOneLaunchOfTwoChunksReportedOnce) {
  ChunkTuner tuner(paired_query());
  EXPECT_EQ(tuner.measure_chunks(), 2);
  const TunedChoice first = tuner.next();
  EXPECT_EQ(first.span, 2);
  EXPECT_FALSE(first.continues);
  EXPECT_FALSE(tuner.exploiting());
  EXPECT_EQ(tuner.unreported(), 1u);
  EXPECT_FALSE(tuner.awaits_reports());  // the next chunk is the launch's second: nothing to wait for
  const TunedChoice second = tuner.next();
  EXPECT_TRUE(second.continues);
  EXPECT_EQ(second.span, 1);
  EXPECT_EQ(second.variant, first.variant);
  EXPECT_EQ(second.config.launch, first.config.launch);
  EXPECT_FALSE(tuner.exploiting());      // a measurement's chunk: never joined with exploiting ones
  EXPECT_EQ(tuner.unreported(), 1u);    // one proposal, one report
  tuner.report(second, kPerRow);         // a continuation's report is ignored
  EXPECT_EQ(tuner.unreported(), 1u);
  tuner.report(first, kPerRow);
  EXPECT_EQ(tuner.unreported(), 0u);
  EXPECT_EQ(tuner.chunks(), 2);
  EXPECT_EQ(tuner.chunks_searching(), 2);
}

TEST(ChunkTunerSpan, AWindowOfTwoLaunchesTakesFourChunksAndRecordsItsUnit) {
  // DaMoN'19's window of 3 chunks is 2 launches of 2 chunks (at least as
  // many chunks, each time already a mean over two).
  ChunkTuner tuner(paired_query());
  drive(tuner, 2);
  ASSERT_EQ(tuner.records().size(), 1u);  // one launch: the window is not complete, the measurement open
  EXPECT_EQ(tuner.records()[0].source, "measuring");
  drive(tuner, 2);
  const auto records = tuner.records();
  ASSERT_EQ(records.size(), 1u);  // partitioned's first window is complete
  EXPECT_NE(records[0].source, "measuring");
  EXPECT_EQ(records[0].variant, "partitioned");
  EXPECT_NEAR(records[0].seconds_per_row, kPerRow, 1e-15);
  EXPECT_NE(records[0].search_state.find("\"launch_chunks\":2"), std::string::npos) << records[0].search_state;
  EXPECT_NE(tuner.explain().find("measured on launches of 2 chunks"), std::string::npos) << tuner.explain();
}

TEST(ChunkTunerSpan, AShortQuerysOpenMeasurementIsRecordedAndTheNextQueryFinishesIt) {
  // A query of one launch leaves its first measurement open: recorded as
  // "measuring" (the median of its times so far), so that the next query
  // continues the window instead of starting cold again (before: nothing was
  // recorded, and a workload of such short queries never finished one).
  ChunkTuner first(paired_query());
  drive(first, 2);
  const auto open = first.records();
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].source, "measuring");
  EXPECT_EQ(open[0].variant, "partitioned");
  EXPECT_NEAR(open[0].seconds_per_row, kPerRow, 1e-15);
  const auto state = search_state_from_json(nlohmann::json::parse(open[0].search_state));
  ASSERT_TRUE(state.has_value());
  EXPECT_FALSE(state->best.has_value());
  EXPECT_EQ(state->measuring_times.size(), 1u);

  ChunkTunerInput next_in = paired_query();
  next_in.records = open;
  ChunkTuner next(next_in);
  drive(next, 2);  // one more launch completes the window of two
  const auto finished = next.records();
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_NE(finished[0].source, "measuring");
  EXPECT_NEAR(finished[0].seconds_per_row, kPerRow, 1e-15);

  ChunkTuner fresh(paired_query());  // the same two chunks without the record: still open
  drive(fresh, 2);
  ASSERT_EQ(fresh.records().size(), 1u);
  EXPECT_EQ(fresh.records()[0].source, "measuring");
}

TEST(ChunkTunerSpan, ACachedStateContinuesInItsOwnUnit) {
  // A cache written with single-chunk launches (or before the unit existed)
  // is continued in single chunks, whatever the engine prefers: its times
  // would not compare with two-chunk ones.
  ChunkTunerInput single = paired_query();
  single.measure_chunks = 1;
  ChunkTuner cold(single);
  drive(cold, 16);
  ChunkTunerInput warm_in = paired_query();
  warm_in.records = cold.records();
  ASSERT_FALSE(warm_in.records.empty());
  ChunkTuner warm(warm_in);
  EXPECT_EQ(warm.measure_chunks(), 1);
  // And a two-chunk cache stays in two chunks.
  ChunkTuner paired(paired_query());
  drive(paired, 16);
  ChunkTunerInput again = paired_query();
  again.records = paired.records();
  ChunkTuner next(again);
  EXPECT_EQ(next.measure_chunks(), 2);
}

TEST(ChunkTunerSpan, AFreshKeysFirstLaunchCutShortSwitchesToSingleChunksAndCounts) {
  // Its second chunk could not be joined (a copy in flight, a NULL bitmap,
  // or a table of one chunk): nothing was measured in two-chunk launches,
  // so the query measures single chunks, starting with this launch's time.
  ChunkTuner tuner(paired_query());
  const TunedChoice first = tuner.next();
  ASSERT_EQ(first.span, 2);
  tuner.report_partial(first, kPerRow);
  EXPECT_EQ(tuner.unreported(), 0u);
  EXPECT_EQ(tuner.measure_chunks(), 1);
  const TunedChoice second = tuner.next();
  EXPECT_FALSE(second.continues);  // the open launch is gone with it
  EXPECT_EQ(second.span, 1);
  tuner.report(second, kPerRow);
  const TunedChoice third = tuner.next();
  tuner.report(third, kPerRow);
  // Three single chunks (DaMoN's window again) finished the measurement.
  const auto records = tuner.records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_NE(records[0].search_state.find("\"launch_chunks\":1"), std::string::npos) << records[0].search_state;
  // A one-chunk table's next query continues in single chunks.
  ChunkTunerInput next_in = paired_query();
  next_in.records = records;
  EXPECT_EQ(ChunkTuner(next_in).measure_chunks(), 1);
}

// Runs a query whose first launch is cut short (report_partial) and two
// single chunks after it; returns its records.
std::vector<tally::TuningRecord> single_chunk_records(ChunkTunerInput in) {
  ChunkTuner tuner(in);
  const TunedChoice first = tuner.next();
  EXPECT_EQ(first.span, 2);
  tuner.report_partial(first, kPerRow);
  for (int i = 0; i < 2; ++i) tuner.report(tuner.next(), kPerRow);
  EXPECT_EQ(tuner.measure_chunks(), 1);
  return tuner.records();
}

TEST(ChunkTunerSpan, AKeyMeasuredInSingleChunksWhileCopyingIsMeasuredAgainOnceResident) {
  // A cold first query copies its chunks, so no launch joins: its times are
  // single chunks. The first query whose chunks are resident measures the
  // key again in joined launches; one that still copies continues as before.
  const auto copying = single_chunk_records(paired_query());
  ASSERT_FALSE(copying.empty());
  EXPECT_NE(copying[0].search_state.find("\"single_for_copies\":true"), std::string::npos) << copying[0].search_state;
  ChunkTunerInput resident = paired_query();
  resident.records = copying;
  resident.resident = true;
  ChunkTuner again(resident);
  EXPECT_EQ(again.measure_chunks(), 2);
  EXPECT_TRUE(again.warm());  // on its single-chunk times, measuring on a share of its chunks
  drive(again, 64);
  EXPECT_NE(again.explain().find("set aside"), std::string::npos) << again.explain();
  const auto joined = again.records();
  ASSERT_FALSE(joined.empty());
  EXPECT_NE(joined[0].search_state.find("\"launch_chunks\":2"), std::string::npos) << joined[0].search_state;
  ChunkTunerInput still_copying = paired_query();
  still_copying.records = copying;
  EXPECT_EQ(ChunkTuner(still_copying).measure_chunks(), 1);
}

TEST(ChunkTunerSpan, AKeyMeasuredAgainRunsItsSingleChunkBestAndNeverWaits) {
  // A wait stalls the device at every measurement; the first resident query
  // of a key measured while copying runs the single-chunk best meanwhile.
  const auto copying = single_chunk_records(paired_query());
  ASSERT_FALSE(copying.empty());
  const auto single = search_state_from_json(nlohmann::json::parse(copying[0].search_state));
  ASSERT_TRUE(single.has_value());
  ASSERT_TRUE(single->best || single->measuring);
  const LaunchConfig single_best = single->best ? *single->best : *single->measuring;
  ChunkTunerInput resident = paired_query();
  resident.records = copying;
  resident.resident = true;
  ChunkTuner again(resident);
  int measuring = 0, exploiting = 0;
  for (int i = 0; i < 64; ++i) {  // no report ever comes back
    EXPECT_FALSE(again.awaits_reports()) << "chunk " << i;
    const TunedChoice c = again.next();
    if (c.continues) continue;
    if (again.exploiting()) {
      ++exploiting;
      EXPECT_EQ(variant_name(c.variant), copying[0].variant);
      EXPECT_EQ(c.config.launch, single_best);
    } else {
      ++measuring;
    }
  }
  EXPECT_GT(measuring, 0);
  EXPECT_GT(exploiting, 32);
}

TEST(ChunkTunerSpan, AVariantMeasuredInJoinedLaunchesOutranksSingleChunkRecordsLeftBeside) {
  // After the first resident query the key's records hold the variants it
  // measured in joined launches and the single-chunk records of the others:
  // the next query runs the joined launches' best, not the single-chunk one.
  auto copying = single_chunk_records(paired_query());
  ASSERT_EQ(copying.size(), 1u);
  tally::TuningRecord faster_single = copying[0];
  faster_single.variant = copying[0].variant == "global" ? "sort" : "global";
  faster_single.seconds_per_row = copying[0].seconds_per_row / 2;
  ChunkTunerInput resident = paired_query();
  resident.records = {copying[0]};
  resident.resident = true;
  ChunkTuner again(resident);
  drive(again, 64);
  auto records = again.records();
  ASSERT_FALSE(records.empty());
  ASSERT_NE(records[0].search_state.find("\"launch_chunks\":2"), std::string::npos) << records[0].search_state;
  records.insert(records.begin(), faster_single);  // a stale single-chunk record first
  ChunkTunerInput next = paired_query();
  next.records = records;
  next.resident = true;
  ChunkTuner third(next);
  EXPECT_TRUE(third.warm());
  EXPECT_EQ(variant_name(third.current_variant()), records[1].variant) << third.explain();
}

TEST(ChunkTunerSpan, AKeyMeasuredAgainRacesOnlyTheVariantsItsSingleChunksLeftClose) {
  // The single-chunk times rank the variants: one within kRemeasureMargin
  // of the fastest is raced again in joined launches, one far slower is not.
  auto records = single_chunk_records(paired_query());
  ASSERT_EQ(records.size(), 1u);
  ASSERT_NE(records[0].variant, "global");
  ASSERT_NE(records[0].variant, "sort");
  tally::TuningRecord close = records[0], far = records[0];
  close.variant = "global";
  close.seconds_per_row = 2 * records[0].seconds_per_row;
  far.variant = "sort";
  far.seconds_per_row = 10 * records[0].seconds_per_row;
  records.push_back(close);
  records.push_back(far);
  ChunkTunerInput in = paired_query();
  in.records = records;
  in.resident = true;
  ChunkTuner again(in);
  std::map<Variant, int> proposed;
  for (int i = 0; i < 48; ++i) {
    const TunedChoice c = again.next();
    ++proposed[c.variant];
    if (c.continues) continue;
    if (c.span > 1) {
      (void)again.next();  // its continuation, joined
      again.report(c, time_of(c));
    } else {
      again.report(c, time_of(c));
    }
  }
  EXPECT_GT(proposed[Variant::global_hash], 0) << again.explain();
  EXPECT_EQ(proposed[Variant::sort], 0) << again.explain();
}

TEST(ChunkTunerSpan, AResidentQueryCutShortStaysInSingleChunks) {
  // Resident chunks that still could not be joined (a table of one chunk,
  // a NULL bitmap): single chunks for good, not measured again each query.
  ChunkTunerInput in = paired_query();
  in.resident = true;
  const auto records = single_chunk_records(in);
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records[0].search_state.find("single_for_copies"), std::string::npos) << records[0].search_state;
  in.records = records;
  ChunkTuner next(in);
  EXPECT_EQ(next.measure_chunks(), 1);
  EXPECT_TRUE(next.warm());
}

TEST(ChunkTunerSpan, ALaunchCutShortAfterAMeasurementIsForgotten) {
  ChunkTuner tuner(paired_query());
  drive(tuner, 4);  // partitioned measured in two-chunk launches
  const size_t measured = tuner.records().size();
  for (int i = 0; i < 3; ++i) {
    TunedChoice c = tuner.next();
    if (c.span > 1) tuner.report_partial(c, 10 * kPerRow);
    else if (c.screen_share > 0) tuner.report_screen(c, ScreenTimes{});
    else if (!c.continues) tuner.report(c, time_of(c));
  }
  EXPECT_EQ(tuner.measure_chunks(), 2);
  EXPECT_EQ(tuner.unreported(), 0u);
  EXPECT_EQ(tuner.records().size(), measured);  // the cut-short times went nowhere
}

TEST(ChunkTunerSpan, APairProposedBeforeASwitchToSingleChunksIsNotReported) {
  // Reports come late: a pair proposed while the unit was 2 and reported
  // after the first launch's report_partial switched to single chunks.
  ChunkTuner tuner(paired_query());
  const TunedChoice first = tuner.next();
  const TunedChoice cont = tuner.next();  // not joinable: launched alone
  ASSERT_TRUE(cont.continues);
  const TunedChoice pair = tuner.next();
  ASSERT_EQ(pair.span, 2);
  (void)tuner.next();  // its continuation, joined
  tuner.report_partial(first, kPerRow);
  ASSERT_EQ(tuner.measure_chunks(), 1);
  tuner.report(pair, 0.5 * kPerRow);  // a two-chunk time: must not enter the single-chunk search
  EXPECT_EQ(tuner.unreported(), 0u);
  for (int i = 0; i < 2; ++i) tuner.report(tuner.next(), kPerRow);
  const auto records = tuner.records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_NEAR(records[0].seconds_per_row, kPerRow, 1e-15);
}

TEST(ChunkTunerSpan, AWarmQuerySearchesAboutItsShareOfChunks) {
  // The lottery is drawn per proposal with share / span: a search proposal
  // takes two chunks, so the share of chunks searching stays the share.
  ChunkTunerInput in = paired_query();
  in.tuning.warm_search_share = 0.25;
  ChunkTuner cold(in);
  drive(cold, 8);  // partitioned measured; its search far from converged
  in.records = cold.records();
  ChunkTuner warm(in);
  ASSERT_TRUE(warm.warm());
  drive(warm, 800);
  const double share = static_cast<double>(warm.chunks_searching()) / static_cast<double>(warm.chunks());
  EXPECT_GT(share, 0.15) << warm.explain();
  EXPECT_LT(share, 0.35) << warm.explain();
}

TEST(ChunkTunerSpan, AScreenRunOnAWholeChunkEndsTheScreenWithoutATimeInPairs) {
  // A chunk too small to slice runs the screen proposal whole (GpuRun's
  // run_screen declines): one chunk is not a two-chunk time, but the screen
  // is over, nothing waits for it, and the variant is measured in pairs next.
  ChunkTunerInput in = paired_query();
  in.race_slice = kRaceSlice;
  ChunkTuner tuner(in);
  TunedChoice c = tuner.next();
  for (int i = 0; i < 16 && c.screen_share == 0; ++i) {
    if (c.span > 1) tuner.report(c, time_of(c));
    c = tuner.next();
  }
  ASSERT_GT(c.screen_share, 0.0);
  const Variant raced = c.variant;
  tuner.report(c, 3 * kPerRow);
  EXPECT_EQ(tuner.unreported(), 0u);
  EXPECT_FALSE(tuner.awaits_reports());
  const TunedChoice next = tuner.next();
  EXPECT_EQ(next.variant, raced);
  EXPECT_EQ(next.screen_share, 0.0);
  EXPECT_EQ(next.span, 2);
}

// A 16-chunk cold query driven as GpuRun drives it (feedback waits, race
// screens of three launches, exploiting chunks joined up to 4, measurement
// launches of `span` chunks): its launches, and the configurations of the
// winner it measured. Times shaped like a large GPU's at 2^16 groups (the live
// benchmark's query): partitioned a shallow bowl around its optimum, global
// 1.6x, sort 8x on their slices.
struct ColdQuery {
  int launches = 0;
  int configurations = 0;
  int waits = 0;
  std::string trace;  // one letter per chunk's proposal (S: a screen and its variants), '|' per wait
  std::string explain;
};
double live_like(Variant v, const LaunchConfig& c) {
  if (v == Variant::global_hash) return 1.6 * kPerRow;
  if (v != Variant::partitioned_hash) return 8 * kPerRow;
  const double dx = std::log2(c.threads_per_block) - std::log2(256.0), dy = std::log2(c.blocks_per_sm) - std::log2(8.0);
  return kPerRow * (1 + 0.01 * (dx * dx + dy * dy));
}
// A launch of `rows` rows: kernel per row plus the fixed part (a large GPU's
// ~55 us at 2^16 groups), in ms.
constexpr int64_t kChunkRows = int64_t{1} << 24;
constexpr double kFixedMs = 0.055;
double launch_ms(Variant v, const LaunchConfig& c, double rows) { return live_like(v, c) * rows * 1e3 + kFixedMs; }
// A screen's launches: the raced slices, then a reference slice as large as
// the largest, and the reference's rest.
ScreenTimes screen_times(const TunedChoice& c) {
  ScreenTimes t;
  t.slice_rows = static_cast<int64_t>(static_cast<double>(kChunkRows) * c.screen_share);
  t.raced_ms = launch_ms(c.variant, c.config.launch, static_cast<double>(t.slice_rows));
  int64_t used = t.slice_rows;
  for (const auto& a : c.also_screened) {
    const auto rows = static_cast<int64_t>(static_cast<double>(kChunkRows) * a.share);
    t.also.push_back({launch_ms(a.variant, a.config.launch, static_cast<double>(rows)), rows});
    used += rows;
  }
  t.reference_rows = t.slice_rows;
  for (const auto& a : t.also) t.reference_rows = std::max(t.reference_rows, a.rows);
  t.reference_ms = launch_ms(c.reference_variant, c.reference_config.launch, static_cast<double>(t.reference_rows));
  used += t.reference_rows;
  t.rest_rows = kChunkRows - used;
  t.rest_ms = launch_ms(c.reference_variant, c.reference_config.launch, static_cast<double>(t.rest_rows));
  return t;
}
// The cold query's 16 chunks: measurement launches of `measure_chunks`
// chunks reported per row of their launch (fixed part included, as the
// engine's events time them), screens of one raced variant (joint = false)
// or joint ones (joint = true, the engine's), each with a reference slice.
ColdQuery cold_query(int measure_chunks, bool joint = true) {
  ChunkTunerInput in = paired_query();
  in.measure_chunks = measure_chunks;
  in.race_slice = kRaceSlice;
  in.joint_screens = joint;
  ChunkTuner tuner(in);
  ColdQuery out;
  struct Launch {
    TunedChoice choice;
    bool screen = false, report = true;
  };
  std::deque<Launch> flight;
  const auto per_row = [&](const TunedChoice& c) {
    const double rows = static_cast<double>(kChunkRows) * c.span;
    return launch_ms(c.variant, c.config.launch, rows) * 1e-3 / rows;
  };
  const auto complete_oldest = [&] {
    const Launch l = flight.front();
    flight.pop_front();
    if (l.screen) tuner.report_screen(l.choice, screen_times(l.choice));
    else if (l.report) tuner.report(l.choice, per_row(l.choice));
  };
  std::optional<TunedChoice> open, joined;
  int open_chunks = 0, joined_chunks = 0;
  for (int i = 0; i < 16; ++i) {
    if (tuner.awaits_reports()) {
      ++out.waits;
      out.trace += '|';
      while (!flight.empty() && tuner.awaits_reports()) complete_oldest();
    }
    const TunedChoice c = tuner.next();
    const bool exploit = tuner.exploiting();
    const auto letter = [](Variant v) { return v == Variant::partitioned_hash ? "p" : v == Variant::global_hash ? "g" : "s"; };
    if (c.screen_share > 0) {
      out.trace += std::string("S") + letter(c.variant);
      for (const auto& a : c.also_screened) out.trace += letter(a.variant);
    } else {
      out.trace += c.variant == Variant::partitioned_hash ? (exploit ? "e" : c.continues ? "+" : "p") : letter(c.variant);
    }
    if (joined && !(exploit && c.config.launch == joined->config.launch && joined_chunks < 4)) {
      flight.push_back({*joined, false, false});  // a joined launch is shown, not reported
      ++out.launches;
      joined.reset();
    }
    if (c.continues) {
      if (++open_chunks == open->span) {
        flight.push_back({*open});
        ++out.launches;
        open.reset();
      }
    } else if (c.span > 1) {
      open = c;
      open_chunks = 1;
    } else if (c.screen_share > 0) {
      flight.push_back({c, true});
      out.launches += 1 + static_cast<int>(c.also_screened.size()) + 2;
    } else if (exploit) {
      if (!joined) joined_chunks = 0;
      joined = c;
      ++joined_chunks;
    } else {
      flight.push_back({c});
      ++out.launches;
    }
    while (flight.size() > 8) complete_oldest();
  }
  if (joined) ++out.launches;
  while (!flight.empty()) complete_oldest();
  for (const auto& r : tuner.records())
    if (r.variant == "partitioned") out.configurations = static_cast<int>(nlohmann::json::parse(r.search_state)["measured"].size());
  out.explain = tuner.explain();
  return out;
}

TEST(ChunkTunerSpan, AColdQuerysSearchOnJoinedLaunchesTakesFewerLaunchesAndStillSearches) {
  // With single-chunk measurements and one screen (three launches) per
  // raced variant, a cold 16-chunk query makes about 20 launches; measured
  // in pairs it makes about a third fewer, each sparing a launch's fixed
  // part, and still leaves the rule configuration.
  const ColdQuery single = cold_query(1, /*joint=*/false);
  const ColdQuery paired = cold_query(2, /*joint=*/false);
  EXPECT_GE(single.launches, 19);
  EXPECT_LE(paired.launches, 14);
  EXPECT_GE(paired.configurations, 2);
  EXPECT_GE(paired.configurations, single.configurations - 1);
  EXPECT_LE(paired.waits, single.waits);
  std::printf("cold 16-chunk query, separate screens: single chunks %d launches, %d configurations, %d waits; pairs %d "
              "launches, %d configurations, %d waits\n",
              single.launches, single.configurations, single.waits, paired.launches, paired.configurations, paired.waits);
  std::printf("single %s\npaired %s\n", single.trace.c_str(), paired.trace.c_str());
}

TEST(ChunkTunerSpan, AJointScreenTakesBothRacedVariantsIntoOneChunk) {
  // The same cold query with both raced variants (global 1.6x, sort 8x) on
  // their slices of one chunk beside the reference's slice and rest: one
  // screen chunk (4 launches, one wait) where two took 6 launches and two
  // waits, both still screened out, and the freed chunk searches.
  const ColdQuery separate = cold_query(2, /*joint=*/false);
  const ColdQuery joint = cold_query(2, /*joint=*/true);
  EXPECT_EQ(std::count(joint.trace.begin(), joint.trace.end(), 'S'), 1) << joint.trace;
  EXPECT_NE(joint.trace.find("Sgs"), std::string::npos) << joint.trace;
  EXPECT_LE(joint.launches, separate.launches - 2);
  EXPECT_LE(joint.waits, separate.waits - 1);
  EXPECT_GE(joint.configurations, separate.configurations);
  EXPECT_NE(joint.explain.find("screened out on a slice (25.0% of a chunk)"), std::string::npos) << joint.explain;
  EXPECT_NE(joint.explain.find("screened out on a slice (3.6% of a chunk)"), std::string::npos) << joint.explain;
  EXPECT_EQ(joint.explain.find("variant=partitioned"), joint.explain.find("variant="));
  std::printf("cold 16-chunk query in pairs: separate screens %d launches, %d configurations, %d waits (%s); joint %d "
              "launches, %d configurations, %d waits (%s)\n",
              separate.launches, separate.configurations, separate.waits, separate.trace.c_str(), joint.launches,
              joint.configurations, joint.waits, joint.trace.c_str());
}

TEST(ChunkTunerSpan, AWarmQueryFinishesAnUnfinishedMeasurementThatBeatsTheBest) {
  // Partitioned alone, its rule start at kPerRow, every other configuration
  // `factor` x kPerRow. The cold query stops after the first launch of the
  // search's first neighbour (its window needs two). A warm query that
  // never draws a search chunk (warm_search_share 0) still finishes that
  // measurement when its time so far beats the best by more than s (0.6x:
  // the recorded spaces at 2^10 groups, where warm queries ran the old
  // best at 1.5x for four queries), and otherwise runs the best (0.97x,
  // within s = 0.06; 1.5x).
  for (double factor : {0.6, 0.97, 1.5}) {
    ChunkTunerInput in = paired_query();
    in.forced_variant = Variant::partitioned_hash;
    in.tuning.warm_search_share = 0;
    ChunkTuner cold(in);
    std::optional<LaunchConfig> start;
    std::optional<TunedChoice> open;
    std::optional<LaunchConfig> measuring;
    for (int i = 0; i < 40 && !measuring; ++i) {
      const TunedChoice c = cold.next();
      if (!start) start = c.config.launch;
      const double t = c.config.launch == *start ? kPerRow : factor * kPerRow;
      if (c.continues) {
        ASSERT_TRUE(open.has_value());
        cold.report(*open, t);
        if (!(open->config.launch == *start)) measuring = open->config.launch;  // one launch of a neighbour reported
        open.reset();
        continue;
      }
      if (c.span > 1) open = c;
      else if (!cold.exploiting()) cold.report(c, t);
    }
    ASSERT_TRUE(measuring.has_value()) << factor;
    const auto records = cold.records();
    ASSERT_EQ(records.size(), 1u);
    ASSERT_NE(records[0].search_state.find("\"measuring\":\"" + to_string(*measuring) + "\""), std::string::npos)
        << records[0].search_state;
    ASSERT_EQ(records[0].search_state.find("\"measuring_times\":[]"), std::string::npos) << records[0].search_state;
    in.records = records;
    ChunkTuner warm(in);
    ASSERT_TRUE(warm.warm());
    const TunedChoice first = warm.next();
    if (factor < 0.94) {
      EXPECT_EQ(first.config.launch, *measuring) << "finishes the faster measurement";
      EXPECT_FALSE(warm.exploiting());
      EXPECT_EQ(first.span, 2);
    } else {
      EXPECT_EQ(first.config.launch, *start) << factor << ": the best";
      EXPECT_TRUE(warm.exploiting()) << factor;
    }
  }
}

// H2O q2's shape: a dense table of ~10K slots, whose flush a two-chunk
// launch pays in full, is measured over longer launches; a small key range
// and a key without a range keep the two-chunk unit.
TEST(ChunkTunerSpan, ALargeDenseTableIsMeasuredInLongerLaunches) {
  ChunkTunerInput in = testing::live_count_sum_query(5);
  in.facts.key_range = KeyRange{0, 101 * 101 - 1};
  in.facts.estimated_groups = 101 * 101;
  ASSERT_TRUE(can_use(Variant::dense, in.spec, in.device, in.facts));
  EXPECT_EQ(measurement_chunks(in.spec, in.device, in.facts), kLargeDenseMeasureChunks);
  in.measure_chunks = measurement_chunks(in.spec, in.device, in.facts);
  ChunkTuner tuner(in);
  EXPECT_EQ(tuner.measure_chunks(), kLargeDenseMeasureChunks);
  EXPECT_EQ(tuner.next().span, kLargeDenseMeasureChunks);

  in.facts.key_range = KeyRange{0, 100};
  EXPECT_EQ(measurement_chunks(in.spec, in.device, in.facts), kMeasureChunks);
  in.facts.key_range.reset();
  EXPECT_EQ(measurement_chunks(in.spec, in.device, in.facts), kMeasureChunks);
}

}  // namespace
}  // namespace tally::gpu
