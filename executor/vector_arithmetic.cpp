#include "executor/vector_arithmetic.hpp"

#include <algorithm>
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

}  // namespace

VectorKernel vector_arithmetic(char op, SqlType type) {
  if (op != '+' && op != '-' && op != '*') return {};
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
