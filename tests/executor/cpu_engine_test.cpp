// The CPU engine against a straightforward reference (std::map), for every
// variant (dense, hash, hash with memory-bounded passes), several chunks,
// NULL keys and values, FILTER masks and 1 or 2 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include <unistd.h>

#include "common/aggregate_engine.hpp"
#include "executor/cpu/cpu_engine.hpp"

namespace tally::executor {
namespace {

struct Reference {
  int64_t rows = 0, count = 0;
  __int128 sum = 0;
  int64_t min = INT64_MAX, max = INT64_MIN;
  double fsum = 0;
  int64_t filtered = 0;
};

struct Case {
  std::string variant;
  int threads;
  uint64_t memory_budget;
};

class CpuEngineTest : public ::testing::TestWithParam<Case> {};

TEST_P(CpuEngineTest, MatchesReference) {
  const Case c = GetParam();
  std::mt19937_64 rng(42);
  constexpr int64_t kKeyRange = 5000;
  AggregationSpec spec;
  spec.key_width = ColumnWidth::int64;
  spec.key_range_known = true;
  spec.key_min = -100;
  spec.key_max = -100 + kKeyRange - 1;
  spec.estimated_groups = kKeyRange;
  spec.threads = c.threads;
  spec.memory_budget = c.memory_budget;
  spec.forced_variant = c.variant;
  spec.aggregates = {{PartialOp::count_rows, -1, -1}, {PartialOp::count_valid, 0, -1}, {PartialOp::sum_int, 0, -1},
                     {PartialOp::min_int, 0, -1},     {PartialOp::max_int, 0, -1},     {PartialOp::sum_float, 1, -1},
                     {PartialOp::count_rows, -1, -1}};
  spec.value_widths = {ColumnWidth::int32, ColumnWidth::float64};
  auto engine = make_cpu_engine();
  ASSERT_TRUE(engine->can_run(spec));
  auto run = engine->start(spec);

  // Four chunks of data, generated once, fed once per pass.
  struct Chunk {
    std::vector<int64_t> keys;
    std::vector<uint8_t> key_valid;
    std::vector<int32_t> ints;
    std::vector<uint8_t> int_valid;
    std::vector<double> floats;
    std::vector<uint8_t> filter;
  };
  std::vector<Chunk> chunks(4);
  std::map<std::optional<int64_t>, Reference> reference;
  for (auto& chunk : chunks) {
    const size_t rows = 40000 + rng() % 1000;
    for (size_t r = 0; r < rows; ++r) {
      const bool null_key = rng() % 50 == 0;
      const int64_t key = -100 + static_cast<int64_t>(rng() % kKeyRange);
      const bool null_value = rng() % 20 == 0;
      const auto value = static_cast<int32_t>(static_cast<int64_t>(rng() % 2000001) - 1000000);
      const double f = static_cast<double>(rng() % 1000) / 8.0;  // exact in binary: sums are order-independent
      const uint8_t pass_filter = rng() % 3 == 0 ? 1 : 0;
      chunk.keys.push_back(null_key ? 0 : key);
      chunk.key_valid.push_back(null_key ? 0 : 1);
      chunk.ints.push_back(value);
      chunk.int_valid.push_back(null_value ? 0 : 1);
      chunk.floats.push_back(f);
      chunk.filter.push_back(pass_filter);
      Reference& ref = reference[null_key ? std::nullopt : std::optional<int64_t>(key)];
      ++ref.rows;
      ref.fsum += f;
      ref.filtered += pass_filter;
      if (!null_value) {
        ++ref.count;
        ref.sum += value;
        ref.min = std::min<int64_t>(ref.min, value);
        ref.max = std::max<int64_t>(ref.max, value);
      }
    }
  }
  for (int pass = 0; pass < run->passes(); ++pass) {
    run->begin_pass(pass);
    for (auto& chunk : chunks) {
      ChunkInput in;
      in.rows = chunk.keys.size();
      in.keys = {ColumnWidth::int64, chunk.keys.data(), chunk.key_valid.data(), {}};
      in.values = {{ColumnWidth::int32, chunk.ints.data(), chunk.int_valid.data(), {}},
                   {ColumnWidth::float64, chunk.floats.data(), nullptr, {}}};
      in.filters = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, chunk.filter.data()};
      run->sink(in);
    }
  }
  if (c.memory_budget > 0) {
    EXPECT_GT(run->passes(), 1);
  }
  AggregationResult result = run->finalize();
  ASSERT_EQ(result.groups(), reference.size());
  for (size_t g = 0; g < result.groups(); ++g) {
    const std::optional<int64_t> key = result.key_valid[g] ? std::optional<int64_t>(result.keys[g]) : std::nullopt;
    ASSERT_TRUE(reference.count(key)) << "unexpected group";
    const Reference& ref = reference[key];
    EXPECT_EQ(result.states[0].count[g], ref.rows);
    EXPECT_EQ(result.states[1].count[g], ref.count);
    EXPECT_TRUE(result.states[2].sum_int[g] == ref.sum);
    if (ref.count > 0) {
      EXPECT_EQ(result.states[3].extreme_int[g], ref.min);
      EXPECT_EQ(result.states[4].extreme_int[g], ref.max);
    }
    EXPECT_EQ(result.states[5].sum_float[g], ref.fsum);
    EXPECT_EQ(result.states[6].count[g], ref.filtered);
  }
  const AggregationReport report = run->report();
  EXPECT_EQ(report.engine, "cpu");
  EXPECT_EQ(report.groups, reference.size());
  if (c.variant == "dense") {
    EXPECT_EQ(report.variant, "dense");
  } else if (c.variant == "hash") {
    EXPECT_EQ(report.variant.substr(0, 4), "hash");
  } else {
    EXPECT_EQ(report.variant, c.variant);  // the radix variants
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, CpuEngineTest,
                         ::testing::Values(Case{"dense", 1, 0}, Case{"dense", 2, 0}, Case{"hash", 1, 0},
                                           Case{"hash", 2, 0}, Case{"hash", 2, 64 * 1024},
                                           Case{"dense-radix", 1, 0}, Case{"dense-radix", 2, 0},
                                           Case{"hash-radix", 1, 0}, Case{"hash-radix", 2, 0},
                                           Case{"hash-radix", 2, 64 * 1024}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.variant;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name + "_" + std::to_string(info.param.threads) + "threads" +
                                  (info.param.memory_budget ? "_passes" : "");
                         });

class CpuEngineLeaveDense : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuEngineLeaveDense, ForHashWhenKeysFallOutsideTheRange) {
  AggregationSpec spec;
  spec.forced_variant = GetParam();
  spec.key_range_known = true;
  spec.key_min = 0;
  spec.key_max = 9;
  spec.threads = 1;
  spec.aggregates = {{PartialOp::count_rows, -1, -1}};
  auto run = make_cpu_engine()->start(spec);
  std::vector<int64_t> first = {1, 2, 3, 3}, second = {3, 100, -5};
  ChunkInput in;
  in.rows = first.size();
  in.keys = {ColumnWidth::int64, first.data(), nullptr, {}};
  run->sink(in);
  in.rows = second.size();
  in.keys = {ColumnWidth::int64, second.data(), nullptr, {}};
  run->sink(in);
  AggregationResult r = run->finalize();
  std::map<int64_t, int64_t> got;
  for (size_t g = 0; g < r.groups(); ++g) got[r.keys[g]] = r.states[0].count[g];
  EXPECT_EQ(got, (std::map<int64_t, int64_t>{{-5, 1}, {1, 1}, {2, 1}, {3, 3}, {100, 1}}));
  EXPECT_NE(run->report().variant.find("hash"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(DenseVariants, CpuEngineLeaveDense, ::testing::Values("dense", "dense-radix"),
                         [](const auto& info) { return info.param == "dense" ? "dense" : "dense_radix"; });

// Integer sums of int32 chunks are kept in int64; a later int64 chunk whose
// values overflow int64 must still give the exact int128 sum, in every variant.
TEST(CpuEngine, NarrowSumsWidenForWideInput) {
  for (const std::string variant : {"dense", "hash", "dense-radix", "hash-radix"}) {
    AggregationSpec spec;
    spec.key_range_known = true;
    spec.key_min = 0;
    spec.key_max = 3;
    spec.estimated_groups = 4;
    spec.threads = 2;
    spec.forced_variant = variant;
    spec.aggregates = {{PartialOp::sum_int, 0, -1}, {PartialOp::count_rows, -1, -1}};
    auto run = make_cpu_engine()->start(spec);
    const size_t rows = 40000;
    std::vector<int64_t> keys(rows);
    std::vector<int32_t> small(rows);
    std::vector<int64_t> big(rows);
    for (size_t r = 0; r < rows; ++r) {
      keys[r] = static_cast<int64_t>(r % 4);
      small[r] = r % 2 ? INT32_MAX : INT32_MIN + 1;
      big[r] = INT64_MAX - static_cast<int64_t>(r % 5);
    }
    ChunkInput in;
    in.rows = rows;
    in.keys = {ColumnWidth::int64, keys.data(), nullptr, {}};
    in.values = {{ColumnWidth::int32, small.data(), nullptr, {}}};
    run->sink(in);
    in.values = {{ColumnWidth::int64, big.data(), nullptr, {}}};
    run->sink(in);
    AggregationResult result = run->finalize();
    ASSERT_EQ(result.groups(), 4u) << variant;
    for (size_t g = 0; g < 4; ++g) {
      const int64_t key = result.keys[g];
      __int128 expected = 0;
      for (size_t r = static_cast<size_t>(key); r < rows; r += 4) expected += small[r];
      for (size_t r = static_cast<size_t>(key); r < rows; r += 4) expected += big[r];
      EXPECT_TRUE(result.states[0].sum_int[g] == expected) << variant << " key " << key;
      EXPECT_EQ(result.states[0].count[g], static_cast<int64_t>(rows / 2));
    }
  }
}

// Counts and sums over a few groups of inputs without NULLs add rows into
// interleaved partial states (state_set.hpp, few_group_sums): every
// variant and thread count gives the reference's sums, int32 and int64
// inputs, one with NULLs, a row count that is no multiple of four, keys in
// runs and at random.
TEST(CpuEngine, FewGroupsSharedCountSumsMatchReference) {
  constexpr int64_t kGroups = 6;
  const size_t rows = 100003;
  std::mt19937_64 rng(11);
  std::vector<int64_t> keys(rows), big(rows);
  std::vector<int32_t> small(rows), nullable(rows);
  std::vector<uint8_t> nullable_valid(rows);
  for (size_t r = 0; r < rows; ++r) {
    keys[r] = r < rows / 2 ? static_cast<int64_t>((r / 7) % kGroups) : static_cast<int64_t>(rng() % kGroups);
    small[r] = static_cast<int32_t>(rng() % 2000001) - 1000000;
    big[r] = static_cast<int64_t>(rng() >> 2) - (int64_t{1} << 61);
    nullable[r] = static_cast<int32_t>(rng() % 1000);
    nullable_valid[r] = rng() % 10 != 0;
  }
  for (const std::string variant : {"dense", "hash", "dense-radix", "hash-radix"}) {
    for (const int threads : {1, 2}) {
      AggregationSpec spec;
      spec.key_range_known = true;
      spec.key_min = 0;
      spec.key_max = kGroups - 1;
      spec.estimated_groups = kGroups;
      spec.threads = threads;
      spec.forced_variant = variant;
      spec.compact_result = true;
      spec.aggregates = {{PartialOp::count_rows, -1, -1}, {PartialOp::sum_int, 0, -1}, {PartialOp::sum_int, 1, -1},
                         {PartialOp::sum_int, 2, -1}};
      spec.value_widths = {ColumnWidth::int32, ColumnWidth::int64, ColumnWidth::int32};
      spec.value_not_null = {1, 1, 0};
      auto run = make_cpu_engine()->start(spec);
      for (size_t half = 0; half < 2; ++half) {
        const size_t begin = half * (rows / 2), n = half == 0 ? rows / 2 : rows - rows / 2;
        ChunkInput in;
        in.rows = n;
        in.keys = {ColumnWidth::int64, keys.data() + begin, nullptr, {}};
        in.values = {{ColumnWidth::int32, small.data() + begin, nullptr, {}},
                     {ColumnWidth::int64, big.data() + begin, nullptr, {}},
                     {ColumnWidth::int32, nullable.data() + begin, nullable_valid.data() + begin, {}}};
        run->sink(in);
      }
      AggregationResult result = run->finalize();
      ASSERT_EQ(result.groups(), static_cast<size_t>(kGroups)) << variant;
      for (size_t g = 0; g < result.groups(); ++g) {
        const int64_t key = result.keys[g];
        __int128 expect_small = 0, expect_big = 0, expect_nullable = 0;
        int64_t expect_rows = 0;
        for (size_t r = 0; r < rows; ++r) {
          if (keys[r] != key) continue;
          expect_small += small[r];
          expect_big += big[r];
          if (nullable_valid[r]) expect_nullable += nullable[r];
          ++expect_rows;
        }
        auto sum = [&](size_t a) -> __int128 {
          const PartialStates& s = result.states[a];
          return s.sum_int.empty() ? static_cast<__int128>(s.sum_int64[g]) : s.sum_int[g];
        };
        EXPECT_TRUE(sum(1) == expect_small) << variant << " threads " << threads << " key " << key;
        EXPECT_TRUE(sum(2) == expect_big) << variant << " threads " << threads << " key " << key;
        EXPECT_TRUE(sum(3) == expect_nullable) << variant << " threads " << threads << " key " << key;
        EXPECT_EQ(result.states[0].count[g], expect_rows) << variant << " key " << key;
      }
    }
  }
}

// Large key ranges pick a radix variant on their own, and the float
// moments (avg/var of floats, corr) come out the same as one thread's.
TEST(CpuEngine, RadixMomentsMatchOneThread) {
  std::vector<int64_t> keys(300000);
  std::vector<double> ys(keys.size()), xs(keys.size());
  for (size_t r = 0; r < keys.size(); ++r) {
    keys[r] = static_cast<int64_t>((r * 2654435761ULL) % 400000);
    ys[r] = static_cast<double>(r % 97) / 4.0;
    xs[r] = static_cast<double>(r % 89) / 2.0;
  }
  auto aggregate = [&](int threads, const std::string& variant) {
    AggregationSpec spec;
    spec.key_range_known = true;
    spec.key_min = 0;
    spec.key_max = 399999;  // 32 MB of state: past the thread-local threshold
    spec.estimated_groups = 400000;
    spec.threads = threads;
    spec.forced_variant = variant;
    spec.aggregates = {{PartialOp::moments_float, 0, -1}, {PartialOp::moments2_float, 0, 1}};
    auto run = make_cpu_engine()->start(spec);
    ChunkInput in;
    in.rows = keys.size();
    in.keys = {ColumnWidth::int64, keys.data(), nullptr, {}};
    in.values = {{ColumnWidth::float64, ys.data(), nullptr, {}}, {ColumnWidth::float64, xs.data(), nullptr, {}}};
    run->sink(in);
    AggregationResult result = run->finalize();
    std::map<int64_t, std::vector<double>> out;
    for (size_t g = 0; g < result.groups(); ++g) {
      const auto& m = result.states[0];
      const auto& m2 = result.states[1];
      out[result.keys[g]] = {m.n[g], m.sx[g], m.sxx[g], m2.n[g], m2.sx[g], m2.sy[g], m2.sxx[g], m2.syy[g], m2.sxy[g]};
    }
    return std::make_pair(out, run->report().variant);
  };
  const auto [expected, dense_variant] = aggregate(1, "dense");
  ASSERT_EQ(expected.size(), keys.size());  // (r * odd) mod 400000 is distinct for r < 400000
  for (const std::string variant : {"", "hash-radix"}) {
    const auto [got, used] = aggregate(2, variant);
    EXPECT_NE(used.find("radix"), std::string::npos) << used;
    ASSERT_EQ(got.size(), expected.size());
    for (const auto& [key, states] : expected) {
      const auto& other = got.at(key);
      for (size_t i = 0; i < states.size(); ++i) ASSERT_NEAR(other[i], states[i], 1e-9 * (1 + std::abs(states[i]))) << key;
    }
  }
}


// A group estimate far below the real count (a sample's underestimate) first
// picks thread-local hash tables; once the groups seen outgrow them the run
// moves to a radix variant (dense-radix with a known key range, hash-radix
// without), and every group's states still match a reference.
TEST(CpuEngine, EscalatesFromHashWhenGroupsOutgrowTheEstimate) {
  constexpr uint64_t kRange = 3000000;
  constexpr size_t kChunkRows = 1 << 20;
  std::vector<std::vector<int32_t>> keys(3, std::vector<int32_t>(kChunkRows));
  std::vector<std::vector<int32_t>> values(3, std::vector<int32_t>(kChunkRows));
  std::vector<int64_t> count(kRange, 0), sum(kRange, 0), min(kRange, INT64_MAX);
  for (size_t c = 0; c < keys.size(); ++c) {
    for (size_t r = 0; r < kChunkRows; ++r) {
      const uint64_t i = c * kChunkRows + r;
      const auto key = static_cast<int32_t>((i * 2654435761ULL) % kRange);
      const auto v = static_cast<int32_t>(static_cast<int64_t>((i * 7919) % 1000) - 500);
      keys[c][r] = key;
      values[c][r] = v;
      ++count[static_cast<size_t>(key)];
      sum[static_cast<size_t>(key)] += v;
      min[static_cast<size_t>(key)] = std::min<int64_t>(min[static_cast<size_t>(key)], v);
    }
  }
  for (const bool range_known : {true, false}) {
    AggregationSpec spec;
    spec.key_width = ColumnWidth::int32;
    spec.key_range_known = range_known;
    spec.key_min = 0;
    spec.key_max = static_cast<int64_t>(kRange) - 1;
    spec.estimated_groups = 1000;  // wrong by 3000x
    spec.threads = 2;
    spec.aggregates = {{PartialOp::sum_int, 0, -1}, {PartialOp::min_int, 0, -1}};
    spec.value_widths = {ColumnWidth::int32};
    auto run = make_cpu_engine()->start(spec);
    for (size_t c = 0; c < keys.size(); ++c) {
      ChunkInput in;
      in.rows = kChunkRows;
      in.keys = {ColumnWidth::int32, keys[c].data(), nullptr, {}};
      in.values = {{ColumnWidth::int32, values[c].data(), nullptr, {}}};
      run->sink(in);
    }
    AggregationResult result = run->finalize();
    size_t expected_groups = 0;
    for (int64_t n : count) expected_groups += n > 0;
    ASSERT_EQ(result.groups(), expected_groups);
    for (size_t g = 0; g < result.groups(); ++g) {
      const auto key = static_cast<size_t>(result.keys[g]);
      ASSERT_LT(key, kRange);
      ASSERT_EQ(result.states[0].count[g], count[key]) << key;
      ASSERT_TRUE(result.states[0].sum_int[g] == sum[key]) << key;
      ASSERT_EQ(result.states[1].extreme_int[g], min[key]) << key;
    }
    const std::string variant = run->report().variant;
    // 3M groups of 40 bytes: past eight L2 sizes on any CPU with L2 <= 15 MB.
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l2 > 0 && static_cast<uint64_t>(l2) * 8 < kRange * 40) {
      EXPECT_EQ(variant.substr(0, variant.find(' ')), range_known ? "dense-radix" : "hash-radix") << variant;
      EXPECT_NE(variant.find("more groups than estimated"), std::string::npos) << variant;
    }
  }
}

// No input at all (an empty table), or only an empty chunk: every variant
// answers no groups with one (empty) PartialStates per aggregate, as
// aggregate_engine.hpp promises, in the full and the compact form.
TEST(CpuEngine, NoInputGivesNoGroupsAndEveryAggregatesStates) {
  for (const char* variant : {"", "dense", "hash", "dense-radix", "hash-radix"})
  for (const bool compact : {false, true})
  for (const bool empty_chunk : {false, true}) {
    AggregationSpec spec;
    spec.key_width = ColumnWidth::int32;
    spec.key_range_known = std::string(variant).find("dense") != std::string::npos;
    spec.key_min = 0;
    spec.key_max = 99;
    spec.threads = 2;
    spec.forced_variant = variant;
    spec.compact_result = compact;
    spec.aggregates = {{PartialOp::count_rows, -1, -1}, {PartialOp::sum_int, 0, -1}, {PartialOp::max_int, 0, -1}};
    spec.value_widths = {ColumnWidth::int32};
    auto run = make_cpu_engine()->start(spec);
    if (empty_chunk) {
      ChunkInput in;
      in.rows = 0;
      const int32_t none[1] = {0};
      in.keys = {ColumnWidth::int32, none, nullptr, {}};
      in.values = {{ColumnWidth::int32, none, nullptr, {}}};
      run->sink(in);
    }
    const AggregationResult result = run->finalize();
    EXPECT_EQ(result.groups(), 0u) << variant;
    ASSERT_EQ(result.states.size(), spec.aggregates.size()) << variant << " compact=" << compact;
    if (compact) {
      EXPECT_EQ(result.count_source.size(), spec.aggregates.size()) << variant;
    }
    for (const PartialStates& s : result.states) {
      EXPECT_TRUE(s.count.empty() && s.sum_int.empty() && s.sum_int64.empty() && s.extreme_int.empty()) << variant;
    }
  }
}

// Dense-radix with many more slots than rows keeps each chunk's partitioned
// rows and aggregates them at finalize (per partition, into the result);
// with few slots the kept rows soon outweigh the state array and the run
// builds it mid-way. Both must match a reference, with NULL keys and values,
// FILTER, slots without rows (the result is compacted) and several chunks;
// and without NULL values or FILTER (the values move with the slots, staged
// per partition: write_combining.hpp). Hash-radix with the same rows (its
// keys staged beside the values) must match the same reference.
TEST(CpuEngine, DenseRadixKeptRowsMatchReference) {
  for (const char* variant : {"dense-radix", "hash-radix"})
  for (const bool plain : {false, true})
  for (const int64_t range : {int64_t{1} << 21, int64_t{3000}}) {
    const bool dense = std::string(variant) == "dense-radix";
    std::mt19937_64 rng(7);
    AggregationSpec spec;
    spec.key_width = ColumnWidth::int32;
    spec.key_range_known = true;
    spec.key_min = -1000;
    spec.key_max = -1000 + range - 1;
    spec.estimated_groups = static_cast<uint64_t>(range);
    spec.threads = 2;
    spec.forced_variant = variant;
    spec.aggregates = {{PartialOp::count_rows, -1, -1}, {PartialOp::sum_int, 0, -1}, {PartialOp::min_int, 0, -1},
                       {PartialOp::max_int, 0, -1},     {PartialOp::count_rows, -1, -1}};
    spec.value_widths = {ColumnWidth::int32};
    auto run = make_cpu_engine()->start(spec);
    std::map<std::optional<int64_t>, Reference> reference;
    for (int c = 0; c < 3; ++c) {
      const size_t rows = 70000 + static_cast<size_t>(c) * 111;
      std::vector<int32_t> keys(rows), values(rows);
      std::vector<uint8_t> key_valid(rows), value_valid(rows), filter(rows);
      for (size_t r = 0; r < rows; ++r) {
        // Keys in a quarter of the range (blocks of slots stay empty), NULLs now and then.
        const int64_t key = spec.key_min + static_cast<int64_t>(rng() % static_cast<uint64_t>(range / 4 + 1)) * 4 % range;
        keys[r] = static_cast<int32_t>(key);
        key_valid[r] = rng() % 40 != 0;
        values[r] = static_cast<int32_t>(static_cast<int64_t>(rng() % 2000001) - 1000000);
        value_valid[r] = plain || rng() % 15 != 0;
        filter[r] = plain || rng() % 2;
        Reference& ref = reference[key_valid[r] ? std::optional<int64_t>(key) : std::nullopt];
        ++ref.rows;
        ref.filtered += filter[r];
        if (value_valid[r]) {
          ++ref.count;
          ref.sum += values[r];
          ref.min = std::min<int64_t>(ref.min, values[r]);
          ref.max = std::max<int64_t>(ref.max, values[r]);
        }
      }
      ChunkInput in;
      in.rows = rows;
      in.keys = {ColumnWidth::int32, keys.data(), key_valid.data(), {}};
      in.values = {{ColumnWidth::int32, values.data(), plain ? nullptr : value_valid.data(), {}}};
      if (!plain) in.filters = {nullptr, nullptr, nullptr, nullptr, filter.data()};
      run->sink(in);  // the engine keeps what it needs of the chunk: the vectors go out of scope
    }
    AggregationResult result = run->finalize();
    ASSERT_EQ(result.groups(), reference.size()) << variant << " " << range;
    std::optional<int64_t> previous;
    for (size_t g = 0; g < result.groups(); ++g) {
      const std::optional<int64_t> key = result.key_valid[g] ? std::optional<int64_t>(result.keys[g]) : std::nullopt;
      ASSERT_TRUE(reference.count(key)) << "unexpected group, range " << range;
      if (dense && key && previous) {
        ASSERT_LT(*previous, *key) << "dense results come in key order";
      }
      if (key) previous = key;
      const Reference& ref = reference[key];
      ASSERT_EQ(result.states[0].count[g], ref.rows);
      ASSERT_EQ(result.states[1].count[g], ref.count);
      ASSERT_TRUE(result.states[1].sum_int[g] == ref.sum);
      if (ref.count > 0) {
        ASSERT_EQ(result.states[2].extreme_int[g], ref.min);
        ASSERT_EQ(result.states[3].extreme_int[g], ref.max);
      }
      ASSERT_EQ(result.states[4].count[g], ref.filtered);
    }
    const AggregationReport report = run->report();
    EXPECT_EQ(report.variant, variant);
    if (dense) {
      EXPECT_EQ(report.configuration.find("aggregated at finalize") != std::string::npos, range > 100000)
          << report.configuration;
    }
  }
}

// The planner gives every aggregate its own input, so sum(v), min(v),
// max(v), avg(v) name one stored column four times; the radix variants move
// such a column once and every aggregate reads the moved copy. The results
// must be those of distinct inputs, with and without NULLs, next to another
// column (w) and to a copy of v at another address.
TEST(CpuEngine, OneColumnNamedByManyInputsMatchesReference) {
  for (const char* variant : {"dense-radix", "hash-radix"})
  for (const bool nulls : {false, true}) {
    std::mt19937_64 rng(11);
    const int64_t range = int64_t{1} << 21;
    AggregationSpec spec;
    spec.key_width = ColumnWidth::int32;
    spec.key_range_known = true;
    spec.key_min = 0;
    spec.key_max = range - 1;
    spec.estimated_groups = static_cast<uint64_t>(range);
    spec.threads = 2;
    spec.forced_variant = variant;
    // Inputs 0-3 and 5: v (5 at another address); 4: w.
    spec.aggregates = {{PartialOp::count_rows, -1, -1}, {PartialOp::sum_int, 0, -1}, {PartialOp::min_int, 1, -1},
                       {PartialOp::max_int, 2, -1},     {PartialOp::sum_int, 3, -1}, {PartialOp::sum_int, 4, -1},
                       {PartialOp::max_int, 5, -1}};
    spec.value_widths.assign(6, ColumnWidth::int32);
    auto run = make_cpu_engine()->start(spec);
    struct Expected {
      int64_t rows = 0, count = 0, sum = 0, w_count = 0, w_sum = 0;
      int64_t min = INT64_MAX, max = INT64_MIN;
    };
    std::map<int64_t, Expected> reference;
    for (int c = 0; c < 2; ++c) {
      const size_t rows = 90000;
      std::vector<int32_t> keys(rows), v(rows), w(rows);
      std::vector<uint8_t> v_valid(rows), w_valid(rows);
      for (size_t r = 0; r < rows; ++r) {
        keys[r] = static_cast<int32_t>(rng() % static_cast<uint64_t>(range));
        v[r] = static_cast<int32_t>(static_cast<int64_t>(rng() % 2000001) - 1000000);
        w[r] = static_cast<int32_t>(rng() % 100);
        v_valid[r] = !nulls || rng() % 7 != 0;
        w_valid[r] = !nulls || rng() % 3 != 0;
        Expected& e = reference[keys[r]];
        ++e.rows;
        e.w_count += w_valid[r];
        if (w_valid[r]) e.w_sum += w[r];
        if (v_valid[r]) {
          ++e.count;
          e.sum += v[r];
          e.min = std::min<int64_t>(e.min, v[r]);
          e.max = std::max<int64_t>(e.max, v[r]);
        }
      }
      const std::vector<int32_t> v_copy = v;
      const std::vector<uint8_t> v_valid_copy = v_valid;
      const ColumnView view_v{ColumnWidth::int32, v.data(), nulls ? v_valid.data() : nullptr, {}};
      ChunkInput in;
      in.rows = rows;
      in.keys = {ColumnWidth::int32, keys.data(), nullptr, {}};
      in.values = {view_v, view_v, view_v, view_v,
                   {ColumnWidth::int32, w.data(), nulls ? w_valid.data() : nullptr, {}},
                   {ColumnWidth::int32, v_copy.data(), nulls ? v_valid_copy.data() : nullptr, {}}};
      run->sink(in);
    }
    AggregationResult result = run->finalize();
    ASSERT_EQ(result.groups(), reference.size()) << variant;
    for (size_t g = 0; g < result.groups(); ++g) {
      ASSERT_TRUE(result.key_valid[g]);
      ASSERT_TRUE(reference.count(result.keys[g])) << variant;
      const Expected& e = reference[result.keys[g]];
      ASSERT_EQ(result.states[0].count[g], e.rows) << variant;
      for (size_t a : {1, 2, 3, 4, 6}) ASSERT_EQ(result.states[a].count[g], e.count) << variant << " aggregate " << a;
      ASSERT_TRUE(result.states[1].sum_int[g] == e.sum) << variant;
      ASSERT_TRUE(result.states[4].sum_int[g] == e.sum) << variant;
      ASSERT_EQ(result.states[5].count[g], e.w_count) << variant;
      ASSERT_TRUE(result.states[5].sum_int[g] == e.w_sum) << variant;
      if (e.count > 0) {
        ASSERT_EQ(result.states[2].extreme_int[g], e.min) << variant;
        ASSERT_EQ(result.states[3].extreme_int[g], e.max) << variant;
        ASSERT_EQ(result.states[6].extreme_int[g], e.max) << variant;
      }
    }
  }
}

}  // namespace
}  // namespace tally::executor
