#include "executor/result_order.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <unordered_map>

#include "common/error.hpp"
#include "common/memory_tracker.hpp"
#include "executor/cancel_point.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/storage_vectors.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/row_selection.hpp"
#include "executor/row_sort.hpp"
#include "executor/row_top_n.hpp"
#include "executor/select_plan.hpp"
#include "executor/select_plan_detail.hpp"
#include "executor/stored_width.hpp"
#include "executor/table_provider.hpp"
#include "storage/column_vector.hpp"

namespace tally::executor {

int64_t constant_int(const ExprPtr& e, const ExecContext& ec, int64_t fallback) {
  if (!e) return fallback;
  Value v = evaluate_constant(*e, ec.parameters);
  if (is_null(v)) return fallback;
  return std::get<int64_t>(v);
}

namespace {

// Keeps the first row (in `order`) of each distinct combination of `columns`
// (NULLs equal).
void keep_first_distinct(std::vector<uint32_t>& order, const std::vector<Vector>& all, const std::vector<size_t>& columns) {
  std::vector<const Vector*> keys;
  for (const size_t c : columns) keys.push_back(&all[c]);
  // An open-addressing set of the rows kept, by their hash: each row's
  // values are hashed and compared where they are (no Value made per row:
  // a SELECT DISTINCT over millions of rows took seconds that way).
  // It grows with the rows kept (a few distinct values of millions of rows
  // keep a small one).
  constexpr uint32_t kEmpty = UINT32_MAX;
  size_t mask = 63;
  std::vector<std::pair<uint64_t, uint32_t>> kept(mask + 1, {0, kEmpty});
  std::vector<uint32_t> keep;
  CancelTicker ticker;
  for (const uint32_t r : order) {
    ticker.tick();
    if (keep.size() * 2 >= mask) {
      std::vector<std::pair<uint64_t, uint32_t>> grown((mask + 1) * 2, {0, kEmpty});
      mask = grown.size() - 1;
      for (const auto& slot : kept) {
        if (slot.second == kEmpty) continue;
        size_t i = slot.first & mask;
        while (grown[i].second != kEmpty) i = (i + 1) & mask;
        grown[i] = slot;
      }
      kept.swap(grown);
    }
    const uint64_t h = row_hash(keys, r);
    size_t i = h & mask;
    bool duplicate = false;
    for (; kept[i].second != kEmpty; i = (i + 1) & mask) {
      if (kept[i].first == h && rows_equal(keys, kept[i].second, r)) {
        duplicate = true;
        break;
      }
    }
    if (duplicate) continue;
    kept[i] = {h, r};
    keep.push_back(r);
  }
  order.swap(keep);
}

}  // namespace

void order_and_limit(const SelectPlan& plan, ResultSet& result, std::vector<Vector>& columns, size_t rows,
                     const ExecContext& ec) {
  if (!plan.distinct && plan.distinct_on.empty() && plan.sort.empty() && !plan.limit && !plan.offset) {
    // Nothing reorders or cuts the rows: the columns are the result (no row
    // list over millions of groups).
    for (size_t c = 0; c < plan.visible; ++c) result.columns.push_back(std::move(columns[c]));
    result.rows = rows;
    return;
  }
  // The row order and the gathered copy of the rows, beside the columns.
  MemoryReservation memory;
  memory.resize(rows * (2 * sizeof(uint32_t) + materialized_row_bytes(columns)));
  std::vector<uint32_t> order(rows);
  std::iota(order.begin(), order.end(), 0u);
  if (plan.distinct) {
    std::vector<size_t> visible(plan.visible);
    std::iota(visible.begin(), visible.end(), size_t{0});
    keep_first_distinct(order, columns, visible);
  }
  if (!plan.sort.empty() && !plan.distinct && plan.distinct_on.empty() && plan.limit) {
    // ORDER BY ... LIMIT k: only the rows that can be among the first k
    // (row_top_n.hpp) are sorted.
    const int64_t limit = constant_int(plan.limit, ec, -1);
    const int64_t offset = constant_int(plan.offset, ec, 0);
    if (limit > 0 && offset >= 0 && static_cast<uint64_t>(limit) + static_cast<uint64_t>(offset) < rows) {
      std::vector<SortColumn> keys;
      for (const auto& key : plan.sort) keys.push_back({&columns[static_cast<size_t>(key.column)], key.descending, key.nulls_first});
      auto candidates = top_n_candidates(rows, keys, static_cast<size_t>(limit + offset), worker_threads(ec));
      if (candidates) order = std::move(*candidates);
    }
  }
  if (!plan.sort.empty()) {
    // Rows DISTINCT or LIMIT's selection dropped leave the key columns' rows to sort gathered.
    const bool all_rows = order.size() == rows;
    std::vector<Vector> gathered;
    gathered.reserve(plan.sort.size());
    std::vector<SortColumn> keys;
    for (const auto& key : plan.sort) {
      const Vector& v = columns[static_cast<size_t>(key.column)];
      if (!all_rows) gathered.push_back(gather(v, order));
      keys.push_back({all_rows ? &v : &gathered.back(), key.descending, key.nulls_first});
    }
    const RowOrdering sorted = sort_rows(order.size(), {}, keys, worker_threads(ec), /*boundaries=*/false);
    std::vector<uint32_t> sorted_order(order.size());
    for (size_t i = 0; i < order.size(); ++i) sorted_order[i] = order[sorted.rows[i]];
    order.swap(sorted_order);
  }
  if (!plan.distinct_on.empty()) {
    // After the sort: each combination keeps its first row in ORDER BY's order.
    keep_first_distinct(order, columns, std::vector<size_t>(plan.distinct_on.begin(), plan.distinct_on.end()));
  }
  const int64_t offset = constant_int(plan.offset, ec, 0);
  const int64_t limit = constant_int(plan.limit, ec, -1);
  if (offset < 0) throw Error(SqlState::invalid_row_count_in_result_offset_clause, "OFFSET must not be negative");
  if (plan.limit && limit < 0 && !is_null(evaluate_constant(*plan.limit, ec.parameters))) {
    throw Error(SqlState::invalid_row_count_in_limit_clause, "LIMIT must not be negative");
  }
  size_t begin = std::min<size_t>(static_cast<size_t>(offset), order.size());
  size_t end = order.size();
  if (limit >= 0) end = std::min<size_t>(end, begin + static_cast<size_t>(limit));
  std::vector<uint32_t> final_rows(order.begin() + static_cast<long>(begin), order.begin() + static_cast<long>(end));
  bool identity = final_rows.size() == rows;
  for (size_t i = 0; identity && i < final_rows.size(); ++i) identity = final_rows[i] == i;
  if (identity) {
    for (size_t c = 0; c < plan.visible; ++c) result.columns.push_back(std::move(columns[c]));
  } else {
    // A column a task: millions of sorted rows gather in the time of one column.
    const size_t first = result.columns.size();
    result.columns.resize(first + plan.visible);
    cpu::parallel_tasks(worker_threads(ec), plan.visible,
                        [&](int, size_t c) { result.columns[first + c] = gather(columns[c], final_rows); });
  }
  result.rows = final_rows.size();
}

size_t chunk_top_n(const SelectPlan& plan, const ExecContext& ec) {
  if (plan.aggregate || plan.sort.empty() || plan.distinct || !plan.distinct_on.empty() || !plan.limit || plan.windows) {
    return 0;
  }
  const int64_t limit = constant_int(plan.limit, ec, -1);
  const int64_t offset = constant_int(plan.offset, ec, 0);
  return limit > 0 && offset >= 0 ? static_cast<size_t>(limit + offset) : 0;
}

GroupAggregator::TopGroups top_groups(const SelectPlan& plan, const ExecContext& ec) {
  GroupAggregator::TopGroups top;
  if (!plan.aggregate || !plan.grouping_sets.empty() || plan.having || plan.distinct || !plan.distinct_on.empty() ||
      plan.windows || plan.sort.empty() || !plan.limit) {
    return top;
  }
  const int64_t limit = constant_int(plan.limit, ec, -1);
  const int64_t offset = constant_int(plan.offset, ec, 0);
  if (limit <= 0 || offset < 0 || limit > (int64_t{1} << 40) || offset > (int64_t{1} << 40)) return top;
  const size_t columns = plan.group_keys.size() + plan.aggregates.size();
  for (const SortKey& key : plan.sort) {
    const auto* ref = dynamic_cast<const ColumnExpr*>(plan.outputs.at(static_cast<size_t>(key.column)).get());
    if (ref == nullptr || ref->index < 0 || static_cast<size_t>(ref->index) >= columns) return {};
    top.keys.push_back({static_cast<size_t>(ref->index), key.descending, key.nulls_first});
  }
  top.count = static_cast<size_t>(limit + offset);
  return top;
}

std::vector<Vector> evaluate_top_n_rows(const SelectPlan& plan, size_t k, const EvalInput& rows) {
  const size_t n = plan.outputs.size();
  std::vector<Vector> columns(n);
  std::vector<const Vector*> values(n, nullptr);
  for (size_t o = 0; o < n; ++o) {
    const auto* ref = dynamic_cast<const ColumnExpr*>(plan.outputs[o].get());
    if (ref != nullptr && ref->index >= 0 && static_cast<size_t>(ref->index) < rows.columns.size() &&
        rows.columns[static_cast<size_t>(ref->index)] != nullptr) {
      values[o] = rows.columns[static_cast<size_t>(ref->index)];
    } else {
      columns[o] = plan.outputs[o]->evaluate(rows);
      values[o] = &columns[o];
    }
  }
  std::vector<SortColumn> keys;
  for (const SortKey& key : plan.sort) keys.push_back({values[static_cast<size_t>(key.column)], key.descending, key.nulls_first});
  const auto candidates = top_n_candidates(rows.rows, keys, k, 1);
  for (size_t o = 0; o < n; ++o) {
    if (candidates) columns[o] = gather(*values[o], *candidates);
    else if (values[o] != &columns[o]) columns[o] = *values[o];
  }
  return columns;
}

const ColumnExpr* first_sort_column(const SelectPlan& plan) {
  if (plan.sort.empty()) return nullptr;
  const auto* column = dynamic_cast<const ColumnExpr*>(plan.outputs.at(static_cast<size_t>(plan.sort[0].column)).get());
  return column != nullptr && column->index >= 0 ? column : nullptr;
}

namespace {

// The rows (chunk rows: `rows`, or all the chunk's) whose first sort key can
// be among the first k, read where the key is stored: a bare integer-like
// column without NULLs in the chunk. The k-th best value bounds them and
// every row that ties it stays (the later keys decide among those), so the
// rows left are the first k's candidates and the rest are never converted.
// nullopt where the first key is not such a column.
std::optional<std::vector<uint32_t>> first_key_candidates(const SelectPlan& plan, size_t k,
                                                          const storage::ChunkBatch& batch,
                                                          const std::vector<uint32_t>* rows) {
  const ColumnExpr* ref = first_sort_column(plan);
  if (ref == nullptr || k == 0) return std::nullopt;
  const SortKey& first = plan.sort.front();
  const TypeId id = ref->type.id;
  if (id != TypeId::int4 && id != TypeId::int8 && id != TypeId::date && id != TypeId::timestamp &&
      id != TypeId::timestamptz) {
    return std::nullopt;
  }
  const auto at = std::find(plan.scan_columns.begin(), plan.scan_columns.end(), ref->index);
  if (at == plan.scan_columns.end()) return std::nullopt;
  const storage::ColumnVector& column = batch.columns[static_cast<size_t>(at - plan.scan_columns.begin())];
  if (column.has_nulls() || column.rows != batch.rows) return std::nullopt;
  const bool wide = stored_width(id) == ColumnWidth::int64;
  if (column.data.size() != batch.rows * (wide ? 8 : 4)) return std::nullopt;
  const size_t n = rows ? rows->size() : batch.rows;
  if (n <= 4 * k) return std::nullopt;
  auto value = [&](size_t i) -> int64_t {
    const size_t row = rows ? (*rows)[i] : i;
    return wide ? column.values<int64_t>()[row] : column.values<int32_t>()[row];
  };
  const bool descending = first.descending;
  auto better = [descending](int64_t a, int64_t b) { return descending ? a > b : a < b; };
  std::vector<int64_t> best;
  best.reserve(k);
  for (size_t i = 0; i < n; ++i) keep_first(best, k, value(i), better);
  const int64_t bound = best.front();
  std::vector<uint32_t> kept;
  for (size_t i = 0; i < n; ++i) {
    if (!better(bound, value(i))) kept.push_back(rows ? (*rows)[i] : static_cast<uint32_t>(i));
  }
  return kept;
}

}  // namespace

std::optional<std::vector<uint32_t>> top_n_rows_of_chunk(const SelectPlan& plan, size_t k,
                                                         const storage::ChunkBatch& batch,
                                                         const std::vector<Value>* parameters, int parts,
                                                         const std::vector<uint32_t>* passing) {
  std::set<size_t> sort_outputs;
  for (const SortKey& key : plan.sort) sort_outputs.insert(static_cast<size_t>(key.column));
  std::set<int> read;
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    Expr& output = *plan.outputs[o];
    if (sort_outputs.count(o) == 0) {
      if (dynamic_cast<const ColumnExpr*>(&output) == nullptr) return std::nullopt;
      continue;
    }
    if (reads_unlisted_columns(output)) return std::nullopt;
    collect_refs(output, read);
  }
  if (plan.where && passing == nullptr) {
    if (reads_unlisted_columns(*plan.where)) return std::nullopt;
    collect_refs(*plan.where, read);
  }
  // Rows WHERE kept (or all, without one) narrowed by the first key first.
  std::vector<uint32_t> first_key_rows;
  if (!plan.where || passing != nullptr) {
    if (std::optional<std::vector<uint32_t>> c = first_key_candidates(plan, k, batch, passing)) {
      first_key_rows = std::move(*c);
      passing = &first_key_rows;
    }
  }
  // The columns WHERE and the sort keys read, converted at every row (at
  // the rows WHERE keeps, where the caller tested it).
  const size_t width = plan.table->columns().size();
  std::vector<Vector> converted(width);
  EvalInput input;
  input.parameters = parameters;
  input.rows = passing ? passing->size() : batch.rows;
  input.columns.assign(width, nullptr);
  if (passing != nullptr && passing->size() <= k) return *passing;
  for (size_t i = 0; i < plan.scan_columns.size(); ++i) {
    const auto c = static_cast<size_t>(plan.scan_columns[i]);
    if (read.count(static_cast<int>(c)) == 0) continue;
    const SqlType type = plan.table->columns()[c].type;
    converted[c] = passing ? vector_from_stored_rows(batch.columns[i], *passing, type)
                           : vector_from_storage(batch.columns[i], type);
    input.columns[c] = &converted[c];
  }
  if (input.rows == 0) return std::vector<uint32_t>{};
  std::vector<uint32_t> rows(input.rows);
  if (passing != nullptr) std::iota(rows.begin(), rows.end(), 0u);
  else rows = select_rows_in_parts(plan.where.get(), input, parts);
  // Row numbers of `input` back to the chunk's.
  auto chunk_rows = [passing](std::vector<uint32_t> r) {
    if (passing != nullptr) {
      for (uint32_t& row : r) row = (*passing)[row];
    }
    return r;
  };
  if (rows.size() <= k) return chunk_rows(std::move(rows));
  std::vector<Vector> storage;
  std::vector<Expr*> readers;
  for (size_t o : sort_outputs) readers.push_back(plan.outputs[o].get());
  const EvalInput kept = narrowed_input(input, rows, readers, storage);
  std::vector<Vector> key_values;
  key_values.reserve(plan.sort.size());
  std::vector<SortColumn> keys;
  for (const SortKey& key : plan.sort) {
    key_values.push_back(plan.outputs[static_cast<size_t>(key.column)]->evaluate(kept));
    keys.push_back({&key_values.back(), key.descending, key.nulls_first});
  }
  const auto candidates = top_n_candidates(rows.size(), keys, k, 1);
  if (!candidates) return chunk_rows(std::move(rows));
  std::vector<uint32_t> chosen(candidates->size());
  for (size_t i = 0; i < chosen.size(); ++i) chosen[i] = rows[(*candidates)[i]];
  return chunk_rows(std::move(chosen));
}

}  // namespace tally::executor
