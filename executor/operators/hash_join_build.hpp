#pragma once
// What both ways of running a hash join (hash_join.cpp, and the semi/anti
// join built on its probe side, semi_join_reversed.cpp) use to hold and
// hash a side: the side drained into memory charged to the statement, its
// key vectors and hash chains.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/memory_tracker.hpp"
#include "executor/cpu/worker_pool.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/operators/key_chains.hpp"
#include "executor/operators/physical_operator.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

// A probe chunk is split over the worker pool in parts of at least this many rows.
constexpr size_t kMinRowsPerPart = size_t{1} << 14;

inline std::vector<Vector> evaluate_all(const std::vector<ExprPtr>& exprs, const EvalInput& input) {
  std::vector<Vector> out;
  for (const auto& e : exprs) out.push_back(e->evaluate(input));
  return out;
}

// Bytes a chunk's values hold (what a held side keeps in memory).
inline uint64_t chunk_bytes(const DataChunk& chunk) {
  uint64_t bytes = 0;
  for (const auto& v : chunk.columns) {
    bytes += v.ints.size() * sizeof(int64_t) + v.floats.size() * sizeof(double) +
             v.numerics.size() * sizeof(Numeric) + v.intervals.size() * sizeof(Interval) + v.nulls.size();
    bytes += v.codes.size() * sizeof(int32_t);
    for (const auto& s : v.texts) bytes += sizeof(std::string) + (s.size() > 15 ? s.capacity() : 0);
  }
  return bytes;
}

// Drains a side into memory reserved from the statement's budget
// (common/memory_tracker.hpp): past cpu_memory_budget the join stops with
// 53200 before the side grows further.
// The chunks are kept as they come and put together once, at take(), on
// `threads` threads: one copy of each value, not the copies of an array
// doubling on the consumer thread while every worker waits for it.
class BuildSink final : public ChunkSink {
 public:
  BuildSink(const std::vector<OutputColumn>& columns, int threads) : columns_(columns), threads_(threads) {}
  bool consume(DataChunk& chunk) override {
    reservation_.grow(chunk_bytes(chunk));
    chunk.prepared.reset();
    chunks_.push_back(std::move(chunk));
    return true;
  }
  DataChunk take() { return concat_chunks(std::move(chunks_), columns_, threads_); }
  // The rows' memory stays reserved for as long as the caller holds this.
  MemoryReservation take_reservation() { return std::move(reservation_); }

 private:
  std::vector<OutputColumn> columns_;
  int threads_;
  std::vector<DataChunk> chunks_;
  MemoryReservation reservation_;
};

// A side of a join held in memory: its rows, their key vectors and the
// hash chains over them (no chains without keys: a nested loop).
struct HeldSide {
  DataChunk rows;
  std::vector<Vector> keys;
  KeyChains chains;
  MemoryReservation memory;
};

// Runs `op` into memory and hashes its rows on `keys` (bound against a
// space of `space_width` columns), the hashes computed on the worker pool.
HeldSide hold_side(const PhysicalOperator& op, const std::vector<ExprPtr>& keys, size_t space_width,
                   ExecContext& context);

// A join's residual condition (conjuncts over both sides), tested on
// candidate pairs: a row of the first side with a row of the second. Only
// the columns the condition reads are gathered for it.
class ResidualTest {
 public:
  ResidualTest(const std::vector<ExprPtr>& residual, const PhysicalOperator& first, const PhysicalOperator& second,
               size_t space_width);
  bool empty() const { return residual_.empty(); }
  // The numbers i of the pairs (row first_rows[i] of `first`, row
  // second_rows[i] of `second`) that pass, in order.
  std::vector<uint32_t> passing(const DataChunk& first, const std::vector<uint32_t>& first_rows,
                                const DataChunk& second, const std::vector<uint32_t>& second_rows,
                                const std::vector<Value>* parameters) const;

 private:
  // The residual `a op b` over an integer column of each side (TPC-H
  // Q21's l2.l_suppkey <> l1.l_suppkey, tested for millions of pairs):
  // compared where the values are, with no chunk of the pairs gathered.
  struct ColumnComparison {
    size_t first_column = 0, second_column = 0;  // a's side is the first
    bool a_first = true;                          // whether a is the first side's
    int op = 0;                                   // 0 =, 1 <>, 2 <, 3 <=, 4 >, 5 >=
  };
  std::vector<uint32_t> compared(const DataChunk& first, const std::vector<uint32_t>& first_rows,
                                 const DataChunk& second, const std::vector<uint32_t>& second_rows) const;

  const std::vector<ExprPtr>& residual_;
  std::optional<ColumnComparison> comparison_;
  size_t space_width_;
  std::vector<int> layout_;                           // of the pairs chunk, the pair numbers last
  std::vector<std::pair<bool, size_t>> columns_;      // (from the second side, column)
};

// Runs `op` into `sink`. Where `op` is a scan, it first tests its rows'
// `keys` against `held` and drops a row whose key matches no held row
// before it converts the rest of that row (the streamed side of a reversed
// semi join; a hash join's probe side takes its tests through
// ExecContext::key_tests).
void run_matching_keys(const PhysicalOperator& op, const std::vector<ExprPtr>& keys, const HeldSide& held,
                       ExecContext& context, ChunkSink& sink);

}  // namespace tally::executor
