// The numeric fast paths answer exactly as Numeric's own operators: vector
// arithmetic and comparisons with a constant operand passed as one row
// (either side, NULL included), operands whose rows share a scale but whose
// mantissas pass 64 bits, numeric_as_int64 against Numeric::rescaled; and a
// constant operand of a comparison is computed once per evaluation, not per row.
#include "executor/numeric_vector.hpp"
#include "executor/vector_arithmetic.hpp"
#include "executor/vector_comparison.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "executor/expression.hpp"

namespace tally::executor {
namespace {

const SqlType kNumeric{TypeId::numeric};

// A numeric(p,2)-like column: every row at scale 2, some mantissas past
// 64 bits, about one row in eight NULL.
Vector scale2_column(size_t rows, std::mt19937_64& rng) {
  Vector v(kNumeric);
  const __int128 wide = static_cast<__int128>(std::numeric_limits<int64_t>::max()) + 1;
  for (size_t r = 0; r < rows; ++r) {
    if (rng() % 8 == 0) { v.push(Value{}); continue; }
    const auto m = static_cast<int64_t>(rng() % 2000001) - 1000000;
    if (rng() % 50 == 0) v.push(Value{Numeric{m < 0 ? -wide : wide, 2}});
    else v.push(Value{Numeric{m, 2}});
  }
  return v;
}

Vector one_row(const Value& v) {
  Vector out(kNumeric);
  out.push(v);
  return out;
}

Value row_of(const Vector& v, size_t r) { return v.count == 1 ? v.get(0) : v.get(r); }

TEST(NumericVector, ArithmeticWithConstantOperandsEqualsNumericOperators) {
  std::mt19937_64 rng(7);
  const size_t rows = 2000;
  const Vector column = scale2_column(rows, rng);
  const std::vector<Value> constants = {Value{Numeric{1, 0}}, Value{Numeric{-125, 3}}, Value{Numeric{5, 1}}, Value{}};
  for (const char op : {'+', '-', '*'}) {
    const VectorKernel kernel = vector_arithmetic(op, kNumeric);
    ASSERT_TRUE(kernel);
    for (const Value& k : constants) {
      const Vector constant = one_row(k);
      for (const bool constant_first : {true, false}) {
        const Vector* args[2] = {constant_first ? &constant : &column, constant_first ? &column : &constant};
        Vector out(kNumeric);
        ASSERT_TRUE(kernel(args, rows, out));
        ASSERT_EQ(out.size(), rows);
        for (size_t r = 0; r < rows; ++r) {
          const Value a = row_of(*args[0], r), b = row_of(*args[1], r);
          if (is_null(a) || is_null(b)) {
            EXPECT_TRUE(out.null_at(r)) << r;
            continue;
          }
          const Numeric x = std::get<Numeric>(a), y = std::get<Numeric>(b);
          const Numeric want = op == '+' ? x + y : op == '-' ? x - y : x * y;
          ASSERT_FALSE(out.null_at(r)) << r;
          EXPECT_EQ(out.numerics[r].mantissa, want.mantissa) << op << " row " << r;
          EXPECT_EQ(out.numerics[r].scale, want.scale) << op << " row " << r;
        }
      }
    }
  }
}

TEST(NumericVector, ComparisonWithConstantOperandsEqualsNumericOrdering) {
  std::mt19937_64 rng(11);
  const size_t rows = 2000;
  const Vector column = scale2_column(rows, rng);
  const std::vector<Value> constants = {Value{Numeric{24, 0}}, Value{Numeric{-5000, 3}}, Value{Numeric{0, 0}}, Value{}};
  for (const std::string op : {"=", "<>", "<", "<=", ">", ">="}) {
    const VectorKernel kernel = vector_comparison(op, kNumeric);
    ASSERT_TRUE(kernel);
    for (const Value& k : constants) {
      const Vector constant = one_row(k);
      for (const bool constant_first : {true, false}) {
        const Vector* args[2] = {constant_first ? &constant : &column, constant_first ? &column : &constant};
        Vector out({TypeId::boolean});
        ASSERT_TRUE(kernel(args, rows, out));
        for (size_t r = 0; r < rows; ++r) {
          const Value a = row_of(*args[0], r), b = row_of(*args[1], r);
          if (is_null(a) || is_null(b)) {
            EXPECT_TRUE(out.null_at(r)) << r;
            continue;
          }
          const auto c = std::get<Numeric>(a) <=> std::get<Numeric>(b);
          const bool want = op == "=" ? c == 0 : op == "<>" ? c != 0 : op == "<" ? c < 0 : op == "<=" ? c <= 0
                                                                    : op == ">" ? c > 0 : c >= 0;
          ASSERT_FALSE(out.null_at(r)) << r;
          EXPECT_EQ(out.ints[r] != 0, want) << op << " row " << r;
        }
      }
    }
  }
}

TEST(NumericVector, AsInt64EqualsRescaledAndRefusesWhatDoesNotFit) {
  std::mt19937_64 rng(13);
  Vector column = scale2_column(1000, rng);
  for (auto& n : column.numerics) {
    if (n.mantissa > 1000000 || n.mantissa < -1000000) n = {7, 2};  // the wide ones: int64 at every scale tried
  }
  column.numerics[3] = {12345, 4};  // another scale: rounded to 123 at scale 2, 1.2345 -> 1.23
  column.nulls[3] = 0;
  for (const int32_t scale : {2, 4, 1}) {
    std::vector<int64_t> out(column.count, -1);
    ASSERT_TRUE(numeric_as_int64(column, scale, out.data()));
    for (size_t r = 0; r < column.count; ++r) {
      const int64_t want = column.null_at(r) ? 0 : static_cast<int64_t>(column.numerics[r].rescaled(scale).mantissa);
      EXPECT_EQ(out[r], want) << "scale " << scale << " row " << r;
    }
  }
  // 10^17 at scale 2 is 10^17 * 10^16 at scale 18: past int64.
  Vector big(kNumeric);
  big.push(Value{Numeric{100000000000000000, 2}});
  std::vector<int64_t> out(1);
  EXPECT_FALSE(numeric_as_int64(big, 18, out.data()));
  EXPECT_TRUE(numeric_as_int64(big, 2, out.data()));
  EXPECT_EQ(out[0], 100000000000000000);
}

TEST(NumericVector, ConstantOperandOfAComparisonIsComputedOncePerEvaluation) {
  int calls = 0;
  std::vector<ExprPtr> bound;
  bound.push_back(std::make_unique<ConstExpr>(SqlType{TypeId::int8}, Value{int64_t{100}}));
  bound.push_back(std::make_unique<ConstExpr>(SqlType{TypeId::int8}, Value{int64_t{90}}));
  auto minus = std::make_unique<FunctionExpr>(SqlType{TypeId::int8}, "-", std::move(bound),
                                              [&calls](std::span<const Value> a) -> Value {
                                                ++calls;
                                                return std::get<int64_t>(a[0]) - std::get<int64_t>(a[1]);
                                              });
  std::vector<ExprPtr> args;
  args.push_back(std::make_unique<ColumnExpr>(SqlType{TypeId::int8}, 0));
  args.push_back(std::move(minus));
  FunctionExpr compare(SqlType{TypeId::boolean}, "<=", std::move(args), [](std::span<const Value> a) -> Value {
    return std::get<int64_t>(a[0]) <= std::get<int64_t>(a[1]);
  });
  compare.batch = vector_comparison("<=", {TypeId::int8});
  compare.batch_takes_constants = true;
  Vector column({TypeId::int8});
  for (int64_t i = 0; i < 1000; ++i) column.push(Value{i});
  EvalInput input;
  input.rows = column.count;
  input.columns = {&column};
  const Vector out = compare.evaluate(input);
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(out.size(), 1000u);
  for (size_t r = 0; r < 1000; ++r) EXPECT_EQ(out.ints[r], r <= 10 ? 1 : 0) << r;
  // A kernel that declines gets the constant widened for the row-wise form.
  compare.batch = [](std::span<const Vector* const>, size_t, Vector&) { return false; };
  const Vector rowwise = compare.evaluate(input);
  for (size_t r = 0; r < 1000; ++r) EXPECT_EQ(rowwise.ints[r], r <= 10 ? 1 : 0) << r;
}

}  // namespace
}  // namespace tally::executor
