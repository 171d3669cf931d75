#include "executor/operators/set_operation.hpp"

#include <functional>

#include "common/memory_tracker.hpp"
#include "executor/cancel_point.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

namespace {

// Distinct rows of the two sides, each with a count: entries point at a row
// of one side, which stays alive while the table is used. Open addressing
// over entry numbers (linear probing, at most half full), each entry's hash
// kept beside it so that a probe compares rows only when the hashes agree.
class RowTable {
 public:
  explicit RowTable(const DataChunk (&sides)[2]) : sides_(sides) { resize(0); }

  // The entry equal to row `row` of side `side`, or -1.
  long find(size_t side, uint32_t row, uint64_t hash) const {
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const uint32_t slot = slots_[i];
      if (slot == 0) return -1;
      const Entry& entry = entries_[slot - 1];
      if (entry.hash == hash && rows_equal(sides_[side].columns, row, sides_[entry.side].columns, entry.row)) {
        return static_cast<long>(slot - 1);
      }
    }
  }
  size_t add(size_t side, uint32_t row, uint64_t hash) {
    if ((entries_.size() + 1) * 2 > slots_.size()) resize(slots_.size());
    entries_.push_back({hash, static_cast<uint32_t>(side), row});
    counts.push_back(0);
    place(entries_.size() - 1);
    return entries_.size() - 1;
  }
  std::vector<int64_t> counts;

 private:
  struct Entry {
    uint64_t hash;
    uint32_t side;
    uint32_t row;
  };
  void place(size_t e) {
    size_t i = entries_[e].hash & mask_;
    while (slots_[i] != 0) i = (i + 1) & mask_;
    slots_[i] = static_cast<uint32_t>(e + 1);
  }
  // At least twice `rows` slots (a power of two), entries placed again.
  void resize(size_t rows) {
    size_t size = 16;
    while (size < rows * 2) size *= 2;
    // Slots, and the entries and counts they index (at most half as many).
    memory_.resize(size * sizeof(uint32_t) + size / 2 * (sizeof(Entry) + sizeof(int64_t)));
    slots_.assign(size, 0);
    mask_ = size - 1;
    for (size_t e = 0; e < entries_.size(); ++e) place(e);
  }

  const DataChunk (&sides_)[2];
  std::vector<Entry> entries_;
  std::vector<uint32_t> slots_;
  size_t mask_ = 0;
  MemoryReservation memory_;  // against the statement's budget
};

class FunctionSink final : public ChunkSink {
 public:
  explicit FunctionSink(std::function<bool(DataChunk&)> fn) : fn_(std::move(fn)) {}
  bool consume(DataChunk& chunk) override { return fn_(chunk); }

 private:
  std::function<bool(DataChunk&)> fn_;
};

double sum_estimates(const OperatorPtr& a, const OperatorPtr& b) { return a->estimated_rows() + b->estimated_rows(); }

}  // namespace

SetOperation::SetOperation(SetOperationKind kind, bool all, OperatorPtr left, OperatorPtr right,
                           std::vector<std::vector<ExprPtr>> casts, std::vector<OutputColumn> columns)
    : PhysicalOperator(std::move(columns), sum_estimates(left, right)), kind_(kind), all_(all), casts_(std::move(casts)) {
  children_.push_back(std::move(left));
  children_.push_back(std::move(right));
  std::vector<int> layout;
  for (size_t i = 0; i < columns_.size(); ++i) layout.push_back(static_cast<int>(i));
  layout_ = std::move(layout);
}

std::string SetOperation::describe() const {
  if (kind_ == SetOperationKind::union_) return all_ ? "Append" : "HashSetOp Union";
  const std::string name = kind_ == SetOperationKind::intersect ? "Intersect" : "Except";
  return "HashSetOp " + name + (all_ ? " All" : "");
}

std::vector<std::pair<std::string, std::string>> SetOperation::node_properties() const {
  if (node_type() == "Append") return {};
  const std::string command = kind_ == SetOperationKind::union_ ? "Union"
                              : kind_ == SetOperationKind::intersect ? "Intersect" : "Except";
  return {{"Strategy", "Hashed"}, {"Command", command + (all_ ? " All" : "")}};
}

void SetOperation::run_side(size_t s, ExecContext& context, ChunkSink& sink) const {
  FunctionSink cast_sink([&](DataChunk& chunk) {
    EvalInput input;
    input.rows = chunk.rows;
    input.parameters = context.parameters;
    for (const auto& c : chunk.columns) input.columns.push_back(&c);
    DataChunk out;
    out.rows = chunk.rows;
    for (size_t c = 0; c < chunk.columns.size(); ++c) {
      const auto& cast = casts_[s][c];
      out.columns.push_back(cast ? cast->evaluate(input) : std::move(chunk.columns[c]));
    }
    return sink.consume(out);
  });
  run_operator(*children_[s], context, cast_sink);
}

DataChunk SetOperation::collect_side(size_t s, ExecContext& context) const {
  CollectSink sink(columns_);
  run_side(s, context, sink);
  return std::move(sink.result);
}

void SetOperation::run(ExecContext& context, ChunkSink& sink) const {
  if (kind_ == SetOperationKind::union_ && all_) {
    bool more = true;
    FunctionSink forward([&](DataChunk& chunk) { return more = sink.consume(chunk); });
    run_side(0, context, forward);
    if (more) run_side(1, context, forward);
    return;
  }
  DataChunk sides[2] = {collect_side(0, context), collect_side(1, context)};
  // Grown with its distinct rows, not sized for every input row: duplicates
  // are common, and a table larger than the caches costs a miss per probe.
  RowTable table(sides);
  std::vector<uint32_t> keep[2];
  CancelTicker ticker;
  if (kind_ == SetOperationKind::union_) {
    for (size_t s = 0; s < 2; ++s) {
      for (uint32_t r = 0; r < sides[s].rows; ++r) {
        ticker.tick();
        const uint64_t h = row_hash(sides[s].columns, r);
        if (table.find(s, r, h) >= 0) continue;
        table.add(s, r, h);
        keep[s].push_back(r);
      }
    }
  } else {
    for (uint32_t r = 0; r < sides[1].rows; ++r) {
      ticker.tick();
      const uint64_t h = row_hash(sides[1].columns, r);
      long e = table.find(1, r, h);
      if (e < 0) e = static_cast<long>(table.add(1, r, h));
      ++table.counts[static_cast<size_t>(e)];
    }
    const bool intersect = kind_ == SetOperationKind::intersect;
    for (uint32_t r = 0; r < sides[0].rows; ++r) {
      ticker.tick();
      const uint64_t h = row_hash(sides[0].columns, r);
      const long e = table.find(0, r, h);
      int64_t* count = e >= 0 ? &table.counts[static_cast<size_t>(e)] : nullptr;
      if (intersect) {
        if (count == nullptr || *count <= 0) continue;
        // Without ALL, one copy: the row's count is spent by its first match.
        *count = all_ ? *count - 1 : 0;
      } else if (all_) {
        if (count != nullptr && *count > 0) {
          --*count;
          continue;
        }
      } else {
        // EXCEPT: rows absent on the right, once each (a kept row enters the
        // table, so its duplicates find it).
        if (e >= 0) continue;
        table.add(0, r, h);
      }
      keep[0].push_back(r);
    }
  }
  for (size_t s = 0; s < 2; ++s) {
    if (keep[s].empty()) continue;
    DataChunk out = gather_chunk(sides[s], keep[s]);
    if (!sink.consume(out)) return;
  }
}

}  // namespace tally::executor
