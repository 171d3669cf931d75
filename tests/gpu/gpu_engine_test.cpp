// The GPU side of the planner/engine seam (gpu/gpu_aggregate_engine.hpp):
// partial states of several chunks against the CPU reference; unsupported
// shapes are refused by can_run so the planner falls back to the CPU engine.
#include <gtest/gtest.h>

#include <random>

#include "common/error.hpp"
#include "gpu/device_info.hpp"
#include "gpu/gpu_aggregate_engine.hpp"
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

}  // namespace
}  // namespace tally::gpu::test
