#include "executor/explain_costs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "executor/estimate/group_count_estimator.hpp"
#include "executor/estimate/hll_sketch.hpp"
#include "executor/operators/physical_operator.hpp"
#include "executor/table_provider.hpp"

namespace tally::executor {

std::string format_cost(const PlanCost& cost) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "  (cost=%.2f..%.2f rows=%.0f width=%d)", cost.startup, cost.total,
                std::max(1.0, std::round(cost.rows)), cost.width);
  return buf;
}

int row_width(const std::vector<SqlType>& types) {
  int width = 0;
  for (const SqlType& t : types) {
    const int16_t len = type_len(t.id);
    width += len > 0 ? len : 32;
  }
  return width;
}

PlanCost scan_cost(const TableSnapshot& table, const std::vector<int>& columns, bool filtered) {
  std::vector<SqlType> types;
  for (const int c : columns) types.push_back(table.columns()[static_cast<size_t>(c)].type);
  const double rows = static_cast<double>(table.row_count());
  PlanCost cost;
  cost.width = row_width(types);
  // The pages a row store of these columns would read, and a tuple's cost
  // per row (plus an operator's per row for the filter).
  const double pages = std::ceil(rows * std::max(cost.width, 1) / kPageBytes);
  cost.total = pages + rows * kCpuTupleCost + (filtered ? rows * kCpuOperatorCost : 0);
  cost.rows = filtered ? rows * kDefaultFilterSelectivity : rows;
  return cost;
}

namespace {

std::optional<double> merged_sketch_distinct(const TableSnapshot& table, int column) {
  std::vector<estimate::HllSketch> sketches;
  for (size_t c = 0; c < table.chunk_count(); ++c) {
    const ChunkColumnStats st = table.stats(c, column);
    auto sketch = st.hll.empty() ? std::nullopt : estimate::HllSketch::deserialize(st.hll);
    if (!sketch) return std::nullopt;
    sketches.push_back(std::move(*sketch));
  }
  if (sketches.empty()) return std::nullopt;
  auto merged = estimate::merge_sketches(sketches);
  if (!merged) return std::nullopt;
  return merged->estimate();
}

// Every snapshot of one version shows the same chunks: a column's merged
// estimate is kept while that version lives. A plan otherwise deserialized
// and merged each of lineitem's chunk sketches once per join key and
// statement (milliseconds of a TPC-H query's planning at SF 10).
class DistinctByVersion {
 public:
  std::optional<double> get(const std::shared_ptr<const void>& version, int column,
                            const std::function<std::optional<double>()>& compute) {
    {
      const std::lock_guard lock(mutex_);
      const auto entry = entries_.find(version);
      if (entry != entries_.end()) {
        const auto at = entry->second.find(column);
        if (at != entry->second.end()) return at->second;
      }
    }
    std::optional<double> distinct = compute();
    const std::lock_guard lock(mutex_);
    if (entries_.size() >= kMaxVersions) std::erase_if(entries_, [](const auto& e) { return e.first.expired(); });
    if (entries_.size() < kMaxVersions) entries_[version][column] = distinct;
    return distinct;
  }

 private:
  // Versions no longer alive are dropped once this many are kept.
  static constexpr size_t kMaxVersions = 256;
  std::mutex mutex_;
  std::map<std::weak_ptr<const void>, std::map<int, std::optional<double>>, std::owner_less<>> entries_;
};

}  // namespace

std::optional<double> sketch_distinct(const TableSnapshot& table, int column) {
  const std::shared_ptr<const void> version = table.version();
  if (!version) return merged_sketch_distinct(table, column);
  static DistinctByVersion cache;
  return cache.get(version, column, [&] { return merged_sketch_distinct(table, column); });
}

double estimate_groups(const std::vector<ExprPtr>& keys, const TableSnapshot* table, double input_rows) {
  if (keys.empty()) return 1;
  double groups = 1;
  for (const auto& key : keys) {
    std::optional<double> distinct;
    const auto* column = dynamic_cast<const ColumnExpr*>(key.get());
    if (table && column && column->index >= 0 && static_cast<size_t>(column->index) < table->columns().size()) {
      distinct = sketch_distinct(*table, column->index);
    }
    groups *= std::max(1.0, distinct.value_or(kDefaultDistinct));
  }
  return std::max(1.0, std::min(groups, input_rows));
}

PlanCost operator_cost(const PhysicalOperator& op) {
  PlanCost cost;
  double input_rows = 0;
  for (const auto& child : op.children()) {
    const PlanCost c = operator_cost(*child);
    cost.total += c.total;
    input_rows += c.rows;
  }
  std::vector<SqlType> types;
  for (const auto& c : op.columns()) types.push_back(c.type);
  cost.rows = std::max(1.0, op.estimated_rows());
  cost.width = row_width(types);
  // A leaf reads its rows; an inner node handles each input row once and
  // produces its own.
  if (op.children().empty()) cost.total += std::ceil(cost.rows * std::max(cost.width, 1) / kPageBytes);
  cost.total += input_rows * kCpuOperatorCost + cost.rows * kCpuTupleCost;
  return cost;
}

PlanCost sort_cost(const PlanCost& input) {
  PlanCost cost = input;
  const double n = std::max(2.0, input.rows);
  // PostgreSQL's cost_sort: 2 * cpu_operator_cost per comparison.
  cost.startup = input.total + 2 * kCpuOperatorCost * n * std::log2(n);
  cost.total = cost.startup + n * kCpuOperatorCost;
  return cost;
}

PlanCost aggregate_cost(const PlanCost& input, double groups, size_t aggregates, int width) {
  PlanCost cost;
  cost.rows = groups;
  cost.width = width;
  cost.startup = input.total + input.rows * kCpuOperatorCost * static_cast<double>(aggregates + 1);
  cost.total = cost.startup + groups * kCpuTupleCost;
  return cost;
}

}  // namespace tally::executor
