#pragma once
// Binding window calls (f(...) OVER (...) and OVER w with WINDOW w AS (...))
// into a WindowPlan, with PostgreSQL's checks and SQLSTATEs: named window
// references and what they may override (42P20), nested window calls
// (42P20), DISTINCT / ORDER BY inside a window aggregate and ordered-set
// aggregates with OVER (0A000), frame offsets and RANGE's single ORDER BY column.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "executor/binder.hpp"
#include "executor/window_call.hpp"

namespace tally::executor {

// The result type of window function `name` (row_number, lag, ...; not an
// aggregate) called with `args`: nullopt when it is no such function, 42883
// when these arguments do not fit it. What pg_proc's rows are checked with.
std::optional<SqlType> window_function_type(const std::string& name, std::vector<ExprPtr> args, BindContext& context);

class WindowBinder {
 public:
  // Reads the SELECT's WINDOW clause (42P20 for a name defined twice).
  explicit WindowBinder(const nlohmann::json& select);
  // Binds one call that has OVER; its arguments, PARTITION BY and ORDER BY
  // bind in `scope` (the rows the windows run over). Returns the expression
  // that reads its result (an identical call is bound once).
  ExprPtr bind(const nlohmann::json& call, const std::string& name, const BindContext& scope);
  // A hook for BindContext::on_window binding in `scope`.
  std::function<ExprPtr(const nlohmann::json&, const std::string&)> hook(const BindContext& scope);
  bool empty() const { return plan_->calls.empty(); }
  // The plan, its results read after `base` columns.
  std::shared_ptr<const WindowPlan> finish(size_t base);

 private:
  struct Definition;
  Definition resolve(const nlohmann::json& def, int depth) const;
  size_t bind_spec(const nlohmann::json& over, const BindContext& scope);

  std::map<std::string, nlohmann::json> named_;
  std::vector<std::string> named_order_;
  std::shared_ptr<WindowPlan> plan_ = std::make_shared<WindowPlan>();
  std::shared_ptr<size_t> base_ = std::make_shared<size_t>(0);
  std::vector<nlohmann::json> call_nodes_;  // each bound call, without locations
  std::vector<std::string> spec_keys_;      // each spec's definition, as text
  std::vector<std::string> sort_keys_;      // each sort group's PARTITION BY and ORDER BY, as text
};

}  // namespace tally::executor
