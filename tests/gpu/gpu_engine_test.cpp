// The GPU side of the planner/engine seam (gpu/gpu_aggregate_engine.hpp):
// partial states of several chunks against the CPU reference; unsupported
// shapes are refused by can_run so the planner falls back to the CPU engine.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <utility>
#include <random>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "gpu/device_info.hpp"
#include "gpu/first_use_counts.hpp"
#include "gpu/gpu_aggregate_engine.hpp"
#include "gpu/group_by.hpp"
#include "gpu/start_up.hpp"
#include "gpu/variant_rules.hpp"
#include "tests/gpu/group_by_reference.hpp"

namespace tally::gpu::test {
namespace {

using executor::ColumnWidth;
using executor::PartialOp;

TEST(GpuAggregationEngine, AbsentWithoutDevice) {
  if (device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_EQ(make_gpu_engine(), nullptr);
}

TEST(GpuAggregationEngine, PartialStatesMatchReferenceAcrossChunks) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto engine = make_gpu_engine();
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->name(), "gpu");

  executor::AggregationSpec spec;
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
    executor::ChunkInput in;
    in.rows = e - b;
    in.keys = {ColumnWidth::int64, h.pointers.key.data, h.pointers.key.validity};
    in.values = {{ColumnWidth::int32, h.pointers.values[0].data, h.pointers.values[0].validity},
                 {ColumnWidth::int64, h.pointers.values[1].data, h.pointers.values[1].validity}};
    in.filters.assign(spec.aggregates.size(), nullptr);
    run->sink(in);
  }
  const executor::AggregationResult r = run->finalize();
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
executor::AggregationReport run_count_sum(executor::AggregateEngine& engine, executor::AggregationSpec spec,
                                          uint64_t seed, size_t rows, int64_t key_span, size_t chunk) {
  spec.key_width = ColumnWidth::int32;
  spec.value_widths = {ColumnWidth::int32};
  spec.aggregates = {{PartialOp::count_rows, -1, -1}, {PartialOp::sum_int, 0, -1}};
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
  const GroupMap expected = reference_group_by(t, gspec);
  auto run = engine.start(spec);
  for (size_t b = 0; b < rows; b += chunk) {
    const size_t e = std::min(rows, b + chunk);
    HostChunk h = make_host_chunk(t, b, e);
    executor::ChunkInput in;
    in.rows = e - b;
    in.keys = {ColumnWidth::int32, h.pointers.key.data, nullptr};
    in.values = {{ColumnWidth::int32, h.pointers.values[0].data, nullptr}};
    in.filters.assign(spec.aggregates.size(), nullptr);
    run->sink(in);
  }
  const executor::AggregationResult r = run->finalize();
  EXPECT_EQ(r.groups(), expected.size());
  for (size_t g = 0; g < r.groups(); ++g) {
    auto it = expected.find(std::optional<int64_t>(r.keys[g]));
    if (it == expected.end()) {
      ADD_FAILURE() << "unexpected group " << r.keys[g];
      continue;
    }
    EXPECT_EQ(r.states[0].count[g], it->second.nonnull[0]) << "key " << r.keys[g];
    EXPECT_TRUE(r.states[1].sum_int[g] == it->second.value[1]) << "key " << r.keys[g];
  }
  return run->report();
}

bool has_detail(const executor::AggregationReport& r, const std::string& text) {
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
  executor::AggregationSpec spec;
  spec.key_range_known = true;
  spec.key_min = 0;
  spec.key_max = 999;
  spec.estimated_groups = 1000;
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
  executor::AggregationSpec spec;
  spec.key_range_known = true;
  spec.key_min = 0;
  spec.key_max = 15;
  spec.estimated_groups = 16;
  spec.forced_variant = "global";  // dense would index past its range
  (void)run_count_sum(*engine, spec, 3, 20000, 5000, 20000);
  try {
    (void)run_count_sum(*engine, spec, 4, 80000, 5000, 20000);
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::internal_error) << e.what();
  }
}

// An in-memory tuning store: the engine's tuner runs (race, screens, search).
class MemoryTuningStore final : public executor::TuningStore {
 public:
  std::vector<executor::TuningRecord> load(const std::string& device, const std::string& signature, int bucket) override {
    std::vector<executor::TuningRecord> out;
    for (const auto& r : records_)
      if (r.device == device && r.signature == signature && r.bucket == bucket) out.push_back(r);
    return out;
  }
  void store(const executor::TuningRecord& record) override {
    for (auto& r : records_) {
      if (r.device == record.device && r.signature == record.signature && r.variant == record.variant &&
          r.bucket == record.bucket) {
        r = record;
        return;
      }
    }
    records_.push_back(record);
  }

 private:
  std::vector<executor::TuningRecord> records_;
};

// A cold query races variants on screens (three launches over one staged
// chunk: two slices at row offsets and the rest, gpu_aggregate_engine.cpp
// run_screen): with NULLs in keys and values the slices' validity arrays are
// offset too. Every group must match the reference, cold and warm.
// Run with the default knobs and with launch gates (TALLY_GPU_KNOBS gate=1):
// a gated screen or measurement must be as exact as an ungated one.
void race_screens_over_sliced_chunks(bool gates);
TEST(GpuAggregationEngine, RaceScreensOverSlicedChunksAreExact) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const char* before = std::getenv("TALLY_GPU_KNOBS");
  const std::string saved = before ? before : "";
  for (const bool gates : {false, true}) {
    SCOPED_TRACE(gates ? "launch gates on" : "default knobs");
    if (gates) setenv("TALLY_GPU_KNOBS", "gate=1", 1);
    else unsetenv("TALLY_GPU_KNOBS");
    race_screens_over_sliced_chunks(gates);
  }
  if (before) setenv("TALLY_GPU_KNOBS", saved.c_str(), 1);
  else unsetenv("TALLY_GPU_KNOBS");
}

void race_screens_over_sliced_chunks(bool gates) {
  auto engine = make_gpu_engine();
  ASSERT_NE(engine, nullptr);
  MemoryTuningStore store;
  executor::AggregationSpec spec;
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
  long screens = 0, gated = 0;
  for (int query = 0; query < 2; ++query) {
    SCOPED_TRACE(query == 0 ? "cold" : "warm");
    auto run = engine->start(spec);
    for (size_t b = 0; b < rows; b += chunk) {
      HostChunk h = make_host_chunk(t, b, b + chunk);
      executor::ChunkInput in;
      in.rows = chunk;
      in.keys = {ColumnWidth::int64, h.pointers.key.data, h.pointers.key.validity};
      in.values = {{ColumnWidth::int32, h.pointers.values[0].data, h.pointers.values[0].validity}};
      in.filters.assign(spec.aggregates.size(), nullptr);
      run->sink(in);
    }
    const executor::AggregationResult r = run->finalize();
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
        // With gates on (second pass), its measurements on an idle GPU
        // ran behind launch gates.
        const size_t g = d.find("; ", at);
        ASSERT_NE(g, std::string::npos) << d;
        gated = std::strtol(d.c_str() + g + 2, nullptr, 10);
      }
    }
  }
  EXPECT_GE(screens, 1) << "the cold query raced no variant on a screen";
  if (gates) EXPECT_GE(gated, 1) << "the cold query's first measurement ran on an idle GPU without a gate";
  else EXPECT_EQ(gated, 0) << "launch gates are off by default";
}

TEST(GpuAggregationEngine, RefusesWhatItCannotRun) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto engine = make_gpu_engine();
  ASSERT_NE(engine, nullptr);
  executor::AggregationSpec spec;
  spec.key_width = ColumnWidth::int32;
  spec.value_widths = {ColumnWidth::float64};
  spec.aggregates = {{PartialOp::sum_float, 0, -1}};
  EXPECT_FALSE(engine->can_run(spec));
  spec.value_widths = {ColumnWidth::int32};
  spec.aggregates = {{PartialOp::moments_int, 0, -1}};
  EXPECT_FALSE(engine->can_run(spec));
  spec.aggregates = {{PartialOp::sum_int, 0, -1}};
  EXPECT_TRUE(engine->can_run(spec));
  spec.forced_variant = "no_such_variant";
  EXPECT_THROW(engine->start(spec), Error);
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
        ASSERT_EQ(static_cast<int64_t>(r.aggregates[0].value[g]), want_count[k]) << "key " << k;
        ASSERT_EQ(static_cast<int64_t>(r.aggregates[1].value[g]), want_sum[k]) << "key " << k;
      }
    }
  }
  const FirstUseSnapshot after = first_use_snapshot(d.ordinal);
  EXPECT_EQ(after.pinned_allocations - before.pinned_allocations, 0u) << first_use_line(before, after);
  EXPECT_EQ(after.kernel_first_lookups - before.kernel_first_lookups, 0u) << first_use_line(before, after);
}

}  // namespace
}  // namespace tally::gpu::test
