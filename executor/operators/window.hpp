#pragma once
// WindowAgg: materializes its input, sorts it once per distinct PARTITION BY
// / ORDER BY (executor/row_sort.hpp), evaluates every window call over its
// partitions and frames (window_functions.hpp), and pushes the rows with one
// more column per call, in the order of the last window sort (as
// PostgreSQL's WindowAgg returns them). Windows after GROUP BY run the same
// evaluation over the groups (evaluate_windows).
#include <memory>

#include "executor/operators/physical_operator.hpp"
#include "executor/window_call.hpp"

namespace tally::executor {

struct WindowResult {
  std::vector<Vector> columns;  // one per call, in input row order
  std::vector<uint32_t> order;  // the rows in output order; empty: as they came
};

// `threads`: the workers its sorts may use.
WindowResult evaluate_windows(const WindowPlan& plan, const EvalInput& input, int threads = 1);

// `input` extended with the window results, rows in the windows' output
// order; `storage` keeps the vectors it points at.
EvalInput with_windows(const WindowPlan& plan, const EvalInput& input, std::vector<Vector>& storage);

// Evaluates the plan's windows over `rows` (the child's rows, at `layout`
// in a column space of `space_width` columns) and pushes them with one more
// column per call, in the windows' output order.
void push_with_windows(const WindowPlan& plan, DataChunk rows, const std::vector<int>& layout, size_t space_width,
                       ExecContext& context, ChunkSink& sink);
// A window operator's output columns and their layout: the child's, then
// one per call at space_width + call.
std::vector<OutputColumn> window_columns(const PhysicalOperator& child, const WindowPlan& plan);
std::vector<int> window_layout(const PhysicalOperator& child, const WindowPlan& plan, size_t space_width);

class WindowOperator final : public PhysicalOperator {
 public:
  // `space_width`: the width of the column space the child's rows (and the
  // calls' expressions) sit in; call k's result becomes column space_width + k.
  WindowOperator(std::unique_ptr<PhysicalOperator> child, std::shared_ptr<const WindowPlan> plan, size_t space_width);
  void run(ExecContext& context, ChunkSink& sink) const override;
  std::string describe() const override { return "WindowAgg"; }

 private:
  std::shared_ptr<const WindowPlan> plan_;
  size_t space_width_;
};

}  // namespace tally::executor
