#include "executor/shared_cte.hpp"

#include "executor/recursive_cte.hpp"
#include "executor/result_set.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

namespace {

// The relations in `node` (the statement's tree) named `name` without a
// schema: the references to the WITH query, or a shadowing one's (a count
// too high only shares rows that need not be).
size_t references(const nlohmann::json& node, const std::string& name) {
  size_t n = 0;
  if (node.is_object()) {
    if (const auto rv = node.find("RangeVar"); rv != node.end() && rv->is_object() && !rv->contains("schemaname") &&
                                               rv->value("relname", "") == name) {
      ++n;
    }
    for (const auto& [key, value] : node.items()) n += references(value, name);
  } else if (node.is_array()) {
    for (const auto& value : node) n += references(value, name);
  }
  return n;
}

}  // namespace

std::shared_ptr<const ResultSet> SharedCte::rows(ExecContext& context) const {
  std::lock_guard lock(mutex_);
  if (!rows_) rows_ = std::make_shared<const ResultSet>(run_select(*plan, context));
  return rows_;
}

void SharedCte::reset() const {
  std::shared_ptr<const ResultSet> old;
  std::lock_guard lock(mutex_);
  old.swap(rows_);
}

std::vector<std::shared_ptr<const SharedCte>> add_with_queries(const nlohmann::json& select, PlanContext& context) {
  const auto& with = select["withClause"];
  const bool recursive = with.value("recursive", false);
  std::vector<std::shared_ptr<const SharedCte>> shared_ones;
  for (const auto& cte : with["ctes"]) {
    const auto& node = cte["CommonTableExpr"];
    const std::string name = node.value("ctename", "");
    if (recursive && refers_to_itself(node)) {
      context.cte_relations.emplace_back(name, plan_recursive_cte(node, context));
      continue;
    }
    std::shared_ptr<SharedCte> shared;
    if (node.contains("ctequery") && node["ctequery"].contains("SelectStmt") && references(select, name) >= 2) {
      shared = std::make_shared<SharedCte>();
      shared_ones.push_back(shared);
    }
    context.ctes.push_back(WithQuery{name, node, std::move(shared)});
  }
  return shared_ones;
}

}  // namespace tally::executor
