#include "executor/group_key_filter.hpp"

#include <algorithm>
#include <set>

#include "executor/operators/stored_key_test.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/storage_vectors.hpp"

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

std::vector<uint32_t> stored_rows_with_wanted_keys(const GroupKeyFilter& filter, const std::vector<ExprPtr>& group_keys,
                                                   const storage::ChunkBatch& batch, const std::vector<int>& scan_columns,
                                                   const std::vector<TableColumn>& table_columns,
                                                   const std::vector<Value>* parameters) {
  const std::vector<Expr*> keys = filtered_keys(filter, group_keys);
  std::vector<const storage::ColumnVector*> stored;
  std::vector<SqlType> types;
  for (const Expr* key : keys) {
    const ColumnExpr* column = stored_integer_key(*key);
    const auto at = column ? std::find(scan_columns.begin(), scan_columns.end(), column->index) : scan_columns.end();
    if (at == scan_columns.end() || table_columns[static_cast<size_t>(column->index)].type.id != key->type.id) break;
    stored.push_back(&batch.columns[static_cast<size_t>(at - scan_columns.begin())]);
    types.push_back(key->type);
  }
  std::vector<uint32_t> keep;
  if (stored.size() == keys.size()) {
    const auto test = [&filter](const std::vector<Vector>& values, size_t rows, std::vector<uint32_t>& out) {
      filter.chains->matching_rows(*filter.keys, values, rows, out);
    };
    test_stored_keys(test, filter.chains, stored, types, nullptr, batch.rows, keep);
    return keep;
  }
  std::set<int> key_columns;
  for (Expr* k : keys) collect_refs(*k, key_columns);
  std::vector<Vector> converted(table_columns.size());
  EvalInput input;
  input.parameters = parameters;
  input.rows = batch.rows;
  input.columns.assign(table_columns.size(), nullptr);
  for (size_t i = 0; i < scan_columns.size(); ++i) {
    const auto c = static_cast<size_t>(scan_columns[i]);
    if (!key_columns.count(scan_columns[i])) continue;
    converted[c] = vector_from_storage(batch.columns[i], table_columns[c].type);
    input.columns[c] = &converted[c];
  }
  return rows_with_wanted_keys(filter, group_keys, input);
}

}  // namespace tally::executor
