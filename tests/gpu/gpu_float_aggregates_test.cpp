// Float and statistical aggregates on the GPU engine against the CPU engine,
// through the engine seam (common/aggregate_engine.hpp): sum, min and max of
// float8 and float4, the moments of float8/float4 (avg, variance, stddev),
// the exact moments of int4 (variance of integers), and the pair moments of
// corr/covar/regr_* over float and int columns. Both engines' partial states
// go through the shared finalization (executor/finalize.hpp); integer states
// must be equal, float answers within 1e-9 relative. Every data shape runs
// under every variant the GPU has (forced) and under the engine's own
// choice. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "executor/cpu/cpu_engine.hpp"
#include "executor/finalize.hpp"
#include "gpu/engine/gpu_engine.hpp"
#include "gpu/rules/device_info.hpp"

namespace tally {
namespace {

using executor::FloatMoments;
using executor::FloatMoments2;
using executor::RegressionFinal;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A table: int32 keys, float8 f, float4 r, int4 i and j, each with validity.
struct Data {
  std::vector<int32_t> key;
  std::vector<uint8_t> key_valid;
  std::vector<double> f;
  std::vector<float> r;
  std::vector<int32_t> i, j;
  std::vector<uint8_t> f_valid, r_valid, i_valid, j_valid;
  size_t rows() const { return key.size(); }
};

struct Shape {
  std::string name;
  size_t rows = 0;
  int32_t groups = 1;        // keys in [0, groups)
  int null_percent = 0;      // NULL values (and NULL keys) per column
  bool all_null_group = false;  // key 0's values are all NULL
  bool specials = false;     // NaN, +-Infinity and -0 among the float values
  bool int_limits = false;   // int4 values near their limits
  // Only multiples of 1/8 (exact sums of squares): groups of a few rows can
  // hold nearly equal values, where plain float sums lose the 1e-9 (see
  // gpu/README.md); exact inputs keep the comparison strict there.
  bool exact_values = false;
};

Data make_data(const Shape& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Data d;
  auto pick = [&](uint64_t n) { return rng() % n; };
  const double specials[] = {kNaN, kInf, -kInf, -0.0};
  for (size_t row = 0; row < s.rows; ++row) {
    const int32_t k = static_cast<int32_t>(pick(static_cast<uint64_t>(s.groups)));
    d.key.push_back(k);
    d.key_valid.push_back(s.null_percent > 0 && pick(100) < static_cast<uint64_t>(s.null_percent) / 2 ? 0 : 1);
    auto valid = [&] {
      if (s.all_null_group && k == 0) return uint8_t{0};
      return s.null_percent > 0 && pick(100) < static_cast<uint64_t>(s.null_percent) ? uint8_t{0} : uint8_t{1};
    };
    // Values that are multiples of 1/8 keep the float sums exact in any
    // order, so a constant group's variance is exactly 0 in both engines;
    // others (fractions of 1/7) are rounded, as real data.
    double f = pick(2) || s.exact_values ? (static_cast<double>(pick(2000001)) - 1000000.0) / 8.0
                                         : (static_cast<double>(pick(2000001)) - 1000000.0) / 7.0;
    if (s.specials && pick(200) == 0) f = specials[pick(4)];
    float r = static_cast<float>((static_cast<double>(pick(20001)) - 10000.0) / 16.0);
    if (s.specials && pick(200) == 0) r = static_cast<float>(specials[pick(4)]);
    int32_t i = static_cast<int32_t>(pick(200001)) - 100000;
    if (s.int_limits) i = pick(2) ? std::numeric_limits<int32_t>::max() - static_cast<int32_t>(pick(3))
                                  : std::numeric_limits<int32_t>::min() + static_cast<int32_t>(pick(3));
    d.f.push_back(f);
    d.r.push_back(r);
    d.i.push_back(i);
    d.j.push_back(static_cast<int32_t>(pick(5)) + 1);
    d.f_valid.push_back(valid());
    d.r_valid.push_back(valid());
    d.i_valid.push_back(valid());
    d.j_valid.push_back(valid());
  }
  return d;
}

// Value columns of the specs below, in this order.
const std::vector<ColumnWidth> kWidths = {ColumnWidth::float64, ColumnWidth::float32, ColumnWidth::int32,
                                          ColumnWidth::int32};

// The aggregate sets: each within the GPU's accumulators per query.
std::vector<std::vector<PartialAggregate>> aggregate_sets() {
  return {
      {{PartialOp::count_rows, -1, -1},
       {PartialOp::sum_float, 0, -1},
       {PartialOp::min_float, 0, -1},
       {PartialOp::max_float, 0, -1},
       {PartialOp::moments_float, 0, -1},
       {PartialOp::min_float, 1, -1},
       {PartialOp::max_float, 1, -1},
       {PartialOp::moments_float, 1, -1}},
      {{PartialOp::count_rows, -1, -1}, {PartialOp::moments_int, 2, -1}, {PartialOp::moments2_float, 0, 2}},
      {{PartialOp::moments2_float, 3, 2}, {PartialOp::moments2_float, 1, 0}},
  };
}

AggregationResult run_engine(AggregateEngine& engine, const AggregationSpec& spec, const Data& d, size_t chunk) {
  auto run = engine.start(spec);
  for (size_t b = 0; b < d.rows(); b += chunk) {
    const size_t n = std::min(chunk, d.rows() - b);
    ChunkInput in;
    in.rows = n;
    in.keys = ColumnView{ColumnWidth::int32, d.key.data() + b, d.key_valid.data() + b, {}};
    in.values = {ColumnView{ColumnWidth::float64, d.f.data() + b, d.f_valid.data() + b, {}},
                 ColumnView{ColumnWidth::float32, d.r.data() + b, d.r_valid.data() + b, {}},
                 ColumnView{ColumnWidth::int32, d.i.data() + b, d.i_valid.data() + b, {}},
                 ColumnView{ColumnWidth::int32, d.j.data() + b, d.j_valid.data() + b, {}}};
    in.filters.assign(spec.aggregates.size(), nullptr);
    run->sink(in);
  }
  return run->finalize();
}

// Group key (nullopt: the NULL key) -> its index in a result.
std::map<std::optional<int64_t>, size_t> index_groups(const AggregationResult& r) {
  std::map<std::optional<int64_t>, size_t> out;
  for (size_t g = 0; g < r.groups(); ++g)
    out[r.key_valid[g] ? std::optional<int64_t>(r.keys[g]) : std::nullopt] = g;
  return out;
}

// A finalized float answer (nullopt: SQL NULL).
std::optional<double> as_double(const executor::Value& v) {
  if (executor::is_null(v)) return std::nullopt;
  return std::get<double>(v);
}

// Same answer: both NULL, both NaN, equal, or within 1e-9 relative.
::testing::AssertionResult close(std::optional<double> gpu, std::optional<double> cpu) {
  if (!gpu && !cpu) return ::testing::AssertionSuccess();
  if (!gpu || !cpu) return ::testing::AssertionFailure() << (gpu ? "CPU NULL" : "GPU NULL");
  const double a = *gpu, b = *cpu;
  if (std::isnan(a) && std::isnan(b)) return ::testing::AssertionSuccess();
  if (a == b) return ::testing::AssertionSuccess();
  if (std::isfinite(a) && std::isfinite(b) && std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "GPU " << a << " vs CPU " << b;
}

std::optional<double> min_max(const PartialStates& s, size_t g) {
  if (s.count[g] == 0) return std::nullopt;
  return s.extreme_float[g] == 0 ? 0.0 : s.extreme_float[g];  // -0 = 0 in PostgreSQL's order
}

// Every aggregate of group gg (GPU) against group gc (CPU).
void compare_group(const std::vector<PartialAggregate>& aggs, const AggregationResult& gpu, size_t gg,
                   const AggregationResult& cpu, size_t gc, const std::string& where) {
  for (size_t a = 0; a < aggs.size(); ++a) {
    const PartialStates& x = gpu.states[a];
    const PartialStates& y = cpu.states[a];
    const std::string at = where + " aggregate " + std::to_string(a);
    switch (aggs[a].op) {
      case PartialOp::count_rows:
      case PartialOp::count_valid: EXPECT_EQ(x.count[gg], y.count[gc]) << at; break;
      case PartialOp::sum_float:
        ASSERT_EQ(x.count[gg], y.count[gc]) << at;
        if (y.count[gc] > 0) {
          EXPECT_TRUE(close(x.sum_float[gg], y.sum_float[gc])) << at;
        }
        break;
      case PartialOp::min_float:
      case PartialOp::max_float:
        ASSERT_EQ(x.count[gg], y.count[gc]) << at;
        EXPECT_TRUE(close(min_max(x, gg), min_max(y, gc))) << at;
        break;
      case PartialOp::moments_int:
        ASSERT_EQ(x.count[gg], y.count[gc]) << at;
        EXPECT_TRUE(x.sum_int[gg] == y.sum_int[gc]) << at << " sum";
        EXPECT_TRUE(x.sum2_int[gg] == y.sum2_int[gc]) << at << " sum of squares";
        break;
      case PartialOp::moments_float: {
        const FloatMoments mg{x.n[gg], x.sx[gg], x.sxx[gg]}, mc{y.n[gc], y.sx[gc], y.sxx[gc]};
        ASSERT_EQ(mg.n, mc.n) << at;
        EXPECT_TRUE(close(as_double(executor::finalize_float_avg(mg)), as_double(executor::finalize_float_avg(mc))))
            << at << " avg";
        for (const bool sample : {true, false}) {
          EXPECT_TRUE(close(as_double(executor::finalize_float_variance(mg, sample, false)),
                            as_double(executor::finalize_float_variance(mc, sample, false))))
              << at << (sample ? " var_samp" : " var_pop");
          EXPECT_TRUE(close(as_double(executor::finalize_float_variance(mg, sample, true)),
                            as_double(executor::finalize_float_variance(mc, sample, true))))
              << at << (sample ? " stddev_samp" : " stddev_pop");
        }
        break;
      }
      case PartialOp::moments2_float: {
        const FloatMoments2 mg{x.n[gg], x.sx[gg], x.sxx[gg], x.sy[gg], x.syy[gg], x.sxy[gg]};
        const FloatMoments2 mc{y.n[gc], y.sx[gc], y.sxx[gc], y.sy[gc], y.syy[gc], y.sxy[gc]};
        ASSERT_EQ(mg.n, mc.n) << at;
        for (const RegressionFinal f :
             {RegressionFinal::corr, RegressionFinal::covar_pop, RegressionFinal::covar_samp, RegressionFinal::r2,
              RegressionFinal::slope, RegressionFinal::intercept, RegressionFinal::sxx, RegressionFinal::syy,
              RegressionFinal::sxy, RegressionFinal::avgx, RegressionFinal::avgy}) {
          EXPECT_TRUE(close(as_double(executor::finalize_regression(mg, f)),
                            as_double(executor::finalize_regression(mc, f))))
              << at << " regression final " << static_cast<int>(f);
        }
        break;
      }
      default: FAIL() << at << ": an operation this test does not compare";
    }
  }
}

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> s = {
      {"empty", 0, 10},
      {"one_group", 20000, 1},
      {"nulls_and_all_null_group", 60000, 50, 20, true},
      {"specials", 60000, 30, 5, false, true},
      {"int4_limits", 40000, 20, 5, false, false, true},
      {"many_groups", 3000000, 1000000, 5, false, false, false, true},
  };
  return s;
}

void check_shape(const Shape& shape, const std::string& variant, gpu::GpuEngine& gpu_engine) {
  const Data d = make_data(shape, 20261128 + shape.rows);
  auto cpu_engine = executor::make_cpu_engine();
  for (const auto& aggs : aggregate_sets()) {
    AggregationSpec spec;
    spec.key_width = ColumnWidth::int32;
    spec.value_widths = kWidths;
    spec.aggregates = aggs;
    spec.key_range_known = shape.groups > 0;
    spec.key_min = 0;
    spec.key_max = shape.groups - 1;
    spec.estimated_groups = static_cast<uint64_t>(shape.groups);
    spec.threads = 2;
    spec.forced_variant = variant;
    const std::string where = shape.name + " [" + (variant.empty() ? "engine's choice" : variant) + "] ops " +
                              std::to_string(static_cast<int>(aggs[0].op));
    ASSERT_TRUE(gpu_engine.can_run(spec)) << where << ": the GPU engine refuses the aggregates";
    AggregationSpec cpu_spec = spec;
    cpu_spec.forced_variant.clear();
    const AggregationResult want = run_engine(*cpu_engine, cpu_spec, d, 1 << 18);
    const AggregationResult got = run_engine(gpu_engine, spec, d, 1 << 18);
    ASSERT_EQ(got.groups(), want.groups()) << where;
    const auto cpu_groups = index_groups(want);
    for (size_t g = 0; g < got.groups(); ++g) {
      const std::optional<int64_t> key = got.key_valid[g] ? std::optional<int64_t>(got.keys[g]) : std::nullopt;
      const auto it = cpu_groups.find(key);
      ASSERT_NE(it, cpu_groups.end()) << where << ": a group the CPU engine does not have";
      compare_group(aggs, got, g, want, it->second, where + " key " + (key ? std::to_string(*key) : "NULL"));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(GpuFloatAggregates, EveryShapeAndVariantAnswersAsTheCpuEngine) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto engine = gpu::make_gpu_engine();
  ASSERT_NE(engine, nullptr);
  for (const Shape& shape : shapes()) {
    for (const char* variant : {"", "dense", "shared_memory", "global", "sort", "partitioned"}) {
      // The dense variant indexes the key range: not over a million keys.
      if (std::string(variant) == "dense" && shape.groups > 65536) continue;
      check_shape(shape, variant, *engine);
      if (HasFatalFailure()) return;
    }
  }
}

// The spec translation takes every float and moment operation, and refuses
// what the kernels cannot keep exactly (moments of int8: int128 squares).
TEST(GpuFloatAggregates, CanRunFloatAndMomentAggregates) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto engine = gpu::make_gpu_engine();
  ASSERT_NE(engine, nullptr);
  AggregationSpec spec;
  spec.key_width = ColumnWidth::int32;
  spec.value_widths = kWidths;
  for (const auto& aggs : aggregate_sets()) {
    spec.aggregates = aggs;
    EXPECT_TRUE(engine->can_run(spec));
  }
  spec.value_widths = {ColumnWidth::int64};
  spec.aggregates = {{PartialOp::moments_int, 0, -1}};
  EXPECT_FALSE(engine->can_run(spec));
}

}  // namespace
}  // namespace tally
