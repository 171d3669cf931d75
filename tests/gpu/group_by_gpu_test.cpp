// Every GPU variant against the CPU reference on the same data, typed over key
// type x variant, with all aggregates (count(*), count, sum, min, max, avg over
// an int4 and an int8 column) checked together, and the fixed edge cases of
// STYLE.md: empty input, all-NULL keys, all-NULL values, one group, cardinality
// at the shared-memory thresholds +-1, a forced tiny table (growth), extreme
// values, variants switched between chunks. Skips without a CUDA device.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <tuple>

#include "common/error.hpp"
#include "gpu/rules/device_info.hpp"
#include "gpu/group_by.hpp"
#include "gpu/lane_plan.hpp"
#include "gpu/rules/variant_rules.hpp"
#include "tests/gpu/group_by_reference.hpp"

namespace tally::gpu::test {
namespace {

std::string to_string(__int128 v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}

GroupBySpec full_spec(KeyType kt) {
  GroupBySpec s;
  s.key_type = kt;
  s.columns = {{ValueType::int32, true}, {ValueType::int64, true}};
  s.aggregates = {{AggOp::count_star, -1}, {AggOp::count, 0}, {AggOp::sum, 0}, {AggOp::min, 0},
                  {AggOp::max, 0},        {AggOp::avg, 0},   {AggOp::count, 1}, {AggOp::sum, 1},
                  {AggOp::min, 1},        {AggOp::max, 1}};
  return s;
}

// SELECT k, sum(v), count(*) over one NOT NULL int4 value: the shape the
// lean count+sum kernels serve.
GroupBySpec count_sum_spec(KeyType kt) {
  GroupBySpec s;
  s.key_type = kt;
  s.columns = {{ValueType::int32, false}};
  s.aggregates = {{AggOp::sum, 0}, {AggOp::count_star, -1}};
  return s;
}

struct DataShape {
  size_t rows = 1000;
  uint64_t groups = 10;         // distinct non-NULL keys
  bool sparse = false;          // spread keys over the whole key range
  double null_key = 0.0;        // fraction of NULL keys
  double null_value = 0.0;      // fraction of NULL values
  bool extreme_values = false;  // values near the type limits
  int64_t key_offset = 0;
};

TestTable make_table(KeyType kt, const DataShape& d, uint64_t seed) {
  std::mt19937_64 rng(seed);
  TestTable t;
  t.key_type = kt;
  t.value_types = {ValueType::int32, ValueType::int64};
  t.values.resize(2);
  t.value_valid.resize(2);
  std::uniform_real_distribution<double> unit(0, 1);
  const bool k32 = kt == KeyType::int32;
  for (size_t r = 0; r < d.rows; ++r) {
    const uint64_t g = d.groups ? rng() % d.groups : 0;
    int64_t key;
    if (d.sparse) {
      // An odd multiplier is a bijection modulo 2^w: `groups` distinct keys.
      const uint64_t spread = g * 0x9E3779B97F4A7C15ull;
      key = k32 ? static_cast<int32_t>(static_cast<uint32_t>(spread >> 32)) : static_cast<int64_t>(spread);
    } else {
      key = static_cast<int64_t>(g) + d.key_offset;
    }
    t.keys.push_back(key);
    if (d.null_key > 0) t.key_valid.push_back(unit(rng) >= d.null_key);
    int64_t v32, v64;
    if (d.extreme_values) {
      v32 = (rng() & 1) ? std::numeric_limits<int32_t>::max() - static_cast<int64_t>(rng() % 3)
                        : std::numeric_limits<int32_t>::min() + static_cast<int64_t>(rng() % 3);
      v64 = (rng() & 1) ? std::numeric_limits<int64_t>::max() - static_cast<int64_t>(rng() % 3)
                        : std::numeric_limits<int64_t>::min() + static_cast<int64_t>(rng() % 3);
    } else {
      v32 = static_cast<int32_t>(rng());  // full int4 range, negative too: exercises carries
      v64 = static_cast<int64_t>(rng() >> 8) - (int64_t{1} << 55);
    }
    t.values[0].push_back(v32);
    t.values[1].push_back(v64);
    if (d.null_value > 0) {
      t.value_valid[0].push_back(unit(rng) >= d.null_value);
      t.value_valid[1].push_back(unit(rng) >= d.null_value);
    }
  }
  if (k32 && !d.sparse && d.key_offset == 0 && d.groups > 0) {
    // keep int32 keys in range for dense shapes
  }
  return t;
}

std::optional<KeyRange> range_of(const TestTable& t) {
  KeyRange r{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  for (size_t i = 0; i < t.rows(); ++i)
    if (t.key_valid.empty() || t.key_valid[i]) {
      r.min = std::min(r.min, t.keys[i]);
      r.max = std::max(r.max, t.keys[i]);
    }
  return r;
}

// Compares every group and every aggregate; reports the first differences.
::testing::AssertionResult same_groups(const GroupMap& expected, const GroupMap& actual) {
  std::ostringstream out;
  int shown = 0;
  if (expected.size() != actual.size())
    out << "groups: expected " << expected.size() << ", got " << actual.size() << "\n";
  for (const auto& [key, ev] : expected) {
    auto it = actual.find(key);
    const std::string ks = key ? std::to_string(*key) : "NULL";
    if (it == actual.end()) {
      if (shown++ < 5) out << "missing group " << ks << "\n";
      continue;
    }
    for (size_t a = 0; a < ev.value.size(); ++a) {
      if (ev.value[a] != it->second.value[a] || ev.nonnull[a] != it->second.nonnull[a]) {
        if (shown++ < 5)
          out << "group " << ks << " aggregate " << a << ": expected (" << to_string(ev.value[a]) << ", n="
              << ev.nonnull[a] << ") got (" << to_string(it->second.value[a]) << ", n=" << it->second.nonnull[a]
              << ")\n";
      }
    }
  }
  for (const auto& [key, v] : actual)
    if (!expected.count(key) && shown++ < 5) out << "unexpected group " << (key ? std::to_string(*key) : "NULL") << "\n";
  if (out.str().empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << out.str();
}

using Param = std::tuple<KeyType, Variant>;

class GpuGroupByTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
    device_ = query_device(0);
  }
  KeyType key_type() const { return std::get<0>(GetParam()); }
  Variant variant() const { return std::get<1>(GetParam()); }

  // Runs the table through the variant in chunks of `chunk_rows` and checks
  // against the reference. Returns the reports.
  // `tweak` adjusts each chunk's rule-based configuration (forcing a path).
  std::vector<LaunchReport> check(const TestTable& t, uint64_t estimate, size_t chunk_rows = 0,
                                  const GroupBySpec* spec_in = nullptr, bool pass_range = true,
                                  const std::function<void(VariantConfig&)>& tweak = {}) {
    const GroupBySpec spec = spec_in ? *spec_in : full_spec(key_type());
    ChunkFacts whole;
    whole.rows = t.rows();
    whole.estimated_groups = estimate;
    if (pass_range) whole.key_range = range_of(t);
    // The rule-based table options (range hash for dense/partitioned when the
    // key range is known), with the test's estimate.
    const TableOptions opt = default_table_options(variant(), spec, device_, whole);
    GroupByAggregator agg(device_, spec, opt);
    std::vector<LaunchReport> reports;
    if (chunk_rows == 0) chunk_rows = std::max<size_t>(t.rows(), 1);
    for (size_t b = 0; b < std::max<size_t>(t.rows(), 1); b += chunk_rows) {
      const size_t e = std::min(t.rows(), b + chunk_rows);
      HostChunk h = make_host_chunk(t, b, e);
      ChunkFacts facts;
      facts.rows = e - b;
      facts.estimated_groups = estimate;
      if (pass_range) {
        TestTable part = t;  // range of this chunk
        part.keys.assign(t.keys.begin() + static_cast<long>(b), t.keys.begin() + static_cast<long>(e));
        if (!t.key_valid.empty())
          part.key_valid.assign(t.key_valid.begin() + static_cast<long>(b), t.key_valid.begin() + static_cast<long>(e));
        h.pointers.key_range = range_of(part);
        facts.key_range = h.pointers.key_range;
      }
      VariantConfig config = default_launch_config(variant(), spec, device_, facts);
      if (tweak) tweak(config);
      reports.push_back(agg.consume_host(h.pointers, variant(), config));
      if (e >= t.rows()) break;
    }
    if (prepare_) {
      // As GpuRun's end does: extraction enqueued behind the last chunk,
      // the result's arrays mapped, then the result built into them.
      agg.begin_finish();
      agg.prepare_result();
    }
    EXPECT_TRUE(same_groups(reference_group_by(t, spec), to_map(agg.finish())))
        << "variant " << variant_name(variant()) << " rows " << t.rows();
    return reports;
  }

  bool dense_fits(const TestTable& t) const {
    ChunkFacts f;
    f.key_range = range_of(t);
    return can_use(Variant::dense, full_spec(key_type()), device_, f);
  }

  DeviceInfo device_;
  bool prepare_ = false;  // check() maps the result's arrays before finish()
};

TEST_P(GpuGroupByTest, RandomGroupsWithNulls) {
  for (uint64_t groups : {1ull, 7ull, 100ull, 3000ull}) {
    DataShape d;
    d.rows = 20000;
    d.groups = groups;
    d.null_key = 0.05;
    d.null_value = 0.2;
    const TestTable t = make_table(key_type(), d, groups);
    if (variant() == Variant::dense && !dense_fits(t)) continue;
    check(t, groups);
  }
}

// The result built into prepare_result()'s arrays (sized by the copy, cut
// to the groups found) is the same as without them (EarlyExtraction... in
// gpu_engine_test.cpp covers arrays too small: understated key ranges):
// every aggregate (count, sums narrow and wide, min, max, avg), NULL keys,
// one chunk (the partitioned variant's own output) and several.
TEST_P(GpuGroupByTest, PreparedResultArraysStayExact) {
  prepare_ = true;
  for (const uint64_t groups : {1ull, 100ull, 3000ull, 40000ull}) {
    SCOPED_TRACE(groups);
    DataShape d;
    d.rows = 120000;
    d.groups = groups;
    d.null_key = 0.03;
    d.null_value = 0.2;
    const TestTable t = make_table(key_type(), d, groups + 5);
    if (variant() == Variant::dense && !dense_fits(t)) continue;
    check(t, groups);
    check(t, groups, 50000);
    // An estimate far below the groups: the table grows before the
    // extraction and its arrays are sized.
    check(t, 1 + groups / 64, 50000);
  }
}

TEST_P(GpuGroupByTest, SparseKeysOverTheWholeRange) {
  if (variant() == Variant::dense) GTEST_SKIP() << "dense needs a small key range";
  DataShape d;
  d.rows = 50000;
  d.groups = 5000;
  d.sparse = true;
  d.null_value = 0.1;
  check(make_table(key_type(), d, 11), 5000);
}

TEST_P(GpuGroupByTest, EmptyInput) {
  DataShape d;
  d.rows = 0;
  const TestTable t = make_table(key_type(), d, 1);
  GroupBySpec spec = full_spec(key_type());
  TableOptions opt;
  GroupByAggregator agg(device_, spec, opt);
  HostChunk h = make_host_chunk(t, 0, 0);
  h.pointers.key_range = KeyRange{0, -1};
  ChunkFacts f;
  f.key_range = h.pointers.key_range;
  agg.consume_host(h.pointers, variant(), default_launch_config(variant(), spec, device_, f));
  EXPECT_EQ(agg.finish().groups(), 0u);
}

TEST_P(GpuGroupByTest, AllNullKeys) {
  DataShape d;
  d.rows = 5000;
  d.groups = 50;
  d.null_key = 1.0;
  d.null_value = 0.3;
  const auto reports = check(make_table(key_type(), d, 2), 1);
  (void)reports;
}

TEST_P(GpuGroupByTest, AllNullValues) {
  DataShape d;
  d.rows = 5000;
  d.groups = 37;
  d.null_value = 1.0;
  check(make_table(key_type(), d, 3), 37);
}

TEST_P(GpuGroupByTest, OneGroupManyRows) {
  DataShape d;
  d.rows = 300000;  // high contention on one slot
  d.groups = 1;
  d.key_offset = -5;
  check(make_table(key_type(), d, 4), 1);
}

TEST_P(GpuGroupByTest, ExtremeValuesAndEmptyMarkerKey) {
  // Keys include the type's minimum (the table's empty marker) and maximum.
  DataShape d;
  d.rows = 20000;
  d.groups = 3;
  d.extreme_values = true;
  TestTable t = make_table(key_type(), d, 5);
  const int64_t kmin = key_type() == KeyType::int32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
  const int64_t kmax = key_type() == KeyType::int32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
  for (size_t r = 0; r < t.rows(); r += 3) t.keys[r] = (r % 2) ? kmin : kmax;
  if (variant() == Variant::dense) {
    ChunkFacts f;
    f.key_range = range_of(t);
    EXPECT_FALSE(can_use(Variant::dense, full_spec(key_type()), device_, f));
    // Still correct: rows outside a stated (wrong) range go to the global table.
    TestTable small = t;
    for (size_t r = 0; r < small.rows(); ++r) small.keys[r] = small.keys[r] % 3;
    check(small, 3);
    return;
  }
  check(t, 5);
}

TEST_P(GpuGroupByTest, CardinalityAtSharedThresholds) {
  const GroupBySpec spec = full_spec(key_type());
  const LanePlan plan = plan_lanes(spec);
  const size_t budget = shared_budget_per_block(device_, 1);
  const uint32_t dense_fit = dense_slots_fitting(spec, plan, budget);
  const uint32_t hash_fit = hash_slots_fitting(spec, plan, budget);
  for (uint64_t base : {static_cast<uint64_t>(dense_fit), static_cast<uint64_t>(hash_fit / 2)}) {
    for (int delta : {-1, 0, 1}) {
      const uint64_t groups = base + static_cast<uint64_t>(delta);
      DataShape d;
      d.rows = groups * 4;
      d.groups = groups;
      TestTable t = make_table(key_type(), d, groups);
      // Every group present: the range is exactly [0, groups).
      for (uint64_t g = 0; g < groups; ++g) t.keys[g] = static_cast<int64_t>(g);
      if (variant() == Variant::dense && !dense_fits(t)) {
        ChunkFacts f;
        f.key_range = range_of(t);
        EXPECT_GT(groups, dense_fit);
        EXPECT_FALSE(can_use(Variant::dense, spec, device_, f));
        continue;
      }
      check(t, groups);
    }
  }
}

TEST_P(GpuGroupByTest, ForcedTinyTableGrows) {
  if (variant() == Variant::dense) GTEST_SKIP() << "covered by DenseFlushIntoTinyTable";
  DataShape d;
  d.rows = 200000;
  d.groups = 60000;
  d.sparse = true;
  d.null_key = 0.01;
  // Estimate 1: minimum table. Two chunks: the partitioned variant owns the
  // first chunk's partitions outright and merges them into the table (which
  // must grow) before the second chunk.
  const auto reports = check(make_table(key_type(), d, 6), 1, 100000);
  int growths = 0;
  for (const LaunchReport& r : reports) growths += r.table_growths;
  EXPECT_GT(growths, 0);
}

TEST_P(GpuGroupByTest, DenseFlushIntoTinyTable) {
  if (variant() != Variant::dense) GTEST_SKIP() << "dense only";
  DataShape d;
  d.rows = 100000;
  d.groups = 3000;  // fits the dense shared arrays of full_spec, not a 1024-slot table
  const auto reports = check(make_table(key_type(), d, 7), 1);
  int growths = 0;
  for (const LaunchReport& r : reports) growths += r.table_growths;
  EXPECT_GT(growths, 0);
}

// A small dense table whose sums are all of int4 columns keeps them split
// (SharedParams::split_flush_rows, flushed every kSplitSumRows rows of a
// block): one block of 256 threads per SM, so that each block takes several
// flushes' worth of rows, of values at the int4 limits.
TEST_P(GpuGroupByTest, SplitInt4SumsStayExactOverManyFlushes) {
  if (variant() != Variant::dense) GTEST_SKIP() << "split sums are the dense variant's";
  GroupBySpec spec;
  spec.key_type = key_type();
  spec.columns = {{ValueType::int32, true}};
  spec.aggregates = {{AggOp::count_star, -1}, {AggOp::sum, 0}, {AggOp::avg, 0}, {AggOp::min, 0}, {AggOp::max, 0}};
  DataShape d;
  d.rows = size_t{1} << 24;
  d.groups = 4;
  d.key_offset = -2;
  d.extreme_values = true;
  TestTable t = make_table(key_type(), d, 12);
  t.values.resize(1);  // the spec's one column
  t.value_valid.resize(1);
  t.value_types.resize(1);
  check(t, 4, 0, &spec, true, [](VariantConfig& c) {
    c.launch.threads_per_block = 256;
    c.launch.blocks_per_sm = 1;
    c.warp_preaggregate = false;
  });
}

TEST_P(GpuGroupByTest, ManyChunksMergeIntoOneResult) {
  DataShape d;
  d.rows = 100000;
  d.groups = 900;
  d.null_key = 0.02;
  d.null_value = 0.1;
  const TestTable t = make_table(key_type(), d, 8);
  if (variant() == Variant::dense && !dense_fits(t)) GTEST_SKIP() << "range too large for dense";
  check(t, 900, 7777);
}

TEST_P(GpuGroupByTest, CountStarOnlyAndNotNullColumns) {
  GroupBySpec spec;
  spec.key_type = key_type();
  spec.columns = {{ValueType::int32, false}};
  spec.aggregates = {{AggOp::count_star, -1}, {AggOp::sum, 0}, {AggOp::count, 0}};
  DataShape d;
  d.rows = 50000;
  d.groups = 500;
  TestTable t = make_table(key_type(), d, 9);
  t.values.resize(1);
  t.value_valid.resize(1);
  t.value_types.resize(1);
  check(t, 500, 0, &spec);
}

// A result larger than pinned staging holds (kPinnedResultMaxBytes: 5M
// groups of a key, its NULL flag and 7 lanes) comes back through pageable
// memory: straight into the result's arrays where each holds a lane's words
// (counts, min, max), through staging and the build where one is computed
// (the sum's exact two lanes); NULL keys among them, in two chunks (the
// partitioned variant's own output beside the table's groups).
TEST_P(GpuGroupByTest, ResultsLargerThanPinnedStagingComeBackExact) {
  if (variant() != Variant::global_hash && variant() != Variant::partitioned_hash)
    GTEST_SKIP() << "millions of groups: the global and partitioned variants";
  if (key_type() != KeyType::int64) GTEST_SKIP() << "the key type does not change the copy back";
  DataShape d;
  d.rows = 5000000;
  d.groups = 5000000;
  d.null_key = 0.01;
  d.null_value = 0.05;
  const TestTable t = make_table(key_type(), d, 31);
  GroupBySpec placed;
  placed.key_type = key_type();
  placed.columns = {{ValueType::int32, true}, {ValueType::int64, true}};
  placed.aggregates = {{AggOp::count_star, -1}, {AggOp::count, 0}, {AggOp::min, 0}, {AggOp::max, 0},
                       {AggOp::count, 1},       {AggOp::min, 1},   {AggOp::max, 1}};
  check(t, d.groups, 2500000, &placed);
  GroupBySpec built = placed;
  built.aggregates.push_back({AggOp::sum, 1});
  check(t, d.groups, 2500000, &built);
}

TEST_P(GpuGroupByTest, RangeMeasuredWhenNotGiven) {
  DataShape d;
  d.rows = 30000;
  d.groups = 200;
  d.key_offset = 1000;
  check(make_table(key_type(), d, 10), 200, 0, nullptr, /*pass_range=*/false);
}

// reset() keeps the allocations and forgets every group, whatever the
// previous run left behind (ordinary slots, special slots, the partitioned
// variant's compact output): a second aggregation sees only its own rows.
TEST_P(GpuGroupByTest, ResetForgetsEveryGroup) {
  const GroupBySpec spec = full_spec(key_type());
  DataShape d;
  d.rows = 40000;
  d.groups = 700;
  d.null_key = 0.03;
  d.null_value = 0.1;
  const TestTable first = make_table(key_type(), d, 21);
  d.groups = 300;
  d.key_offset = 5000;
  const TestTable second = make_table(key_type(), d, 22);
  ChunkFacts whole;
  whole.rows = d.rows;
  whole.estimated_groups = 700;
  whole.key_range = KeyRange{0, 5400};
  if (variant() == Variant::dense && !can_use(Variant::dense, spec, device_, whole)) GTEST_SKIP() << "range too large";
  GroupByAggregator agg(device_, spec, default_table_options(variant(), spec, device_, whole));
  for (const TestTable* t : {&first, &second}) {
    HostChunk h = make_host_chunk(*t, 0, t->rows());
    h.pointers.key_range = range_of(*t);
    ChunkFacts f = whole;
    f.key_range = h.pointers.key_range;
    agg.consume_host(h.pointers, variant(), default_launch_config(variant(), spec, device_, f));
    EXPECT_TRUE(same_groups(reference_group_by(*t, spec), to_map(agg.finish())));
    EXPECT_EQ(agg.group_count(), reference_group_by(*t, spec).size());
    agg.reset();
  }
}

// Variants switched between chunks of one aggregation: every variant's chunk
// followed by every other variant's, so the partitioned variant's compact
// output is merged into the global table before another chunk lands there.
TEST_P(GpuGroupByTest, EveryOtherVariantAfterThisOne) {
  const GroupBySpec spec = full_spec(key_type());
  DataShape d;
  d.rows = 30000;
  d.groups = 2000;
  d.null_key = 0.02;
  d.null_value = 0.1;
  const TestTable t = make_table(key_type(), d, 23);
  ChunkFacts whole;
  whole.rows = t.rows();
  whole.estimated_groups = 2000;
  whole.key_range = range_of(t);
  for (Variant next : kAllVariants) {
    if (next == variant()) continue;
    std::vector<Variant> order{variant(), next};
    bool usable = true;
    for (Variant v : order) usable = usable && can_use(v, spec, device_, whole);
    if (!usable) continue;
    GroupByAggregator agg(device_, spec, default_table_options(variant(), spec, device_, whole));
    const size_t half = t.rows() / 2;
    for (int i = 0; i < 2; ++i) {
      HostChunk h = make_host_chunk(t, i == 0 ? 0 : half, i == 0 ? half : t.rows());
      h.pointers.key_range = whole.key_range;
      agg.consume_host(h.pointers, order[static_cast<size_t>(i)],
                       default_launch_config(order[static_cast<size_t>(i)], spec, device_, whole));
    }
    if (prepare_) {
      // As GpuRun's end does: extraction enqueued behind the last chunk,
      // the result's arrays mapped, then the result built into them.
      agg.begin_finish();
      agg.prepare_result();
    }
    EXPECT_TRUE(same_groups(reference_group_by(t, spec), to_map(agg.finish())))
        << variant_name(variant()) << " then " << variant_name(next);
  }
}

// Half of the rows carry one key: the partitioned variant cuts that
// partition into pieces shared by several blocks (flushed into the global
// table) while the others stay owned outright; every variant stays exact.
TEST_P(GpuGroupByTest, OneDominantKeyAmongManyGroups) {
  if (variant() == Variant::dense) GTEST_SKIP() << "dense needs a small key range";
  DataShape d;
  d.rows = 400000;
  d.groups = 20000;
  d.sparse = true;
  d.null_key = 0.01;
  d.null_value = 0.05;
  TestTable t = make_table(key_type(), d, 25);
  for (size_t r = 0; r < t.rows(); r += 2) t.keys[r] = 12345;
  check(t, 20000);
}

// The partitioned variant with far more groups than estimated: partitions
// outgrow their shared tables, flush into the global table (which grows), and
// the result stays exact; with the estimate right they are owned outright.
TEST_P(GpuGroupByTest, PartitionsOutgrowTheirTables) {
  if (variant() != Variant::partitioned_hash) GTEST_SKIP() << "partitioned only";
  DataShape d;
  d.rows = 1000000;  // several tiles per partition, so the fill check runs
  d.groups = 400000;
  d.sparse = true;
  d.null_key = 0.01;
  d.null_value = 0.05;
  const TestTable t = make_table(key_type(), d, 24);
  int growths = 0;
  for (const LaunchReport& r : check(t, 100)) growths += r.table_growths;
  EXPECT_GT(growths, 0);
  check(t, 400000);
}

// The table as count_sum_spec sees it: only the first value column.
void keep_first_value_column(TestTable& t) {
  t.values.resize(1);
  t.value_valid.resize(1);
  t.value_types.resize(1);
}

// The partitioned variant's count(*) + sum(int4 NOT NULL) kernel (no NULL
// keys, so the launcher takes it): values near the int4 limits wrap the
// shared low words, the empty-marker key takes its own slot, and an estimate
// far too low makes partitions flush and rows find no room, so the global
// table must grow; several chunks merge partitions into the global table
// instead of owning the output.
TEST_P(GpuGroupByTest, PartitionedCountSumStaysExact) {
  if (variant() != Variant::partitioned_hash) GTEST_SKIP() << "partitioned only";
  const GroupBySpec count_sum = count_sum_spec(key_type());
  DataShape d;
  d.rows = 1000003;  // not a multiple of any tile: partial tiles everywhere
  d.groups = 400000;
  d.sparse = true;
  d.extreme_values = true;
  TestTable t = make_table(key_type(), d, 41);
  keep_first_value_column(t);
  const int64_t kmin =
      key_type() == KeyType::int32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
  for (size_t r = 3; r < t.rows(); r += 997) t.keys[r] = kmin;
  int growths = 0;
  for (const LaunchReport& r : check(t, 100, 0, &count_sum)) growths += r.table_growths;
  EXPECT_GT(growths, 0) << "the overflow path was not exercised";
  check(t, 400000, 0, &count_sum);
  check(t, 400000, 300000, &count_sum);
  // Two partitions of ~200 000 groups, tiles of 8 rows per thread: the table
  // is clamped below one tile of headroom, so there is no fill check and
  // inserts stop at the insert limit (rows to the global table).
  check(t, 400000, 0, &count_sum, true, [](VariantConfig& c) {
    c.partition_bits = 1;
    c.launch.rows_per_thread = 8;
  });
}

// The count+sum partition kernel fixes its shared-table hash at compile time
// (identity or murmur, one instantiation each). Both, forced on dense keys and
// on keys whose low 12 bits are zero (bits that carry nothing: collisions
// under identity), stay exact, with the estimate right (owned partitions) and
// far too low (flushes, rows to the global table).
TEST_P(GpuGroupByTest, PartitionedCountSumEitherHashStaysExact) {
  if (variant() != Variant::partitioned_hash) GTEST_SKIP() << "partitioned only";
  const GroupBySpec count_sum = count_sum_spec(key_type());
  DataShape d;
  d.rows = 600001;
  d.groups = 300000;
  d.extreme_values = true;
  TestTable dense = make_table(key_type(), d, 43);
  keep_first_value_column(dense);
  TestTable strided = dense;
  for (int64_t& k : strided.keys) k *= 4096;  // < 2^31 for 300 000 groups
  for (const TestTable* t : {&dense, &strided}) {
    for (HashKind h : {HashKind::identity, HashKind::murmur}) {
      SCOPED_TRACE(testing::Message() << (t == &dense ? "dense" : "strided") << " keys, hash "
                                      << (h == HashKind::identity ? "identity" : "murmur"));
      const auto force = [h](VariantConfig& c) { c.hash = h; };
      check(*t, 300000, 0, &count_sum, true, force);
      check(*t, 100, 0, &count_sum, true, force);
    }
  }
}

// The count+sum partition kernel flushes only the slots it listed as claimed
// and resets them for the block's next partition, clearing its table once
// (partition_count_sum_kernel.cuh). A slot listed twice shows as a duplicate
// group, one never listed as a missing group, one not reset as a stale key in
// a later partition. Shapes: one group per partition (256 partitions, rows
// repeated, sums wrapping the low words); far more partitions than blocks
// (each block reuses its table ~60 times), owned outright and, over chunks,
// merged; and partitions with many times the groups their tables were sized
// for, so the fill check flushes the list into the global table, repeatedly
// within a partition.
TEST_P(GpuGroupByTest, PartitionedCountSumClaimListStaysExact) {
  if (variant() != Variant::partitioned_hash) GTEST_SKIP() << "partitioned only";
  const GroupBySpec count_sum = count_sum_spec(key_type());
  {
    SCOPED_TRACE("one group per partition");
    DataShape d;
    d.rows = 256 * 2001;
    d.groups = 256;
    d.extreme_values = true;
    TestTable t = make_table(key_type(), d, 47);
    keep_first_value_column(t);
    for (int64_t& k : t.keys) k <<= 20;  // key bits [20, 28): the 8 partition bits
    const auto eight_bits = [](VariantConfig& c) { c.partition_bits = 8; };
    check(t, 256, 0, &count_sum, true, eight_bits);
    check(t, 256, 200000, &count_sum, true, eight_bits);
  }
  DataShape d;
  d.rows = 600001;
  d.groups = 300000;
  d.sparse = true;
  d.extreme_values = true;
  TestTable t = make_table(key_type(), d, 53);
  keep_first_value_column(t);
  {
    SCOPED_TRACE("16 384 partitions");
    const auto many = [](VariantConfig& c) { c.partition_bits = 14; };
    const auto reports = check(t, 300000, 0, &count_sum, true, many);
    ASSERT_FALSE(reports.empty());
    EXPECT_GT(int64_t{1} << 14, 8 * int64_t{reports[0].grid_blocks}) << "too few partitions per block";
    check(t, 300000, 250000, &count_sum, true, many);
  }
  // Tables sized for a 32nd of each partition's groups plus one tile of 1 024
  // rows: the fill check (threshold > 0) finds them full, within the first
  // tiles of a partition. 16 partitions are cut into pieces that flush into
  // the global table anyway; 256 partitions are owned outright until their
  // first flush.
  for (const int bits : {4, 8}) {
    SCOPED_TRACE(testing::Message() << "fill-check flushes, " << (1 << bits) << " partitions");
    const auto flushes = [bits](VariantConfig& c) {
      c.partition_bits = bits;
      c.launch.rows_per_thread = 1;
    };
    const double groups_per_partition = 300000.0 / (1 << bits);
    int growths = 0;
    for (const LaunchReport& r : check(t, 300000 / 32, 0, &count_sum, true, flushes)) {
      const double fill = r.used.fill();
      const double tile = static_cast<double>(r.used.launch.threads_per_block) * r.used.launch.rows_per_thread;
      EXPECT_GE(r.shared_slots * fill - tile, 1.0) << "no fill check: the table is below one tile of headroom";
      EXPECT_LT(r.shared_slots * fill - tile, groups_per_partition / 4) << "the table holds a partition: no flush";
      growths += r.table_growths;
    }
    EXPECT_GT(growths, 0) << "the flushes did not reach the global table";
  }
}

// The shared hash's key dictionary is built from a sample of the chunk: keys
// it never saw (rare keys, far more groups than estimated) take the miss path
// (a block-private table, then the global table) and the result stays exact.
// Both the count+sum kernel and the generic-lane kernel, NULL keys and the
// empty-marker key included.
TEST_P(GpuGroupByTest, DictionaryMissesStayExact) {
  if (variant() != Variant::shared_hash) GTEST_SKIP() << "shared_hash only";
  const GroupBySpec count_sum = count_sum_spec(key_type());
  const GroupBySpec full = full_spec(key_type());
  DataShape d;
  d.rows = 300000;
  d.groups = 200;
  d.sparse = true;
  TestTable t = make_table(key_type(), d, 31);
  // 3000 keys that occur once each (a 2^15-row sample sees few of them).
  for (size_t r = 0; r < 3000; ++r) t.keys[r * 97 + 5] = static_cast<int64_t>(r) * 7919 + 11;
  for (const GroupBySpec* spec : {static_cast<const GroupBySpec*>(&count_sum), &full}) {
    TestTable u = t;
    if (spec == &count_sum) {
      keep_first_value_column(u);
    } else {
      const int64_t kmin =
          key_type() == KeyType::int32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
      for (size_t r = 1; r < u.rows(); r += 101) u.keys[r] = kmin;
      u.key_valid.assign(u.rows(), 1);
      for (size_t r = 2; r < u.rows(); r += 53) u.key_valid[r] = 0;
    }
    for (uint64_t estimate : {200ull, 1ull, 3200ull}) {
      ASSERT_TRUE(can_use_dictionary(*spec, device_, estimate) || spec == &full) << "estimate " << estimate;
      check(u, estimate, 0, spec);
      check(u, estimate, 65536, spec);  // several chunks: several dictionaries, one result
    }
  }
}

// The dictionary's slot hashes are multiply-shift with multipliers its build
// kernel picks per table, retrying while sampled keys stay homeless: key sets
// with arithmetic structure (multiples of a Fibonacci constant like the
// benchmark's, power-of-two strides, descending runs) must stay exact
// whatever the draw, through the count+sum kernel and the generic one.
TEST_P(GpuGroupByTest, StructuredSparseKeysStayExact) {
  if (variant() != Variant::shared_hash) GTEST_SKIP() << "shared_hash only";
  const GroupBySpec count_sum = count_sum_spec(key_type());
  const GroupBySpec full = full_spec(key_type());
  DataShape d;
  d.rows = 150001;  // not a multiple of any tile: the last tile is partial
  d.groups = 1500;
  for (const uint64_t stride : {uint64_t{0x9E3779B1u}, uint64_t{1} << 20, uint64_t{3} << 16, ~uint64_t{0}}) {
    TestTable t = make_table(key_type(), d, stride & 0xffff);
    for (int64_t& k : t.keys) {
      const uint64_t u = static_cast<uint64_t>(k) * stride;  // k = group index here (dense shape)
      k = key_type() == KeyType::int32 ? static_cast<int32_t>(static_cast<uint32_t>(u)) : static_cast<int64_t>(u);
    }
    for (const GroupBySpec* spec : {static_cast<const GroupBySpec*>(&count_sum), &full}) {
      TestTable u = t;
      if (spec == &count_sum) keep_first_value_column(u);
      ASSERT_TRUE(can_use_dictionary(*spec, device_, d.groups) || spec == &full) << "stride " << stride;
      check(u, d.groups, 0, spec, false);
    }
  }
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return std::string(std::get<0>(info.param) == KeyType::int32 ? "int32_" : "int64_") +
         std::string(variant_name(std::get<1>(info.param)));
}

INSTANTIATE_TEST_SUITE_P(AllVariants, GpuGroupByTest,
                         ::testing::Combine(::testing::Values(KeyType::int32, KeyType::int64),
                                            ::testing::ValuesIn(kAllVariants)),
                         param_name);

// Runs everywhere: without a device the engine must refuse cleanly.
TEST(GpuGroupByNoDevice, ConstructionFailsWithInternalErrorWhenNoDevice) {
  if (device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  DeviceInfo fake;
  fake.ordinal = 0;
  try {
    GroupByAggregator agg(fake, full_spec(KeyType::int32), TableOptions{});
    FAIL() << "constructed an aggregator without a device";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::internal_error);
    EXPECT_EQ(std::string(e.what()).rfind("GPU: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace tally::gpu::test
