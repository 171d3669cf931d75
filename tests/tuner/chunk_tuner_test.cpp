// ChunkTuner (gpu/tuner/chunk_tuner.hpp) on CPU: a fake measurement gives each
// variant and configuration a time per row, the tuner drives it chunk by
// chunk as GpuRun does, and a map-backed TuningStore plays the cache.
#include "gpu/tuner/chunk_tuner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "common/error.hpp"
#include "gpu/rules/cold_start_rules.hpp"
#include "gpu/tuner/tuning_signature.hpp"
#include "gpu/tuner/search_state_json.hpp"
#include "tests/tuner/reference_device.hpp"

namespace tally::gpu {
namespace {

using testing::reference_gpu;

GroupBySpec count_sum_int4() {
  GroupBySpec s;
  s.key_type = KeyType::int32;
  s.columns = {{ValueType::int32, true}};
  s.aggregates = {{AggOp::count_star, -1}, {AggOp::sum, 0}};
  return s;
}

ChunkTunerInput input_for(uint64_t groups, bool key_range = false) {
  ChunkTunerInput in;
  in.device = reference_gpu();
  in.spec = count_sum_int4();
  in.facts.rows = 1u << 24;
  in.facts.estimated_groups = groups;
  if (key_range) in.facts.key_range = KeyRange{0, static_cast<int64_t>(groups) - 1};
  in.signature = "key=int4;values=int4;aggs=count_rows,sum_int(0)";
  in.tuning.explore_rate = 0.0;
  in.seed = 7;
  in.measure_chunks = 1;  // one time per chunk (the multi-chunk unit has its own tests)
  return in;
}

double lg(int v) { return std::log2(static_cast<double>(v)); }

// Per variant a speed factor, a bowl over log threads x log blocks with its own
// optimum, and mild rows-per-thread / fill-factor preferences: every variant
// has one best configuration, and one variant is clearly fastest.
struct FakeGpu {
  std::map<Variant, std::tuple<double, int, int>> shape = {
      {Variant::dense, {0.5, 256, 8}},         {Variant::shared_hash, {1.4, 128, 4}},
      {Variant::global_hash, {1.0, 512, 2}},   {Variant::sort, {2.5, 256, 4}},
      {Variant::partitioned_hash, {0.8, 128, 8}}};
  double time(Variant v, const LaunchConfig& c) const {
    const auto [factor, tpb, bps] = shape.at(v);
    const double dx = lg(c.threads_per_block) - lg(tpb), dy = lg(c.blocks_per_sm) - lg(bps);
    const double r = lg(c.rows_per_thread) - 1, f = (c.fill_factor_percent - 50) / 25.0;
    return 1e-9 * factor * (1 + 0.08 * (dx * dx + dy * dy)) * (1 + 0.02 * r * r) * (1 + 0.01 * f * f);
  }
  // The best time of a variant over the grid the tuner searches.
  double optimum(Variant v) const {
    double best = INFINITY;
    for (const auto& c : default_search_space(reference_gpu(), v).all())
      best = std::min(best, time(v, c));
    return best;
  }
};

// Runs `chunks` chunks (or until converged when chunks < 0); returns the variants proposed.
std::vector<Variant> drive(ChunkTuner& tuner, const FakeGpu& gpu, long chunks, bool until_converged = false) {
  std::vector<Variant> seen;
  for (long i = 0; i < chunks; ++i) {
    if (until_converged && tuner.converged()) break;
    const TunedChoice c = tuner.next();
    seen.push_back(c.variant);
    tuner.report(c.config, gpu.time(c.variant, c.config.launch));
  }
  return seen;
}

class MapStore final : public tally::TuningStore {
 public:
  std::vector<tally::TuningRecord> load(const std::string& device, const std::string& signature, int bucket) override {
    std::vector<tally::TuningRecord> out;
    for (const auto& [k, r] : records_) {
      if (r.device == device && r.signature == signature && r.bucket == bucket) out.push_back(r);
    }
    return out;
  }
  void store(const tally::TuningRecord& r) override { records_[r.device + "/" + r.signature + "/" + r.variant] = r; }
  std::map<std::string, tally::TuningRecord> records_;
};

TEST(ChunkTuner, NeverProposesAVariantCanUseForbids) {
  // Without a key range dense cannot run; the fake makes it the fastest, so a
  // tuner that ignored can_use would pick it.
  auto in = input_for(1000, /*key_range=*/false);
  ChunkTuner tuner(in);
  const auto seen = drive(tuner, FakeGpu{}, 3000);
  for (Variant v : seen) EXPECT_NE(v, Variant::dense);
  EXPECT_TRUE(tuner.converged());
}

TEST(ChunkTuner, ColdRaceFindsTheFastestVariantAndItsOptimum) {
  const FakeGpu gpu;
  auto in = input_for(1000, /*key_range=*/true);
  ChunkTuner tuner(in);
  drive(tuner, gpu, 5000, /*until_converged=*/true);
  ASSERT_TRUE(tuner.converged());
  EXPECT_EQ(tuner.current_variant(), Variant::dense);
  const TunedChoice c = tuner.next();
  EXPECT_EQ(c.variant, Variant::dense);
  EXPECT_LE(gpu.time(c.variant, c.config.launch), 1.02 * gpu.optimum(Variant::dense));
  // The race measured every usable variant once; the search spent a bounded
  // number of chunks (each measurement is 3 chunks on noise-free times).
  EXPECT_LT(tuner.chunks_searching(), 400);
  const auto records = tuner.records();
  EXPECT_GE(records.size(), 4u);  // dense, shared, global, sort, partitioned (all usable at G=1000)
  for (const auto& r : records) {
    EXPECT_EQ(r.device, reference_gpu().fingerprint());
    EXPECT_EQ(r.bucket, 9);  // floor(log2(1000))
    EXPECT_EQ(r.observations, 1);
    EXPECT_GT(r.seconds_per_row, 0);
  }
  EXPECT_NE(tuner.explain().find("variant=dense"), std::string::npos);
  EXPECT_NE(tuner.explain().find("bucket 2^9"), std::string::npos);
}

TEST(ChunkTuner, WarmCacheRunsTheCachedBestFromTheFirstChunk) {
  const FakeGpu gpu;
  MapStore store;
  auto in = input_for(1 << 20);
  Variant chosen;
  {
    ChunkTuner cold(in);
    drive(cold, gpu, 5000, true);
    ASSERT_TRUE(cold.converged());
    chosen = cold.current_variant();
    for (const auto& r : cold.records()) store.store(r);
  }
  in.records = store.load(in.device.fingerprint(), in.signature, 20);
  ASSERT_FALSE(in.records.empty());
  ChunkTuner warm(in);
  EXPECT_TRUE(warm.converged());
  const TunedChoice first = warm.next();
  EXPECT_EQ(first.variant, chosen);
  EXPECT_LE(gpu.time(first.variant, first.config.launch), 1.02 * gpu.optimum(chosen));
  warm.report(first.config, gpu.time(first.variant, first.config.launch));
  drive(warm, gpu, 50);
  EXPECT_EQ(warm.chunks_searching(), 0);
  EXPECT_NE(warm.explain().find("(cache)"), std::string::npos);
  for (const auto& r : warm.records()) EXPECT_EQ(r.observations, 2);
}

TEST(ChunkTuner, EntriesOfAnotherDeviceAreNeverUsed) {
  const FakeGpu gpu;
  auto in = input_for(1 << 20);
  ChunkTuner cold(in);
  drive(cold, gpu, 5000, true);
  auto other = input_for(1 << 20);
  other.device = reference_gpu(/*driver=*/12040);  // same GPU, other driver: another fingerprint
  other.records = cold.records();
  ChunkTuner fresh(other);
  EXPECT_FALSE(fresh.converged());
  drive(fresh, gpu, 1);
  EXPECT_EQ(fresh.chunks_searching(), 1);
}

TEST(ChunkTuner, UnreadableOrOffGridStateStartsAfresh) {
  auto in = input_for(1 << 20);
  tally::TuningRecord r;
  r.device = in.device.fingerprint();
  r.signature = in.signature;
  r.variant = "global";
  r.bucket = 20;
  r.search_state = "{not json";
  in.records = {r};
  EXPECT_NO_THROW(ChunkTuner{in});
  SearchState off_grid;
  LaunchConfig odd;
  odd.threads_per_block = 96;  // not a power of two: not on this grid
  off_grid.measured[odd] = 1e-9;
  off_grid.best = odd;
  off_grid.converged = true;
  in.records[0].search_state = to_json(off_grid).dump();
  ChunkTuner tuner(in);
  for (int i = 0; i < 200; ++i) {
    const TunedChoice c = tuner.next();
    EXPECT_NE(c.config.launch.threads_per_block, 96);
    tuner.report(c.config, 1e-9);
  }
}

TEST(ChunkTuner, AClampedLaunchStillCountsForTheProposal) {
  // The launcher runs 1024 threads x 2 blocks whatever it is asked: times
  // reported against a config the tuner never proposed must still advance it.
  auto in = input_for(1 << 20);
  in.forced_variant = Variant::global_hash;
  ChunkTuner tuner(in);
  const FakeGpu gpu;
  for (int i = 0; i < 3000 && !tuner.converged(); ++i) {
    TunedChoice c = tuner.next();
    const double t = gpu.time(c.variant, c.config.launch);
    c.config.launch.threads_per_block = 1024;
    c.config.launch.blocks_per_sm = 2;
    tuner.report(c.config, t);
  }
  EXPECT_TRUE(tuner.converged());
}

// An unknown forced variant's name is the engine's error (GpuRun, 22023:
// gpu_engine_test's RefusesWhatItCannotRun); the tuner takes a Variant.
TEST(ChunkTuner, ForcedVariantOnly) {
  auto in = input_for(1 << 20);
  in.forced_variant = Variant::sort;
  ChunkTuner tuner(in);
  for (Variant v : drive(tuner, FakeGpu{}, 300)) EXPECT_EQ(v, Variant::sort);
  EXPECT_FALSE(parse_variant("bogus").has_value());
}

TEST(ChunkTuner, ExplorationSpendsOneMeasurementThenReturnsToTheBest) {
  const FakeGpu gpu;
  auto in = input_for(1 << 20);
  ChunkTuner cold(in);
  drive(cold, gpu, 5000, true);
  in.records = cold.records();
  in.tuning.explore_rate = 1.0;  // always explore
  in.tuning.warm_search_share = 1.0;  // on every chunk until the measurement is done
  ChunkTuner tuner(in);
  const auto seen = drive(tuner, gpu, 40);
  const Variant best = cold.current_variant();
  long off_best = 0;
  for (Variant v : seen) off_best += v != best;
  EXPECT_GE(off_best, 1);
  EXPECT_LE(off_best, MeasurementParams{}.b_max);
  EXPECT_EQ(seen.back(), best);
  bool explored_record = false;
  for (const auto& r : tuner.records()) explored_record = explored_record || r.source == "explored";
  EXPECT_TRUE(explored_record);
}

TEST(ChunkTuner, SharedHashIsNeitherRacedNorExploredWhereItsTableCannotHoldTheGroups) {
  // The fake makes shared_hash fastest, so only the rule keeps it out: at 2^20
  // estimated groups no block's shared table (nor a dictionary) holds them.
  FakeGpu gpu;
  std::get<0>(gpu.shape[Variant::shared_hash]) = 0.1;
  auto in = input_for(1 << 20);
  ChunkTuner cold(in);
  for (Variant v : drive(cold, gpu, 5000, true)) EXPECT_NE(v, Variant::shared_hash);
  ASSERT_TRUE(cold.converged());
  for (const auto& r : cold.records()) EXPECT_NE(r.variant, "shared_memory");
  in.records = cold.records();
  in.tuning.explore_rate = 1.0;
  in.tuning.warm_search_share = 1.0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    in.seed = seed;
    ChunkTuner warm(in);
    for (Variant v : drive(warm, gpu, 40)) EXPECT_NE(v, Variant::shared_hash) << "seed " << seed;
  }
  // Where the groups fit, the same fake makes the race find it.
  auto small = input_for(1000);
  ChunkTuner fits(small);
  drive(fits, gpu, 5000, true);
  EXPECT_EQ(fits.current_variant(), Variant::shared_hash);
  // A query that forces it still runs it.
  in.records.clear();
  in.forced_variant = Variant::shared_hash;
  ChunkTuner forced(in);
  for (Variant v : drive(forced, gpu, 10)) EXPECT_EQ(v, Variant::shared_hash);
}

TEST(ChunkTuner, RefinementOffRunsTheBestKnownWithoutSearching) {
  auto in = input_for(1 << 20);
  in.tuning.enabled = false;
  ChunkTuner tuner(in);
  const TunedChoice a = tuner.next();
  tuner.report(a.config, 1e-9);
  const TunedChoice b = tuner.next();
  EXPECT_EQ(a.variant, b.variant);
  EXPECT_EQ(a.config.launch, b.config.launch);
  EXPECT_TRUE(tuner.records().empty());  // nothing measured to persist
}

// The engine prepares cached shapes at start from their signatures
// (GpuAggregationEngine::rehearse): parse_tuning_signature reads back what
// tuning_signature writes, and refuses what it does not.
TEST(TuningSignature, ParsesBackWhatItWrites) {
  using tally::ColumnWidth;
  using tally::PartialOp;
  tally::AggregationSpec a;
  a.key_width = ColumnWidth::int64;
  a.value_widths = {ColumnWidth::int32, ColumnWidth::int64, ColumnWidth::float64};
  a.aggregates = {{PartialOp::sum_int, 1, -1}, {PartialOp::count_rows, -1, -1}, {PartialOp::max_int, 0, -1},
                  {PartialOp::moments2_float, 2, 0}};
  const std::string text = tuning_signature(a);
  const auto shape = parse_tuning_signature(text);
  ASSERT_TRUE(shape.has_value()) << text;
  EXPECT_EQ(shape->key_width, ColumnWidth::int64);
  EXPECT_EQ(shape->value_widths, a.value_widths);
  ASSERT_EQ(shape->aggregates.size(), 4u);
  tally::AggregationSpec back = a;
  back.aggregates = shape->aggregates;
  EXPECT_EQ(tuning_signature(back), text);  // same set (the text sorts them)
  EXPECT_TRUE(parse_tuning_signature("key=int4;values=int4;aggs=count_rows,sum_int(0)").has_value());
  for (const char* bad : {"", "key=int4", "key=int3;values=int4;aggs=count_rows", "key=int4;values=int4;aggs=",
                          "key=int4;values=int4;aggs=sum_int(1)", "key=int4;values=int4;aggs=sum_int(0",
                          "key=int4;values=int4;aggs=median(0)", "planner:custom"})
    EXPECT_FALSE(parse_tuning_signature(bad).has_value()) << bad;
}

TEST(TuningSignature, IgnoresAggregateOrderButNotWidths) {
  tally::AggregationSpec a;
  a.key_width = tally::ColumnWidth::int32;
  a.value_widths = {tally::ColumnWidth::int32};
  a.aggregates = {{tally::PartialOp::count_rows, -1, -1}, {tally::PartialOp::sum_int, 0, -1}};
  tally::AggregationSpec b = a;
  std::swap(b.aggregates[0], b.aggregates[1]);
  EXPECT_EQ(tuning_signature(a), tuning_signature(b));
  b.key_width = tally::ColumnWidth::int64;
  EXPECT_NE(tuning_signature(a), tuning_signature(b));
}

// The float and moment aggregates run other lanes than the integer ones (and
// a pair's moments over int columns others than over float columns): each
// is its own tuning key.
TEST(TuningSignature, DistinguishesFloatAndMomentAggregates) {
  using tally::ColumnWidth;
  using tally::PartialOp;
  tally::AggregationSpec a;
  a.key_width = ColumnWidth::int32;
  a.value_widths = {ColumnWidth::float64, ColumnWidth::int32};
  std::set<std::string> seen;
  for (const tally::PartialAggregate agg :
       {tally::PartialAggregate{PartialOp::sum_float, 0, -1}, tally::PartialAggregate{PartialOp::min_float, 0, -1},
        tally::PartialAggregate{PartialOp::max_float, 0, -1}, tally::PartialAggregate{PartialOp::moments_float, 0, -1},
        tally::PartialAggregate{PartialOp::moments_int, 1, -1}, tally::PartialAggregate{PartialOp::sum_int, 1, -1},
        tally::PartialAggregate{PartialOp::moments2_float, 0, 1}, tally::PartialAggregate{PartialOp::moments2_float, 1, 0}}) {
    a.aggregates = {agg};
    EXPECT_TRUE(seen.insert(tuning_signature(a)).second) << tuning_signature(a);
    const auto shape = parse_tuning_signature(tuning_signature(a));
    ASSERT_TRUE(shape.has_value());
    EXPECT_EQ(shape->aggregates[0].op, agg.op);
    EXPECT_EQ(shape->aggregates[0].input2, agg.input2);
  }
  a.aggregates = {{PartialOp::moments2_float, 0, 1}};
  tally::AggregationSpec b = a;
  b.value_widths = {ColumnWidth::float64, ColumnWidth::float64};  // corr over a cast instead of the int column
  EXPECT_NE(tuning_signature(a), tuning_signature(b));
}

}  // namespace
}  // namespace tally::gpu

namespace tally::gpu {
namespace {

TEST(ChunkTuner, ARacedVariantFarSlowerThanAnotherIsAbandonedAfterOneChunk) {
  // Sort 10x slower than the others: its race measurement must stop after its
  // first chunk instead of a full window.
  FakeGpu gpu;
  std::get<0>(gpu.shape[Variant::sort]) = 25.0;
  auto in = input_for(1 << 20);
  ChunkTuner tuner(in);
  long sort_chunks = 0;
  for (int i = 0; i < 60; ++i) {
    const TunedChoice c = tuner.next();
    sort_chunks += c.variant == Variant::sort;
    tuner.report(c.config, gpu.time(c.variant, c.config.launch));
  }
  EXPECT_EQ(sort_chunks, 1);
  EXPECT_NE(tuner.current_variant(), Variant::sort);
}


// A warm query whose cached search has not converged runs the cached best on
// every chunk but a share of them (warm_search_share), so learning costs a
// bounded part of a warm query; the search still advances on those chunks.
TEST(ChunkTuner, WarmQuerySearchesOnlyItsShareOfChunks) {
  const FakeGpu gpu;
  auto in = input_for(1 << 20);
  ChunkTuner cold(in);
  drive(cold, gpu, 40);  // the race and part of the search: not converged
  ASSERT_FALSE(cold.converged());
  in.records = cold.records();
  in.tuning.warm_search_share = 1.0 / 16;
  ChunkTuner warm(in);
  ASSERT_TRUE(warm.warm());
  const Variant best = warm.current_variant();
  const TunedChoice first = warm.next();
  EXPECT_EQ(first.variant, best);
  const long chunks = 1600;
  long searching_before_report = 0;
  warm.report(first, gpu.time(first.variant, first.config.launch));
  for (long i = 1; i < chunks; ++i) {
    const long before = warm.chunks_searching();
    const TunedChoice c = warm.next();
    searching_before_report += warm.chunks_searching() - before;
    warm.report(c, gpu.time(c.variant, c.config.launch));
  }
  // 1 in 16 while the search runs (expected 100 of 1600), none once it has
  // converged: here after ~20 search chunks, the open measurement continuing
  // where the cold query left it.
  EXPECT_GE(warm.chunks_searching(), 10);
  EXPECT_LT(warm.chunks_searching(), 140);
  EXPECT_TRUE(warm.converged());
  EXPECT_EQ(searching_before_report, warm.chunks_searching());
  // The search advanced on those chunks.
  const auto measured = [](const std::vector<tally::TuningRecord>& rs) {
    size_t n = 0;
    for (const auto& r : rs) n += nlohmann::json::parse(r.search_state)["measured"].size();
    return n;
  };
  EXPECT_GT(measured(warm.records()), measured(cold.records()));
}

// exploiting() says which chunks the engine may join into one launch: never
// while a cold query races or searches, and on a warm query exactly the
// chunks that run the cached best (not the search share's).
TEST(ChunkTuner, OnlyNonSearchChunksOfTheBestAreExploited) {
  const FakeGpu gpu;
  auto in = input_for(1 << 20);
  ChunkTuner cold(in);
  for (int i = 0; i < 40; ++i) {
    const TunedChoice c = cold.next();
    EXPECT_FALSE(cold.exploiting()) << "cold chunk " << i;
    cold.report(c, gpu.time(c.variant, c.config.launch));
  }
  ASSERT_FALSE(cold.converged());
  in.records = cold.records();
  in.tuning.warm_search_share = 1.0 / 8;
  ChunkTuner warm(in);
  ASSERT_TRUE(warm.warm());
  const Variant best = warm.current_variant();
  long exploited = 0, searched = 0;
  for (int i = 0; i < 800; ++i) {
    const long before = warm.chunks_searching();
    const TunedChoice c = warm.next();
    const bool searching = warm.chunks_searching() > before;
    if (warm.exploiting()) {
      ++exploited;
      EXPECT_FALSE(searching) << "chunk " << i;
      EXPECT_EQ(c.variant, warm.current_variant()) << "chunk " << i;
    } else {
      ++searched;
    }
    warm.report(c, gpu.time(c.variant, c.config.launch));
  }
  (void)best;
  // Every chunk the tuner counts as searching kept its own launch, and no
  // other did; most chunks ran the best (1/8 searched while the search runs,
  // none once it converged).
  EXPECT_EQ(searched, warm.chunks_searching());
  EXPECT_GT(searched, 0);
  EXPECT_GT(exploited, 600);
}

// A first query too short to race every variant leaves some unmeasured: the
// next query runs the best measured one from its first chunk and measures the
// others on its search chunks only.
TEST(ChunkTuner, AnUnfinishedRaceContinuesOnSearchChunksOnly) {
  const FakeGpu gpu;
  auto in = input_for(1 << 20);
  ChunkTuner cold(in);
  drive(cold, gpu, 4);  // one variant measured (window 3), the race unfinished
  in.records = cold.records();
  ASSERT_FALSE(in.records.empty());
  in.tuning.warm_search_share = 1.0 / 8;
  ChunkTuner warm(in);
  ASSERT_TRUE(warm.warm());
  const TunedChoice first = warm.next();
  EXPECT_EQ(first.variant, warm.current_variant());
  warm.report(first, gpu.time(first.variant, first.config.launch));
  std::map<Variant, long> chunks;
  for (int i = 0; i < 800; ++i) {
    const TunedChoice c = warm.next();
    ++chunks[c.variant];
    warm.report(c, gpu.time(c.variant, c.config.launch));
  }
  // Every usable variant got measured, the fastest took over, and searching
  // stayed near 1/8.
  size_t measured = 0;
  std::string fastest;
  double fastest_t = INFINITY;
  for (const auto& r : warm.records()) {
    measured += r.seconds_per_row > 0;
    if (r.seconds_per_row < fastest_t) fastest_t = r.seconds_per_row, fastest = r.variant;
  }
  EXPECT_GE(measured, 3u);
  EXPECT_EQ(std::string(variant_name(warm.current_variant())), fastest);
  EXPECT_LT(warm.chunks_searching(), 160);
}

// A cold query searches every chunk until its search converges: none of
// its chunks is exploited before then.
TEST(ChunkTuner, AColdQuerySearchesEveryChunk) {
  auto in = input_for(1 << 16);
  in.race_slice = 0;
  ChunkTuner tuner(in);
  for (int i = 0; i < 24; ++i) {
    const TunedChoice c = tuner.next();
    EXPECT_FALSE(tuner.exploiting() && !tuner.converged()) << "chunk " << i;
    tuner.report(c, c.variant == Variant::partitioned_hash ? 1e-9 : 3e-9);
  }
}

}  // namespace
}  // namespace tally::gpu
