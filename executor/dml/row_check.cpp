#include "executor/dml/row_check.hpp"

namespace tally::executor::dml {

Error not_null_violation(const catalog::TableDef& def, size_t column,
                         const std::vector<std::optional<std::string>>& row) {
  std::string detail = "Failing row contains (";
  for (size_t c = 0; c < row.size(); ++c) {
    if (c) detail += ", ";
    detail += row[c] ? *row[c] : "null";
  }
  detail += ").";
  return std::move(Error(SqlState::not_null_violation, "null value in column \"" + def.columns[column].name +
                                                           "\" of relation \"" + def.name +
                                                           "\" violates not-null constraint")
                       .with_detail(detail));
}

void check_not_null(const catalog::TableDef& def, const std::vector<std::optional<std::string>>& row) {
  for (size_t c = 0; c < def.columns.size(); ++c)
    if (def.columns[c].not_null && !row[c]) throw not_null_violation(def, c, row);
}

}  // namespace tally::executor::dml
