// The GPU side of the planner/engine seam (gpu/engine/gpu_engine.hpp):
// partial states of several chunks against the CPU reference; unsupported
// shapes are refused by can_run so the planner falls back to the CPU engine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <optional>
#include <thread>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <random>
#include <string>
#include <vector>

#include "common/cancel.hpp"
#include "common/error.hpp"
#include "gpu/rules/device_info.hpp"
#include "gpu/first_use_counts.hpp"
#include "gpu/engine/gpu_engine.hpp"
#include "gpu/group_by.hpp"
#include "gpu/lane_plan.hpp"
#include "gpu/engine/start_up.hpp"
#include "gpu/tuner/cardinality_bucket.hpp"
#include "gpu/rules/variant_rules.hpp"
#include "tests/gpu/group_by_reference.hpp"

namespace tally::gpu::test {
namespace {

using tally::ColumnWidth;
using tally::PartialOp;

TEST(GpuAggregationEngine, AbsentWithoutDevice) {
  if (device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_EQ(make_gpu_engine(), nullptr);
}

TEST(GpuAggregationEngine, PartialStatesMatchReferenceAcrossChunks) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto engine = make_gpu_engine();
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->name(), "gpu");

  tally::AggregationSpec spec;
  spec.key_width = ColumnWidth::int64;
  spec.value_widths = {ColumnWidth::int32, ColumnWidth::int64};
  spec.aggregates = {{PartialOp::count_rows, -1, -1}, {PartialOp::count_valid, 0, -1}, {PartialOp::sum_int, 0, -1},
                     {PartialOp::min_int, 1, -1},      {PartialOp::max_int, 1, -1},     {PartialOp::sum_int, 1, -1}};
  spec.estimated_groups = 10;  // low on purpose: the table must grow
  ASSERT_TRUE(engine->can_run(spec));

  // The same data as a TestTable for the reference.
  TestTable t;
  t.key_type = KeyType::int64;
  t.value_types = {ValueType::int32, ValueType::int64};
  t.values.resize(2);
  t.value_valid.resize(2);
  std::mt19937_64 rng(42);
  const size_t rows = 60000;
  for (size_t r = 0; r < rows; ++r) {
    t.keys.push_back(static_cast<int64_t>(rng() % 5000) * 1000003 - 77);
    t.key_valid.push_back(rng() % 50 != 0);
    t.values[0].push_back(static_cast<int32_t>(rng()));
    t.values[1].push_back(static_cast<int64_t>(rng()));
    t.value_valid[0].push_back(rng() % 7 != 0);
    t.value_valid[1].push_back(rng() % 5 != 0);
  }
  GroupBySpec gspec;
  gspec.key_type = KeyType::int64;
  gspec.columns = {{ValueType::int32, true}, {ValueType::int64, true}};
  gspec.aggregates = {{AggOp::count_star, -1}, {AggOp::count, 0}, {AggOp::sum, 0},
                      {AggOp::min, 1},         {AggOp::max, 1},   {AggOp::sum, 1}};
  const GroupMap expected = reference_group_by(t, gspec);

  auto run = engine->start(spec);
  for (size_t b = 0; b < rows; b += 25000) {
    const size_t e = std::min(rows, b + 25000);
    HostChunk h = make_host_chunk(t, b, e);
    tally::ChunkInput in;
    in.rows = e - b;
    in.keys = {ColumnWidth::int64, h.pointers.key.data, h.pointers.key.validity};
    in.values = {{ColumnWidth::int32, h.pointers.values[0].data, h.pointers.values[0].validity},
                 {ColumnWidth::int64, h.pointers.values[1].data, h.pointers.values[1].validity}};
    in.filters.assign(spec.aggregates.size(), nullptr);
    run->sink(in);
  }
  const tally::AggregationResult r = run->finalize();
  ASSERT_EQ(r.groups(), expected.size());
  for (size_t g = 0; g < r.groups(); ++g) {
    const std::optional<int64_t> key = r.key_valid[g] ? std::optional<int64_t>(r.keys[g]) : std::nullopt;
    auto it = expected.find(key);
    ASSERT_NE(it, expected.end());
    const GroupValue& ev = it->second;
    EXPECT_EQ(r.states[0].count[g], ev.nonnull[0]);
    EXPECT_EQ(r.states[1].count[g], ev.nonnull[1]);
    EXPECT_EQ(r.states[2].count[g], ev.nonnull[2]);
    if (ev.nonnull[2]) {
      EXPECT_TRUE(r.states[2].sum_int[g] == ev.value[2]);
    }
    EXPECT_EQ(r.states[3].count[g], ev.nonnull[3]);
    if (ev.nonnull[3]) {
      EXPECT_EQ(r.states[3].extreme_int[g], static_cast<int64_t>(ev.value[3]));
    }
    if (ev.nonnull[4]) {
      EXPECT_EQ(r.states[4].extreme_int[g], static_cast<int64_t>(ev.value[4]));
    }
    if (ev.nonnull[5]) {
      EXPECT_TRUE(r.states[5].sum_int[g] == ev.value[5]);
    }
  }
  EXPECT_EQ(run->report().engine, "gpu");
  EXPECT_EQ(run->report().rows, rows);
}

// count(*) and sum(v) of an int32 key and value, `rows` rows with keys drawn
// from [0, key_span), through an engine run in chunks of `chunk` rows;
// checks every group against the reference and returns the run's report.
// `table_oid` != 0: the chunks name stored columns of that table (chunk c
// is storage chunk 1000 + c), so the engine keeps them resident in its
// column cache and a repeated query finds them there, adjacent.
// `min_only`: SELECT k, min(v) instead (another signature over the same table).
tally::AggregationReport run_count_sum(tally::AggregateEngine& engine, tally::AggregationSpec spec,
                                          uint64_t seed, size_t rows, int64_t key_span, size_t chunk,
                                          uint64_t table_oid = 0, bool min_only = false) {
  spec.key_width = ColumnWidth::int32;
  spec.value_widths = {ColumnWidth::int32};
  spec.aggregates = {{PartialOp::count_rows, -1, -1}, {PartialOp::sum_int, 0, -1}};
  if (min_only) spec.aggregates = {{PartialOp::min_int, 0, -1}};
  spec.value_not_null = {1};
  TestTable t;
  t.key_type = KeyType::int32;
  t.value_types = {ValueType::int32};
  t.values.resize(1);
  t.value_valid.resize(1);
  std::mt19937_64 rng(seed);
  for (size_t r = 0; r < rows; ++r) {
    t.keys.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(key_span)));
    t.key_valid.push_back(true);
    t.values[0].push_back(static_cast<int32_t>(rng()));
    t.value_valid[0].push_back(true);
  }
  GroupBySpec gspec;
  gspec.key_type = KeyType::int32;
  gspec.columns = {{ValueType::int32, false}};
  gspec.aggregates = {{AggOp::count_star, -1}, {AggOp::sum, 0}};
  if (min_only) gspec.aggregates = {{AggOp::min, 0}};
  const GroupMap expected = reference_group_by(t, gspec);
  auto run = engine.start(spec);
  for (size_t b = 0; b < rows; b += chunk) {
    const size_t e = std::min(rows, b + chunk);
    HostChunk h = make_host_chunk(t, b, e);
    tally::ChunkInput in;
    in.rows = e - b;
    in.keys = {ColumnWidth::int32, h.pointers.key.data, nullptr};
    in.values = {{ColumnWidth::int32, h.pointers.values[0].data, nullptr}};
    if (table_oid != 0) {
      in.keys.identity = {table_oid, 1000 + b / chunk, 0};
      in.values[0].identity = {table_oid, 1000 + b / chunk, 1};
    }
    in.filters.assign(spec.aggregates.size(), nullptr);
    run->sink(in);
  }
  const tally::AggregationResult r = run->finalize();
  EXPECT_EQ(r.groups(), expected.size());
  for (size_t g = 0; g < r.groups(); ++g) {
    auto it = expected.find(std::optional<int64_t>(r.keys[g]));
    if (it == expected.end()) {
      ADD_FAILURE() << "unexpected group " << r.keys[g];
      continue;
    }
    if (min_only) {
      EXPECT_EQ(r.states[0].extreme_int[g], static_cast<int64_t>(it->second.value[0])) << "key " << r.keys[g];
      continue;
    }
    EXPECT_EQ(r.states[0].count[g], it->second.nonnull[0]) << "key " << r.keys[g];
    EXPECT_TRUE(r.states[1].sum_int[g] == it->second.value[1]) << "key " << r.keys[g];
  }
  return run->report();
}

// A count+sum spec whose keys the statistics bound to [min, max], with
// `groups` estimated (what the planner hands the engine for such a table).
tally::AggregationSpec spec_over_keys(int64_t min, int64_t max, uint64_t groups) {
  tally::AggregationSpec spec;
  spec.key_range_known = true;
  spec.key_min = min;
  spec.key_max = max;
  spec.estimated_groups = groups;
  return spec;
}

bool has_detail(const tally::AggregationReport& r, const std::string& text) {
  for (const auto& d : r.details)
    if (d.find(text) != std::string::npos) return true;
  return false;
}

// A repeated query takes the pooled aggregator of the previous one (reset,
// not re-created): its groups must not leak into the next query's result.
TEST(GpuAggregationEngine, RepeatedQueryReusesTheAggregatorExactly) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto engine = make_gpu_engine();
  ASSERT_NE(engine, nullptr);
  tally::AggregationSpec spec = spec_over_keys(0, 999, 1000);
  for (const char* variant : {"global", "dense"}) {
    SCOPED_TRACE(variant);
    spec.forced_variant = variant;
    (void)run_count_sum(*engine, spec, 1, 50000, 1000, 20000);
    // Fewer keys the second time: any group left from the first run shows.
    const auto second = run_count_sum(*engine, spec, 2, 30000, 300, 20000);
    EXPECT_TRUE(has_detail(second, "(reused)"));
  }
}

// Statistics that understate the keys (a range of 16 keys, 5000 arrive): the
// launches skip overflow observation (the range fits the table), so a spill
// is found only with the result. One launch's spill fits the spill buffer:
// the table grows and the answer stays exact. Several launches' spill does
// not: the query fails cleanly (XX000), never with a wrong answer.
TEST(GpuAggregationEngine, UnderstatedKeyRangeExactOrCleanError) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto engine = make_gpu_engine();
  ASSERT_NE(engine, nullptr);
  tally::AggregationSpec spec = spec_over_keys(0, 15, 16);
  spec.forced_variant = "global";  // dense would index past its range
  (void)run_count_sum(*engine, spec, 3, 20000, 5000, 20000);
  try {
    (void)run_count_sum(*engine, spec, 4, 80000, 5000, 20000);
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::internal_error) << e.what();
  }
}

// The detail line that starts with `prefix` ("" when none).
std::string detail_line(const tally::AggregationReport& r, const std::string& prefix) {
  for (const auto& d : r.details)
    if (d.rfind(prefix, 0) == 0) return d;
  return "";
}

// The number in `line` right before `word` (-1 when absent).
long number_before(const std::string& line, const std::string& word) {
  const size_t at = line.find(word);
  if (at == std::string::npos || at < 2) return -1;
  size_t from = line.rfind(' ', at - 2);
  from = from == std::string::npos ? 0 : from + 1;
  if (line[from] == '(') ++from;
  return std::strtol(line.c_str() + from, nullptr, 10);
}

// The first chunk is launched from its own sink, before the second chunk
// arrives, and the chunks after it, resident and adjacent in the column
// cache, are still joined into launches. Exact.
TEST(GpuAggregationEngine, FirstChunkLaunchedAtOnceStillJoinsTheRest) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto engine = make_gpu_engine();
  ASSERT_NE(engine, nullptr);
  tally::AggregationSpec spec = spec_over_keys(0, 999, 1000);
  spec.forced_variant = "dense";
  // Chunks of 4 MiB per int4 column: column regions place columns of at
  // least their allocation granularity (2 MiB on current GPUs) adjacently.
  const size_t chunk = size_t{1} << 20, rows = 5 * chunk;
  (void)run_count_sum(*engine, spec, 11, rows, 1000, chunk, 4242);  // copies the columns into the cache
  const auto r = run_count_sum(*engine, spec, 11, rows, 1000, chunk, 4242);
  const std::string path = detail_line(r, "GPU: start path");
  ASSERT_FALSE(path.empty());
  const size_t first_kernels = path.find("first kernels enqueued");
  ASSERT_NE(first_kernels, std::string::npos) << path;
  EXPECT_EQ(path.find("next sink"), std::string::npos) << "the first chunk waited for the second: " << path;
  const std::string launches = detail_line(r, "GPU: launches:");
  EXPECT_GE(number_before(launches, "chunks joined"), 2) << launches;
  EXPECT_LE(number_before(launches, "for 5 chunks"), 2) << launches;  // the first alone, the rest joined
}

// finish() in one round trip behind the last chunk (begin_finish): a table
// of more than 2^15 slots is copied back as far as the key range allows
// groups, and statistics that understate the range (more groups than were
// copied) fall back to counting first: exact either way.
TEST(GpuAggregationEngine, EarlyExtractionExactWithTrueAndUnderstatedRanges) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto engine = make_gpu_engine();
  ASSERT_NE(engine, nullptr);
  tally::AggregationSpec spec;
  spec.key_range_known = true;
  spec.key_min = 0;
  spec.estimated_groups = 40000;  // a table of 2^17 slots
  spec.forced_variant = "global";
  for (const int64_t key_max : {int64_t{49999}, int64_t{99}}) {
    SCOPED_TRACE(key_max);
    spec.key_max = key_max;
    const auto r = run_count_sum(*engine, spec, 12, 400000, 40000, 100000);
    const std::string path = detail_line(r, "GPU: end path");
    ASSERT_FALSE(path.empty());
    EXPECT_NE(path.find("extract enqueued"), std::string::npos) << path;
    EXPECT_LT(path.find("extract enqueued"), path.find("chunks done")) << "not enqueued behind the last chunk: " << path;
    if (key_max == 99) EXPECT_NE(path.find("counted"), std::string::npos) << "no fallback for 40000 groups over 100 keys: " << path;
    else EXPECT_EQ(path.find("counted"), std::string::npos) << "a second round trip with a true bound: " << path;
    // The result's arrays were mapped while the host waited for the chunks
    // ("partly" when the GPU finished first);
    // the build's regions carry their page faults, and keys prepared whole
    // (320 KB, 78 pages) were written without one.
    EXPECT_LT(path.find(" prepared "), path.find("chunks done")) << path;
    if (key_max != 99) {
      EXPECT_NE(path.find("aggregate 1 "), std::string::npos) << path;
      const long key_faults = number_before(path, "faults)");
      EXPECT_GE(key_faults, 0) << path;
      if (path.find("result prepared") != std::string::npos)
        EXPECT_LE(key_faults, 4) << "the keys went into pages not mapped yet: " << path;
    }
  }
}

// An in-memory tuning store: the engine's tuner runs (race, screens, search).
// Thread-safe, as TuningStore requires: the engine's writer thread stores
// while a query thread lists or loads.
class MemoryTuningStore final : public tally::TuningStore {
 public:
  // `lists`: all() lists every record, as the catalog's store does
  // (TuningStore::lists; the engine then reads them all at once, at its
  // first query on the store, and loads no key).
  explicit MemoryTuningStore(bool lists = false) : lists_(lists) {}
  std::vector<tally::TuningRecord> all() override {
    std::lock_guard lock(mutex_);
    ++listings_;
    return lists_ ? records_ : std::vector<tally::TuningRecord>{};
  }
  bool lists() const override { return lists_; }
  std::vector<tally::TuningRecord> load(const std::string& device, const std::string& signature, int bucket) override {
    std::lock_guard lock(mutex_);
    ++loads_;
    std::vector<tally::TuningRecord> out;
    for (const auto& r : records_)
      if (r.device == device && r.signature == signature && r.bucket == bucket) out.push_back(r);
    return out;
  }
  void store(const tally::TuningRecord& record) override {
    std::lock_guard lock(mutex_);
    for (auto& r : records_) {
      if (r.device == record.device && r.signature == record.signature && r.variant == record.variant &&
          r.bucket == record.bucket) {
        r = record;
        return;
      }
    }
    records_.push_back(record);
  }
  // load() calls so far: the reads a query's path made.
  int loads() const {
    std::lock_guard lock(mutex_);
    return loads_;
  }
  // all() calls so far.
  int listings() const {
    std::lock_guard lock(mutex_);
    return listings_;
  }
  // The signatures with a record of `bucket`, each once.
  std::set<std::string> signatures(int bucket) const {
    std::lock_guard lock(mutex_);
    std::set<std::string> out;
    for (const auto& r : records_)
      if (r.bucket == bucket) out.insert(r.signature);
    return out;
  }
  // Whether `bucket` has a record whose measurement finished (any source
  // but "measuring": ChunkTuner::records).
  bool measured(int bucket) const {
    std::lock_guard lock(mutex_);
    return std::any_of(records_.begin(), records_.end(),
                       [&](const auto& r) { return r.bucket == bucket && r.source != "measuring"; });
  }

 private:
  mutable std::mutex mutex_;
  std::vector<tally::TuningRecord> records_;
  bool lists_ = false;
  int loads_ = 0;
  int listings_ = 0;
};

// A cold query races variants on screens (three launches over one staged
// chunk: two slices at row offsets and the rest, gpu/engine/gpu_run.cpp
// run_screen): with NULLs in keys and values the slices' validity arrays are
// offset too. Every group must match the reference, cold and warm.
TEST(GpuAggregationEngine, RaceScreensOverSlicedChunksAreExact) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto engine = make_gpu_engine();
  ASSERT_NE(engine, nullptr);
  MemoryTuningStore store;
  tally::AggregationSpec spec;
  spec.key_width = ColumnWidth::int64;
  spec.value_widths = {ColumnWidth::int32};
  spec.aggregates = {{PartialOp::count_rows, -1, -1}, {PartialOp::count_valid, 0, -1}, {PartialOp::sum_int, 0, -1}};
  spec.estimated_groups = 3000;
  spec.tuning_store = &store;
  TestTable t;
  t.key_type = KeyType::int64;
  t.value_types = {ValueType::int32};
  t.values.resize(1);
  t.value_valid.resize(1);
  std::mt19937_64 rng(7);
  const size_t chunk = size_t{1} << 16, rows = 32 * chunk;  // slices of 2^14 rows
  for (size_t r = 0; r < rows; ++r) {
    t.keys.push_back(static_cast<int64_t>(rng() % 3000) * 7919 - 5);
    t.key_valid.push_back(rng() % 40 != 0);
    t.values[0].push_back(static_cast<int32_t>(rng() % 100000) - 50000);
    t.value_valid[0].push_back(rng() % 9 != 0);
  }
  GroupBySpec gspec;
  gspec.key_type = KeyType::int64;
  gspec.columns = {{ValueType::int32, true}};
  gspec.aggregates = {{AggOp::count_star, -1}, {AggOp::count, 0}, {AggOp::sum, 0}};
  const GroupMap expected = reference_group_by(t, gspec);
  long screens = 0;
  for (int query = 0; query < 2; ++query) {
    SCOPED_TRACE(query == 0 ? "cold" : "warm");
    auto run = engine->start(spec);
    for (size_t b = 0; b < rows; b += chunk) {
      HostChunk h = make_host_chunk(t, b, b + chunk);
      tally::ChunkInput in;
      in.rows = chunk;
      in.keys = {ColumnWidth::int64, h.pointers.key.data, h.pointers.key.validity};
      in.values = {{ColumnWidth::int32, h.pointers.values[0].data, h.pointers.values[0].validity}};
      in.filters.assign(spec.aggregates.size(), nullptr);
      run->sink(in);
    }
    const tally::AggregationResult r = run->finalize();
    ASSERT_EQ(r.groups(), expected.size());
    for (size_t g = 0; g < r.groups(); ++g) {
      const std::optional<int64_t> key = r.key_valid[g] ? std::optional<int64_t>(r.keys[g]) : std::nullopt;
      auto it = expected.find(key);
      ASSERT_NE(it, expected.end());
      EXPECT_EQ(r.states[0].count[g], it->second.nonnull[0]);
      EXPECT_EQ(r.states[1].count[g], it->second.nonnull[1]);
      if (it->second.nonnull[2]) EXPECT_TRUE(r.states[2].sum_int[g] == it->second.value[2]);
    }
    if (query == 0) {
      for (const auto& d : run->report().details) {
        const size_t at = d.find(" race screens");
        if (at == std::string::npos) continue;
        const size_t from = d.rfind(' ', at - 1);
        screens = std::strtol(d.c_str() + from + 1, nullptr, 10);
      }
    }
  }
  EXPECT_GE(screens, 1) << "the cold query raced no variant on a screen";
}

TEST(GpuAggregationEngine, RefusesWhatItCannotRun) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto engine = make_gpu_engine();
  ASSERT_NE(engine, nullptr);
  tally::AggregationSpec spec;
  // A float key, ordered-set values and more value columns than a lane plan
  // holds stay off the device; float sums and moments run there.
  spec.key_width = ColumnWidth::float64;
  spec.value_widths = {ColumnWidth::int32};
  spec.aggregates = {{PartialOp::sum_int, 0, -1}};
  EXPECT_FALSE(engine->can_run(spec));
  spec.key_width = ColumnWidth::int32;
  spec.aggregates = {{PartialOp::ordered_values, 0, -1}};
  EXPECT_FALSE(engine->can_run(spec));
  spec.value_widths.assign(kMaxColumns + 1, ColumnWidth::int32);
  spec.aggregates.clear();
  for (int c = 0; c <= kMaxColumns; ++c) spec.aggregates.push_back({PartialOp::count_valid, c, -1});
  EXPECT_FALSE(engine->can_run(spec));
  spec.value_widths = {ColumnWidth::float64};
  spec.aggregates = {{PartialOp::sum_float, 0, -1}, {PartialOp::moments_float, 0, -1}};
  EXPECT_TRUE(engine->can_run(spec));
  spec.value_widths = {ColumnWidth::int32};
  spec.aggregates = {{PartialOp::moments_int, 0, -1}};
  EXPECT_TRUE(engine->can_run(spec));
  spec.aggregates = {{PartialOp::sum_int, 0, -1}};
  EXPECT_TRUE(engine->can_run(spec));
  spec.forced_variant = "no_such_variant";
  try {
    (void)engine->start(spec);
    ADD_FAILURE() << "no error for an unknown variant";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::invalid_parameter_value);
  }
}

// Start-up's warm-up (start_up.hpp warm_launch_paths) leaves none of a cold
// count+sum query's first uses to it: three aggregators alive at once, as in
// a cold query's race (partitioned, global, sort), at each rows_per_thread,
// over 2^16 groups (the warm-up's chunks have 2^12) allocate no pinned block
// and launch no kernel for the first time in the process; results are exact.
TEST(StartUpWarmUp, ColdRaceAfterTheWarmUpPaysNoFirstUse) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const DeviceInfo d = query_device(0);
  prepare_for_queries(d);
  const LaunchPathWarmUp w = warm_launch_paths(d, 60000);
  EXPECT_EQ(w.failed, 0);
  EXPECT_FALSE(w.out_of_time);
  EXPECT_TRUE(w.already_warmed || w.aggregations >= 16) << w.aggregations;
  EXPECT_TRUE(warm_launch_paths(d).already_warmed);  // once per process

  GroupBySpec spec;
  spec.key_type = KeyType::int32;
  spec.key_may_have_nulls = false;
  spec.columns.push_back({ValueType::int32, false});
  spec.aggregates = {{AggOp::count_star, -1}, {AggOp::sum, 0}};
  const int64_t rows = int64_t{1} << 20;
  const int64_t groups = int64_t{1} << 16;
  std::vector<int32_t> keys(static_cast<size_t>(rows)), values(static_cast<size_t>(rows));
  std::vector<int64_t> want_count(static_cast<size_t>(groups)), want_sum(static_cast<size_t>(groups));
  std::mt19937_64 rng(6);
  for (size_t i = 0; i < keys.size(); ++i) {
    keys[i] = static_cast<int32_t>(rng() % static_cast<uint64_t>(groups));
    values[i] = static_cast<int32_t>(rng() % 2001) - 1000;
    want_count[static_cast<size_t>(keys[i])] += 2;  // each aggregator consumes the chunk twice
    want_sum[static_cast<size_t>(keys[i])] += 2 * int64_t{values[i]};
  }
  ChunkPointers host;
  host.rows = rows;
  host.key.data = keys.data();
  host.values.push_back(ColumnPointer{values.data(), nullptr});
  host.key_range = KeyRange{0, groups - 1};
  ChunkFacts facts;
  facts.rows = static_cast<uint64_t>(rows);
  facts.key_range = host.key_range;
  facts.estimated_groups = static_cast<uint64_t>(groups);

  const FirstUseSnapshot before = first_use_snapshot(d.ordinal);
  for (const int rpt : {1, 2, 4, 8}) {
    SCOPED_TRACE("rows_per_thread " + std::to_string(rpt));
    std::vector<std::pair<Variant, std::unique_ptr<GroupByAggregator>>> race;
    for (const Variant v : {Variant::partitioned_hash, Variant::global_hash, Variant::sort}) {
      VariantConfig config = default_launch_config(v, spec, d, facts);
      config.launch.rows_per_thread = rpt;
      TableOptions options = default_table_options(v, spec, d, facts);
      options.own_partitioned_output = false;
      race.emplace_back(v, std::make_unique<GroupByAggregator>(d, spec, options));
      (void)race.back().second->consume_host(host, v, config);
      (void)race.back().second->consume_host(host, v, config);
    }
    for (auto& [v, aggregator] : race) {
      SCOPED_TRACE(std::string(variant_name(v)));
      const GroupByResult r = aggregator->finish();
      ASSERT_EQ(r.groups(), static_cast<size_t>(groups));
      for (size_t g = 0; g < r.groups(); ++g) {
        const auto k = static_cast<size_t>(r.keys[g]);
        ASSERT_EQ(static_cast<int64_t>(r.aggregates[0].value_at(g)), want_count[k]) << "key " << k;
        ASSERT_EQ(static_cast<int64_t>(r.aggregates[1].value_at(g)), want_sum[k]) << "key " << k;
      }
    }
  }
  const FirstUseSnapshot after = first_use_snapshot(d.ordinal);
  EXPECT_EQ(after.pinned_allocations - before.pinned_allocations, 0u) << first_use_line(before, after);
  EXPECT_EQ(after.kernel_first_lookups - before.kernel_first_lookups, 0u) << first_use_line(before, after);
}

}  // namespace
}  // namespace tally::gpu::test

namespace tally::gpu::test {
namespace {

TEST(GpuAggregationEngine, ShortColdQueriesPersistWhatTheyMeasured) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  MemoryTuningStore store(/*lists=*/true);
  const size_t chunk = size_t{1} << 16, rows = 6 * chunk;
  constexpr int kFirst = 6, kLast = 13, kRounds = 6;
  const auto run_round = [&](uint64_t seed) {
    auto engine = make_gpu_engine();
    ASSERT_NE(engine, nullptr);
    for (int bucket = kFirst; bucket <= kLast; ++bucket) {
      const int64_t groups = int64_t{3} << (bucket - 1);  // 1.5 x 2^bucket: well inside the bucket
      ASSERT_EQ(cardinality_bucket(static_cast<double>(groups)), bucket);
      tally::AggregationSpec spec = spec_over_keys(0, groups - 1, static_cast<uint64_t>(groups));
      spec.tuning_store = &store;
      const auto r = run_count_sum(*engine, spec, seed + static_cast<uint64_t>(bucket), rows, groups, chunk);
      ASSERT_FALSE(detail_line(r, "Tuning:").empty());
    }
  };  // every record is persisted before the engine goes
  const auto count_measured = [&] {
    int n = 0;
    for (int bucket = kFirst; bucket <= kLast; ++bucket) n += store.measured(bucket);
    return n;
  };
  run_round(40);
  for (int bucket = kFirst; bucket <= kLast; ++bucket)
    EXPECT_FALSE(store.signatures(bucket).empty()) << "bucket " << bucket << ": the short cold query stored nothing";
  const int after_first = count_measured();
  int rounds = 1;
  while (count_measured() < kLast - kFirst + 1 && rounds < kRounds) run_round(100 * ++rounds);
  std::printf("short cold queries (6 chunks of 2^16 rows, default tuning): %d of %d buckets measured after one query, "
              "%d after %d rounds\n",
              after_first, kLast - kFirst + 1, count_measured(), rounds);
  EXPECT_EQ(count_measured(), kLast - kFirst + 1) << "open measurements were not continued to their end";
}

// A store that lists (TuningStore::lists) is read once, at the engine's
// first query on it, even when it is empty then (a tallyd started on an
// empty tuning cache): a later cold signature's records are known absent,
// with no load() on its query's path. A store that cannot list is asked
// once per key, and a key's answer is remembered. A store tallyd's start
// read (Database::open: preload_tuning) is neither listed nor loaded by the
// first query.
TEST(GpuAggregationEngine, ListingStoreIsNotReadForAKeyItLacks) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  tally::AggregationSpec spec = spec_over_keys(0, 2999, 3000);
  const size_t chunk = size_t{1} << 16, rows = 2 * chunk;
  {
    MemoryTuningStore store(/*lists=*/true);
    spec.tuning_store = &store;
    auto engine = make_gpu_engine();
    ASSERT_NE(engine, nullptr);
    (void)run_count_sum(*engine, spec, 50, rows, 3000, chunk, 0, /*min_only=*/true);
    const auto q = run_count_sum(*engine, spec, 51, rows, 3000, chunk);  // another signature, cold
    EXPECT_EQ(store.loads(), 0);
    // Every query makes its own tuner: it is made, from no record, without a load().
    EXPECT_NE(detail_line(q, "GPU: start path").find("tuner made"), std::string::npos)
        << detail_line(q, "GPU: start path");
  }
  {
    MemoryTuningStore store(/*lists=*/false);
    spec.tuning_store = &store;
    auto engine = make_gpu_engine();
    (void)run_count_sum(*engine, spec, 52, rows, 3000, chunk, 0, /*min_only=*/true);
    (void)run_count_sum(*engine, spec, 53, rows, 3000, chunk);
    EXPECT_EQ(store.loads(), 2);  // one per signature
    (void)run_count_sum(*engine, spec, 54, rows, 3000, chunk);
    EXPECT_EQ(store.loads(), 2);  // the key's answer is known
  }
  {
    MemoryTuningStore store(/*lists=*/true);
    spec.tuning_store = &store;
    auto engine = make_gpu_engine();
    engine->preload_tuning(&store, static_cast<int64_t>(chunk));
    EXPECT_EQ(store.listings(), 1);
    (void)run_count_sum(*engine, spec, 55, rows, 3000, chunk);
    EXPECT_EQ(store.listings(), 1) << "the first query listed the store again";
    EXPECT_EQ(store.loads(), 0);
  }
}

// The statement's cancel token (AggregationSpec::cancel) stops a run at its
// next chunk, with PostgreSQL's 57014, and the run goes within 100 ms: the
// chunks over resident columns reach the engine without a host scan that
// would look at it.
TEST(GpuAggregationEngine, CancelStopsTheRunAtTheNextChunk) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto engine = make_gpu_engine();
  ASSERT_NE(engine, nullptr);
  tally::CancelToken token;
  tally::AggregationSpec spec;
  spec.key_width = ColumnWidth::int64;
  spec.value_widths = {ColumnWidth::int64};
  spec.aggregates = {{PartialOp::count_rows, -1, -1}, {PartialOp::sum_int, 0, -1}};
  spec.cancel = &token;
  const size_t rows = size_t{1} << 22;
  std::vector<int64_t> keys(rows), values(rows);
  for (size_t r = 0; r < rows; ++r) {
    keys[r] = static_cast<int64_t>(r % 100000);
    values[r] = static_cast<int64_t>(r);
  }
  tally::ChunkInput in;
  in.rows = rows;
  in.keys = {ColumnWidth::int64, keys.data(), nullptr};
  in.values = {{ColumnWidth::int64, values.data(), nullptr}};
  in.filters.assign(spec.aggregates.size(), nullptr);
  auto run = engine->start(spec);
  run->sink(in);
  run->sink(in);
  token.request(tally::CancelReason::statement_timeout);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    run->sink(in);
    ADD_FAILURE() << "a cancelled run took another chunk";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::query_canceled);
  }
  run.reset();  // waits for what was enqueued
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(ms, 100.0);
  // The engine still serves the next statement.
  token.reset();
  auto next = engine->start(spec);
  next->sink(in);
  const tally::AggregationResult r = next->finalize();
  EXPECT_EQ(r.groups(), 100000u);
}

}  // namespace
}  // namespace tally::gpu::test
