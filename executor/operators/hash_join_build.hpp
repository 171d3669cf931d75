#pragma once
// What both ways of running a hash join (hash_join.cpp, and the semi/anti
// join built on its probe side, semi_join_reversed.cpp) use to hold and
// hash a side: the side drained into memory charged to the statement, its
// key vectors and hash chains.
#include <cstdint>
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

inline int worker_threads(const ExecContext& context) {
  return context.threads > 0 ? context.threads : cpu::WorkerPool::shared().workers() + 1;
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
class BuildSink final : public ChunkSink {
 public:
  explicit BuildSink(const std::vector<OutputColumn>& columns) : collect_(columns) {}
  bool consume(DataChunk& chunk) override {
    reservation_.grow(chunk_bytes(chunk));
    return collect_.consume(chunk);
  }
  DataChunk take() { return std::move(collect_.result); }
  // The rows' memory stays reserved for as long as the caller holds this.
  MemoryReservation take_reservation() { return std::move(reservation_); }

 private:
  CollectSink collect_;
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

}  // namespace tally::executor
