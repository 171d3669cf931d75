#pragma once
// Window functions as the planner binds them: each OVER clause becomes a
// WindowSpec (PARTITION BY, ORDER BY, frame), each call a WindowCall over
// one spec. Specs with the same PARTITION BY and ORDER BY share a sort
// group, so the rows are sorted once for all of them. Expressions are bound
// against the rows the windows run over (the FROM clause's column space, or
// the groups [keys..., aggregates...] after GROUP BY); a call's result is read
// by a WindowResultExpr, which finds it after those columns.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "executor/aggregate_function.hpp"
#include "executor/expression.hpp"

namespace tally::executor {

struct WindowFrame {
  enum class Mode : uint8_t { rows, range, groups };
  enum class Bound : uint8_t { unbounded_preceding, preceding, current_row, following, unbounded_following };
  enum class Exclude : uint8_t { none, current_row, group, ties };
  Mode mode = Mode::range;
  Bound start = Bound::unbounded_preceding;
  Bound end = Bound::current_row;
  // n of n PRECEDING / FOLLOWING: constants (parameters allowed), int8 for
  // ROWS and GROUPS, the ORDER BY column's kind for RANGE.
  ExprPtr start_offset, end_offset;
  Exclude exclude = Exclude::none;
};

struct WindowOrder {
  ExprPtr expr;
  bool descending = false;
  bool nulls_first = false;
};

struct WindowSpec {
  std::vector<ExprPtr> partition;
  std::vector<WindowOrder> order;
  WindowFrame frame;
  size_t sort_group = 0;  // specs with equal PARTITION BY and ORDER BY share one
};

enum class WindowFunction : uint8_t {
  row_number, rank, dense_rank, percent_rank, cume_dist, ntile,
  lag, lead, first_value, last_value, nth_value,
  aggregate,
};

struct WindowCall {
  WindowFunction function = WindowFunction::row_number;
  SqlType type;
  std::vector<ExprPtr> args;      // cast to the function's parameter types
  AggregateSignature signature{};  // aggregates only
  ExprPtr filter;                 // aggregates only: FILTER (WHERE ...), may be null
  size_t spec = 0;
};

struct WindowPlan {
  std::vector<WindowSpec> specs;
  std::vector<WindowCall> calls;
  size_t sort_groups = 0;
};

// Reads window call `call`'s result: column *base + call of the input, where
// base (the width of the rows the windows run over) is set once planning
// knows it (after GROUP BY, the aggregate count grows while outputs bind).
class WindowResultExpr final : public Expr {
 public:
  WindowResultExpr(SqlType type, std::shared_ptr<const size_t> base, size_t call)
      : Expr(type), base_(std::move(base)), call_(call) {}
  Vector evaluate(const EvalInput& input) const override;
  size_t call() const { return call_; }

 private:
  std::shared_ptr<const size_t> base_;
  size_t call_;
};

}  // namespace tally::executor
