#include "executor/shared_cte.hpp"

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

std::shared_ptr<SharedCte> shared_cte(const nlohmann::json& select, const nlohmann::json& common_table_expr) {
  if (!common_table_expr.contains("ctequery") || !common_table_expr["ctequery"].contains("SelectStmt")) return nullptr;
  if (references(select, common_table_expr.value("ctename", "")) < 2) return nullptr;
  return std::make_shared<SharedCte>();
}

}  // namespace tally::executor
