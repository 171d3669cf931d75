#include "executor/vector_comparison.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "executor/numeric_vector.hpp"
#include "executor/vector_operand.hpp"

namespace tally::executor {
namespace {

// -1, 0 or 1 as compare_values answers for two non-NULL values.
inline int three_way(int64_t x, int64_t y) { return (x > y) - (x < y); }

inline int three_way(double x, double y) {
  const bool xn = x != x, yn = y != y;
  if (xn || yn) return xn && yn ? 0 : (xn ? 1 : -1);
  return (x > y) - (x < y);
}

// outcome[c + 1]: the operator's truth value for three-way result c.
using Outcome = std::array<int64_t, 3>;

// A constant operand (ConstB) is read once: the loop compares against a
// register (`l_shipdate <= date '1998-09-02'`, `l_quantity < 24`).
template <class T, bool ConstA, bool ConstB>
void compare_all(const T* a, const T* b, size_t n, const Outcome& outcome, int64_t* out) {
  for (size_t i = 0; i < n; ++i) {
    out[i] = outcome[static_cast<size_t>(three_way(a[ConstA ? 0 : i], b[ConstB ? 0 : i]) + 1)];
  }
}

template <class T>
void compare_operands(const T* a, const T* b, bool ca, bool cb, size_t n, const Outcome& outcome, int64_t* out) {
  if (ca && cb) compare_all<T, true, true>(a, b, n, outcome, out);
  else if (ca) compare_all<T, true, false>(a, b, n, outcome, out);
  else if (cb) compare_all<T, false, true>(a, b, n, outcome, out);
  else compare_all<T, false, false>(a, b, n, outcome, out);
}

// Numeric rows: where both rows have the scales of their operands' first
// rows and 63-bit mantissas, the mantissas are aligned to the larger scale
// by a factor of at most 10^18 (no int128 overflow) and compared as
// integers; any other row takes Numeric's own ordering.
template <bool ConstA, bool ConstB>
void compare_numerics(const Vector& a, const Vector& b, size_t rows, const Outcome& outcome, int64_t* out) {
  const Numeric* av = a.numerics.data();
  const Numeric* bv = b.numerics.data();
  const std::optional<int32_t> sa = first_numeric_scale(a, ConstA ? 1 : rows);
  const std::optional<int32_t> sb = first_numeric_scale(b, ConstB ? 1 : rows);
  bool fast = sa && sb;
  int64_t pa = 1, pb = 1;
  if (fast) {
    const int32_t s = std::max(*sa, *sb);
    fast = s - *sa <= kInt64PowerDigits && s - *sb <= kInt64PowerDigits;
    if (fast) {
      pa = static_cast<int64_t>(numeric_pow10(s - *sa));
      pb = static_cast<int64_t>(numeric_pow10(s - *sb));
    }
  }
  const int32_t xa = fast ? *sa : 0, xb = fast ? *sb : 0;
  for (size_t i = 0; i < rows; ++i) {
    const Numeric& x = av[ConstA ? 0 : i];
    const Numeric& y = bv[ConstB ? 0 : i];
    int c;
    if (fast && x.scale == xa && y.scale == xb && fits_int64(x.mantissa) && fits_int64(y.mantissa)) {
      const __int128 l = wide_product(x.mantissa, pa), r = wide_product(y.mantissa, pb);
      c = (l > r) - (l < r);
    } else {
      const auto o = x <=> y;
      c = o < 0 ? -1 : (o == 0 ? 0 : 1);
    }
    out[i] = outcome[static_cast<size_t>(c + 1)];
  }
}

// Enough values for `rows` rows (a constant operand holds one).
size_t needed(const Vector& v, size_t rows) { return is_constant_operand(v, rows) ? 1 : rows; }

// char(n) compares without its trailing blanks (bpchar's comparisons).
std::string_view without_trailing_blanks(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Text rows as compare_values compares strings: bytewise (PostgreSQL's C
// collation), read where they are held (a std::string's bytes or a stored
// column's dictionary entry), none copied.
int text_three_way(std::string_view x, std::string_view y, bool blank_padded) {
  if (blank_padded) {
    x = without_trailing_blanks(x);
    y = without_trailing_blanks(y);
  }
  const int c = x.compare(y);
  return (c > 0) - (c < 0);
}

bool holds_text_rows(const Vector& v, size_t rows) {
  return (v.coded() ? v.codes.size() : v.texts.size()) >= needed(v, rows);
}

// Text against text. A coded column against a constant compares each of its
// dictionary's entries once, where the dictionary has at most half as many
// entries as there are rows, so that the table saves comparisons (a brand or
// a container among 25 or 40, over a million rows).
void compare_texts(const Vector& a, const Vector& b, size_t rows, bool blank_padded, const Outcome& outcome,
                   int64_t* out) {
  const bool ca = is_constant_operand(a, rows), cb = is_constant_operand(b, rows);
  const Vector* column = cb && !ca ? &a : ca && !cb ? &b : nullptr;
  if (column != nullptr && column->coded() && 2 * static_cast<size_t>(column->dictionary->size()) <= rows) {
    const Vector& constant = column == &a ? b : a;
    const std::string_view c = constant.null_at(0) ? std::string_view() : constant.text_at(0);
    const auto entries = static_cast<size_t>(column->dictionary->size());
    // NULL rows hold code 0, also of an empty dictionary (every row NULL).
    std::vector<int64_t> by_code(std::max<size_t>(entries, 1));
    for (size_t code = 0; code < entries; ++code) {
      const std::string_view entry = column->dictionary->at(static_cast<int32_t>(code));
      const int three_way = column == &a ? text_three_way(entry, c, blank_padded) : text_three_way(c, entry, blank_padded);
      by_code[code] = outcome[static_cast<size_t>(three_way + 1)];
    }
    const int32_t* codes = column->codes.data();
    for (size_t i = 0; i < rows; ++i) out[i] = by_code[static_cast<size_t>(codes[i])];
    return;
  }
  for (size_t i = 0; i < rows; ++i) {
    const size_t ia = ca ? 0 : i, ib = cb ? 0 : i;
    if (a.null_at(ia) || b.null_at(ib)) {
      out[i] = 0;  // NULL: merge_operand_nulls marks the row
      continue;
    }
    out[i] = outcome[static_cast<size_t>(text_three_way(a.text_at(ia), b.text_at(ib), blank_padded) + 1)];
  }
}

}  // namespace

VectorKernel vector_comparison(const std::string& op, SqlType common) {
  Outcome outcome{};  // {less, equal, greater}
  if (op == "=") outcome = {0, 1, 0};
  else if (op == "<>" || op == "!=") outcome = {1, 0, 1};
  else if (op == "<") outcome = {1, 0, 0};
  else if (op == "<=") outcome = {1, 1, 0};
  else if (op == ">") outcome = {0, 0, 1};
  else if (op == ">=") outcome = {0, 1, 1};
  else return {};
  const Physical physical = physical_of(common.id);
  if (physical == Physical::numeric) {
    return [outcome](std::span<const Vector* const> args, size_t rows, Vector& out) -> bool {
      const Vector& a = *args[0];
      const Vector& b = *args[1];
      if (a.avg_parts || b.avg_parts || a.numerics.size() < needed(a, rows) || b.numerics.size() < needed(b, rows)) {
        return false;
      }
      out.resize(rows);
      const bool ca = is_constant_operand(a, rows), cb = is_constant_operand(b, rows);
      if (ca && cb) compare_numerics<true, true>(a, b, rows, outcome, out.ints.data());
      else if (ca) compare_numerics<true, false>(a, b, rows, outcome, out.ints.data());
      else if (cb) compare_numerics<false, true>(a, b, rows, outcome, out.ints.data());
      else compare_numerics<false, false>(a, b, rows, outcome, out.ints.data());
      merge_operand_nulls(a, b, rows, out);
      return true;
    };
  }
  if (physical == Physical::text) {
    if (common.id != TypeId::text && common.id != TypeId::varchar && common.id != TypeId::bpchar) return {};
    const bool blank_padded = common.id == TypeId::bpchar;
    return [outcome, blank_padded](std::span<const Vector* const> args, size_t rows, Vector& out) -> bool {
      const Vector& a = *args[0];
      const Vector& b = *args[1];
      if (!holds_text_rows(a, rows) || !holds_text_rows(b, rows)) return false;  // row-wise
      out.resize(rows);
      compare_texts(a, b, rows, blank_padded, outcome, out.ints.data());
      merge_operand_nulls(a, b, rows, out);
      return true;
    };
  }
  if (physical != Physical::integer && physical != Physical::boolean && physical != Physical::floating) return {};
  const bool floating = physical == Physical::floating;
  return [outcome, floating](std::span<const Vector* const> args, size_t rows, Vector& out) -> bool {
    const Vector& a = *args[0];
    const Vector& b = *args[1];
    const size_t have_a = floating ? a.floats.size() : a.ints.size();
    const size_t have_b = floating ? b.floats.size() : b.ints.size();
    if (have_a < needed(a, rows) || have_b < needed(b, rows)) return false;  // not this physical layout: row-wise
    out.resize(rows);
    const bool ca = is_constant_operand(a, rows), cb = is_constant_operand(b, rows);
    if (floating) compare_operands(a.floats.data(), b.floats.data(), ca, cb, rows, outcome, out.ints.data());
    else compare_operands(a.ints.data(), b.ints.data(), ca, cb, rows, outcome, out.ints.data());
    merge_operand_nulls(a, b, rows, out);
    return true;
  };
}

}  // namespace tally::executor
