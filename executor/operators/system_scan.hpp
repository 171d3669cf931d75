#pragma once
// System Scan: the rows of a materialized catalog relation
// (system_relation_provider.hpp), only the columns the query reads, with the
// filter conjuncts that touch only this relation.
#include <memory>

#include "executor/operators/physical_operator.hpp"
#include "executor/system_relation_provider.hpp"

namespace tally::executor {

class SystemScan final : public PhysicalOperator {
 public:
  // `relation_columns`: column numbers read, output in that order; `layout`:
  // their column-space indexes; `filters` are bound against `space_width` columns.
  SystemScan(std::shared_ptr<const MaterializedRelation> relation, std::string alias, std::vector<int> relation_columns,
             std::vector<int> layout, size_t space_width, std::vector<ExprPtr> filters);
  void run(ExecContext& context, ChunkSink& sink) const override;
  std::string describe() const override;
  std::vector<std::pair<std::string, std::string>> node_properties() const override {
    return {{"Relation Name", relation_->name}, {"Alias", alias_}};
  }

 private:
  std::shared_ptr<const MaterializedRelation> relation_;
  std::string alias_;
  std::vector<int> relation_columns_;
  size_t space_width_;
  std::vector<ExprPtr> filters_;
};

}  // namespace tally::executor
