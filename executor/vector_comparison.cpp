#include "executor/vector_comparison.hpp"

#include <array>
#include <cstdint>

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

template <class T>
void compare_all(const T* a, const T* b, size_t n, const Outcome& outcome, int64_t* out) {
  for (size_t i = 0; i < n; ++i) out[i] = outcome[static_cast<size_t>(three_way(a[i], b[i]) + 1)];
}

// Strict NULL handling: a row is NULL when either operand is.
void merge_nulls(const Vector& a, const Vector& b, size_t n, Vector& out) {
  if (a.nulls.empty() && b.nulls.empty()) return;
  out.nulls.assign(n, 0);
  for (size_t i = 0; i < n; ++i) out.nulls[i] = static_cast<uint8_t>(a.null_at(i) || b.null_at(i));
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
      if (a.avg_parts || b.avg_parts || a.numerics.size() < rows || b.numerics.size() < rows) return false;
      out.resize(rows);
      for (size_t i = 0; i < rows; ++i) {
        const auto c = a.numerics[i] <=> b.numerics[i];
        out.ints[i] = outcome[c < 0 ? 0 : c == 0 ? 1 : 2];
      }
      merge_nulls(a, b, rows, out);
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
    if (have_a < rows || have_b < rows) return false;  // not this physical layout: row-wise
    out.resize(rows);
    if (floating) compare_all(a.floats.data(), b.floats.data(), rows, outcome, out.ints.data());
    else compare_all(a.ints.data(), b.ints.data(), rows, outcome, out.ints.data());
    merge_nulls(a, b, rows, out);
    return true;
  };
}

}  // namespace tally::executor
