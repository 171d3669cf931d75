// The whole-Vector kernels answer exactly as the row-wise forms: comparisons
// as compare_values (strict NULLs) for every operator and physical kind they
// take (numeric across scales included), integer casts as cast_value; each declines what it does not take.
#include "executor/cast.hpp"
#include "executor/vector_arithmetic.hpp"
#include "executor/vector_cast.hpp"
#include "executor/vector_comparison.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace tally::executor {
namespace {

const std::vector<std::string> kOperators = {"=", "<>", "!=", "<", "<=", ">", ">="};

bool row_wise(const std::string& op, int c) {
  if (op == "=") return c == 0;
  if (op == "<>" || op == "!=") return c != 0;
  if (op == "<") return c < 0;
  if (op == "<=") return c <= 0;
  if (op == ">") return c > 0;
  return c >= 0;
}

// The kernels take their arguments by pointer (bare columns are not copied).
std::vector<const Vector*> pointers(const std::vector<Vector>& args) {
  std::vector<const Vector*> p;
  for (const Vector& v : args) p.push_back(&v);
  return p;
}

// Values drawn from a small pool so that equal pairs are common, plus the
// edges: integer limits, NaN, infinities, signed zeros; ~1/8 NULL.
Vector random_vector(SqlType type, size_t rows, std::mt19937_64& rng, bool with_nulls) {
  Vector v(type);
  const Physical physical = physical_of(type.id);
  const std::vector<int64_t> ints = {std::numeric_limits<int64_t>::min(), -2, -1, 0, 1, 2, 7,
                                     std::numeric_limits<int64_t>::max()};
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> floats = {-inf, -1.5, -0.0, 0.0, 1e-300, 2.5, inf, std::nan("")};
  // Equal values at different scales (1.5, 1.50), signs, and a 38-digit one.
  const std::vector<Numeric> numerics = {{15, 1}, {150, 2}, {-15, 1}, {0, 0}, {0, 3}, {7, 0},
                                         Numeric::parse("12345678901234567890.123456789012345678")};
  for (size_t r = 0; r < rows; ++r) {
    if (with_nulls && rng() % 8 == 0) {
      v.push(Value{});
      continue;
    }
    if (physical == Physical::boolean) v.push(Value{rng() % 2 == 0});
    else if (physical == Physical::numeric) v.push(Value{numerics[rng() % numerics.size()]});
    else if (physical == Physical::floating) v.push(Value{floats[rng() % floats.size()]});
    else v.push(Value{ints[rng() % ints.size()]});
  }
  return v;
}

TEST(VectorComparison, EqualsTheRowWiseComparisonForEveryOperatorAndKind) {
  std::mt19937_64 rng(20261122);
  const std::vector<SqlType> types = {{TypeId::int4}, {TypeId::int8}, {TypeId::date}, {TypeId::boolean},
                                      {TypeId::float8}, {TypeId::float4}, {TypeId::numeric}};
  for (const auto& type : types) {
    for (const bool nulls : {false, true}) {
      const size_t rows = 1000;
      std::vector<Vector> args = {random_vector(type, rows, rng, nulls), random_vector(type, rows, rng, nulls)};
      for (const auto& op : kOperators) {
        SCOPED_TRACE("type " + std::to_string(static_cast<int>(type.id)) + " op " + op + (nulls ? " nulls" : ""));
        const VectorKernel kernel = vector_comparison(op, type);
        ASSERT_TRUE(kernel);
        Vector out({TypeId::boolean});
        ASSERT_TRUE(kernel(pointers(args), rows, out));
        ASSERT_EQ(out.size(), rows);
        size_t true_rows = 0;
        for (size_t r = 0; r < rows; ++r) {
          const Value a = args[0].get(r), b = args[1].get(r);
          if (is_null(a) || is_null(b)) {
            EXPECT_TRUE(out.null_at(r)) << "row " << r;
            continue;
          }
          ASSERT_FALSE(out.null_at(r)) << "row " << r;
          const bool want = row_wise(op, compare_values(a, b));
          EXPECT_EQ(out.ints[r] != 0, want) << "row " << r;
          true_rows += want ? 1 : 0;
        }
        EXPECT_GT(true_rows, 0u);  // the data exercise both outcomes
        EXPECT_LT(true_rows, rows);
      }
    }
  }
}

TEST(VectorArithmetic, EqualsNumericOperatorsWithStrictNulls) {
  std::mt19937_64 rng(20261129);
  const SqlType numeric{TypeId::numeric};
  for (const char op : {'+', '-', '*'}) {
    const size_t rows = 500;
    std::vector<Vector> args = {random_vector(numeric, rows, rng, true), random_vector(numeric, rows, rng, true)};
    // The 38-digit pool value times itself overflows: keep products in range.
    if (op == '*') {
      for (Vector& v : args) {
        for (auto& n : v.numerics) n = n.mantissa > 1000000 ? Numeric{3, 0} : n;
      }
    }
    const VectorKernel kernel = vector_arithmetic(op, numeric);
    ASSERT_TRUE(kernel);
    Vector out(numeric);
    ASSERT_TRUE(kernel(pointers(args), rows, out));
    for (size_t r = 0; r < rows; ++r) {
      if (args[0].null_at(r) || args[1].null_at(r)) {
        EXPECT_TRUE(out.null_at(r)) << r;
        continue;
      }
      const Numeric& a = args[0].numerics[r];
      const Numeric& b = args[1].numerics[r];
      const Numeric want = op == '+' ? a + b : op == '-' ? a - b : a * b;
      EXPECT_FALSE(out.null_at(r)) << r;
      EXPECT_EQ(out.numerics[r].mantissa, want.mantissa) << op << " row " << r;
      EXPECT_EQ(out.numerics[r].scale, want.scale) << op << " row " << r;
    }
  }
  EXPECT_FALSE(vector_arithmetic('/', numeric));
  EXPECT_FALSE(vector_arithmetic('/', {TypeId::int8}));
  EXPECT_FALSE(vector_arithmetic('+', {TypeId::float4}));
}

Vector values_of(SqlType type, const std::vector<Value>& values) {
  Vector v(type);
  for (const Value& x : values) v.push(x);
  return v;
}

// Integers and float8: the operators' values with strict NULLs, a constant
// operand as one row, and a batch with a row out of range declines without
// touching `out` (the row-wise form then raises PostgreSQL's error).
TEST(VectorArithmetic, IntegersAndFloat8AsTheOperatorsAndDeclineOutOfRange) {
  const SqlType int4{TypeId::int4}, int2{TypeId::int2}, int8{TypeId::int8}, float8{TypeId::float8};
  auto run = [](char op, SqlType type, const std::vector<Vector>& args, size_t rows, Vector& out) {
    const VectorKernel kernel = vector_arithmetic(op, type);
    EXPECT_TRUE(kernel);
    return kernel(pointers(args), rows, out);
  };
  {
    std::vector<Vector> args = {values_of(int4, {int64_t{1}, int64_t{-5}, Value{}, int64_t{2147483000}}),
                                values_of(int4, {int64_t{2}, int64_t{7}, int64_t{3}, int64_t{600}})};
    Vector out(int4);
    ASSERT_TRUE(run('+', int4, args, 4, out));
    EXPECT_EQ(out.get(0), Value{int64_t{3}});
    EXPECT_EQ(out.get(1), Value{int64_t{2}});
    EXPECT_TRUE(out.null_at(2));
    EXPECT_EQ(out.get(3), Value{int64_t{2147483600}});
    Vector product(int4);
    ASSERT_TRUE(run('*', int4, args, 3, product));  // row 3's product is out of range
    EXPECT_EQ(product.get(1), Value{int64_t{-35}});
    Vector difference(int4);
    std::vector<Vector> with_constant = {args[0], values_of(int4, {int64_t{10}})};
    ASSERT_TRUE(run('-', int4, with_constant, 4, difference));
    EXPECT_EQ(difference.get(0), Value{int64_t{-9}});
    EXPECT_EQ(difference.get(3), Value{int64_t{2147482990}});
  }
  {
    // Out of each type's range: declined, `out` as it was.
    std::vector<Vector> i4 = {values_of(int4, {int64_t{2147483647}}), values_of(int4, {int64_t{2}})};
    std::vector<Vector> i2 = {values_of(int2, {int64_t{32767}, int64_t{1}}), values_of(int2, {int64_t{1}, int64_t{1}})};
    std::vector<Vector> i8 = {values_of(int8, {std::numeric_limits<int64_t>::max()}), values_of(int8, {int64_t{1}})};
    Vector out(int4);
    EXPECT_FALSE(run('*', int4, i4, 1, out));
    EXPECT_EQ(out.count, 0u);
    Vector out2(int2);
    EXPECT_FALSE(run('+', int2, i2, 2, out2));
    EXPECT_EQ(out2.count, 0u);
    Vector out8(int8);
    EXPECT_FALSE(run('+', int8, i8, 1, out8));
    // A NULL row is not evaluated: no overflow from its stored value.
    std::vector<Vector> null_row = {values_of(int4, {Value{}, int64_t{1}}), values_of(int4, {int64_t{5}, int64_t{1}})};
    null_row[0].ints[0] = 2147483647;
    Vector sum(int4);
    ASSERT_TRUE(run('+', int4, null_row, 2, sum));
    EXPECT_TRUE(sum.null_at(0));
    EXPECT_EQ(sum.get(1), Value{int64_t{2}});
  }
  {
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<Vector> args = {values_of(float8, {1.5, Value{}, inf}), values_of(float8, {2.0, 3.0, 2.0})};
    Vector out(float8);
    ASSERT_TRUE(run('*', float8, args, 3, out));
    EXPECT_EQ(out.get(0), Value{3.0});
    EXPECT_TRUE(out.null_at(1));
    EXPECT_EQ(out.get(2), Value{inf});  // an infinite operand: no overflow
    std::vector<Vector> over = {values_of(float8, {1e300}), values_of(float8, {1e10})};
    Vector overflow(float8);
    EXPECT_FALSE(run('*', float8, over, 1, overflow));
    std::vector<Vector> under = {values_of(float8, {1e-300}), values_of(float8, {1e-300})};
    Vector underflow(float8);
    EXPECT_FALSE(run('*', float8, under, 1, underflow));
    Vector sum(float8);
    ASSERT_TRUE(run('+', float8, under, 1, sum));
    EXPECT_EQ(sum.get(0), Value{2e-300});
  }
}

// Text against text: plain strings, a stored column's dictionary codes, and
// one-row constants on either side, bytewise (C collation); char(n) without
// its trailing blanks. The row-wise reference compares the same strings as
// the bpchar operator does (trailing blanks trimmed) or as compare_values.
TEST(VectorComparison, TextsCodedOrNotAgainstColumnsAndConstants) {
  std::mt19937_64 rng(7);
  const std::vector<std::string> pool = {"", "a", "a ", "ab", "b", "Brand#12", "Brand#12  ", "Brand#13", "\xc3\xa9"};
  auto dictionary = std::make_shared<storage::StringDictionary>();
  for (const std::string& s : pool) dictionary->intern(s);
  const size_t rows = 600;
  auto column = [&](bool coded, bool nulls) {
    Vector v({TypeId::text});
    if (coded) {
      v.dictionary = dictionary;
      for (size_t r = 0; r < rows; ++r) v.codes.push_back(static_cast<int32_t>(rng() % pool.size()));
      v.count = rows;
      if (nulls) {
        v.nulls.assign(rows, 0);
        for (size_t r = 0; r < rows; r += 7) v.nulls[r] = 1;
      }
      return v;
    }
    for (size_t r = 0; r < rows; ++r) v.push(nulls && r % 9 == 0 ? Value{} : Value{pool[rng() % pool.size()]});
    return v;
  };
  auto constant = [&](const std::string& s) {
    Vector v({TypeId::text});
    v.push(Value{s});
    return v;
  };
  auto text_of_row = [](const Vector& v, size_t r, bool blank_padded) {
    std::string s(v.text_at(r));
    while (blank_padded && !s.empty() && s.back() == ' ') s.pop_back();
    return s;
  };
  for (const bool blank_padded : {false, true}) {
    const SqlType type{blank_padded ? TypeId::bpchar : TypeId::text};
    for (int shape = 0; shape < 6; ++shape) {
      // coded/plain column against a column, or against a constant on either side.
      std::vector<Vector> args;
      if (shape == 0) args = {column(true, true), column(false, true)};
      if (shape == 1) args = {column(false, false), column(true, false)};
      if (shape == 2) args = {column(true, true), constant("Brand#12")};
      if (shape == 3) args = {constant("ab"), column(true, false)};
      if (shape == 4) args = {column(false, true), constant("a")};
      if (shape == 5) args = {constant("b"), column(false, false)};
      for (const auto& op : kOperators) {
        SCOPED_TRACE("shape " + std::to_string(shape) + " op " + op + (blank_padded ? " bpchar" : " text"));
        const VectorKernel kernel = vector_comparison(op, type);
        ASSERT_TRUE(kernel);
        Vector out({TypeId::boolean});
        ASSERT_TRUE(kernel(pointers(args), rows, out));
        ASSERT_EQ(out.size(), rows);
        for (size_t r = 0; r < rows; ++r) {
          const size_t ra = args[0].count == 1 ? 0 : r, rb = args[1].count == 1 ? 0 : r;
          if (args[0].null_at(ra) || args[1].null_at(rb)) {
            EXPECT_TRUE(out.null_at(r)) << "row " << r;
            continue;
          }
          ASSERT_FALSE(out.null_at(r)) << "row " << r;
          const Value a{text_of_row(args[0], ra, blank_padded)}, b{text_of_row(args[1], rb, blank_padded)};
          EXPECT_EQ(out.ints[r] != 0, row_wise(op, compare_values(a, b))) << "row " << r;
        }
      }
    }
  }
}

TEST(VectorComparison, DeclinesKindsAndLayoutsItDoesNotTake) {
  EXPECT_FALSE(vector_comparison("=", {TypeId::bytea}));
  EXPECT_FALSE(vector_comparison("~~", {TypeId::int4}));
  // Fewer stored values than rows (e.g. a column not materialized in this
  // layout): the kernel declines before writing, and the row-wise form runs.
  const VectorKernel kernel = vector_comparison("<", {TypeId::int8});
  std::vector<Vector> args = {Vector({TypeId::int8}), Vector({TypeId::int8})};
  args[0].push(Value{int64_t{1}});
  Vector out({TypeId::boolean});
  EXPECT_FALSE(kernel(pointers(args), 1, out));
  EXPECT_EQ(out.size(), 0u);
}

// char(n) to text: each row's string without its trailing blanks, as the
// row-wise cast_value gives it, from a stored column's codes or from strings;
// NULLs stay NULL. To text with a length it declines (the row-wise cast cuts).
TEST(VectorTextCast, CharToTextDropsThePaddingAsTheRowWiseCast) {
  auto dictionary = std::make_shared<storage::StringDictionary>();
  const std::vector<std::string> pool = {"13-555  ", "  ab ", "", "   ", "x", "ab"};
  for (const std::string& s : pool) dictionary->intern(s);
  const SqlType from = SqlType::bpchar(8), to{TypeId::text};
  const VectorKernel kernel = vector_text_cast(from, to);
  ASSERT_TRUE(kernel);
  EXPECT_FALSE(vector_text_cast(from, SqlType::varchar(3)));
  for (const bool coded : {true, false}) {
    Vector in(from);
    const size_t rows = 40;
    for (size_t r = 0; r < rows; ++r) {
      if (coded) in.codes.push_back(static_cast<int32_t>(r % pool.size()));
      else in.push(r % 7 == 3 ? Value{} : Value{pool[r % pool.size()]});
    }
    if (coded) {
      in.dictionary = dictionary;
      in.count = rows;
      in.nulls.assign(rows, 0);
      in.nulls[5] = 1;
    }
    const std::vector<const Vector*> args = {&in};
    Vector out(to);
    ASSERT_TRUE(kernel(args, rows, out));
    ASSERT_EQ(out.size(), rows);
    for (size_t r = 0; r < rows; ++r) {
      const Value want = in.null_at(r) ? Value{} : cast_value(Value{std::string(in.text_at(r))}, from, to, false);
      EXPECT_EQ(out.get(r), want) << (coded ? "coded" : "plain") << " row " << r;
    }
  }
}

TEST(VectorIntegerCast, CopiesInRangeValuesAndDeclinesOutOfRange) {
  const std::vector<TypeId> ints = {TypeId::int2, TypeId::int4, TypeId::int8};
  const std::vector<int64_t> values = {0, -1, 32767, -32768, 32768, 2147483647, -2147483648LL, 2147483648LL,
                                       std::numeric_limits<int64_t>::min()};
  for (const TypeId from : ints) {
    for (const TypeId to : ints) {
      const VectorKernel kernel = vector_integer_cast({from}, {to});
      ASSERT_TRUE(kernel);
      for (const int64_t value : values) {
        const bool valid_source = from == TypeId::int8 || (from == TypeId::int4 ? value == static_cast<int32_t>(value)
                                                                                 : value == static_cast<int16_t>(value));
        if (!valid_source) continue;  // a vector of `from` never holds it
        SCOPED_TRACE(std::to_string(static_cast<int>(from)) + " -> " + std::to_string(static_cast<int>(to)) + " " +
                     std::to_string(value));
        std::vector<Vector> args = {Vector({from})};
        args[0].push(Value{int64_t{7}});
        args[0].push(Value{});
        args[0].push(Value{value});
        bool row_wise_throws = false;
        try {
          (void)cast_value(Value{value}, {from}, {to}, false);
        } catch (const Error&) {
          row_wise_throws = true;
        }
        Vector out({to});
        const bool done = kernel(pointers(args), 3, out);
        EXPECT_EQ(done, !row_wise_throws);
        if (!done) {
          EXPECT_EQ(out.size(), 0u);  // declined before writing
          continue;
        }
        ASSERT_EQ(out.size(), 3u);
        EXPECT_EQ(out.ints[0], 7);
        EXPECT_TRUE(out.null_at(1));
        EXPECT_FALSE(out.null_at(2));
        EXPECT_EQ(out.ints[2], value);
      }
    }
  }
  EXPECT_FALSE(vector_integer_cast({TypeId::int4}, {TypeId::float8}));
  EXPECT_FALSE(vector_integer_cast({TypeId::numeric}, {TypeId::int4}));
}

}  // namespace
}  // namespace tally::executor
