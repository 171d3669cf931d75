// Column programs (common/column_program.hpp): the evaluator the GPU kernel
// and the CPU engine share, op by op (three-valued logic, NULLs, overflow
// flags, numeric scales, PostgreSQL's float order); and WHERE clauses and
// aggregate inputs compiled from SQL (executor/column_program_compiler.hpp)
// and run by the CPU engine, whose answers must equal the generic path's
// row-by-row Expr evaluation, with EXPLAIN ANALYZE saying the engine took them.
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

#include "common/column_program_batch.hpp"
#include "common/column_program_comparisons.hpp"
#include "common/column_program_run.hpp"
#include "executor/column_program_compiler.hpp"
#include "executor/table_provider.hpp"
#include "tests/executor/column_fixture.hpp"
#include "tests/executor/select_runner.hpp"

namespace tally::executor {
namespace {

using testing::column;

ProgramStep op(ProgramOp o, int32_t arg = 0) { return ProgramStep{o, arg, 0, 0}; }
ProgramStep cint(int64_t v) { return ProgramStep{ProgramOp::const_int, 0, v, 0}; }
ProgramStep cfloat(double v) { return ProgramStep{ProgramOp::const_float, 0, 0, v}; }
ProgramStep cnull() { return op(ProgramOp::const_null); }

struct Out {
  ProgramSlot v;
  uint32_t error = 0;
};

Out run(const std::vector<ProgramStep>& steps, const std::vector<ProgramColumn>& cols = {}, size_t row = 0) {
  Out o;
  o.v = run_program_row(steps.data(), static_cast<int>(steps.size()), cols.data(), row, &o.error);
  return o;
}

// SQL's three-valued AND and OR: -1 stands for NULL.
TEST(ColumnProgram, ThreeValuedLogic) {
  const int values[] = {0, 1, -1};
  auto push = [](int v) { return v < 0 ? cnull() : cint(v); };
  for (const int a : values) {
    for (const int b : values) {
      const Out land = run({push(a), push(b), op(ProgramOp::and_)});
      const Out lor = run({push(a), push(b), op(ProgramOp::or_)});
      const int want_and = (a == 0 || b == 0) ? 0 : (a < 0 || b < 0) ? -1 : 1;
      const int want_or = (a == 1 || b == 1) ? 1 : (a < 0 || b < 0) ? -1 : 0;
      EXPECT_EQ(land.v.null ? -1 : static_cast<int>(land.v.i), want_and) << a << " AND " << b;
      EXPECT_EQ(lor.v.null ? -1 : static_cast<int>(lor.v.i), want_or) << a << " OR " << b;
    }
    const Out n = run({push(a), op(ProgramOp::not_)});
    EXPECT_EQ(n.v.null ? -1 : static_cast<int>(n.v.i), a < 0 ? -1 : 1 - a);
    const Out isnull = run({push(a), op(ProgramOp::is_null)});
    EXPECT_FALSE(isnull.v.null);
    EXPECT_EQ(isnull.v.i, a < 0 ? 1 : 0);
  }
  // A filter passes true only: NULL and false drop the row.
  EXPECT_FALSE(program_passes(run({cnull()}).v));
  EXPECT_FALSE(program_passes(run({cint(0)}).v));
  EXPECT_TRUE(program_passes(run({cint(1)}).v));
}

// AND skips its right operand where the left is false (OR where true): the
// answer is the same, and an overflow there is not raised, as PostgreSQL
// stops at a false qual.
TEST(ColumnProgram, ShortCircuitsKeepThreeValuedAnswers) {
  const std::vector<ProgramStep> overflowing_right = {cint(INT32_MAX), cint(2), op(ProgramOp::mul_int),
                                                      op(ProgramOp::check_range, 32), cint(0), op(ProgramOp::gt_int)};
  auto with_left = [&](ProgramStep left, ProgramOp skip, ProgramOp combine) {
    std::vector<ProgramStep> steps = {left, op(skip, static_cast<int32_t>(overflowing_right.size() + 1))};
    steps.insert(steps.end(), overflowing_right.begin(), overflowing_right.end());
    steps.push_back(op(combine));
    return run(steps);
  };
  const Out false_and = with_left(cint(0), ProgramOp::skip_if_false, ProgramOp::and_);
  EXPECT_EQ(false_and.error, 0u);
  EXPECT_FALSE(false_and.v.null);
  EXPECT_EQ(false_and.v.i, 0);
  const Out true_or = with_left(cint(1), ProgramOp::skip_if_true, ProgramOp::or_);
  EXPECT_EQ(true_or.error, 0u);
  EXPECT_EQ(true_or.v.i, 1);
  // NULL and the non-deciding value evaluate the right operand.
  EXPECT_EQ(with_left(cnull(), ProgramOp::skip_if_false, ProgramOp::and_).error, kProgramOverflow);
  EXPECT_EQ(with_left(cint(1), ProgramOp::skip_if_false, ProgramOp::and_).error, kProgramOverflow);
  const Out null_and_false = run({cnull(), op(ProgramOp::skip_if_false, 2), cint(0), op(ProgramOp::and_)});
  EXPECT_FALSE(null_and_false.v.null);
  EXPECT_EQ(null_and_false.v.i, 0);
}

TEST(ColumnProgram, NullsPropagateThroughArithmeticAndComparisons) {
  for (const ProgramOp o : {ProgramOp::add_int, ProgramOp::mul_int, ProgramOp::lt_int, ProgramOp::eq_int}) {
    EXPECT_TRUE(run({cint(3), cnull(), op(o)}).v.null);
    EXPECT_TRUE(run({cnull(), cint(3), op(o)}).v.null);
  }
  EXPECT_TRUE(run({cfloat(1), cnull(), op(ProgramOp::mul_float)}).v.null);
}

TEST(ColumnProgram, IntegerRangesOverflowAsPostgresTypes) {
  // int4: 2147483647 + 1 leaves int4; -2147483648 stays.
  EXPECT_EQ(run({cint(INT32_MAX), cint(1), op(ProgramOp::add_int), op(ProgramOp::check_range, 32)}).error,
            kProgramOverflow);
  const Out low = run({cint(INT32_MIN + 1), cint(1), op(ProgramOp::sub_int), op(ProgramOp::check_range, 32)});
  EXPECT_EQ(low.error, 0u);
  EXPECT_EQ(static_cast<int64_t>(low.v.i), INT32_MIN);
  EXPECT_EQ(run({cint(INT16_MIN), op(ProgramOp::neg_int), op(ProgramOp::check_range, 16)}).error, kProgramOverflow);
  // int8 products through int128: exact, then checked.
  const Out big = run({cint(INT64_MAX), cint(2), op(ProgramOp::mul_int)});
  EXPECT_EQ(big.error, 0u);
  EXPECT_TRUE(big.v.i == static_cast<__int128>(INT64_MAX) * 2);
  EXPECT_EQ(run({cint(INT64_MAX), cint(2), op(ProgramOp::mul_int), op(ProgramOp::check_range, 64)}).error,
            kProgramOverflow);
  uint32_t error = 0;
  program_int64(big.v, &error);
  EXPECT_EQ(error, kProgramOverflow);
  // Operands past what int128 multiplies exactly are flagged, not wrapped.
  EXPECT_EQ(run({cint(INT64_MAX), cint(INT64_MAX), op(ProgramOp::mul_int), cint(INT64_MAX), op(ProgramOp::mul_int)}).error,
            kProgramOverflow);
}

TEST(ColumnProgram, NumericScales) {
  // 12.34 (scale 2) * 0.5 (scale 1) = 6.170 (scale 3); 12.34 + 0.5 = 12.84 at scale 2.
  const Out product = run({cint(1234), cint(5), op(ProgramOp::mul_int)});
  EXPECT_TRUE(product.v.i == 6170);
  const Out sum = run({cint(1234), cint(5), op(ProgramOp::scale_int, 1), op(ProgramOp::add_int)});
  EXPECT_TRUE(sum.v.i == 1284);
  // Comparisons at the larger scale: 1.5 (15, scale 1) > 1.49 (149, scale 2).
  EXPECT_EQ(run({cint(15), op(ProgramOp::scale_int, 1), cint(149), op(ProgramOp::gt_int)}).v.i, 1);
}

TEST(ColumnProgram, FloatsInPostgresOrderAndOverflow) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(run({cfloat(nan), cfloat(nan), op(ProgramOp::eq_float)}).v.i, 1);
  EXPECT_EQ(run({cfloat(nan), cfloat(inf), op(ProgramOp::gt_float)}).v.i, 1);
  EXPECT_EQ(run({cfloat(1), cfloat(nan), op(ProgramOp::lt_float)}).v.i, 1);
  EXPECT_EQ(run({cfloat(nan), cfloat(1), op(ProgramOp::le_float)}).v.i, 0);
  EXPECT_EQ(run({cfloat(-0.0), cfloat(0.0), op(ProgramOp::eq_float)}).v.i, 1);
  EXPECT_EQ(run({cfloat(1e308), cfloat(10), op(ProgramOp::mul_float)}).error, kProgramOverflow);
  EXPECT_EQ(run({cfloat(1e-308), cfloat(1e-308), op(ProgramOp::mul_float)}).error, kProgramOverflow);
  EXPECT_EQ(run({cfloat(inf), cfloat(1), op(ProgramOp::add_float)}).error, 0u);
  EXPECT_EQ(run({cint(-7), op(ProgramOp::int_to_float)}).v.f, -7.0);
}

TEST(ColumnProgram, LoadsEachWidthWithValidity) {
  const int32_t i32[] = {5, -6};
  const int64_t i64[] = {int64_t{1} << 40, 2};
  const float f32[] = {0.5f, 1.5f};
  const double f64[] = {2.5, -1};
  const uint8_t valid[] = {1, 0};
  const std::vector<ProgramColumn> cols = {{i32, valid, static_cast<uint8_t>(ColumnWidth::int32)},
                                           {i64, nullptr, static_cast<uint8_t>(ColumnWidth::int64)},
                                           {f32, nullptr, static_cast<uint8_t>(ColumnWidth::float32)},
                                           {f64, nullptr, static_cast<uint8_t>(ColumnWidth::float64)}};
  EXPECT_TRUE(run({op(ProgramOp::load, 0)}, cols, 0).v.i == 5);
  EXPECT_TRUE(run({op(ProgramOp::load, 0)}, cols, 1).v.null);
  EXPECT_TRUE(run({op(ProgramOp::load, 1)}, cols, 0).v.i == (int64_t{1} << 40));
  EXPECT_EQ(run({op(ProgramOp::load, 2)}, cols, 1).v.f, 1.5);
  EXPECT_EQ(run({op(ProgramOp::load, 3), op(ProgramOp::load, 2), op(ProgramOp::add_float)}, cols, 0).v.f, 3.0);
}

// Random well-formed programs (integer, float and boolean trees, short
// circuits around overflowing operands, NULLs) over random columns: the host
// block evaluator answers every row, NULL and error flag as run_program_row.
class RandomProgram {
 public:
  explicit RandomProgram(uint64_t seed) : rng_(seed) {}
  void integer(std::vector<ProgramStep>& out, int depth) {
    const int pick = static_cast<int>(rng_() % (depth <= 0 ? 3 : 9));
    switch (pick) {
      case 0: out.push_back(op(ProgramOp::load, static_cast<int32_t>(rng_() % 2))); break;
      case 1: out.push_back(rng_() % 8 == 0 ? cnull() : cint(static_cast<int64_t>(rng_() % 2001) - 1000)); break;
      case 2: out.push_back(cint(rng_() % 2 ? INT64_MAX - static_cast<int64_t>(rng_() % 5) : int64_t{1} << 40)); break;
      case 3: integer(out, depth - 1); out.push_back(op(ProgramOp::neg_int)); break;
      case 4: integer(out, depth - 1); out.push_back(op(ProgramOp::scale_int, static_cast<int32_t>(rng_() % 4))); break;
      case 5: integer(out, depth - 1); out.push_back(op(ProgramOp::check_range, rng_() % 2 ? 32 : 64)); break;
      default: {
        integer(out, depth - 1);
        integer(out, depth - 1);
        const ProgramOp ops[] = {ProgramOp::add_int, ProgramOp::sub_int, ProgramOp::mul_int};
        out.push_back(op(ops[rng_() % 3]));
      }
    }
  }
  void floating(std::vector<ProgramStep>& out, int depth) {
    const int pick = static_cast<int>(rng_() % (depth <= 0 ? 2 : 6));
    switch (pick) {
      case 0: out.push_back(op(ProgramOp::load, static_cast<int32_t>(2 + rng_() % 2))); break;
      case 1: out.push_back(rng_() % 8 == 0 ? cnull() : cfloat(static_cast<double>(rng_() % 4001) / 4 - 500)); break;
      case 2: integer(out, depth - 1); out.push_back(op(ProgramOp::int_to_float)); break;
      case 3: floating(out, depth - 1); out.push_back(op(ProgramOp::neg_float)); break;
      default: {
        floating(out, depth - 1);
        floating(out, depth - 1);
        const ProgramOp ops[] = {ProgramOp::add_float, ProgramOp::sub_float, ProgramOp::mul_float};
        out.push_back(op(ops[rng_() % 3]));
      }
    }
  }
  void boolean(std::vector<ProgramStep>& out, int depth) {
    const int pick = static_cast<int>(rng_() % (depth <= 0 ? 2 : 7));
    switch (pick) {
      case 0: {
        integer(out, depth - 1);
        integer(out, depth - 1);
        out.push_back(op(static_cast<ProgramOp>(static_cast<int>(ProgramOp::eq_int) + static_cast<int>(rng_() % 6))));
        break;
      }
      case 1: {
        floating(out, depth - 1);
        floating(out, depth - 1);
        out.push_back(op(static_cast<ProgramOp>(static_cast<int>(ProgramOp::eq_float) + static_cast<int>(rng_() % 6))));
        break;
      }
      case 2: boolean(out, depth - 1); out.push_back(op(ProgramOp::not_)); break;
      case 3: integer(out, depth - 1); out.push_back(op(rng_() % 2 ? ProgramOp::is_null : ProgramOp::is_not_null)); break;
      default: {
        const bool is_and = rng_() % 2 == 0;
        boolean(out, depth - 1);
        std::vector<ProgramStep> right;
        boolean(right, depth - 1);
        if (rng_() % 3 != 0) {
          const ProgramOp skip = is_and ? ProgramOp::skip_if_false : ProgramOp::skip_if_true;
          out.push_back(op(skip, static_cast<int32_t>(right.size() + 1)));
        }
        out.insert(out.end(), right.begin(), right.end());
        out.push_back(op(is_and ? ProgramOp::and_ : ProgramOp::or_));
      }
    }
  }

 private:
  std::mt19937_64 rng_;
};

// year_of, date_field and floor_to against the C++ calendar, over dates of
// thirty centuries each side of 2000-01-01 and times of day across a day.
TEST(ColumnProgram, DateFieldsAnswerAsTheCalendar) {
  using namespace std::chrono;
  constexpr int64_t kDay = 86400000000LL, k2000 = 10957;  // days from 1970-01-01 to 2000-01-01
  const std::vector<std::pair<DateField, const char*>> fields = {
      {DateField::month, "month"}, {DateField::day, "day"},         {DateField::hour, "hour"},
      {DateField::minute, "minute"}, {DateField::quarter, "quarter"}, {DateField::dow, "dow"},
      {DateField::doy, "doy"}};
  for (int64_t days = -1100000; days <= 1100000; days += 997) {
    const year_month_day ymd{sys_days{std::chrono::days{days + k2000}}};
    const int64_t y = static_cast<int>(ymd.year()), m = static_cast<unsigned>(ymd.month()),
                  d = static_cast<unsigned>(ymd.day());
    const weekday wd{sys_days{std::chrono::days{days + k2000}}};
    const int64_t doy = (sys_days{ymd} - sys_days{year{static_cast<int>(y)} / January / 1}).count() + 1;
    const int64_t tod = (days * 7919 % kDay + kDay) % kDay;  // a time of day that varies
    const int64_t micros = days * kDay + tod;
    auto expected = [&](DateField f, bool with_time) -> int64_t {
      switch (f) {
        case DateField::month: return m;
        case DateField::day: return d;
        case DateField::hour: return with_time ? tod / 3600000000LL : 0;
        case DateField::minute: return with_time ? tod / 60000000LL % 60 : 0;
        case DateField::quarter: return (m - 1) / 3 + 1;
        case DateField::dow: return wd.c_encoding();
        case DateField::doy: return doy;
      }
      return -1;
    };
    for (const auto& [field, name] : fields) {
      for (int32_t unit = 0; unit <= 1; ++unit) {
        const Out o = run({cint(unit == 0 ? days : micros), op(ProgramOp::date_field, static_cast<int32_t>(field) * 2 + unit)});
        ASSERT_EQ(o.error, 0u) << name;
        ASSERT_EQ(static_cast<int64_t>(o.v.i), expected(field, unit == 1)) << name << " of day " << days << " unit " << unit;
      }
    }
    const Out year_of = run({cint(micros), op(ProgramOp::year_of, 1)});
    ASSERT_EQ(static_cast<int64_t>(year_of.v.i), y <= 0 ? y - 1 : y) << days;  // no year 0: 1 BC is -1
    for (const int64_t unit : {int64_t{1000000}, int64_t{60000000}, int64_t{3600000000}, kDay}) {
      const Out cut = run({cint(micros), ProgramStep{ProgramOp::floor_to, 0, unit, 0}});
      ASSERT_EQ(static_cast<int64_t>(cut.v.i), days * kDay + tod / unit * unit) << days << " to " << unit;
    }
  }
  // Infinities raise the error flag (the host path answers them); NULL stays NULL.
  EXPECT_NE(run({cint(INT64_MAX), op(ProgramOp::date_field, 1)}).error, 0u);
  EXPECT_NE(run({cint(INT32_MIN), op(ProgramOp::date_field, 0)}).error, 0u);
  EXPECT_NE(run({cint(INT64_MIN), ProgramStep{ProgramOp::floor_to, 0, kDay, 0}}).error, 0u);
  const Out null = run({cnull(), op(ProgramOp::date_field, 3)});
  EXPECT_TRUE(null.v.null);
  EXPECT_EQ(null.error, 0u);
}

TEST(ColumnProgram, BlocksAnswerAsRowByRow) {
  const size_t rows = 1000;  // several blocks and a partial one
  std::mt19937_64 rng(7);
  std::vector<int32_t> i32(rows);
  std::vector<int64_t> i64(rows);
  std::vector<float> f32(rows);
  std::vector<double> f64(rows);
  // `few_dropped`: a filter that keeps most rows, whose blocks are evaluated
  // whole (an error only a dropped row raises must not be reported).
  std::vector<uint8_t> valid32(rows), valid64(rows), mask(rows), few_dropped(rows);
  for (size_t r = 0; r < rows; ++r) {
    i32[r] = static_cast<int32_t>(rng() % 20001) - 10000;
    // INT64_MIN: a product's operand the evaluators flag (2^63 or more).
    i64[r] = rng() % 50 == 0   ? INT64_MIN + 3
             : rng() % 97 == 0 ? INT64_MIN
                               : static_cast<int64_t>(rng() % 2000001) - 1000000;
    f32[r] = static_cast<float>(rng() % 801) / 8 - 50;
    f64[r] = rng() % 60 == 0 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(rng() % 4001) / 16 - 125;
    valid32[r] = rng() % 7 != 0;
    valid64[r] = rng() % 5 != 0;
    mask[r] = rng() % 3 != 0;
    few_dropped[r] = rng() % 32 != 0;
  }
  const std::vector<ProgramColumn> cols = {{i32.data(), valid32.data(), static_cast<uint8_t>(ColumnWidth::int32)},
                                           {i64.data(), valid64.data(), static_cast<uint8_t>(ColumnWidth::int64)},
                                           {f32.data(), nullptr, static_cast<uint8_t>(ColumnWidth::float32)},
                                           {f64.data(), nullptr, static_cast<uint8_t>(ColumnWidth::float64)}};
  // The same columns with no NULL: the blocks' steps then skip their NULL tests.
  std::vector<ProgramColumn> dense = cols;
  for (ProgramColumn& c : dense) c.validity = nullptr;
  RandomProgram gen(3);
  int skips = 0, errors = 0, compared = 0, combined = 0;
  for (int t = 0; t < 400; ++t) {
    ColumnProgram p;
    p.result = static_cast<ProgramResult>(t % 3);
    if (p.result == ProgramResult::boolean) gen.boolean(p.steps, 4);
    else if (p.result == ProgramResult::int64) gen.integer(p.steps, 4);
    else gen.floating(p.steps, 4);
    ASSERT_TRUE(program_runs_in_blocks(p)) << t;
    for (const ProgramStep& s : p.steps) skips += s.op == ProgramOp::skip_if_false || s.op == ProgramOp::skip_if_true;
    // A column and a constant under one operator, which the blocks run in one pass.
    for (size_t s = 0; s + 2 < p.steps.size(); ++s) {
      const ProgramOp a = p.steps[s].op, b = p.steps[s + 1].op, o = p.steps[s + 2].op;
      const bool pair = (a == ProgramOp::load && b == ProgramOp::const_int) || (a == ProgramOp::const_int && b == ProgramOp::load);
      compared += pair && o >= ProgramOp::eq_int && o <= ProgramOp::ge_int;
      combined += pair && (o == ProgramOp::add_int || o == ProgramOp::sub_int || o == ProgramOp::mul_int);
    }
    // Row by row: the reference.
    std::vector<uint8_t> want_mask(rows), got_mask(rows), want_valid(rows, 9), got_valid(rows, 9);
    std::vector<int64_t> want_values(rows, -1), got_values(rows, -1);
    const uint8_t* filter = t % 2 != 0 || p.result == ProgramResult::boolean ? nullptr
                            : t % 4 == 0                                   ? mask.data()
                                                                           : few_dropped.data();
    const std::vector<ProgramColumn>& columns = t % 4 == 3 ? dense : cols;
    uint32_t want_error = 0;
    for (size_t r = 0; r < rows; ++r) {
      if (filter != nullptr && filter[r] == 0) {
        want_values[r] = 0;
        want_valid[r] = 0;
        continue;
      }
      const ProgramSlot v = run_program_row(p.steps.data(), static_cast<int>(p.steps.size()), columns.data(), r, &want_error);
      if (p.result == ProgramResult::boolean) want_mask[r] = program_passes(v);
      else if (p.result == ProgramResult::int64) want_values[r] = program_int64(v, &want_error);
      else std::memcpy(&want_values[r], &v.f, 8);
      if (p.result != ProgramResult::boolean) want_valid[r] = !v.null;
    }
    // Blocks, over the rows in two parts as the host's threads split them.
    uint8_t* out_mask = p.result == ProgramResult::boolean ? got_mask.data() : const_cast<uint8_t*>(filter);
    void* out_values = p.result == ProgramResult::boolean ? nullptr : got_values.data();
    uint8_t* out_valid = p.result == ProgramResult::boolean ? nullptr : got_valid.data();
    const uint32_t got_error = evaluate_program_rows(p, columns, 0, 300, out_mask, out_values, out_valid) |
                               evaluate_program_rows(p, columns, 300, rows, out_mask, out_values, out_valid);
    errors += want_error != 0;
    ASSERT_EQ(got_error, want_error) << "program " << t;
    if (p.result == ProgramResult::boolean) {
      ASSERT_EQ(got_mask, want_mask) << "program " << t;
    } else {
      ASSERT_EQ(got_valid, want_valid) << "program " << t;
      for (size_t r = 0; r < rows; ++r) {
        if (!want_valid[r]) continue;
        if (p.result == ProgramResult::int64) {
          ASSERT_EQ(got_values[r], want_values[r]) << "program " << t << " row " << r;
          continue;
        }
        // Floats by value: a NaN's sign bit may differ with the operands'
        // order the compiler picks, and no output shows it.
        double got = 0, want = 0;
        std::memcpy(&got, &got_values[r], 8);
        std::memcpy(&want, &want_values[r], 8);
        ASSERT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << "program " << t << " row " << r;
      }
    }
  }
  // The programs exercised short circuits, overflows and columns compared
  // with constants.
  EXPECT_GT(skips, 50);
  EXPECT_GT(compared, 20);
  EXPECT_GT(combined, 20);
  EXPECT_GT(errors, 20);
  // A program the block evaluator does not take (a short circuit whose
  // skipped steps leave a value) still answers, row by row.
  ColumnProgram odd;
  odd.steps = {cint(1), op(ProgramOp::skip_if_true, 1), cint(0)};
  EXPECT_FALSE(program_runs_in_blocks(odd));
  std::vector<uint8_t> m(4);
  EXPECT_EQ(evaluate_program_rows(odd, cols, 0, 4, m.data(), nullptr, nullptr), 0u);
  EXPECT_EQ(m, std::vector<uint8_t>(4, 1));
}

// WHERE clauses of comparisons of a column with a constant joined by AND
// (common/column_program_comparisons.hpp) take typed loops instead of the
// block evaluator; nested and short-circuited as the compiler emits them,
// over NULLs, NaN, scaled constants and constants on the left, they answer
// as row by row. A program with anything else is not taken.
// A filter that keeps most of a block's rows has the block evaluated whole;
// a row it drops is never computed as far as anyone can see: its overflow
// is not reported (PostgreSQL never evaluates it), a kept row's is.
TEST(ColumnProgram, ErrorsOfDroppedRowsAreNotReported) {
  const size_t rows = 3000;
  std::vector<int64_t> v(rows);
  std::vector<uint8_t> keep(rows, 1);
  for (size_t r = 0; r < rows; ++r) v[r] = static_cast<int64_t>(r) - 1500;
  for (size_t r = 7; r < rows; r += 401) {
    v[r] = INT64_MAX / 2 + 5;  // doubled: past int64
    keep[r] = 0;
  }
  const std::vector<ProgramColumn> cols = {{v.data(), nullptr, static_cast<uint8_t>(ColumnWidth::int64)}};
  ColumnProgram p;
  p.result = ProgramResult::int64;
  // The range check flags the product inside the block's run, where the
  // whole block's rows are computed.
  p.steps = {op(ProgramOp::load, 0), cint(2), op(ProgramOp::mul_int), op(ProgramOp::check_range, 64)};
  ASSERT_TRUE(program_runs_in_blocks(p));
  std::vector<int64_t> out(rows, -1);
  std::vector<uint8_t> valid(rows, 9);
  EXPECT_EQ(evaluate_program_rows(p, cols, 0, rows, keep.data(), out.data(), valid.data()), 0u);
  for (size_t r = 0; r < rows; ++r) {
    ASSERT_EQ(valid[r], keep[r]) << r;
    if (keep[r]) ASSERT_EQ(out[r], 2 * v[r]) << r;
  }
  keep[7 + 401] = 1;  // one overflowing row kept: its error is the statement's
  EXPECT_EQ(evaluate_program_rows(p, cols, 0, rows, keep.data(), out.data(), valid.data()), kProgramOverflow);
}

TEST(ColumnProgram, ComparisonConjunctionsAnswerAsRowByRow) {
  const size_t rows = 9000;  // several of the typed loops' blocks and a partial one
  std::mt19937_64 rng(11);
  std::vector<int32_t> i32(rows);
  std::vector<int64_t> i64(rows);
  std::vector<float> f32(rows);
  std::vector<double> f64(rows);
  std::vector<uint8_t> valid32(rows), valid64(rows);
  for (size_t r = 0; r < rows; ++r) {
    i32[r] = rng() % 50 == 0 ? (rng() % 2 == 0 ? INT32_MIN : INT32_MAX) : static_cast<int32_t>(rng() % 201) - 100;
    i64[r] = static_cast<int64_t>(rng() % 20001) - 10000;
    f32[r] = static_cast<float>(rng() % 81) / 8 - 5;
    f64[r] = rng() % 40 == 0 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(rng() % 401) / 16 - 12;
    valid32[r] = rng() % 7 != 0;
    valid64[r] = rng() % 5 != 0;
  }
  const std::vector<ProgramColumn> cols = {{i32.data(), valid32.data(), static_cast<uint8_t>(ColumnWidth::int32)},
                                           {i64.data(), valid64.data(), static_cast<uint8_t>(ColumnWidth::int64)},
                                           {f32.data(), nullptr, static_cast<uint8_t>(ColumnWidth::float32)},
                                           {f64.data(), nullptr, static_cast<uint8_t>(ColumnWidth::float64)}};
  // One comparison: a column and a constant in either order.
  auto comparison = [&](std::vector<ProgramStep>& steps) {
    const int c = static_cast<int>(rng() % 4);
    const bool floating = c >= 2;
    std::vector<ProgramStep> constant;
    if (floating) {
      constant.push_back(cfloat(rng() % 13 == 0 ? std::numeric_limits<double>::quiet_NaN()
                                                : static_cast<double>(rng() % 161) / 16 - 5));
    } else if (rng() % 3 == 0) {
      constant = {cint(static_cast<int64_t>(rng() % 21) - 10), op(ProgramOp::scale_int, 1)};  // a numeric's constant
    } else if (rng() % 4 == 0) {
      // At and past the edges of the int32 column's range: compared at its
      // own width where the constant fits, and alike for every row where not.
      const int64_t edges[] = {int64_t{INT32_MIN} - 1, int64_t{INT32_MIN}, int64_t{INT32_MAX},
                               int64_t{INT32_MAX} + 1, int64_t{5000000000}, INT64_MIN / 2};
      constant.push_back(cint(edges[rng() % 6]));
    } else {
      constant.push_back(cint(static_cast<int64_t>(rng() % 201) - 100));
    }
    const bool constant_first = rng() % 2 == 0;
    if (constant_first) steps.insert(steps.end(), constant.begin(), constant.end());
    steps.push_back(op(ProgramOp::load, c));
    if (!constant_first) steps.insert(steps.end(), constant.begin(), constant.end());
    const int which = static_cast<int>(rng() % 6);
    steps.push_back(op(static_cast<ProgramOp>(static_cast<int>(floating ? ProgramOp::eq_float : ProgramOp::eq_int) + which)));
  };
  // A conjunction of n comparisons, nested at random, with the compiler's short circuits.
  std::function<void(std::vector<ProgramStep>&, int)> conjunction = [&](std::vector<ProgramStep>& steps, int n) {
    if (n == 1) return comparison(steps);
    const int left = 1 + static_cast<int>(rng() % static_cast<uint64_t>(n - 1));
    conjunction(steps, left);
    const size_t skip = steps.size();
    steps.push_back(op(ProgramOp::skip_if_false));
    conjunction(steps, n - left);
    steps.push_back(op(ProgramOp::and_));
    steps[skip].arg = static_cast<int32_t>(steps.size() - skip - 1);
  };
  for (int t = 0; t < 200; ++t) {
    ColumnProgram p;
    conjunction(p.steps, 1 + t % 5);
    std::vector<ColumnComparison> found;
    ASSERT_TRUE(comparison_conjunction(p, cols, found)) << t;
    ASSERT_EQ(found.size(), static_cast<size_t>(1 + t % 5)) << t;
    std::vector<uint8_t> want(rows), got(rows, 7);
    uint32_t error = 0;
    for (size_t r = 0; r < rows; ++r) {
      want[r] = program_passes(run_program_row(p.steps.data(), static_cast<int>(p.steps.size()), cols.data(), r, &error));
    }
    ASSERT_EQ(error, 0u);
    ASSERT_EQ(evaluate_program_rows(p, cols, 0, 5000, got.data(), nullptr, nullptr) |
                  evaluate_program_rows(p, cols, 5000, rows, got.data(), nullptr, nullptr),
              0u);
    ASSERT_EQ(got, want) << "program " << t;
  }
  // Not a conjunction of comparisons: OR, a NULL constant, two columns, an integer constant against a float column.
  std::vector<ColumnComparison> found;
  const std::vector<std::vector<ProgramStep>> others = {
      {op(ProgramOp::load, 0), cint(1), op(ProgramOp::lt_int), op(ProgramOp::skip_if_true, 4), op(ProgramOp::load, 1),
       cint(2), op(ProgramOp::gt_int), op(ProgramOp::or_)},
      {op(ProgramOp::load, 0), cnull(), op(ProgramOp::lt_int)},
      {op(ProgramOp::load, 0), op(ProgramOp::load, 1), op(ProgramOp::lt_int)},
      {op(ProgramOp::load, 3), cint(1), op(ProgramOp::lt_int)}};
  for (const auto& steps : others) {
    ColumnProgram p;
    p.steps = steps;
    EXPECT_FALSE(comparison_conjunction(p, cols, found));
  }
}

// x IN (integers) as one in_list step over its sorted data steps: row by
// row, in blocks and, where the column is loaded bare inside a conjunction,
// as a typed loop (a few values compared in turn, more by a bitmap over a
// narrow span, else searched), with
// NULL for a NULL x, NOT IN through not_, and scaled values.
TEST(ColumnProgram, InListsAnswerAsTheirComparisons) {
  std::mt19937_64 rng(41);
  const size_t rows = 6000;
  std::vector<int32_t> i32(rows);
  std::vector<int64_t> i64(rows);
  std::vector<uint8_t> valid32(rows), valid64(rows);
  for (size_t r = 0; r < rows; ++r) {
    i32[r] = static_cast<int32_t>(rng() % 81) - 40;
    i64[r] = static_cast<int64_t>(rng() % 8001) - 4000;
    valid32[r] = rng() % 6 != 0;
    valid64[r] = rng() % 4 != 0;
  }
  const std::vector<ProgramColumn> cols = {{i32.data(), valid32.data(), static_cast<uint8_t>(ColumnWidth::int32)},
                                           {i64.data(), valid64.data(), static_cast<uint8_t>(ColumnWidth::int64)}};
  int typed = 0;
  for (int t = 0; t < 120; ++t) {
    const int c = t % 2;
    const size_t n = 1 + rng() % 40;  // both sides of the typed loop's linear limit
    std::vector<int64_t> values;
    for (size_t i = 0; i < n; ++i) values.push_back(static_cast<int64_t>(rng() % 161) - 80);
    if (t % 7 == 0) values.push_back(int64_t{1} << 40);  // a wide span: searched, not a bitmap
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    ColumnProgram p;
    p.steps.push_back(op(ProgramOp::load, c));
    const int32_t scale = t % 5 == 0 ? 1 : 0;  // the column brought to the constants' scale
    if (scale) p.steps.push_back(op(ProgramOp::scale_int, 1));
    p.steps.push_back(op(ProgramOp::in_list, static_cast<int32_t>(values.size())));
    for (int64_t v : values) p.steps.push_back(cint(scale ? v * 10 : v));
    const bool negated = t % 3 == 1;
    if (negated) p.steps.push_back(op(ProgramOp::not_));
    const bool conjunct = t % 4 == 2;
    if (conjunct) {  // AND another comparison, as the compiler emits it
      p.steps.insert(p.steps.begin(), {op(ProgramOp::load, 1 - c), cint(0), op(ProgramOp::gt_int),
                                       op(ProgramOp::skip_if_false, 0)});
      p.steps[3].arg = static_cast<int32_t>(p.steps.size() - 4 + 1);
      p.steps.push_back(op(ProgramOp::and_));
    }
    ASSERT_TRUE(program_runs_in_blocks(p)) << t;
    std::vector<uint8_t> want(rows), got(rows, 7), typed_got(rows, 7);
    uint32_t error = 0;
    for (size_t r = 0; r < rows; ++r) {
      const bool null = !(c == 0 ? valid32[r] : valid64[r]);
      const int64_t x = c == 0 ? i32[r] : i64[r];
      bool in = std::binary_search(values.begin(), values.end(), x);
      bool pass = !null && (negated ? !in : in);
      if (conjunct) {
        const bool other_null = !(c == 0 ? valid64[r] : valid32[r]);
        pass = pass && !other_null && (c == 0 ? i64[r] : i32[r]) > 0;
      }
      want[r] = pass;
      ASSERT_EQ(program_passes(run_program_row(p.steps.data(), static_cast<int>(p.steps.size()), cols.data(), r, &error)),
                pass)
          << "program " << t << " row " << r;
    }
    ASSERT_EQ(error, 0u);
    ASSERT_EQ(evaluate_program_rows(p, cols, 0, 2500, got.data(), nullptr, nullptr) |
                  evaluate_program_rows(p, cols, 2500, rows, got.data(), nullptr, nullptr),
              0u);
    ASSERT_EQ(got, want) << "program " << t;
    std::vector<ColumnComparison> found;
    const bool loop = comparison_conjunction(p, cols, found);
    // A bare column's list (not negated, not scaled) is a typed loop.
    EXPECT_EQ(loop, !negated && !scale) << t;
    if (loop) {
      ++typed;
      evaluate_comparisons(found, cols, 0, rows, typed_got.data());
      ASSERT_EQ(typed_got, want) << "program " << t;
    }
  }
  EXPECT_GT(typed, 30);
  // Data steps that are not constants, or run past the program: not taken.
  ColumnProgram bad;
  bad.steps = {op(ProgramOp::load, 0), op(ProgramOp::in_list, 2), cint(1), op(ProgramOp::load, 0)};
  EXPECT_FALSE(program_runs_in_blocks(bad));
  bad.steps = {op(ProgramOp::load, 0), op(ProgramOp::in_list, 3), cint(1)};
  EXPECT_FALSE(program_runs_in_blocks(bad));
}

// Comparisons of two columns stored alike (`l_commitdate < l_receiptdate`)
// join the typed loops, mixed with constant comparisons; two columns of
// different widths do not (the compiler's conversions are no loads).
// A joined relation's values looked up by key (ProgramOp::lookup: the
// key's row, then the value by row; a column without data is a presence
// test) and CASE's choose, row by row and in blocks, against their
// definitions: NULL for a NULL key, a key outside the range or without a
// row, and a NULL value; choose takes THEN only where its condition is
// true, not NULL.
TEST(ColumnProgram, LookupsAndChoicesAnswerAsTheirDefinitions) {
  std::mt19937_64 rng(43);
  const size_t rows = 5000, dim_rows = 150;
  const int64_t base = 10;
  const uint64_t span = 200;
  std::vector<int32_t> key(rows);
  std::vector<uint8_t> key_valid(rows);
  for (size_t r = 0; r < rows; ++r) {
    key[r] = static_cast<int32_t>(rng() % 260) - 20;  // below, inside and above [base, base + span)
    key_valid[r] = rng() % 9 != 0;
  }
  std::vector<int32_t> row_of(span, 0);
  std::vector<uint8_t> present(span, 0);
  std::vector<uint64_t> slots(span);
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  for (size_t d = 0; d < dim_rows; ++d) {
    present[slots[d]] = 1;
    row_of[slots[d]] = static_cast<int32_t>(d);
  }
  std::vector<int64_t> value(dim_rows);
  std::vector<double> weight(dim_rows);
  std::vector<uint8_t> value_valid(dim_rows);
  for (size_t d = 0; d < dim_rows; ++d) {
    value[d] = static_cast<int64_t>(rng() % 1000) - 500;
    weight[d] = static_cast<double>(rng() % 64) / 8;
    value_valid[d] = rng() % 5 != 0;
  }
  const std::vector<ProgramColumn> cols = {
      {key.data(), key_valid.data(), static_cast<uint8_t>(ColumnWidth::int32)},
      {row_of.data(), present.data(), static_cast<uint8_t>(ColumnWidth::int32), base, span},
      {value.data(), value_valid.data(), static_cast<uint8_t>(ColumnWidth::int64), 0, dim_rows},
      {weight.data(), nullptr, static_cast<uint8_t>(ColumnWidth::float64), 0, dim_rows},
      {nullptr, present.data(), 0, base, span}};
  // The dimension row of fact row r, or -1.
  auto found = [&](size_t r) -> int {
    if (!key_valid[r] || key[r] < base || key[r] >= base + static_cast<int64_t>(span)) return -1;
    const auto at = static_cast<size_t>(key[r] - base);
    return present[at] ? row_of[at] : -1;
  };
  // The value: key, row, value.
  ColumnProgram looked;
  looked.result = ProgramResult::int64;
  looked.steps = {op(ProgramOp::load, 0), op(ProgramOp::lookup, 1), op(ProgramOp::lookup, 2)};
  // CASE WHEN key > 100 THEN value * 2 ELSE -1 END.
  ColumnProgram chosen;
  chosen.result = ProgramResult::int64;
  chosen.steps = {op(ProgramOp::load, 0), cint(100), op(ProgramOp::gt_int), op(ProgramOp::load, 0), op(ProgramOp::lookup, 1),
                  op(ProgramOp::lookup, 2), cint(2), op(ProgramOp::mul_int), cint(-1), op(ProgramOp::choose)};
  // WHERE the key has a row AND weight > 2 (a presence column, a float value).
  ColumnProgram filter;
  filter.steps = {op(ProgramOp::load, 0), op(ProgramOp::lookup, 4), op(ProgramOp::is_not_null),
                  op(ProgramOp::load, 0), op(ProgramOp::lookup, 1), op(ProgramOp::lookup, 3), cfloat(2),
                  op(ProgramOp::gt_float), op(ProgramOp::and_)};
  for (const ColumnProgram* p : {&looked, &chosen, &filter}) ASSERT_TRUE(program_runs_in_blocks(*p));
  std::vector<int64_t> values(rows), choices(rows);
  std::vector<uint8_t> values_valid(rows), choices_valid(rows), mask(rows, 7);
  ASSERT_EQ(evaluate_program_rows(looked, cols, 0, rows, nullptr, values.data(), values_valid.data()), 0u);
  ASSERT_EQ(evaluate_program_rows(chosen, cols, 0, rows, nullptr, choices.data(), choices_valid.data()), 0u);
  ASSERT_EQ(evaluate_program_rows(filter, cols, 0, rows, mask.data(), nullptr, nullptr), 0u);
  int kept = 0, chose_then = 0;
  for (size_t r = 0; r < rows; ++r) {
    const int d = found(r);
    const bool has = d >= 0 && value_valid[static_cast<size_t>(d)];
    ASSERT_EQ(values_valid[r], has ? 1 : 0) << r;
    if (has) ASSERT_EQ(values[r], value[static_cast<size_t>(d)]) << r;
    const Out row = run(looked.steps, cols, r);
    ASSERT_EQ(row.v.null, !has) << r;
    if (has) ASSERT_EQ(static_cast<int64_t>(row.v.i), value[static_cast<size_t>(d)]);
    const bool then = key_valid[r] && key[r] > 100;
    chose_then += then ? 1 : 0;
    ASSERT_EQ(choices_valid[r], then ? (has ? 1 : 0) : 1) << r;
    if (choices_valid[r]) ASSERT_EQ(choices[r], then ? 2 * value[static_cast<size_t>(d)] : -1) << r;
    const bool pass = d >= 0 && weight[static_cast<size_t>(d)] > 2;
    kept += pass ? 1 : 0;
    ASSERT_EQ(mask[r], pass ? 1 : 0) << r;
    ASSERT_EQ(program_passes(run(filter.steps, cols, r).v), pass) << r;
  }
  EXPECT_GT(kept, 500);
  EXPECT_GT(chose_then, 500);
  // The same rows column made from the build rows' ascending keys
  // (LookupColumn::from_keys): the array scatter_lookup_keys makes, and the
  // host evaluator's answers over it.
  std::vector<int64_t> keys(dim_rows, 0);
  std::vector<uint8_t> key_nulls(dim_rows, 1);
  for (uint64_t k = 0; k < span; ++k) {
    if (!present[k]) continue;
    keys[static_cast<size_t>(row_of[k])] = base + static_cast<int64_t>(k);
    key_nulls[static_cast<size_t>(row_of[k])] = 0;
  }
  // Ascending: the rows in key order, so the rows column is remade with them.
  std::vector<int32_t> made(span, -7);
  std::vector<uint8_t> made_present(span, 9);
  const LookupColumn from_keys{{nullptr, nullptr, static_cast<uint8_t>(ColumnWidth::int32), base, span},
                               keys.data(), key_nulls.data(), dim_rows};
  scatter_lookup_keys(from_keys, made.data(), made_present.data());
  for (uint64_t k = 0; k < span; ++k) {
    ASSERT_EQ(made_present[k], present[k]) << k;
    if (present[k]) ASSERT_EQ(made[k], row_of[k]) << k;
  }
  std::vector<ColumnView> views = {{ColumnWidth::int32, key.data(), key_valid.data(), {}}};
  std::vector<LookupColumn> lookups = {from_keys};
  for (size_t c = 2; c < cols.size(); ++c) lookups.push_back(LookupColumn{cols[c]});
  std::vector<uint8_t> host_mask(rows, 1);
  // Program columns 1.. are the lookups, after the one chunk column.
  ASSERT_EQ(evaluate_program(filter, views, rows, host_mask.data(), nullptr, nullptr, lookups), 0u);
  EXPECT_EQ(host_mask, mask);
  // The same rows by key in a hash table (ProgramColumn::hashed, a table
  // a quarter full, so that keys share probe runs): the same answers, row
  // by row and in blocks.
  const uint64_t slot_count = 4 * std::bit_ceil(span);
  std::vector<LookupSlot> slots_by_key(slot_count, LookupSlot{0, -1});
  for (uint64_t k = 0; k < span; ++k) {
    if (!present[k]) continue;
    const int64_t key_value = base + static_cast<int64_t>(k);
    uint64_t at = hash_lookup_key(key_value, slot_count);
    while (slots_by_key[at].row >= 0) at = (at + 1) & (slot_count - 1);
    slots_by_key[at] = LookupSlot{key_value, row_of[k]};
  }
  std::vector<ProgramColumn> hashed = cols;
  hashed[1] = ProgramColumn{slots_by_key.data(), nullptr, static_cast<uint8_t>(ColumnWidth::int64), 0, slot_count, true};
  std::vector<int64_t> hashed_values(rows);
  std::vector<uint8_t> hashed_valid(rows), hashed_mask(rows, 7);
  ASSERT_EQ(evaluate_program_rows(looked, hashed, 0, rows, nullptr, hashed_values.data(), hashed_valid.data()), 0u);
  ASSERT_EQ(evaluate_program_rows(filter, hashed, 0, rows, hashed_mask.data(), nullptr, nullptr), 0u);
  EXPECT_EQ(hashed_valid, values_valid);
  EXPECT_EQ(hashed_mask, mask);
  for (size_t r = 0; r < rows; ++r) {
    if (values_valid[r]) ASSERT_EQ(hashed_values[r], values[r]) << r;
    ASSERT_EQ(run(looked.steps, hashed, r).v.null, values_valid[r] == 0) << r;
  }
}

TEST(ColumnProgram, ColumnPairComparisonsAnswerAsRowByRow) {
  std::mt19937_64 rng(29);
  const size_t rows = 7000;
  std::vector<int32_t> a32(rows), b32(rows);
  std::vector<int64_t> a64(rows);
  std::vector<double> af(rows), bf(rows);
  std::vector<uint8_t> va(rows), vb(rows);
  for (size_t r = 0; r < rows; ++r) {
    a32[r] = static_cast<int32_t>(rng() % 21) - 10;
    b32[r] = static_cast<int32_t>(rng() % 21) - 10;
    a64[r] = static_cast<int64_t>(rng() % 21) - 10;
    af[r] = rng() % 30 == 0 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(rng() % 9) / 2;
    bf[r] = rng() % 30 == 0 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(rng() % 9) / 2;
    va[r] = rng() % 6 != 0;
    vb[r] = rng() % 9 != 0;
  }
  const std::vector<ProgramColumn> cols = {{a32.data(), va.data(), static_cast<uint8_t>(ColumnWidth::int32)},
                                           {b32.data(), vb.data(), static_cast<uint8_t>(ColumnWidth::int32)},
                                           {af.data(), nullptr, static_cast<uint8_t>(ColumnWidth::float64)},
                                           {bf.data(), vb.data(), static_cast<uint8_t>(ColumnWidth::float64)},
                                           {a64.data(), nullptr, static_cast<uint8_t>(ColumnWidth::int64)}};
  for (int t = 0; t < 60; ++t) {
    const int which = t % 6;
    const bool floating = (t / 6) % 2 == 1;
    ColumnProgram p;
    p.steps = {op(ProgramOp::load, floating ? 2 : 0), op(ProgramOp::load, floating ? 3 : 1),
               op(static_cast<ProgramOp>(static_cast<int>(floating ? ProgramOp::eq_float : ProgramOp::eq_int) + which))};
    if (t % 3 == 0) {  // AND a constant comparison
      const size_t skip = p.steps.size();
      p.steps.push_back(op(ProgramOp::skip_if_false));
      p.steps.insert(p.steps.end(), {op(ProgramOp::load, 4), cint(static_cast<int64_t>(t % 7) - 3), op(ProgramOp::lt_int),
                                     op(ProgramOp::and_)});
      p.steps[skip].arg = static_cast<int32_t>(p.steps.size() - skip - 1);
    }
    std::vector<ColumnComparison> found;
    ASSERT_TRUE(comparison_conjunction(p, cols, found)) << t;
    EXPECT_GE(found[0].column2, 0) << t;
    std::vector<uint8_t> want(rows), got(rows, 7);
    uint32_t error = 0;
    for (size_t r = 0; r < rows; ++r) {
      want[r] = program_passes(run_program_row(p.steps.data(), static_cast<int>(p.steps.size()), cols.data(), r, &error));
    }
    ASSERT_EQ(evaluate_program_rows(p, cols, 0, rows, got.data(), nullptr, nullptr), 0u);
    ASSERT_EQ(got, want) << "program " << t;
  }
  ColumnProgram mixed;
  mixed.steps = {op(ProgramOp::load, 0), op(ProgramOp::load, 4), op(ProgramOp::lt_int)};  // int32 against int64
  std::vector<ColumnComparison> found;
  EXPECT_FALSE(comparison_conjunction(mixed, cols, found));
}

// A chunk's statistics rule it out (comparisons_may_pass false) only where no
// row passes: random small columns, their ranges taken from their values,
// against the comparisons' own evaluation; and ranges that do rule out.
TEST(ColumnProgram, RangesRuleOutOnlyChunksWithoutPassingRows) {
  std::mt19937_64 rng(31);
  const ProgramOp ops[] = {ProgramOp::eq_int, ProgramOp::ne_int, ProgramOp::lt_int,
                           ProgramOp::le_int, ProgramOp::gt_int, ProgramOp::ge_int};
  size_t ruled_out = 0;
  for (int t = 0; t < 4000; ++t) {
    const size_t rows = 1 + rng() % 6;
    std::vector<int32_t> a(rows), b(rows);
    std::vector<uint8_t> va(rows), vb(rows);
    const int32_t base = static_cast<int32_t>(rng() % 20) - 10;
    for (size_t r = 0; r < rows; ++r) {
      a[r] = base + static_cast<int32_t>(rng() % 5);
      b[r] = static_cast<int32_t>(rng() % 21) - 10;
      va[r] = rng() % 4 != 0;
      vb[r] = rng() % 4 != 0;
    }
    const std::vector<ProgramColumn> cols = {{a.data(), va.data(), static_cast<uint8_t>(ColumnWidth::int32)},
                                             {b.data(), vb.data(), static_cast<uint8_t>(ColumnWidth::int32)}};
    std::vector<ValueRange> ranges(2);
    for (size_t c = 0; c < 2; ++c) {
      const auto& v = c == 0 ? a : b;
      const auto& valid = c == 0 ? va : vb;
      ValueRange& range = ranges[c];
      range = {true, INT64_MAX, INT64_MIN};
      for (size_t r = 0; r < rows; ++r) {
        if (!valid[r]) continue;
        range.min = std::min<int64_t>(range.min, v[r]);
        range.max = std::max<int64_t>(range.max, v[r]);
      }
    }
    std::vector<ColumnComparison> comparisons;
    for (int k = 0, n = 1 + static_cast<int>(rng() % 2); k < n; ++k) {
      ColumnComparison c;
      c.column = static_cast<int32_t>(rng() % 2);
      const int kind = static_cast<int>(rng() % 3);
      if (kind == 0) {
        c.op = ProgramOp::in_list;
        for (int i = 0, m = static_cast<int>(rng() % 4); i < m; ++i) c.values.push_back(static_cast<int64_t>(rng() % 25) - 12);
        std::sort(c.values.begin(), c.values.end());
        c.values.erase(std::unique(c.values.begin(), c.values.end()), c.values.end());
      } else {
        c.op = ops[rng() % 6];
        c.value = static_cast<int64_t>(rng() % 25) - 12;
        if (kind == 2) c.column2 = 1 - c.column;
      }
      comparisons.push_back(c);
    }
    std::vector<uint8_t> mask(rows);
    evaluate_comparisons(comparisons, cols, 0, rows, mask.data());
    const bool any = std::find(mask.begin(), mask.end(), uint8_t{1}) != mask.end();
    const bool may = comparisons_may_pass(comparisons, ranges);
    if (any) ASSERT_TRUE(may) << "case " << t;
    ruled_out += may ? 0 : 1;
  }
  EXPECT_GT(ruled_out, 1000u);
  // Unknown ranges and float comparisons rule nothing out.
  ColumnComparison equal;
  equal.op = ProgramOp::eq_int;
  equal.value = 100;
  EXPECT_FALSE(comparisons_may_pass({equal}, {ValueRange{true, 0, 99}}));
  EXPECT_TRUE(comparisons_may_pass({equal}, {ValueRange{false, 0, 99}}));
  ColumnComparison above;
  above.op = ProgramOp::gt_float;
  above.fvalue = 1e9;
  EXPECT_TRUE(comparisons_may_pass({above}, {ValueRange{}}));
}

// ---- compiled from SQL, run by the CPU engine, against the generic path ----

std::shared_ptr<MemoryTable> make_table(size_t rows) {
  auto table = std::make_shared<MemoryTable>(
      "t",
      std::vector<TableColumn>{{"g", {TypeId::int4}}, {"v", {TypeId::int4}}, {"w", {TypeId::int2}}, {"b", {TypeId::int8}},
                               {"n", SqlType::numeric(12, 2)}, {"f", {TypeId::float8}}, {"x", {TypeId::boolean}},
                               {"d", {TypeId::date}}},
      4242);
  std::mt19937_64 rng(11);
  for (size_t done = 0; done < rows;) {
    const size_t chunk = std::min<size_t>(3000, rows - done);
    std::vector<int32_t> g, v, d;
    std::vector<int16_t> w;
    std::vector<int64_t> b, n;
    std::vector<double> f;
    std::vector<uint8_t> x, v_valid, n_valid, f_valid, x_valid, all;
    for (size_t r = 0; r < chunk; ++r) {
      g.push_back(static_cast<int32_t>(rng() % 12));
      const uint64_t pick = rng() % 400;
      v.push_back(pick == 0 ? 2000000000 : static_cast<int32_t>(rng() % 2001) - 1000);
      v_valid.push_back(rng() % 8 != 0);
      w.push_back(static_cast<int16_t>(static_cast<int>(rng() % 601) - 300));
      b.push_back(static_cast<int64_t>(rng() % 2000001) - 1000000);
      n.push_back(static_cast<int64_t>(rng() % 200001) - 100000);  // -1000.00 .. 1000.00
      n_valid.push_back(rng() % 10 != 0);
      f.push_back(pick == 1 ? std::numeric_limits<double>::quiet_NaN()
                            : static_cast<double>(static_cast<int>(rng() % 4001) - 2000) / 8.0);
      f_valid.push_back(rng() % 9 != 0);
      x.push_back(rng() % 2);
      x_valid.push_back(rng() % 5 != 0);
      d.push_back(static_cast<int32_t>(rng() % 3000) - 1000);  // days around 2000-01-01
      all.push_back(1);
    }
    auto batch = std::make_shared<storage::ChunkBatch>();
    batch->rows = chunk;
    batch->columns.push_back(column(TypeId::int4, g, all));
    batch->columns.push_back(column(TypeId::int4, v, v_valid));
    batch->columns.push_back(column(TypeId::int2, w, all));
    batch->columns.push_back(column(TypeId::int8, b, all));
    batch->columns.push_back(column(TypeId::numeric, n, n_valid));
    batch->columns.back().type = SqlType::numeric(12, 2);
    batch->columns.push_back(column(TypeId::float8, f, f_valid));
    batch->columns.push_back(column(TypeId::boolean, x, x_valid));
    batch->columns.push_back(column(TypeId::date, d, all));
    table->append(batch);
    done += chunk;
  }
  return table;
}

struct Answer {
  std::vector<std::string> rows;
  std::vector<std::string> explain;
  std::string error;  // SQLSTATE, "" when it answered
};

Answer ask(const std::string& sql, MemoryTableProvider& tables, const std::string& engine) {
  Answer a;
  ExecContext ec;
  ec.engine = engine;
  ec.explain = &a.explain;
  try {
    a.rows = testing::sorted_text_lines(testing::run_select_sql(sql, tables, ec));
  } catch (const Error& e) {
    a.error = std::string(sqlstate_code(e.state()));
  }
  return a;
}

bool mentions(const Answer& a, const std::string& text) {
  return std::any_of(a.explain.begin(), a.explain.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

TEST(ColumnProgramSql, EngineProgramsAnswerAsTheExpressionEvaluator) {
  MemoryTableProvider tables;
  tables.put(make_table(9000));
  struct Case {
    std::string sql;
    bool filter, inputs;
  };
  const std::vector<Case> cases = {
      {"SELECT g, count(*), sum(v), avg(n) FROM t WHERE v > 0 AND w < 100 GROUP BY g", true, false},
      {"SELECT g, sum(n * (1 - n)), sum(n * b), avg(n + v) FROM t WHERE g >= 0 GROUP BY g", true, true},
      {"SELECT sum(n * 2.5), count(*) FROM t WHERE d BETWEEN date '1999-06-01' AND date '2001-01-01' AND n < 24", true, true},
      {"SELECT g, sum(f * v), avg(f - 1) FROM t WHERE v > 50 GROUP BY g", true, true},
      {"SELECT g, count(*), sum(w) FROM t WHERE x OR v IS NULL GROUP BY g", true, false},
      {"SELECT g, count(*) FROM t WHERE NOT (x AND w > 0) GROUP BY g", true, false},
      {"SELECT g, count(*), min(b) FROM t WHERE w IN (1, 2, 3, NULL) OR w NOT IN (5, -5) GROUP BY g", true, false},
      // IN lists of constants: one in_list step (sorted, duplicates once), a
      // long list, numeric scales, dates, and NOT IN with NULL keys.
      {"SELECT g, count(*), sum(v) FROM t WHERE w IN (3, 1, -2, 3, 250) GROUP BY g", true, false},
      {"SELECT g, count(*) FROM t WHERE v IN (-1000, -999, -7, 0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, "
       "987, 999, 1000, 2000000000) GROUP BY g",
       true, false},
      {"SELECT g, count(*), sum(b) FROM t WHERE n IN (12.5, 0, -999.99, 3) AND v NOT IN (1, 2, 3) GROUP BY g", true, false},
      {"SELECT g, count(*) FROM t WHERE w IN (1.5, 2.00, 7) OR d IN (date '2000-01-01', date '2001-06-15') GROUP BY g",
       true, false},
      {"SELECT g, count(*) FROM t WHERE b IN (9223372036854775807, -3) OR v NOT IN (0) GROUP BY g", true, false},
      {"SELECT g, count(*) FROM t WHERE f < 'NaN'::float8 AND f >= -10 GROUP BY g", true, false},
      {"SELECT g, count(*) FROM t WHERE f = 'NaN'::float8 GROUP BY g", true, false},
      {"SELECT g, bool_and(v > 0), bool_or(n IS NULL), min(w - 1), max(-b) FROM t WHERE g < 6 GROUP BY g", true, true},
      {"SELECT g, count(*), sum(v) FROM t WHERE v > 100000000 GROUP BY g", true, false},
      {"SELECT count(*), sum(v) FROM t WHERE g > 100", true, false},
      {"SELECT g, sum(v * 2) FROM t WHERE v < 1000 GROUP BY g", true, true},
      {"SELECT g, sum(v::bigint * 4), sum(w * w) FROM t WHERE v IS NOT NULL GROUP BY g", true, true},
      // Out of int4 on some row: 22003 as PostgreSQL raises it.
      {"SELECT g, sum(v * 2) FROM t WHERE g < 100 GROUP BY g", true, true},
      // Without WHERE the inputs stay on the host path.
      {"SELECT g, sum(n * (1 - n)), sum(v * 2) FROM t GROUP BY g", false, false},
      {"SELECT g, count(*) FROM t WHERE v * 4 > 0 GROUP BY g", true, false},
  };
  for (const Case& c : cases) {
    const Answer cpu = ask(c.sql, tables, "cpu");
    const Answer generic = ask(c.sql, tables, "generic");
    EXPECT_EQ(cpu.error, generic.error) << c.sql;
    EXPECT_EQ(cpu.rows, generic.rows) << c.sql;
    if (cpu.error.empty()) {
      EXPECT_EQ(mentions(cpu, "Filter on CPU engine"), c.filter) << c.sql;
      EXPECT_EQ(mentions(cpu, "Aggregate inputs on CPU engine"), c.inputs) << c.sql;
    }
  }
  // The overflow cases really overflow, and the data is not degenerate.
  EXPECT_EQ(ask("SELECT g, sum(v * 2) FROM t WHERE g < 100 GROUP BY g", tables, "cpu").error, "22003");
  EXPECT_GT(ask("SELECT g, count(*) FROM t WHERE x OR v IS NULL GROUP BY g", tables, "cpu").rows.size(), 10u);
}

TEST(ColumnProgramSql, IntegerInListsCompileToOneSortedStep) {
  // x IN (3, 1, 3, 2) is load, in_list 3 and the values 1, 2, 3 (a numeric
  // list brings the column to its scale); a list with a NULL, or of floats,
  // stays the OR of comparisons.
  auto in_list = [](SqlType column_type, std::vector<std::pair<SqlType, Value>> items, bool negated) {
    std::vector<ExprPtr> list;
    for (auto& [type, value] : items) list.push_back(std::make_unique<ConstExpr>(type, value));
    return InListExpr(std::make_unique<ColumnExpr>(column_type, 0), std::move(list), negated);
  };
  const SqlType int4{TypeId::int4};
  ProgramColumnMap columns;
  const auto p = compile_filter(in_list(int4, {{int4, int64_t{3}}, {int4, int64_t{1}}, {int4, int64_t{3}}, {int4, int64_t{2}}}, false),
                                columns, nullptr);
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->steps.size(), 5u);
  EXPECT_EQ(p->steps[0].op, ProgramOp::load);
  EXPECT_EQ(p->steps[1].op, ProgramOp::in_list);
  EXPECT_EQ(p->steps[1].arg, 3);
  EXPECT_EQ(p->steps[2].value, 1);
  EXPECT_EQ(p->steps[4].value, 3);
  Numeric half;
  half.mantissa = 15;
  half.scale = 1;
  const auto scaled = compile_filter(in_list(int4, {{SqlType::numeric(3, 1), half}, {int4, int64_t{2}}}, true), columns, nullptr);
  ASSERT_TRUE(scaled.has_value());
  ASSERT_EQ(scaled->steps.size(), 6u);
  EXPECT_EQ(scaled->steps[1].op, ProgramOp::scale_int);
  EXPECT_EQ(scaled->steps[2].op, ProgramOp::in_list);
  EXPECT_EQ(scaled->steps[3].value, 15);
  EXPECT_EQ(scaled->steps[4].value, 20);
  EXPECT_EQ(scaled->steps[5].op, ProgramOp::not_);
  const auto with_null = compile_filter(in_list(int4, {{int4, int64_t{1}}, {int4, Value{}}}, false), columns, nullptr);
  ASSERT_TRUE(with_null.has_value());
  EXPECT_TRUE(std::none_of(with_null->steps.begin(), with_null->steps.end(),
                           [](const ProgramStep& step) { return step.op == ProgramOp::in_list; }));
}

TEST(ColumnProgramSql, OutsideTheSubsetStaysOnTheHost) {
  MemoryTableProvider tables;
  tables.put(make_table(3000));
  for (const std::string sql : {"SELECT g, count(*) FROM t WHERE v / 2 > 3 GROUP BY g",
                                "SELECT g, sum(v / 2) FROM t GROUP BY g",
                                "SELECT g, count(*) FROM t WHERE abs(v) > 3 GROUP BY g"}) {
    const Answer cpu = ask(sql, tables, "cpu");
    EXPECT_EQ(cpu.rows, ask(sql, tables, "generic").rows) << sql;
    EXPECT_FALSE(mentions(cpu, "on CPU engine")) << sql;
  }
}

// rows_of_mask gives the rows a 0/1 mask keeps, as a row-by-row loop does,
// for masks of every density, ranges that start and end inside a word,
// and all-zero and all-one masks.
TEST(ColumnProgram, RowsOfMaskAreTheMasksOnes) {
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 400; ++trial) {
    const size_t end = rng() % 300;
    const size_t begin = end == 0 ? 0 : rng() % (end + 1);
    const uint64_t density = rng() % 5;  // 0: none, 4: all, else 1 in 2^density
    std::vector<uint8_t> mask(end);
    for (uint8_t& m : mask) m = density == 0 ? 0 : density == 4 ? 1 : (rng() % (uint64_t{1} << density)) == 0;
    std::vector<uint32_t> want;
    for (size_t r = begin; r < end; ++r) {
      if (mask[r]) want.push_back(static_cast<uint32_t>(r - begin));
    }
    std::vector<uint32_t> got{1, 2, 3};  // replaced, not appended to
    rows_of_mask(mask.data(), begin, end, got);
    ASSERT_EQ(got, want) << "begin " << begin << " end " << end << " density " << density;
  }
}

}  // namespace
}  // namespace tally::executor
