#include "executor/vector_arithmetic.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "executor/numeric_vector.hpp"
#include "executor/vector_operand.hpp"

namespace tally::executor {
namespace {

enum class ArithOp { add, sub, mul };

template <ArithOp Op>
Numeric exact(const Numeric& x, const Numeric& y) {
  if constexpr (Op == ArithOp::add) return x + y;
  else if constexpr (Op == ArithOp::sub) return x - y;
  else return x * y;
}

// One pass over the rows. A row whose operands have the scales of the
// operands' first rows and mantissas of at most 63 bits is computed in
// int128 without any overflow check: aligning multiplies by at most 10^18,
// so every intermediate stays below 2^124. Any other row (another scale, a
// wider mantissa, an infinity) takes Numeric's operator, which gives the
// same value and scale and raises the same errors.
template <ArithOp Op, bool ConstA, bool ConstB>
void numeric_rows(const Vector& a, const Vector& b, size_t rows, Vector& out) {
  const Numeric* av = a.numerics.data();
  const Numeric* bv = b.numerics.data();
  const std::optional<int32_t> sa = first_numeric_scale(a, ConstA ? 1 : rows);
  const std::optional<int32_t> sb = first_numeric_scale(b, ConstB ? 1 : rows);
  bool fast = sa && sb;
  int32_t s = 0;
  int64_t pa = 1, pb = 1;
  if (fast && Op == ArithOp::mul) {
    s = *sa + *sb;
  } else if (fast) {
    s = std::max(*sa, *sb);
    fast = s - *sa <= kInt64PowerDigits && s - *sb <= kInt64PowerDigits;
    if (fast) {
      pa = static_cast<int64_t>(numeric_pow10(s - *sa));
      pb = static_cast<int64_t>(numeric_pow10(s - *sb));
    }
  }
  const int32_t xa = fast ? *sa : 0, xb = fast ? *sb : 0;
  const bool nulls = !out.nulls.empty();
  std::vector<Numeric>& result = out.numerics;
  result.clear();
  result.reserve(rows);  // every row is written once: no zero fill first
  for (size_t i = 0; i < rows; ++i) {
    const Numeric& x = av[ConstA ? 0 : i];
    const Numeric& y = bv[ConstB ? 0 : i];
    if (nulls && out.nulls[i] != 0) {
      result.push_back({0, s});  // not evaluated: the row-wise form raises nothing for it
      continue;
    }
    if (fast && x.scale == xa && y.scale == xb && fits_int64(x.mantissa) && fits_int64(y.mantissa)) {
      if constexpr (Op == ArithOp::mul) {
        result.push_back({static_cast<__int128>(static_cast<int64_t>(x.mantissa)) * static_cast<int64_t>(y.mantissa), s});
      } else {
        const __int128 l = wide_product(x.mantissa, pa), r = wide_product(y.mantissa, pb);
        result.push_back({Op == ArithOp::add ? l + r : l - r, s});
      }
    } else {
      result.push_back(exact<Op>(x, y));
    }
  }
}

template <ArithOp Op>
void numeric_op(const Vector& a, const Vector& b, size_t rows, Vector& out) {
  const bool ca = is_constant_operand(a, rows), cb = is_constant_operand(b, rows);
  if (ca && cb) numeric_rows<Op, true, true>(a, b, rows, out);
  else if (ca) numeric_rows<Op, true, false>(a, b, rows, out);
  else if (cb) numeric_rows<Op, false, true>(a, b, rows, out);
  else numeric_rows<Op, false, false>(a, b, rows, out);
}

// Enough values for `rows` rows (a constant operand holds one).
bool has_rows(const Vector& v, size_t rows) {
  return !v.avg_parts && v.numerics.size() >= (is_constant_operand(v, rows) ? 1 : rows);
}

// Integer and float8 operands: `rows` values (one for a constant operand).
bool has_int_rows(const Vector& v, size_t rows) {
  return !v.avg_parts && (v.shared_ints ? v.shared_ints->size() : v.ints.size()) >= (is_constant_operand(v, rows) ? 1 : rows);
}
bool has_float_rows(const Vector& v, size_t rows) {
  return v.floats.size() >= (is_constant_operand(v, rows) ? 1 : rows);
}

// One pass of `step(x, y, result) -> out of range` over the rows of two
// operands (`av`, `bv`: their values, one for a constant operand) into the
// column `member` of a new Vector. A row out of range makes the whole batch
// decline (false, `out` untouched): the row-wise form then raises
// PostgreSQL's error for the first such row. NULL rows are not evaluated.
template <class T, class Step>
bool elementwise(const Vector& a, const Vector& b, const T* av, const T* bv, size_t rows,
                 std::vector<T> Vector::*member, Step step, Vector& out) {
  const bool ca = is_constant_operand(a, rows), cb = is_constant_operand(b, rows);
  Vector result(out.type);
  result.count = rows;
  merge_operand_nulls(a, b, rows, result);
  const uint8_t* nulls = result.nulls.empty() ? nullptr : result.nulls.data();
  std::vector<T>& values = result.*member;
  values.resize(rows);
  T* o = values.data();
  bool failed = false;
  for (size_t i = 0; i < rows; ++i) {
    T v{};
    const bool bad = step(av[ca ? 0 : i], bv[cb ? 0 : i], v);
    const bool skip = nulls != nullptr && nulls[i] != 0;
    o[i] = skip ? T{} : v;
    failed |= bad && !skip;
  }
  if (failed) return false;
  out = std::move(result);
  return true;
}

// Integer + - * in the type's range (int2, int4, int8).
template <ArithOp Op>
bool integer_op(const Vector& a, const Vector& b, size_t rows, TypeId type, Vector& out) {
  const int64_t lo = type == TypeId::int2 ? INT16_MIN : type == TypeId::int4 ? INT32_MIN : INT64_MIN;
  const int64_t hi = type == TypeId::int2 ? INT16_MAX : type == TypeId::int4 ? INT32_MAX : INT64_MAX;
  auto step = [lo, hi](int64_t x, int64_t y, int64_t& v) {
    bool over = false;
    if constexpr (Op == ArithOp::add) over = __builtin_add_overflow(x, y, &v);
    else if constexpr (Op == ArithOp::sub) over = __builtin_sub_overflow(x, y, &v);
    else over = __builtin_mul_overflow(x, y, &v);
    return over || v < lo || v > hi;
  };
  return elementwise(a, b, a.int_data(), b.int_data(), rows, &Vector::ints, step, out);
}

// float8 + - *: PostgreSQL's float8pl/mi/mul raise an overflow when the
// result is infinite from finite operands, and float8mul an underflow when
// it is 0 from non-zero ones.
template <ArithOp Op>
bool float_op(const Vector& a, const Vector& b, size_t rows, Vector& out) {
  auto step = [](double x, double y, double& v) {
    v = Op == ArithOp::add ? x + y : Op == ArithOp::sub ? x - y : x * y;
    bool bad = std::isinf(v) && !std::isinf(x) && !std::isinf(y);
    if constexpr (Op == ArithOp::mul) bad = bad || (v == 0.0 && x != 0.0 && y != 0.0);
    return bad;
  };
  return elementwise(a, b, a.floats.data(), b.floats.data(), rows, &Vector::floats, step, out);
}

}  // namespace

VectorKernel vector_arithmetic(char op, SqlType type) {
  if (op != '+' && op != '-' && op != '*') return {};
  if (type.id == TypeId::int2 || type.id == TypeId::int4 || type.id == TypeId::int8) {
    const TypeId id = type.id;
    return [op, id](std::span<const Vector* const> args, size_t rows, Vector& out) -> bool {
      const Vector& a = *args[0];
      const Vector& b = *args[1];
      if (!has_int_rows(a, rows) || !has_int_rows(b, rows)) return false;
      switch (op) {
        case '+': return integer_op<ArithOp::add>(a, b, rows, id, out);
        case '-': return integer_op<ArithOp::sub>(a, b, rows, id, out);
        default: return integer_op<ArithOp::mul>(a, b, rows, id, out);
      }
    };
  }
  if (type.id == TypeId::float8) {
    return [op](std::span<const Vector* const> args, size_t rows, Vector& out) -> bool {
      const Vector& a = *args[0];
      const Vector& b = *args[1];
      if (!has_float_rows(a, rows) || !has_float_rows(b, rows)) return false;
      switch (op) {
        case '+': return float_op<ArithOp::add>(a, b, rows, out);
        case '-': return float_op<ArithOp::sub>(a, b, rows, out);
        default: return float_op<ArithOp::mul>(a, b, rows, out);
      }
    };
  }
  if (physical_of(type.id) != Physical::numeric) return {};
  return [op](std::span<const Vector* const> args, size_t rows, Vector& out) -> bool {
    const Vector& a = *args[0];
    const Vector& b = *args[1];
    // avg_parts: values not materialized; the row-wise form computes them.
    if (!has_rows(a, rows) || !has_rows(b, rows)) return false;
    out.count = rows;
    merge_operand_nulls(a, b, rows, out);
    switch (op) {
      case '+': numeric_op<ArithOp::add>(a, b, rows, out); break;
      case '-': numeric_op<ArithOp::sub>(a, b, rows, out); break;
      default: numeric_op<ArithOp::mul>(a, b, rows, out); break;
    }
    return true;
  };
}

VectorKernel vector_numeric_negate() {
  return [](std::span<const Vector* const> args, size_t rows, Vector& out) -> bool {
    const Vector& a = *args[0];
    if (a.avg_parts || a.numerics.size() < rows) return false;
    out.count = rows;
    if (!a.nulls.empty()) out.nulls.assign(a.nulls.begin(), a.nulls.begin() + static_cast<std::ptrdiff_t>(rows));
    out.numerics.clear();
    out.numerics.reserve(rows);
    for (size_t i = 0; i < rows; ++i) out.numerics.push_back(-a.numerics[i]);
    return true;
  };
}

}  // namespace tally::executor
