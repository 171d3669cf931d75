// TABLESAMPLE items of the FROM planner: a table or catalog relation whose
// rows are sampled before any condition of the query tests them
// (operators/table_sample.hpp).
#include "common/error.hpp"
#include "executor/from_planner_state.hpp"
#include "executor/operators/system_scan.hpp"
#include "executor/operators/table_scan.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

using nlohmann::json;
using namespace from_planning;

std::unique_ptr<Node> FromPlanner::State::sampled_relation(const json& item, RelationScope& scope, BindContext& ctx) {
  const json& ts = item["RangeTableSample"];
  std::unique_ptr<Node> node = relation(ts["relation"], scope, ctx);
  if (node->kind != NodeKind::table && node->kind != NodeKind::system) {
    throw Error(SqlState::feature_not_supported, "TABLESAMPLE clause can only be applied to tables and materialized views");
  }
  const std::string method = ts["method"].back()["String"].value("sval", "");
  auto sample = std::make_unique<Node::Sample>();
  if (method == "bernoulli") sample->method = SampleMethod::bernoulli;
  else if (method == "system") sample->method = SampleMethod::system;
  else throw Error(SqlState::undefined_object, "tablesample method \"" + method + "\" does not exist");
  const size_t arguments = ts.contains("args") ? ts["args"].size() : 0;
  if (arguments != 1) {
    throw Error(SqlState::invalid_tablesample_argument,
                "tablesample method " + method + " requires 1 argument, not " + std::to_string(arguments));
  }
  // The arguments see no column of this query (PostgreSQL: no variables of
  // the FROM's own level); they are evaluated once per run.
  BindContext constants;
  base_context(constants, pc);
  sample->percent = coerce_to(bind_expression(ts["args"][0], constants), {TypeId::float4}, CastContext::implicit, constants);
  if (ts.contains("repeatable")) {
    sample->seed = coerce_to(bind_expression(ts["repeatable"], constants), {TypeId::float8}, CastContext::implicit, constants);
  }
  node->sample = std::move(sample);
  return node;
}

Part FromPlanner::State::build_sampled(Node* node) {
  Part part;
  part.cols = node->cols;
  std::vector<int> columns, layout;
  for (int c : node->cols) {
    if (node->kind == NodeKind::table) this->table_columns[c] = {node->table.get(), c - node->base};
    if (!used.count(c)) continue;
    columns.push_back(c - node->base);
    layout.push_back(c);
  }
  std::unique_ptr<PhysicalOperator> scan;
  if (node->kind == NodeKind::table) {
    scan = std::make_unique<TableScan>(node->table, node->alias, std::move(columns), std::move(layout), width,
                                       std::vector<ExprPtr>{}, static_cast<double>(node->table->row_count()));
  } else {
    scan = std::make_unique<SystemScan>(node->system, node->alias, std::move(columns), std::move(layout), width,
                                        std::vector<ExprPtr>{});
  }
  part.op = std::make_unique<TableSample>(std::move(scan), node->sample->method, std::move(node->sample->percent),
                                          std::move(node->sample->seed), node->alias);
  part.est = part.op->estimated_rows();
  part.op = with_filters(std::move(part.op), std::move(node->filters));
  return part;
}

}  // namespace tally::executor
