#pragma once
// The operands a whole-Vector kernel (VectorKernel) receives: a Vector of
// `rows` rows, or, from a FunctionExpr with batch_takes_constants, a
// constant argument evaluated once as a one-row Vector that stands for every
// row, so that a literal bound (`l_quantity < 24`, `1 - l_discount`) is not
// copied into a chunk-sized Vector first.
#include <cstddef>
#include <cstdint>

#include "executor/value.hpp"

namespace tally::executor {

// True when `v` is a one-row constant for a batch of `rows` rows.
inline bool is_constant_operand(const Vector& v, size_t rows) { return rows > 1 && v.count == 1; }

// Strict NULL handling: a row is NULL when either operand's row is. Leaves
// out.nulls empty where neither has a NULL; out must already have `rows` rows.
inline void merge_operand_nulls(const Vector& a, const Vector& b, size_t rows, Vector& out) {
  if (a.nulls.empty() && b.nulls.empty()) return;
  const bool ca = is_constant_operand(a, rows), cb = is_constant_operand(b, rows);
  out.nulls.assign(rows, 0);
  for (size_t i = 0; i < rows; ++i) {
    out.nulls[i] = static_cast<uint8_t>(a.null_at(ca ? 0 : i) || b.null_at(cb ? 0 : i));
  }
}

}  // namespace tally::executor
