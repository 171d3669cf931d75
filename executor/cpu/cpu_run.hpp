#pragma once
// The CPU aggregation engine: multi-threaded, vectorized per chunk.
// Variants (chosen by can_use_* predicates, most specialized first):
//  * dense: direct-indexed per-thread state arrays when the key range (from
//    chunk statistics) is small enough for each thread's copy to stay in
//    cache; merged by index ranges in parallel;
//  * hash: per-thread open-addressing tables when the estimated groups' state
//    fits in cache; merged by radix partitions of the key hash in parallel;
//  * dense-radix / hash-radix: for state larger than the cache, every chunk's
//    rows are radix-partitioned (by key range or key hash) into cache-sized
//    partitions, and each partition's ONE state table is updated by whichever
//    thread takes it. There is one copy of the state, no merge, and every
//    update hits cache. When the estimated hash state exceeds the memory
//    budget, the partitions are split into passes over the input (each pass
//    keeps only its partitions). Dense-radix first only keeps each chunk's
//    partitioned rows ("deferred") while they take fewer bytes than the state
//    array would, and aggregates each partition at finalize in a cache-sized
//    scratch state written straight into the result: with many groups and few
//    rows per group (8M groups of 10M rows), the whole-range state array,
//    its zeroing, page faults and compaction cost more than the rows.
//
// CpuRun is one query's run. Its members are defined by job: the run itself
// and variant choice (cpu_run.cpp), dense (dense_variant.cpp), thread-local
// hash (hash_variant.cpp), the radix variants (radix_variant.cpp), deferred
// dense-radix (deferred_dense_radix.cpp) and the result arrays
// (result_assembly.cpp, and the templates below).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "executor/cpu/key_table.hpp"
#include "executor/cpu/run_state.hpp"
#include "executor/cpu/sizing.hpp"
#include "executor/cpu/state_set.hpp"

namespace tally::executor::cpu {

class CpuRun final : public AggregationRun {
 public:
  explicit CpuRun(const AggregationSpec& spec);

  // Dense needs a known key range small enough for direct indexing.
  static bool can_use_dense(const AggregationSpec& spec, uint64_t copies);
  // Thread-local state pays off while each thread's copy stays in its L2;
  // beyond that the radix variants keep one copy and cache-sized partitions.
  static Variant choose_variant(const AggregationSpec& spec, int threads, uint64_t l2_bytes);

  int passes() const override { return passes_; }
  void begin_pass(int pass) override;
  void sink(const ChunkInput& chunk) override;
  AggregationResult finalize() override;
  AggregationReport report() const override;

 private:
  // ---- the run (cpu_run.cpp) ----------------------------------------------
  // sink() of a chunk whose keys are one column (packed keys packed first).
  void sink_keys(const ChunkInput& chunk);
  void flush_pass();
  void widen_aggregate(size_t a);
  void sink_local_parallel(const ChunkInput& chunk);
  void sink_local(LocalTable& local, const ChunkInput& chunk, size_t begin, size_t end);
  static ChunkInput slice(const ChunkInput& chunk, size_t begin, size_t end);

  // ---- dense (dense_variant.cpp) -------------------------------------------
  void sink_dense(LocalTable& local, const ChunkInput& chunk, size_t begin, size_t end);
  bool keys_in_range(const ChunkInput& chunk) const;
  void switch_to_hash();
  void merge_dense();
  void emit_dense(LocalTable& table);

  // ---- thread-local hash (hash_variant.cpp) --------------------------------
  void sink_hash(LocalTable& local, const ChunkInput& chunk, size_t begin, size_t end);
  bool in_pass(int64_t key) const {
    if (passes_ <= 1) return true;
    return static_cast<int>(hash_key(key) >> 58) % passes_ == pass_;
  }
  bool local_state_too_large(uint64_t rows_seen) const;
  void escalate_to_radix(uint64_t rows_seen);
  void merge_hash();

  // ---- radix variants (radix_variant.cpp) ---------------------------------
  bool radix_in_pass(size_t part) const {
    if (passes_ <= 1) return true;
    if (part + 1 == parts_.size()) return pass_ == 0;  // the NULL key: first pass
    return static_cast<int>(part % static_cast<size_t>(passes_)) == pass_;
  }

  // part_of_ of a row that belongs to another pass.
  static constexpr uint16_t kSkipRow = UINT16_MAX;
  void setup_radix(uint64_t per_group, bool defer);
  void sink_radix(const ChunkInput& chunk);
  std::vector<MoveJob> plan_moved_columns(const ChunkInput& chunk);
  void copy_moved_columns(const std::vector<MoveJob>& jobs, int threads, size_t n);
  void flush_radix();

  // ---- deferred dense-radix (deferred_dense_radix.cpp) ---------------------
  void allocate_dense_state();
  void keep_deferred(std::vector<uint32_t> start, size_t rows);
  void apply_deferred(size_t p, size_t base, StateSet& set, uint8_t* seen, std::vector<uint32_t>& gids) const;
  void materialize_deferred();
  void emit_deferred();
  bool can_emit_direct() const;
  void emit_deferred_direct();
  void squeeze_partitions(const std::vector<size_t>& kept, size_t nparts, size_t null_part);

  // ---- result assembly (result_assembly.cpp) -------------------------------
  void choose_result_form();
  void grow_result_parallel(size_t groups);
  void move_result_rows(size_t from, size_t to, size_t n);
  void shrink_result(size_t groups);
  void grow_result(size_t groups);
  void reserve_result(size_t groups);
  // f(member) for every result array of aggregate a: visit_fields' arrays,
  // less a count another aggregate's serves, with sum_int64 for int64 sums.
  template <class F>
  void visit_result_fields(size_t a, F&& f) const {
    visit_fields(spec_.aggregates[a].op, [&](auto member) {
      if constexpr (std::is_same_v<decltype(member), std::vector<int64_t> PartialStates::*>) {
        if (member == &PartialStates::count && count_source_[a] != static_cast<int>(a)) return;
      }
      if constexpr (std::is_same_v<decltype(member), std::vector<__int128> PartialStates::*>) {
        if (member == &PartialStates::sum_int && compact_sum_[a]) {
          f(&PartialStates::sum_int64);
          return;
        }
      }
      f(member);
    });
  }

  // Writes groups ids[...] of set into result_ from position `at` on.
  template <class KeyOf>
  void emit_at(size_t at, const StateSet& set, const std::vector<uint32_t>& ids, KeyOf key_of, bool key_valid) {
    int64_t* keys = result_.keys.data() + at;
    for (size_t j = 0; j < ids.size(); ++j) keys[j] = key_of(ids[j]);
    std::memset(result_.key_valid.data() + at, key_valid ? 1 : 0, ids.size());
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      visit_result_fields(a, [&](auto member) {
        auto* dst = (result_.states[a].*member).data() + at;
        if constexpr (std::is_same_v<decltype(member), std::vector<int64_t> PartialStates::*>) {
          if (member == &PartialStates::sum_int64) {  // int64 sums as they are (compact form)
            const int64_t* sums = set.narrow_sum[a].data();
            for (size_t j = 0; j < ids.size(); ++j) dst[j] = sums[ids[j]];
            return;
          }
        }
        if constexpr (std::is_same_v<decltype(member), std::vector<__int128> PartialStates::*>) {
          if (member == &PartialStates::sum_int && set.narrow[a]) {
            const int64_t* sums = set.narrow_sum[a].data();
            for (size_t j = 0; j < ids.size(); ++j) dst[j] = sums[ids[j]];
            return;
          }
        }
        const auto& src = set.states[a].*member;
        for (size_t j = 0; j < ids.size(); ++j) dst[j] = src[ids[j]];
      });
    }
  }

  template <class KeyOf>
  void append_groups(const StateSet& set, const std::vector<uint32_t>& ids, KeyOf key_of, bool key_valid) {
    if (ids.empty()) return;
    const size_t at = result_.keys.size();
    grow_result(at + ids.size());
    emit_at(at, set, ids, key_of, key_valid);
  }

  AggregationSpec spec_;
  int threads_ = 1;
  uint64_t l2_bytes_ = kFallbackL2Bytes;
  Variant variant_ = Variant::hash;
  bool switched_ = false;
  bool escalated_ = false;
  size_t range_ = 0;
  int passes_ = 1;
  int pass_ = 0;
  int flushed_pass_ = -1;
  bool flushed_any_ = false;
  std::vector<uint8_t> narrow_;  // per aggregate: int64 sums (state_set.hpp)
  // The result form (choose_result_form): per aggregate, whether its count
  // is its group's row count (no FILTER or NULL input seen), the aggregate
  // whose count array it shares, and whether its sums stay int64.
  std::vector<uint8_t> counts_group_rows_;
  std::vector<int> count_source_;
  std::vector<uint8_t> compact_sum_;
  // Per aggregate: emit_deferred's updates skip its count (StateSet::no_count).
  std::vector<uint8_t> count_free_;
  // thread-local variants
  std::vector<LocalTable> locals_;
  // dense-radix: the one state array
  LocalTable dense_;
  // radix variants
  std::vector<Partition> parts_;  // the last one holds the NULL key
  size_t shift_ = 0;              // dense-radix: slot >> shift_ = partition
  size_t hash_bits_ = 0;          // hash-radix: top bits of the key hash = partition
  std::vector<uint16_t> part_of_;
  std::vector<uint32_t> dest_;        // row -> position in partition order
  SlotBuffer local_slot_;  // dense-radix: slot within the partition, partition order
  // deferred dense-radix: every chunk's partitioned rows, kept until finalize
  bool deferred_ = false;
  bool aggregated_deferred_ = false;
  bool emitted_direct_ = false;  // emit_deferred_direct ran (EXPLAIN)
  std::vector<DeferredChunk> deferred_chunks_;
  uint64_t deferred_bytes_ = 0;
  std::vector<int64_t> local_key_;    // hash-radix: key, partition order
  ChunkInput moved_;                  // the chunk's columns in partition order
  std::vector<MoveBuffer> moved_buffers_;
  AggregationResult result_;
  MemoryReservation result_memory_;  // result_'s arrays
  size_t result_bytes_per_group_ = 0;
  std::vector<int64_t> packed_keys_;  // the current chunk's packed key codes
  uint64_t rows_ = 0, groups_ = 0;
  double sink_ms_ = 0, finalize_ms_ = 0;
};

}  // namespace tally::executor::cpu
