#include "executor/operators/top_n_per_partition.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "executor/cancel_point.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/operators/window.hpp"
#include "executor/row_sort.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

namespace {

// Candidates are pruned when they reach twice what the last prune kept, and
// never below this many rows: a sort of this size costs far less than the
// rows it lets pass unexamined.
constexpr size_t kMinPruneRows = size_t{1} << 16;

bool ranking(WindowFunction f) {
  return f == WindowFunction::row_number || f == WindowFunction::rank || f == WindowFunction::dense_rank;
}

bool constant_tree(const Expr& e) {
  if (dynamic_cast<const ConstExpr*>(&e) != nullptr) return true;
  const auto* f = dynamic_cast<const FunctionExpr*>(&e);
  return f != nullptr && std::all_of(f->args.begin(), f->args.end(), [](const ExprPtr& a) { return constant_tree(*a); });
}

bool is_column(const Expr& e, int column) {
  const auto* c = dynamic_cast<const ColumnExpr*>(&e);
  return c != nullptr && c->index == column;
}

// The rows of one run: the candidates still in the running, the PARTITION
// BY / ORDER BY values of the first `keyed` of them (what the last prune
// kept), and, per partition that already holds k ranks, its worst kept row.
class Candidates final : public ChunkSink {
 public:
  Candidates(const PhysicalOperator& child, const WindowSpec& spec, WindowFunction function, size_t space_width,
             int64_t k, ExecContext& context)
      : child_(child), spec_(spec), function_(function), space_width_(space_width), k_(k), context_(context),
        rows_(child.columns()) {}

  // The chunk is taken a slice at a time, so that a large stored chunk
  // meets the thresholds its own first rows set.
  bool consume(DataChunk& chunk) override {
    if (context_.cancel) context_.cancel->check();
    if (chunk.rows == 0) return true;
    std::vector<Vector> partition, order;
    evaluate_keys(chunk, partition, order);
    std::vector<uint8_t> keep(std::min(chunk.rows, kMinPruneRows));
    std::vector<uint32_t> kept;
    for (size_t first = 0; first < chunk.rows; first += kMinPruneRows) {
      const size_t last = std::min(chunk.rows, first + kMinPruneRows);
      kept.clear();
      if (thresholds_.empty() && dense_.empty()) {
        for (size_t i = first; i < last; ++i) kept.push_back(static_cast<uint32_t>(i));
      } else {
        cpu::parallel_for(worker_threads(context_), last - first, [&](int, size_t begin, size_t end) {
          CancelTicker ticker;
          for (size_t i = begin; i < end; ++i) {
            ticker.tick();
            keep[i] = !(dense_.empty() ? beaten(partition, order, first + i) : beaten_dense(partition, order, first + i));
          }
        });
        for (size_t i = first; i < last; ++i) {
          if (keep[i - first]) kept.push_back(static_cast<uint32_t>(i));
        }
      }
      DataChunk some = gather_chunk(chunk, kept);
      rows_.consume(some);
      if (rows_.result.rows >= prune_at_) prune();
    }
    return true;
  }

  // Prunes what is left and hands the candidates over.
  DataChunk finish() {
    if (rows_.result.rows > keyed_) prune();
    return std::move(rows_.result);
  }

 private:
  void evaluate_keys(const DataChunk& chunk, std::vector<Vector>& partition, std::vector<Vector>& order) const {
    const EvalInput input = space_input(chunk, child_.layout(), space_width_, context_.parameters);
    for (const auto& e : spec_.partition) partition.push_back(e->evaluate(input));
    for (const auto& o : spec_.order) order.push_back(o.expr->evaluate(input));
  }

  // Whether row i (keys `partition`, `order`) ranks strictly below the worst
  // row its partition keeps, which already holds k ranks.
  bool beaten(const std::vector<Vector>& partition, const std::vector<Vector>& order, size_t i) const {
    const uint64_t h = row_hash(partition, i);
    for (size_t s = h & mask_;; s = (s + 1) & mask_) {
      const Slot& slot = thresholds_[s];
      if (slot.row == kEmpty) return false;
      if (slot.hash != h || !rows_equal(partition, i, partition_, slot.row)) continue;
      for (size_t c = 0; c < order.size(); ++c) {
        const auto& o = spec_.order[c];
        if (int r = compare_sort_values(order[c], i, order_[c], slot.row, o.descending, o.nulls_first)) return r > 0;
      }
      return false;
    }
  }

  // beaten() when one integer PARTITION BY column of a small range and one
  // integer or float ORDER BY column hold the thresholds as order words
  // indexed by the key: one load per row instead of a probe and two more.
  bool beaten_dense(const std::vector<Vector>& partition, const std::vector<Vector>& order, size_t i) const {
    const Vector& p = partition[0];
    uint64_t threshold = null_partition_word_;
    if (!p.null_at(i)) {
      const uint64_t offset = static_cast<uint64_t>(p.int_data()[i]) - static_cast<uint64_t>(dense_lo_);
      if (offset >= dense_.size()) return false;
      threshold = dense_[offset];
    }
    return order_word(order[0], i) > threshold;
  }

  // An image of the ORDER BY value that never decreases along the window's
  // order (DESC and NULLS FIRST/LAST included): a row whose word is above
  // the threshold's is strictly worse. Equal words (a NULL beside the
  // extreme value) only keep a row, which the next prune settles.
  uint64_t order_word(const Vector& v, size_t i) const {
    const WindowOrder& o = spec_.order[0];
    if (v.null_at(i)) return o.nulls_first ? 0 : UINT64_MAX;
    uint64_t w;
    if (physical_of(v.type.id) == Physical::floating) {
      double d = v.floats[i];
      if (d == 0) d = 0;  // -0 sorts with 0
      const auto bits = std::bit_cast<uint64_t>(d);
      w = std::isnan(d) ? UINT64_MAX : ((bits >> 63) ? ~bits : bits | (uint64_t{1} << 63));
    } else {
      w = static_cast<uint64_t>(v.int_data()[i]) ^ (uint64_t{1} << 63);
    }
    return o.descending ? ~w : w;
  }

  bool dense_kind() const {
    auto words = [](const Vector& v) {
      const Physical p = physical_of(v.type.id);
      return p == Physical::integer || p == Physical::boolean || p == Physical::floating;
    };
    return partition_.size() == 1 && order_.size() == 1 && physical_of(partition_[0].type.id) != Physical::floating &&
           words(partition_[0]) && words(order_[0]);
  }

  // The thresholds of the rows `worst` (their partitions' worst kept rows)
  // by key, when dense_kind() and the keys span a small range; else false.
  bool dense_thresholds(const std::vector<uint32_t>& worst) {
    dense_.clear();
    null_partition_word_ = UINT64_MAX;
    if (!dense_kind() || worst.empty()) return false;
    const Vector& p = partition_[0];
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t row : worst) {
      if (p.null_at(row)) continue;
      lo = std::min(lo, p.int_data()[row]);
      hi = std::max(hi, p.int_data()[row]);
    }
    const uint64_t span = lo > hi ? 0 : static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
    if (span > 4 * worst.size() + 4096) return false;
    dense_lo_ = lo;
    dense_.assign(std::max<uint64_t>(span, 1), UINT64_MAX);  // UINT64_MAX: no threshold, nothing beaten
    for (uint32_t row : worst) {
      const uint64_t word = order_word(order_[0], row);
      if (p.null_at(row)) null_partition_word_ = word;
      else dense_[static_cast<uint64_t>(p.int_data()[row]) - static_cast<uint64_t>(lo)] = word;
    }
    return true;
  }

  // Sorts the candidates by partition and order and keeps, per partition,
  // the rows whose ranking value is at most k.
  void prune() {
    DataChunk& all = rows_.result;
    std::vector<Vector> partition, order;
    evaluate_keys(all, partition, order);
    std::vector<SortColumn> partition_columns, order_columns;
    for (const auto& v : partition) partition_columns.push_back({&v, false, false});
    for (size_t c = 0; c < order.size(); ++c) {
      order_columns.push_back({&order[c], spec_.order[c].descending, spec_.order[c].nulls_first});
    }
    const RowOrdering ordering = sort_rows(all.rows, partition_columns, order_columns, worker_threads(context_));
    std::vector<uint32_t> kept, worst;
    CancelTicker ticker;
    for (size_t p = 0; p + 1 < ordering.partitions.size(); ++p) {
      const size_t ps = ordering.partitions[p], pe = ordering.partitions[p + 1];
      int64_t value = 0;
      for (size_t i = ps; i < pe; ++i) {
        ticker.tick();
        value = rank_at(ordering, ps, i);
        if (value > k_) break;
        kept.push_back(ordering.rows[i]);
      }
      // Full: a row strictly worse than the last one kept ranks above k.
      const bool full = function_ == WindowFunction::dense_rank ? value >= k_ : pe - ps >= static_cast<size_t>(k_);
      if (full && k_ > 0) worst.push_back(static_cast<uint32_t>(kept.size() - 1));
    }
    all = gather_chunk(all, kept);
    partition_.clear();
    order_.clear();
    for (const auto& v : partition) partition_.push_back(gather(v, kept));
    for (const auto& v : order) order_.push_back(gather(v, kept));
    keyed_ = kept.size();
    prune_at_ = std::max(kMinPruneRows, 2 * keyed_);
    thresholds_.clear();
    if (dense_thresholds(worst)) return;
    size_t capacity = 16;
    while (capacity < 2 * worst.size()) capacity *= 2;
    thresholds_.assign(worst.empty() ? 0 : capacity, Slot{});
    mask_ = capacity - 1;
    for (uint32_t row : worst) {
      const uint64_t h = row_hash(partition_, row);
      size_t s = h & mask_;
      while (thresholds_[s].row != kEmpty) s = (s + 1) & mask_;
      thresholds_[s] = {h, row};
    }
  }

  // The ranking value of sorted position i of the partition starting at ps.
  int64_t rank_at(const RowOrdering& ordering, size_t ps, size_t i) const {
    switch (function_) {
      case WindowFunction::rank: return static_cast<int64_t>(ordering.groups[ordering.group_of[i]] - ps) + 1;
      case WindowFunction::dense_rank: return static_cast<int64_t>(ordering.group_of[i] - ordering.group_of[ps]) + 1;
      default: return static_cast<int64_t>(i - ps) + 1;
    }
  }

  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    uint64_t hash = 0;
    uint32_t row = kEmpty;
  };

  const PhysicalOperator& child_;
  const WindowSpec& spec_;
  WindowFunction function_;
  size_t space_width_;
  int64_t k_;
  ExecContext& context_;
  CollectSink rows_;
  size_t keyed_ = 0;
  size_t prune_at_ = kMinPruneRows;
  std::vector<Vector> partition_, order_;  // of the first keyed_ rows
  std::vector<Slot> thresholds_;
  size_t mask_ = 0;
  std::vector<uint64_t> dense_;  // per key - dense_lo_: the threshold's order word
  int64_t dense_lo_ = 0;
  uint64_t null_partition_word_ = UINT64_MAX;
};

}  // namespace

TopNPerPartition::TopNPerPartition(std::unique_ptr<PhysicalOperator> child, std::shared_ptr<const WindowPlan> plan,
                                   size_t space_width, size_t call, int64_t k, std::optional<TopNGroups> groups)
    : PhysicalOperator(window_columns(*child, *plan), child->estimated_rows()),
      plan_(std::move(plan)),
      space_width_(space_width),
      call_(call),
      k_(std::max<int64_t>(k, 0)),
      groups_(std::move(groups)) {
  layout_ = window_layout(*child, *plan_, space_width);
  children_.push_back(std::move(child));
}

void TopNPerPartition::run(ExecContext& context, ChunkSink& sink) const {
  if (groups_ && top_n_groups_pays(*groups_, context)) {
    groups_lines_.clear();
    DataChunk rows = run_top_n_groups(*groups_, context, plan_->calls.size(), context.actuals ? &groups_lines_ : nullptr);
    if (rows.rows > 0) sink.consume(rows);
    return;
  }
  const PhysicalOperator& child = *children_[0];
  const WindowCall& call = plan_->calls[call_];
  Candidates candidates(child, plan_->specs[call.spec], call.function, space_width_, k_, context);
  if (k_ > 0) run_operator(child, context, candidates);
  // The candidates pruning kept beyond rank k (it cuts only as they grow),
  // cut here: the ranking call's values follow the child's columns.
  struct RankCut final : ChunkSink {
    ChunkSink& next;
    size_t column;
    int64_t k;
    RankCut(ChunkSink& n, size_t c, int64_t bound) : next(n), column(c), k(bound) {}
    bool consume(DataChunk& chunk) override {
      const int64_t* ranks = chunk.columns[column].int_data();
      std::vector<uint32_t> kept;
      kept.reserve(chunk.rows);
      for (size_t r = 0; r < chunk.rows; ++r)
        if (ranks[r] <= k) kept.push_back(static_cast<uint32_t>(r));
      if (kept.size() != chunk.rows) chunk = gather_chunk(chunk, kept);
      return chunk.rows == 0 || next.consume(chunk);
    }
  } cut(sink, child.columns().size() + call_, k_);
  push_with_windows(*plan_, candidates.finish(), child.layout(), space_width_, context, cut);
}

std::vector<std::string> TopNPerPartition::details() const {
  std::vector<std::string> lines{"Top-N: ranks up to " + std::to_string(k_) + " per partition"};
  if (groups_) lines.push_back("Top-N by groups: each partition's first values by the aggregation engine, where a GPU runs it");
  for (const std::string& line : groups_lines_) {
    // The node's own time and CPU lines stand for the aggregation's.
    if (line.rfind("Execution Time:", 0) != 0 && line.rfind("CPU:", 0) != 0) lines.push_back(line);
  }
  return lines;
}

namespace {

struct RankingComparison {
  std::string op;  // "<", "<=" or "=", the column on the left
  int64_t bound;   // the largest value it lets through
};

std::optional<RankingComparison> ranking_comparison(const Expr& conjunct, int column) {
  const auto* f = dynamic_cast<const FunctionExpr*>(&conjunct);
  if (f == nullptr || f->args.size() != 2) return std::nullopt;
  std::string op = f->name;
  const Expr* constant = f->args[1].get();
  if (!is_column(*f->args[0], column)) {
    if (!is_column(*f->args[1], column)) return std::nullopt;
    constant = f->args[0].get();
    op = op == "<" ? ">" : op == ">" ? "<" : op == "<=" ? ">=" : op == ">=" ? "<=" : op;
  }
  if (op != "<" && op != "<=" && op != "=") return std::nullopt;
  if (!constant_tree(*constant) || physical_of(constant->type.id) != Physical::integer) return std::nullopt;
  const Vector v = constant->evaluate(EvalInput{1, {}, nullptr});
  if (v.count != 1 || v.null_at(0)) return std::nullopt;
  const int64_t bound = v.int_data()[0];
  if (op == "<") return RankingComparison{op, bound == INT64_MIN ? bound : bound - 1};
  return RankingComparison{op, bound};
}

}  // namespace

std::optional<int64_t> ranking_bound(const Expr& conjunct, int column) {
  const std::optional<RankingComparison> c = ranking_comparison(conjunct, column);
  if (!c) return std::nullopt;
  return c->bound;
}

bool implied_by_top_n(const Expr& conjunct, int column, int64_t k) {
  const std::optional<RankingComparison> c = ranking_comparison(conjunct, column);
  return c && c->op != "=" && c->bound >= k;
}

bool top_n_applies(const WindowPlan& plan, size_t call) {
  if (call >= plan.calls.size()) return false;
  const size_t group = plan.specs[plan.calls[call].spec].sort_group;
  return std::all_of(plan.calls.begin(), plan.calls.end(), [&](const WindowCall& c) {
    return ranking(c.function) && plan.specs[c.spec].sort_group == group;
  });
}

}  // namespace tally::executor
