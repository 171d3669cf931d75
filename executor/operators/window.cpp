#include "executor/operators/window.hpp"

#include "executor/operators/chunk_ops.hpp"
#include "executor/operators/window_frame.hpp"
#include "executor/operators/window_functions.hpp"
#include "executor/row_sort.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

WindowResult evaluate_windows(const WindowPlan& plan, const EvalInput& input, int threads) {
  WindowResult result;
  result.columns.resize(plan.calls.size());
  for (size_t group = 0; group < plan.sort_groups; ++group) {
    // The specs of one sort group share PARTITION BY and ORDER BY: the first
    // one's expressions give the sort.
    const WindowSpec* first = nullptr;
    for (const auto& spec : plan.specs) {
      if (spec.sort_group == group) { first = &spec; break; }
    }
    if (first == nullptr) continue;
    std::vector<Vector> keys;
    keys.reserve(first->partition.size() + first->order.size());
    std::vector<SortColumn> partition, order;
    for (const auto& e : first->partition) {
      keys.push_back(e->evaluate(input));
      partition.push_back({&keys.back(), false, false});
    }
    for (const auto& o : first->order) {
      keys.push_back(o.expr->evaluate(input));
      order.push_back({&keys.back(), o.descending, o.nulls_first});
    }
    const RowOrdering ordering = sort_rows(input.rows, partition, order, threads);
    for (size_t s = 0; s < plan.specs.size(); ++s) {
      const WindowSpec& spec = plan.specs[s];
      if (spec.sort_group != group) continue;
      const Vector* order_values = order.empty() ? nullptr : order[0].values;
      const FrameCursor frame(spec.frame, ordering, order_values, !order.empty() && order[0].descending, input.parameters);
      for (size_t c = 0; c < plan.calls.size(); ++c) {
        if (plan.calls[c].spec == s) result.columns[c] = evaluate_window_call(plan.calls[c], ordering, frame, input);
      }
    }
    if (!partition.empty() || !order.empty()) result.order = ordering.rows;
  }
  return result;
}

EvalInput with_windows(const WindowPlan& plan, const EvalInput& input, std::vector<Vector>& storage) {
  WindowResult windows = evaluate_windows(plan, input);
  EvalInput out;
  out.rows = input.rows;
  out.parameters = input.parameters;
  storage.clear();
  storage.reserve(input.columns.size() + windows.columns.size());
  const bool reorder = !windows.order.empty();
  for (const Vector* c : input.columns) {
    if (c == nullptr || !reorder) {
      out.columns.push_back(c);
      continue;
    }
    storage.push_back(gather(*c, windows.order));
    out.columns.push_back(&storage.back());
  }
  for (auto& c : windows.columns) {
    storage.push_back(reorder ? gather(c, windows.order) : std::move(c));
    out.columns.push_back(&storage.back());
  }
  return out;
}

void push_with_windows(const WindowPlan& plan, DataChunk rows, const std::vector<int>& layout, size_t space_width,
                       ExecContext& context, ChunkSink& sink) {
  if (rows.rows == 0) return;
  if (context.cancel) context.cancel->check();
  const EvalInput input = space_input(rows, layout, space_width, context.parameters);
  WindowResult windows = evaluate_windows(plan, input, worker_threads(context));
  if (!windows.order.empty()) {
    rows = gather_chunk(rows, windows.order);
    for (auto& c : windows.columns) c = gather(c, windows.order);
  }
  for (auto& c : windows.columns) rows.columns.push_back(std::move(c));
  sink.consume(rows);
}

std::vector<OutputColumn> window_columns(const PhysicalOperator& child, const WindowPlan& plan) {
  std::vector<OutputColumn> columns = child.columns();
  for (const auto& call : plan.calls) columns.push_back({"window", call.type});
  return columns;
}

std::vector<int> window_layout(const PhysicalOperator& child, const WindowPlan& plan, size_t space_width) {
  std::vector<int> layout = child.layout();
  for (size_t k = 0; k < plan.calls.size(); ++k) layout.push_back(static_cast<int>(space_width + k));
  return layout;
}

WindowOperator::WindowOperator(std::unique_ptr<PhysicalOperator> child, std::shared_ptr<const WindowPlan> plan,
                               size_t space_width)
    : PhysicalOperator(window_columns(*child, *plan), child->estimated_rows()),
      plan_(std::move(plan)),
      space_width_(space_width) {
  layout_ = window_layout(*child, *plan_, space_width);
  children_.push_back(std::move(child));
}

void WindowOperator::run(ExecContext& context, ChunkSink& sink) const {
  const PhysicalOperator& child = *children_[0];
  push_with_windows(*plan_, collect(child, context), child.layout(), space_width_, context, sink);
}

}  // namespace tally::executor
