#include "executor/vector_arithmetic.hpp"

namespace tally::executor {
namespace {

template <class T, class Op>
void apply(const std::vector<T>& a, const std::vector<T>& b, size_t rows, const Vector& va, const Vector& vb,
           std::vector<T>& out, Op op) {
  // NULL rows hold a default value; they are skipped so that no error is
  // raised for them (the row-wise form never evaluates them either).
  const bool nulls = !va.nulls.empty() || !vb.nulls.empty();
  for (size_t i = 0; i < rows; ++i) {
    if (nulls && (va.null_at(i) || vb.null_at(i))) continue;
    out[i] = op(a[i], b[i]);
  }
}

}  // namespace

VectorKernel vector_arithmetic(char op, SqlType type) {
  if (op != '+' && op != '-' && op != '*') return {};
  if (physical_of(type.id) != Physical::numeric) return {};
  return [op](std::span<const Vector* const> args, size_t rows, Vector& out) -> bool {
    const Vector& a = *args[0];
    const Vector& b = *args[1];
    if (a.avg_parts || b.avg_parts) return false;  // values not materialized: row-wise
    if (a.numerics.size() < rows || b.numerics.size() < rows) return false;
    out.resize(rows);
    if (!a.nulls.empty() || !b.nulls.empty()) {
      out.nulls.assign(rows, 0);
      for (size_t i = 0; i < rows; ++i) out.nulls[i] = static_cast<uint8_t>(a.null_at(i) || b.null_at(i));
    }
    switch (op) {
      case '+': apply(a.numerics, b.numerics, rows, a, b, out.numerics, [](const Numeric& x, const Numeric& y) { return x + y; }); break;
      case '-': apply(a.numerics, b.numerics, rows, a, b, out.numerics, [](const Numeric& x, const Numeric& y) { return x - y; }); break;
      default: apply(a.numerics, b.numerics, rows, a, b, out.numerics, [](const Numeric& x, const Numeric& y) { return x * y; }); break;
    }
    return true;
  };
}

}  // namespace tally::executor
