// finalize_column (a whole result column from partial states, no Value per
// group) against the per-group finalizers it replaces, for every aggregate
// shape the engines produce: empty groups (NULL), negative and extreme sums,
// numeric scales, floats, booleans, variances and regressions.
#include <gtest/gtest.h>

#include <random>

#include "common/error.hpp"
#include "executor/finalize.hpp"

namespace tally::executor {
namespace {

constexpr size_t kGroups = 500;

PartialStates random_states(std::mt19937_64& rng, size_t groups = kGroups) {
  PartialStates s;
  for (size_t g = 0; g < groups; ++g) {
    const bool empty = g % 9 == 0;
    const int64_t n = empty ? 0 : static_cast<int64_t>(1 + rng() % 1000);
    s.count.push_back(n);
    const __int128 sum = empty ? 0 : static_cast<__int128>(static_cast<int64_t>(rng() % 4000000001ULL) - 2000000000) * n;
    s.sum_int.push_back(sum);
    s.sum2_int.push_back(empty ? 0 : static_cast<__int128>(rng() % 1000000) * n * 1000 + sum * sum / n);
    s.sum_float.push_back(empty ? 0 : static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000) / 7.0);
    s.extreme_int.push_back(empty ? 0 : static_cast<int64_t>(rng() % 3) - 1);
    s.extreme_float.push_back(empty ? 0 : static_cast<double>(static_cast<int64_t>(rng() % 2001) - 1000) / 3.0);
    FloatMoments2 m;
    for (int64_t i = 0; i < std::min<int64_t>(n, 5); ++i) {
      m.add(static_cast<double>(rng() % 1000) / 8.0, static_cast<double>(rng() % 700) / 4.0);
    }
    s.n.push_back(m.n); s.sx.push_back(m.sx); s.sxx.push_back(m.sxx);
    s.sy.push_back(m.sy); s.syy.push_back(m.syy); s.sxy.push_back(m.sxy);
  }
  return s;
}

// The per-group reference, as the engine path computed it before.
Value reference(const ColumnFinal& c, const PartialStates& s, size_t g) {
  const bool is_float = c.input == TypeId::float4 || c.input == TypeId::float8;
  switch (c.kind) {
    case AggKind::count_star:
    case AggKind::count: return s.count[g];
    case AggKind::sum:
      if (is_float) return s.count[g] ? Value{c.input == TypeId::float4 ? static_cast<double>(static_cast<float>(s.sum_float[g])) : s.sum_float[g]} : Value{Null{}};
      if (c.input == TypeId::numeric) return s.count[g] ? Value{Numeric{s.sum_int[g], c.input_scale}} : Value{Null{}};
      return finalize_sum_int(s.sum_int[g], s.count[g], c.input == TypeId::int8);
    case AggKind::avg:
      if (is_float) return finalize_float_avg(FloatMoments{s.n[g], s.sx[g], s.sxx[g]});
      return finalize_avg_numeric(Numeric{s.sum_int[g], c.input_scale}, s.count[g]);
    case AggKind::min:
    case AggKind::max:
    case AggKind::bool_and:
    case AggKind::bool_or:
      if (s.count[g] == 0) return Null{};
      if (is_float) return s.extreme_float[g];
      if (c.input == TypeId::numeric) return Numeric{s.extreme_int[g], c.input_scale};
      if (c.input == TypeId::boolean) return s.extreme_int[g] != 0;
      return s.extreme_int[g];
    case AggKind::var_samp:
    case AggKind::stddev_pop: {
      const bool sample = c.kind == AggKind::var_samp, stddev = c.kind == AggKind::stddev_pop;
      if (is_float) return finalize_float_variance(FloatMoments{s.n[g], s.sx[g], s.sxx[g]}, sample, stddev);
      return finalize_numeric_variance(s.count[g], Numeric{s.sum_int[g], 0}, Numeric{s.sum2_int[g], 0}, sample, stddev);
    }
    case AggKind::regr_count: return static_cast<int64_t>(s.n[g]);
    case AggKind::corr:
      return finalize_regression(FloatMoments2{s.n[g], s.sx[g], s.sxx[g], s.sy[g], s.syy[g], s.sxy[g]}, RegressionFinal::corr);
    default:
      return finalize_regression(FloatMoments2{s.n[g], s.sx[g], s.sxx[g], s.sy[g], s.syy[g], s.sxy[g]},
                                 RegressionFinal::intercept);
  }
}

struct Shape {
  AggKind kind;
  TypeId input;
  int32_t scale;
  SqlType result;
};

TEST(FinalizeColumn, MatchesPerGroupFinalizers) {
  const std::vector<Shape> shapes = {
      {AggKind::count_star, TypeId::unknown, 0, SqlType{TypeId::int8}},
      {AggKind::count, TypeId::int4, 0, SqlType{TypeId::int8}},
      {AggKind::sum, TypeId::int4, 0, SqlType{TypeId::int8}},
      {AggKind::sum, TypeId::int8, 0, SqlType{TypeId::numeric}},
      {AggKind::sum, TypeId::numeric, 2, SqlType{TypeId::numeric}},
      {AggKind::sum, TypeId::float8, 0, SqlType{TypeId::float8}},
      {AggKind::sum, TypeId::float4, 0, SqlType{TypeId::float4}},
      {AggKind::avg, TypeId::int4, 0, SqlType{TypeId::numeric}},
      {AggKind::avg, TypeId::numeric, 3, SqlType{TypeId::numeric}},
      {AggKind::avg, TypeId::float8, 0, SqlType{TypeId::float8}},
      {AggKind::min, TypeId::int4, 0, SqlType{TypeId::int4}},
      {AggKind::max, TypeId::date, 0, SqlType{TypeId::date}},
      {AggKind::max, TypeId::numeric, 2, SqlType{TypeId::numeric}},
      {AggKind::min, TypeId::float8, 0, SqlType{TypeId::float8}},
      {AggKind::bool_and, TypeId::boolean, 0, SqlType{TypeId::boolean}},
      {AggKind::var_samp, TypeId::int4, 0, SqlType{TypeId::numeric}},
      {AggKind::stddev_pop, TypeId::float8, 0, SqlType{TypeId::float8}},
      {AggKind::regr_count, TypeId::float8, 0, SqlType{TypeId::int8}},
      {AggKind::corr, TypeId::float8, 0, SqlType{TypeId::float8}},
      {AggKind::regr_intercept, TypeId::float8, 0, SqlType{TypeId::float8}},
  };
  std::mt19937_64 rng(7);
  const PartialStates states = random_states(rng);
  for (const Shape& shape : shapes) {
    const ColumnFinal call{shape.kind, shape.input, shape.scale};
    Vector out(shape.result);
    finalize_column(call, states, kGroups, out);
    ASSERT_EQ(out.size(), kGroups);
    size_t nulls = 0;
    for (size_t g = 0; g < kGroups; ++g) {
      const Value expected = reference(call, states, g);
      const Value got = out.get(g);
      nulls += is_null(got);
      ASSERT_EQ(is_null(got), is_null(expected)) << static_cast<int>(shape.kind) << " group " << g;
      if (!is_null(expected)) ASSERT_TRUE(values_equal(got, expected)) << static_cast<int>(shape.kind) << " group " << g;
    }
    if (shape.kind != AggKind::count_star && shape.kind != AggKind::count && shape.kind != AggKind::regr_count) {
      EXPECT_GT(nulls, 0u) << "empty groups must come out NULL";
    }
  }
}

TEST(FinalizeColumn, BigintSumOutOfRangeIs22003) {
  PartialStates s;
  s.count = {1, 2};
  s.sum_int = {5, static_cast<__int128>(INT64_MAX) + 1};
  Vector out(SqlType{TypeId::int8});
  try {
    finalize_column(ColumnFinal{AggKind::sum, TypeId::int4, 0}, s, 2, out);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::numeric_value_out_of_range);
  }
}


// Columns of 2 x 2^17 groups and more are finalized by several cores, each
// thread a range of groups: the same values and NULLs as the per-group
// finalizers, and a bigint sum out of range in the last range still raises 22003.
TEST(FinalizeColumn, LargeColumnsSplitOverThreadsMatch) {
  constexpr size_t kLarge = 300001;
  std::mt19937_64 rng(11);
  PartialStates states = random_states(rng, kLarge);
  const std::vector<Shape> shapes = {
      {AggKind::sum, TypeId::int4, 0, SqlType{TypeId::int8}},   {AggKind::sum, TypeId::int8, 0, SqlType{TypeId::numeric}},
      {AggKind::avg, TypeId::int4, 0, SqlType{TypeId::numeric}}, {AggKind::avg, TypeId::numeric, 3, SqlType{TypeId::numeric}},
      {AggKind::min, TypeId::int4, 0, SqlType{TypeId::int4}},   {AggKind::max, TypeId::float8, 0, SqlType{TypeId::float8}},
      {AggKind::count, TypeId::int4, 0, SqlType{TypeId::int8}},
  };
  for (const Shape& shape : shapes) {
    const ColumnFinal call{shape.kind, shape.input, shape.scale};
    Vector out(shape.result);
    finalize_column(call, states, kLarge, out);
    ASSERT_EQ(out.size(), kLarge);
    for (size_t g = 0; g < kLarge; ++g) {
      const Value expected = reference(call, states, g);
      const Value got = out.get(g);
      ASSERT_EQ(is_null(got), is_null(expected)) << static_cast<int>(shape.kind) << " group " << g;
      if (!is_null(expected)) ASSERT_TRUE(values_equal(got, expected)) << static_cast<int>(shape.kind) << " group " << g;
    }
  }
  states.sum_int[kLarge - 2] = static_cast<__int128>(INT64_MIN) - 1;
  states.count[kLarge - 2] = 3;
  Vector out(SqlType{TypeId::int8});
  try {
    finalize_column(ColumnFinal{AggKind::sum, TypeId::int4, 0}, states, kLarge, out);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::numeric_value_out_of_range);
  }
}

// avg of integers has a 64-bit fast path in finalize_column: its mantissa and
// scale (hence PostgreSQL's text) must equal numeric_div's for sums and
// counts across every magnitude, including the first-digit ties that move
// select_div_scale's weight, and sums at the int64 limits (fallback).
TEST(FinalizeColumn, AvgOfIntegersMatchesNumericDivExactly) {
  std::mt19937_64 rng(7);
  PartialStates s;
  auto add = [&](__int128 sum, int64_t count) {
    s.sum_int.push_back(sum);
    s.count.push_back(count);
  };
  for (int64_t c : {1, 2, 3, 7, 9, 10, 99, 1000, 9999, 10000, 10001, 123456789}) {
    for (__int128 sum : {__int128{0}, __int128{1}, __int128{-1}, __int128{c}, __int128{-c}, __int128{c} - 1,
                         __int128{c} + 1, __int128{c} * 10000, __int128{9999}, __int128{10000}, __int128{-500},
                         static_cast<__int128>(INT64_MAX), static_cast<__int128>(INT64_MIN),
                         static_cast<__int128>(INT64_MAX) * 3}) {
      add(sum, c);
    }
  }
  for (int i = 0; i < 20000; ++i) {
    const int digits = static_cast<int>(rng() % 19);
    int64_t limit = 1;
    for (int d = 0; d < digits; ++d) limit *= 10;
    const auto sum = static_cast<int64_t>(rng() % static_cast<uint64_t>(limit)) * (rng() % 2 ? 1 : -1);
    const int count_digits = static_cast<int>(rng() % 10);
    int64_t count_limit = 1;
    for (int d = 0; d < count_digits; ++d) count_limit *= 10;
    add(sum, 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(count_limit)));
  }
  for (const TypeId input : {TypeId::int2, TypeId::int4, TypeId::int8}) {
    Vector out(SqlType{TypeId::numeric});
    finalize_column(ColumnFinal{AggKind::avg, input, 0}, s, s.count.size(), out);
    for (size_t g = 0; g < s.count.size(); ++g) {
      const Numeric expected = numeric_div(Numeric{s.sum_int[g], 0}, Numeric::from_int(s.count[g]));
      ASSERT_TRUE(out.numerics[g].mantissa == expected.mantissa && out.numerics[g].scale == expected.scale)
          << "sum " << static_cast<long double>(s.sum_int[g]) << " count " << s.count[g];
    }
  }
}

}  // namespace
}  // namespace tally::executor
