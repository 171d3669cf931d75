#include "executor/group_key_filter.hpp"

namespace tally::executor {

std::vector<Expr*> filtered_keys(const GroupKeyFilter& filter, const std::vector<ExprPtr>& group_keys) {
  std::vector<Expr*> keys;
  if (filter.positions.empty()) {
    for (const auto& k : group_keys) keys.push_back(k.get());
  } else {
    for (const size_t p : filter.positions) keys.push_back(group_keys[p].get());
  }
  return keys;
}

std::vector<uint32_t> rows_with_wanted_keys(const GroupKeyFilter& filter, const std::vector<ExprPtr>& group_keys,
                                            const EvalInput& rows) {
  std::vector<Vector> keys;
  for (const Expr* k : filtered_keys(filter, group_keys)) keys.push_back(k->evaluate(rows));
  std::vector<uint32_t> keep;
  filter.chains->matching_rows(*filter.keys, keys, rows.rows, keep);
  return keep;
}

}  // namespace tally::executor
