#include "executor/top_n_chunk_bound.hpp"

#include <algorithm>

#include "executor/result_order.hpp"
#include "executor/scan_pieces.hpp"
#include "executor/select_plan_detail.hpp"
#include "executor/table_provider.hpp"

namespace tally::executor {

namespace {

// Rows kept per chunk beyond which the bound is not recounted per chunk.
constexpr size_t kMaxBoundRows = size_t{1} << 16;

// Types whose chunk statistics are their values as a Vector holds them.
bool stats_are_values(TypeId id) {
  return id == TypeId::int2 || id == TypeId::int4 || id == TypeId::int8 || id == TypeId::date ||
         id == TypeId::timestamp || id == TypeId::timestamptz;
}

}  // namespace

TopNChunkBound::TopNChunkBound(const TableSnapshot& table, int column, bool descending, bool nulls_first, size_t n)
    : table_(table), column_(column), descending_(descending), nulls_first_(nulls_first), n_(n),
      skipped_(table.chunk_count()) {}

std::unique_ptr<TopNChunkBound> TopNChunkBound::plan(const SelectPlan& plan, size_t n, bool where_never_raises) {
  if (!plan.table || plan.sort.empty() || n == 0 || n > kMaxBoundRows || !where_never_raises) return nullptr;
  for (const ExprPtr& output : plan.outputs) {
    if (dynamic_cast<const ColumnExpr*>(output.get()) == nullptr) return nullptr;
  }
  const SortKey& key = plan.sort[0];
  const ColumnExpr* column = first_sort_column(plan);
  if (column == nullptr || static_cast<size_t>(column->index) >= plan.table->columns().size()) return nullptr;
  const TypeId id = plan.table->columns()[static_cast<size_t>(column->index)].type.id;
  if (!stats_are_values(id) || column->type.id != id) return nullptr;
  return std::unique_ptr<TopNChunkBound>(
      new TopNChunkBound(*plan.table, column->index, key.descending, key.nulls_first, n));
}

void TopNChunkBound::order(std::vector<ScanPiece>& pieces) const {
  // Chunks of unknown range keep their place before those of known ones.
  auto rank = [this](const ScanPiece& p) {
    const ChunkColumnStats s = table_.stats(p.chunk, column_);
    if (!s.known || s.min > s.max) return descending_ ? INT64_MAX : INT64_MIN;
    return descending_ ? s.max : s.min;
  };
  std::stable_sort(pieces.begin(), pieces.end(), [&](const ScanPiece& a, const ScanPiece& b) {
    return descending_ ? rank(a) > rank(b) : rank(a) < rank(b);
  });
}

bool TopNChunkBound::skips(size_t chunk) const {
  if (!known_.load(std::memory_order_acquire)) return false;
  const ChunkColumnStats s = table_.stats(chunk, column_);
  if (!s.known) return false;
  // NULLs sort before every value under NULLS FIRST: such a chunk is read.
  if (nulls_first_ && s.null_count > 0) return false;
  const int64_t bound = bound_.load(std::memory_order_relaxed);
  // A row equal to the bound may still come first on a later sort key.
  const bool empty = s.min > s.max;
  const bool beyond = empty || (descending_ ? s.max < bound : s.min > bound);
  if (beyond && chunk < skipped_.size()) skipped_[chunk].store(1, std::memory_order_relaxed);
  return beyond;
}

void TopNChunkBound::update(const Vector& first_key) {
  std::vector<int64_t> values;
  values.reserve(first_key.size());
  const int64_t* data = first_key.int_data();
  for (size_t i = 0; i < first_key.size(); ++i) {
    if (!first_key.null_at(i)) values.push_back(data[i]);
  }
  if (values.size() < n_) return;
  const auto nth = values.begin() + static_cast<long>(n_ - 1);
  if (descending_) std::nth_element(values.begin(), nth, values.end(), std::greater<int64_t>());
  else std::nth_element(values.begin(), nth, values.end());
  bound_.store(*nth, std::memory_order_relaxed);
  known_.store(true, std::memory_order_release);
}

std::string TopNChunkBound::explain() const {
  size_t n = 0;
  for (const auto& flag : skipped_) n += flag.load(std::memory_order_relaxed);
  if (n == 0) return "";
  return "ORDER BY ... LIMIT " + std::to_string(n_) + ": " + std::to_string(n) + " of " +
         std::to_string(table_.chunk_count()) + " chunks skipped by the key range of the rows kept";
}

}  // namespace tally::executor
