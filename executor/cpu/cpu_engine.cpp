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
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <unistd.h>

#include "common/error.hpp"
#include "common/heap_retention.hpp"
#include "executor/aggregate_engine.hpp"
#include "executor/cpu/key_table.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/cpu/state_set.hpp"
#include "executor/cpu/write_combining.hpp"

namespace tally::executor {
namespace {

// The engine's result arrays and the result columns made from them are the
// largest allocations of a query (1.4 GB at 8M groups): keep them in the
// heap between queries (common/heap_retention.hpp). A static initializer,
// since the policy must be set before any thread has its own arena; every
// program that can run the CPU engine links this file.
[[maybe_unused]] const bool kHeapRetained = (retain_large_allocations(), true);

// What earlier queries left free in the heap stays for the next one, up to
// kRetainedHeapBytes resident. Measuring it can walk the heap's free lists
// (mallinfo2: 20 ms with 100K free chunks on the 2-core VM), too much for
// every small query. So the heap is checked before runs whose estimate says
// they may allocate large arrays, and otherwise at most every
// kHeapCheckInterval.
constexpr uint64_t kHeapCheckGroups = uint64_t{1} << 16;  // 64K groups: arrays of 1-6 MB and more
constexpr std::chrono::seconds kHeapCheckInterval{10};

void release_heap_if_over_bound(uint64_t estimated_groups) {
  static std::atomic<int64_t> last_check_ms{INT64_MIN / 2};
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now().time_since_epoch()).count();
  const int64_t interval_ms = std::chrono::duration_cast<std::chrono::milliseconds>(kHeapCheckInterval).count();
  if (estimated_groups < kHeapCheckGroups && now_ms - last_check_ms.load(std::memory_order_relaxed) < interval_ms) return;
  last_check_ms.store(now_ms, std::memory_order_relaxed);
  release_retained_heap_over(kRetainedHeapBytes);
}

using cpu::KeyTable;
using cpu::StateSet;
using cpu::hash_key;
using cpu::parallel_for;
using cpu::parallel_tasks;
using cpu::update_states;
using cpu::visit_fields;
using cpu::with_values;

// Key ranges up to this many slots may use a dense variant; up to
// kDenseMaxRange when the groups fill at least a quarter of the range (then
// arrays cost no more than a hash table would).
constexpr int64_t kDenseAlwaysRange = int64_t{1} << 20;
constexpr int64_t kDenseMaxRange = int64_t{1} << 24;
// Rows per thread below which a chunk is processed by one thread (thread
// start-up would cost more than it saves).
constexpr size_t kMinRowsPerThread = 1 << 14;
// Radix partitions per merge thread of the thread-local hash variant: enough
// to balance skewed partitions.
constexpr int kPartitionsPerThread = 8;
// Radix variants: at most this many partitions, so the scatter writes to few
// enough streams to stay within the L1/L2 write-combining capacity.
constexpr size_t kMaxRadixPartitions = 1024;
// Thread-local state up to this many L2 sizes per thread still beats radix
// partitioning (measured with cpu_engine_bench: 64K groups x 5 aggregates,
// 6 MB per thread, ran 2.3x faster thread-local; 1M groups, 40+ MB, ran
// faster partitioned).
constexpr uint64_t kLocalStateL2Multiple = 8;
// Escalating out of the thread-local hash variant while most rows so far
// began a group: the final group count is taken as this many times the
// groups seen (sizes the hash-radix partitions).
constexpr uint64_t kGrowingGroupsFactor = 4;
// The thread-local hash variant checks its state size every this many rows
// (large enough that the two threads' start-up is amortized).
constexpr size_t kEscalationCheckRows = 1 << 17;
// Early escalation: the share of a worker's rows that began a new group above
// which its groups are taken to keep growing with the input (64K rows over
// 64K groups give 0.63, over 1M groups 0.97).
constexpr double kNewGroupFraction = 0.9;
// Used when the L2 size cannot be read from the system.
constexpr uint64_t kFallbackL2Bytes = 1 << 20;

uint64_t l2_cache_bytes() {
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return l2 > 0 ? static_cast<uint64_t>(l2) : kFallbackL2Bytes;
}

uint64_t bytes_per_group(const AggregationSpec& spec) {
  uint64_t bytes = 8;  // key (hash) or seen flag + slack (dense)
  for (const auto& a : spec.aggregates) {
    visit_fields(a.op, [&](auto member) { bytes += sizeof((std::declval<PartialStates&>().*member)[0]); });
  }
  return bytes;
}

size_t ceil_log2(uint64_t x) {
  size_t bits = 0;
  while ((uint64_t{1} << bits) < x) ++bits;
  return bits;
}

enum class Variant { dense, hash, dense_radix, hash_radix };

const char* variant_name(Variant v) {
  switch (v) {
    case Variant::dense: return "dense";
    case Variant::hash: return "hash-partitioned";
    case Variant::dense_radix: return "dense-radix";
    case Variant::hash_radix: return "hash-radix";
  }
  return "?";
}

// One worker's local aggregation state (thread-local variants).
struct LocalTable {
  KeyTable table;
  StateSet states;
  int64_t null_group = -1;  // group id of the NULL key
  std::vector<uint8_t> dense_seen;
};

// One hash-radix partition's state (dense-radix partitions are slices of one
// direct-indexed array and need none).
struct Partition {
  KeyTable table{0};
  StateSet states;
  std::vector<uint8_t> seen;  // the NULL-key partition: whether it got a row
};

class CpuRun final : public AggregationRun {
 public:
  explicit CpuRun(const AggregationSpec& spec) : spec_(spec) {
    release_heap_if_over_bound(spec.estimated_groups);
    threads_ = spec.threads > 0 ? spec.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    l2_bytes_ = l2_cache_bytes();
    // Integer sums start narrow; the first chunk whose input is not int32
    // (the planner's nominal widths say int64 even for stored int4 columns,
    // so the chunks decide) widens them.
    narrow_.assign(spec.aggregates.size(), 0);
    for (size_t a = 0; a < spec.aggregates.size(); ++a) {
      narrow_[a] = spec.aggregates[a].op == PartialOp::sum_int && spec.aggregates[a].input >= 0;
    }
    counts_group_rows_.assign(spec.aggregates.size(), 0);
    count_source_.resize(spec.aggregates.size());
    compact_sum_.assign(spec.aggregates.size(), 0);
    for (size_t a = 0; a < spec.aggregates.size(); ++a) {
      count_source_[a] = static_cast<int>(a);
      switch (spec.aggregates[a].op) {
        case PartialOp::count_rows: case PartialOp::count_valid: case PartialOp::sum_int: case PartialOp::sum_float:
        case PartialOp::min_int: case PartialOp::max_int: case PartialOp::min_float: case PartialOp::max_float:
          counts_group_rows_[a] = 1;  // until a chunk brings a FILTER or NULLs for it
          break;
        default: break;
      }
    }
    variant_ = choose_variant(spec, threads_, l2_bytes_);
    const uint64_t per_group = bytes_per_group(spec);
    if (variant_ == Variant::dense || variant_ == Variant::dense_radix) {
      range_ = static_cast<size_t>(spec.key_max - spec.key_min + 1);
    }
    // Memory-bounded passes: the estimated hash state must fit the budget
    // (thread-local tables hold up to one copy per thread plus the merge).
    if ((variant_ == Variant::hash || variant_ == Variant::hash_radix) && spec.memory_budget > 0 &&
        spec.estimated_groups > 0) {
      const uint64_t copies = variant_ == Variant::hash ? static_cast<uint64_t>(threads_ + 1) : 1;
      const uint64_t need = spec.estimated_groups * per_group * copies;
      passes_ = static_cast<int>(std::min<uint64_t>(64, (need + spec.memory_budget - 1) / spec.memory_budget));
      if (passes_ < 1) passes_ = 1;
    }
    if (variant_ == Variant::dense_radix || variant_ == Variant::hash_radix) {
      setup_radix(per_group, /*defer=*/true);
      return;
    }
    locals_.resize(static_cast<size_t>(threads_));
    // Presize each worker's table for the estimated groups (capped: an
    // overestimate must not allocate gigabytes up front).
    const size_t expected = static_cast<size_t>(std::min<uint64_t>(spec.estimated_groups, uint64_t{1} << 23));
    for (auto& l : locals_) {
      if (variant_ == Variant::hash && expected > 0) l.table = KeyTable(expected);
      l.states.init(spec.aggregates, narrow_);
      if (variant_ == Variant::dense) {
        l.states.resize(spec.aggregates, range_ + 1);  // last slot: the NULL key
        l.dense_seen.assign(range_ + 1, 0);
      }
    }
  }

  // Dense needs a known key range small enough for direct indexing.
  static bool can_use_dense(const AggregationSpec& spec, uint64_t copies) {
    if (!spec.key_range_known || spec.key_max < spec.key_min) return false;
    const __int128 range = static_cast<__int128>(spec.key_max) - spec.key_min + 1;
    if (range > kDenseMaxRange) return false;
    if (spec.memory_budget > 0 && static_cast<uint64_t>(range) * bytes_per_group(spec) * copies > spec.memory_budget) {
      return false;
    }
    if (range <= kDenseAlwaysRange) return true;
    return static_cast<__int128>(spec.estimated_groups) * 4 >= range;
  }

  // Thread-local state pays off while each thread's copy stays in its L2;
  // beyond that the radix variants keep one copy and cache-sized partitions.
  static Variant choose_variant(const AggregationSpec& spec, int threads, uint64_t l2_bytes) {
    const std::string& forced = spec.forced_variant;
    if (forced == "dense" && spec.key_range_known) return Variant::dense;
    if (forced == "dense-radix" && spec.key_range_known && spec.key_max >= spec.key_min) return Variant::dense_radix;
    if (forced == "hash") return Variant::hash;
    if (forced == "hash-radix") return Variant::hash_radix;
    const uint64_t per_group = bytes_per_group(spec);
    if (spec.key_range_known && spec.key_max >= spec.key_min) {
      const uint64_t range = static_cast<uint64_t>(spec.key_max - spec.key_min) + 1;
      if (range * per_group <= l2_bytes * kLocalStateL2Multiple && can_use_dense(spec, static_cast<uint64_t>(threads))) {
        return Variant::dense;
      }
      if (can_use_dense(spec, 1)) return Variant::dense_radix;
    }
    if (spec.estimated_groups == 0 || spec.estimated_groups * per_group <= l2_bytes * kLocalStateL2Multiple) {
      return Variant::hash;
    }
    return Variant::hash_radix;
  }

  int passes() const override { return passes_; }
  void begin_pass(int pass) override {
    if (pass != pass_) {
      flush_pass();
      pass_ = pass;
    }
  }

  void sink(const ChunkInput& chunk) override {
    const auto started = std::chrono::steady_clock::now();
    for (size_t a = 0; a < narrow_.size(); ++a) {
      if (narrow_[a] && (rows_ + chunk.rows > cpu::kNarrowSumRowLimit ||
                         chunk.values[static_cast<size_t>(spec_.aggregates[a].input)].width != ColumnWidth::int32)) {
        widen_aggregate(a);
      }
    }
    rows_ += chunk.rows;
    for (size_t a = 0; a < counts_group_rows_.size(); ++a) {
      const int input = spec_.aggregates[a].input;
      if ((!chunk.filters.empty() && chunk.filters[a] != nullptr) ||
          (input >= 0 && chunk.values[static_cast<size_t>(input)].validity != nullptr)) {
        counts_group_rows_[a] = 0;
      }
    }
    // The dense range comes from statistics; a key outside it (stale or
    // missing statistics) moves this run to a hash variant, keeping its state.
    if ((variant_ == Variant::dense || variant_ == Variant::dense_radix) && !keys_in_range(chunk)) switch_to_hash();
    if (variant_ == Variant::dense_radix || variant_ == Variant::hash_radix) {
      sink_radix(chunk);
    } else if (variant_ == Variant::hash && passes_ == 1 && spec_.forced_variant.empty()) {
      // Slices, so that a low estimate is found out early in the chunk; the
      // rest of the chunk then goes to the radix variant.
      for (size_t begin = 0; begin < chunk.rows; begin += kEscalationCheckRows) {
        const size_t end = std::min(chunk.rows, begin + kEscalationCheckRows);
        const ChunkInput part = slice(chunk, begin, end);
        if (variant_ != Variant::hash) {
          sink_radix(part);
          continue;
        }
        sink_local_parallel(part);
        if (local_state_too_large(rows_ - chunk.rows + end)) escalate_to_radix(rows_ - chunk.rows + end);
      }
    } else {
      sink_local_parallel(chunk);
    }
    sink_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  }

  AggregationResult finalize() override {
    const auto started = std::chrono::steady_clock::now();
    flush_pass();
    finalize_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    groups_ = result_.groups();
    // One PartialStates per aggregate even without a group (no input: the
    // variants that emit nothing never sized the result).
    if (result_.states.size() != spec_.aggregates.size()) result_.states.resize(spec_.aggregates.size());
    if (spec_.compact_result) result_.count_source = count_source_;
    return std::move(result_);
  }

  AggregationReport report() const override {
    AggregationReport r;
    r.engine = "cpu";
    r.variant = std::string(variant_name(variant_)) + (switched_ ? " (left dense: key outside statistics range)" : "") +
                (escalated_ ? " (from hash-partitioned: more groups than estimated)" : "");
    r.configuration = "threads=" + std::to_string(threads_);
    switch (variant_) {
      case Variant::dense: r.configuration += " range=" + std::to_string(range_); break;
      case Variant::hash: r.configuration += " partitions=" + std::to_string(threads_ * kPartitionsPerThread); break;
      case Variant::dense_radix:
        r.configuration += " range=" + std::to_string(range_) + " partitions=" + std::to_string(parts_.size() - 1);
        if (aggregated_deferred_) {
          r.configuration += emitted_direct_ ? " (rows kept, aggregated at finalize into the result)"
                                             : " (rows kept, aggregated at finalize)";
        }
        break;
      case Variant::hash_radix: r.configuration += " partitions=" + std::to_string(parts_.size() - 1); break;
    }
    r.rows = rows_;
    r.groups = groups_;
    r.passes = static_cast<uint64_t>(passes_);
    r.sink_ms = sink_ms_;
    r.finalize_ms = finalize_ms_;
    return r;
  }

 private:
  // ---- radix variants -----------------------------------------------------

  // Partition count from the L2 size: each partition's state should take
  // about half of one core's L2 while it is updated.
  // defer: dense-radix may keep partitioned rows instead of the state array
  // (not when escalating: the thread-local state is combined into the array).
  void setup_radix(uint64_t per_group, bool defer) {
    const uint64_t target_groups = std::max<uint64_t>(1024, l2_bytes_ / 2 / per_group);
    if (variant_ == Variant::dense_radix) {
      shift_ = ceil_log2(target_groups);
      while ((range_ >> shift_) + 1 > kMaxRadixPartitions) ++shift_;
      parts_.resize((((range_ - 1) >> shift_) + 1) + 1);  // + the NULL-key partition
      deferred_ = defer;
      if (!deferred_) allocate_dense_state();
      return;
    } else {
      const uint64_t groups = std::max<uint64_t>(spec_.estimated_groups, 1);
      size_t count = size_t{1} << ceil_log2(std::max<uint64_t>(groups / target_groups, 1));
      count = std::clamp<size_t>(count, static_cast<size_t>(threads_) * kPartitionsPerThread, kMaxRadixPartitions);
      count = size_t{1} << ceil_log2(count);
      hash_bits_ = ceil_log2(count);
      parts_.resize(count + 1);
      const size_t expected = static_cast<size_t>(std::min<uint64_t>(groups, uint64_t{1} << 26) / count);
      for (size_t p = 0; p < count; ++p) {
        parts_[p].table = KeyTable(expected);
        parts_[p].states.init(spec_.aggregates, narrow_);
      }
    }
    parts_.back().states.init(spec_.aggregates, narrow_);
    parts_.back().states.resize(spec_.aggregates, 1);
    parts_.back().seen.assign(1, 0);
  }

  bool radix_in_pass(size_t part) const {
    if (passes_ <= 1) return true;
    if (part + 1 == parts_.size()) return pass_ == 0;  // the NULL key: first pass
    return static_cast<int>(part % static_cast<size_t>(passes_)) == pass_;
  }

  static constexpr uint16_t kSkipRow = UINT16_MAX;

  void sink_radix(const ChunkInput& chunk) {
    const size_t n = chunk.rows;
    if (n == 0) return;
    const int threads = n >= kMinRowsPerThread * 2 ? threads_ : 1;
    const size_t nparts = parts_.size();
    const size_t null_part = nparts - 1;
    part_of_.resize(n);
    dest_.resize(n);
    if (variant_ == Variant::dense_radix) {
      local_slot_.resize(n);  // after a deferred chunk took the buffer: a fresh one
    }
    else local_key_.resize(n);
    const uint8_t* key_valid = chunk.keys.validity;
    const bool dense = variant_ == Variant::dense_radix;
    const int64_t base = spec_.key_min;
    std::vector<std::vector<uint32_t>> histogram(static_cast<size_t>(threads), std::vector<uint32_t>(nparts, 0));
    std::vector<uint8_t> in_pass(nparts);
    for (size_t p = 0; p < nparts; ++p) in_pass[p] = radix_in_pass(p) ? 1 : 0;
    // 1. Partition of every row, and per-thread histograms.
    parallel_for(threads, n, [&](int t, size_t begin, size_t end) {
      uint32_t* hist = histogram[static_cast<size_t>(t)].data();
      auto assign = [&](auto* keys) {
        for (size_t r = begin; r < end; ++r) {
          size_t p;
          if (key_valid && !key_valid[r]) p = null_part;
          else if (dense) p = static_cast<size_t>(static_cast<int64_t>(keys[r]) - base) >> shift_;
          else p = hash_key(static_cast<int64_t>(keys[r])) >> (64 - hash_bits_);
          if (passes_ > 1 && !in_pass[p]) { part_of_[r] = kSkipRow; continue; }
          part_of_[r] = static_cast<uint16_t>(p);
          ++hist[p];
        }
      };
      if (chunk.keys.width == ColumnWidth::int32) assign(static_cast<const int32_t*>(chunk.keys.data));
      else assign(static_cast<const int64_t*>(chunk.keys.data));
    });
    // 2. Partition-major offsets (within a partition: thread order = row order).
    std::vector<std::vector<uint32_t>> cursor(static_cast<size_t>(threads), std::vector<uint32_t>(nparts));
    std::vector<uint32_t> start(nparts + 1);
    uint32_t pos = 0;
    for (size_t p = 0; p < nparts; ++p) {
      start[p] = pos;
      for (int t = 0; t < threads; ++t) {
        cursor[static_cast<size_t>(t)][p] = pos;
        pos += histogram[static_cast<size_t>(t)][p];
      }
    }
    start[nparts] = pos;
    // 3. Destination of every row, and its partition-local key (dense: the
    // slot in the partition; hash: the key). When the aggregates read one
    // 4-byte column without NULLs or FILTER (sum/count/min/max/avg of an int4
    // NOT NULL column), its values move in the same loop (one pass, no dest_).
    const std::vector<MoveJob> jobs = plan_moved_columns(chunk);
    const bool fused = jobs.size() == 1 && jobs[0].width == 4;
    const uint32_t* fused_from = fused ? static_cast<const uint32_t*>(jobs[0].from) : nullptr;
    uint32_t* fused_to = fused ? static_cast<uint32_t*>(jobs[0].to) : nullptr;
    parallel_for(threads, n, [&](int t, size_t begin, size_t end) {
      uint32_t* cur = cursor[static_cast<size_t>(t)].data();
      // The fused move stages rows per partition (write_combining.hpp).
      auto scatter_combined = [&](auto* keys, auto& out, auto local_of) {
        for (size_t r = begin; r < end; ++r) {
          const uint16_t p = part_of_[r];
          if (p == kSkipRow) continue;
          out.add(p, fused_from[r], local_of(p, static_cast<int64_t>(keys[r])));
        }
        out.finish();
      };
      auto fused_run = [&](auto* keys) {
        if (dense) {
          cpu::CombinedScatter<uint32_t, uint32_t> out(nparts, fused_to, local_slot_.data(), cur);
          scatter_combined(keys, out, [&](size_t p, int64_t key) {
            return p == null_part ? static_cast<uint32_t>(range_) : static_cast<uint32_t>(key - base);
          });
        } else {
          cpu::CombinedScatter<uint32_t, int64_t> out(nparts, fused_to, local_key_.data(), cur);
          scatter_combined(keys, out, [](size_t, int64_t key) { return key; });
        }
      };
      if (fused) {
        if (chunk.keys.width == ColumnWidth::int32) fused_run(static_cast<const int32_t*>(chunk.keys.data));
        else fused_run(static_cast<const int64_t*>(chunk.keys.data));
        return;
      }
      auto scatter = [&](auto* keys, auto fuse) {
        for (size_t r = begin; r < end; ++r) {
          const uint16_t p = part_of_[r];
          if (p == kSkipRow) {
            if constexpr (!decltype(fuse)::value) dest_[r] = UINT32_MAX;
            continue;
          }
          const uint32_t at = cur[p]++;
          if constexpr (decltype(fuse)::value) fused_to[at] = fused_from[r];
          else dest_[r] = at;
          const int64_t key = static_cast<int64_t>(keys[r]);
          if (dense) local_slot_[at] = p == null_part ? static_cast<uint32_t>(range_) : static_cast<uint32_t>(key - base);
          else local_key_[at] = key;
        }
      };
      auto run = [&](auto fuse) {
        if (chunk.keys.width == ColumnWidth::int32) scatter(static_cast<const int32_t*>(chunk.keys.data), fuse);
        else scatter(static_cast<const int64_t*>(chunk.keys.data), fuse);
      };
      if (fused) run(std::true_type{});
      else run(std::false_type{});
    });
    // 4. The value columns, validity and FILTER masks in partition order, one
    // column at a time (sequential reads, one write stream per partition), so
    // that each partition's update reads its rows sequentially.
    if (!fused) copy_moved_columns(jobs, threads, n);
    const ChunkInput& moved = moved_;
    if (deferred_) {
      keep_deferred(std::move(start), n);
      return;
    }
    // 5. Each partition's rows into its state, one thread per partition.
    parallel_tasks(threads, nparts, [&](int, size_t p) {
      const uint32_t begin = start[p], end = start[p + 1];
      if (begin == end) return;
      Partition& part = parts_[p];
      const size_t count = end - begin;
      std::vector<uint32_t> gids;
      const uint32_t* ids = nullptr;
      if (dense) {
        // Slots of the one dense array; partitions own disjoint slices.
        ids = local_slot_.data() + begin;
        uint8_t* seen = dense_.dense_seen.data();
        for (size_t i = 0; i < count; ++i) seen[ids[i]] = 1;
        update_states(spec_.aggregates, dense_.states, moved, ids, nullptr, begin, count);
        return;
      }
      if (p == null_part) {
        gids.assign(count, 0);
        ids = gids.data();
        part.seen[0] = 1;
      } else {
        gids.resize(count);
        const int64_t* keys = local_key_.data() + begin;
        for (size_t i = 0; i < count; ++i) gids[i] = part.table.find_or_insert(keys[i]);
        part.states.ensure(spec_.aggregates, part.table.groups());
        ids = gids.data();
      }
      update_states(spec_.aggregates, part.states, moved, ids, nullptr, begin, count);
    });
  }

  // One column (or validity/FILTER mask) to move into partition order.
  struct MoveJob {
    const void* from;
    void* to;
    int width;
  };

  // Points moved_ at buffers for what the aggregates read of `chunk`, and
  // returns the copies that fill them.
  std::vector<MoveJob> plan_moved_columns(const ChunkInput& chunk) {
    const size_t n = chunk.rows;
    moved_.rows = n;
    moved_.keys = ColumnView{};
    moved_.values.assign(chunk.values.size(), ColumnView{});
    moved_.filters.assign(chunk.filters.size(), nullptr);
    std::vector<char> used(chunk.values.size(), 0);
    for (const auto& a : spec_.aggregates) {
      if (a.input >= 0) used[static_cast<size_t>(a.input)] = 1;
      if (a.input2 >= 0) used[static_cast<size_t>(a.input2)] = 1;
    }
    std::vector<MoveJob> jobs;
    size_t buffer = 0;
    auto take = [&](size_t bytes) -> void* {
      if (buffer == moved_buffers_.size()) moved_buffers_.emplace_back();
      MoveBuffer& b = moved_buffers_[buffer++];
      const size_t words = (bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t);
      if (b.words < words) {
        // Every byte is written before it is read: no zero-filling pass.
        b.data.reset(new uint64_t[words]);
        b.words = words;
      }
      return b.data.get();
    };
    for (size_t c = 0; c < chunk.values.size(); ++c) {
      if (!used[c]) continue;
      const ColumnView& in = chunk.values[c];
      // The planner gives every aggregate its own input, so sum(v), min(v),
      // max(v), avg(v) name the same stored column four times: move it once
      // (and a lone int4 column then takes the fused move).
      size_t same = 0;
      while (same < c && !(used[same] && chunk.values[same].data == in.data && chunk.values[same].width == in.width &&
                           chunk.values[same].validity == in.validity)) {
        ++same;
      }
      if (same < c) {
        moved_.values[c] = moved_.values[same];
        continue;
      }
      const int width = in.width == ColumnWidth::int32 || in.width == ColumnWidth::float32 ? 4 : 8;
      void* to = take(n * static_cast<size_t>(width));
      jobs.push_back({in.data, to, width});
      moved_.values[c].width = in.width;
      moved_.values[c].data = to;
      if (in.validity) {
        void* valid = take(n);
        jobs.push_back({in.validity, valid, 1});
        moved_.values[c].validity = static_cast<const uint8_t*>(valid);
      }
    }
    for (size_t a = 0; a < chunk.filters.size(); ++a) {
      if (!chunk.filters[a]) continue;
      void* mask = take(n);
      jobs.push_back({chunk.filters[a], mask, 1});
      moved_.filters[a] = static_cast<const uint8_t*>(mask);
    }
    return jobs;
  }

  // The copies of plan_moved_columns, by dest_.
  void copy_moved_columns(const std::vector<MoveJob>& jobs, int threads, size_t n) {
    parallel_for(threads, n, [&](int, size_t begin, size_t end) {
      const uint32_t* dest = dest_.data();
      for (const MoveJob& job : jobs) {
        auto copy = [&](auto* from, auto* to) {
          for (size_t r = begin; r < end; ++r) {
            if (dest[r] != UINT32_MAX) to[dest[r]] = from[r];
          }
        };
        if (job.width == 4) copy(static_cast<const uint32_t*>(job.from), static_cast<uint32_t*>(job.to));
        else if (job.width == 8) copy(static_cast<const uint64_t*>(job.from), static_cast<uint64_t*>(job.to));
        else copy(static_cast<const uint8_t*>(job.from), static_cast<uint8_t*>(job.to));
      }
    });
  }

  // Appends the partitions of the current pass to result_ (in parallel, into
  // presized arrays) and frees them.
  void flush_radix() {
    if (variant_ == Variant::dense_radix) {
      if (deferred_) {
        emit_deferred();
        aggregated_deferred_ = true;
      }
      else emit_dense(dense_);
      return;
    }
    const size_t nparts = parts_.size();
    const size_t null_part = nparts - 1;
    std::vector<std::vector<uint32_t>> ids(nparts);
    parallel_tasks(threads_, nparts, [&](int, size_t p) {
      if (!radix_in_pass(p)) return;
      const Partition& part = parts_[p];
      if (p == null_part) {
        if (part.seen[0]) ids[p].push_back(0);
      } else {
        ids[p].resize(part.table.groups());
        for (uint32_t i = 0; i < ids[p].size(); ++i) ids[p][i] = i;
      }
    });
    std::vector<size_t> offset(nparts + 1);
    offset[0] = result_.keys.size();
    for (size_t p = 0; p < nparts; ++p) offset[p + 1] = offset[p] + ids[p].size();
    grow_result(offset[nparts]);
    parallel_tasks(threads_, nparts, [&](int, size_t p) {
      if (ids[p].empty()) return;
      Partition& part = parts_[p];
      if (p == null_part) {
        emit_at(offset[p], part.states, ids[p], [](uint32_t) { return int64_t{0}; }, false);
      } else {
        const std::vector<int64_t>& keys = part.table.keys();
        emit_at(offset[p], part.states, ids[p], [&](uint32_t i) { return keys[i]; }, true);
      }
      // Done with this partition: free its memory (a later pass needs none of it).
      part = Partition{};
      part.states.init(spec_.aggregates, narrow_);
    });
  }

  // Past kNarrowSumRowLimit rows, or for an input wider than int32, int64
  // sums could overflow: every state set switches aggregate a to int128.
  // ---- deferred dense-radix -------------------------------------------------

  // One whole-range state array (+ the NULL key's slot at range_):
  // partitions are slices of it, so nothing is merged or copied.
  void allocate_dense_state() {
    dense_.states.init(spec_.aggregates, narrow_);
    dense_.states.resize(spec_.aggregates, range_ + 1);
    dense_.dense_seen.assign(range_ + 1, 0);
  }

  // Keeps the chunk just partitioned by sink_radix (its slots, moved columns
  // and partition offsets) until finalize; once the kept rows take more
  // bytes than the state array would, the array is built and the run goes
  // on as plain dense-radix.
  void keep_deferred(std::vector<uint32_t> start, size_t rows) {
    DeferredChunk d;
    d.start = std::move(start);
    d.slots = std::move(local_slot_);
    local_slot_ = SlotBuffer();
    d.moved = moved_;
    d.buffers = std::move(moved_buffers_);
    moved_buffers_.clear();
    deferred_bytes_ += rows * sizeof(uint32_t);
    for (const auto& b : d.buffers) deferred_bytes_ += b.words * sizeof(uint64_t);
    deferred_chunks_.push_back(std::move(d));
    if (deferred_bytes_ > (range_ + 1) * bytes_per_group(spec_)) materialize_deferred();
  }

  // The rows of partition p kept from every deferred chunk, into `set` whose
  // index 0 is slot `base` (seen: one flag per slot from base on).
  void apply_deferred(size_t p, size_t base, StateSet& set, uint8_t* seen, std::vector<uint32_t>& gids) const {
    for (const DeferredChunk& d : deferred_chunks_) {
      const uint32_t begin = d.start[p], end = d.start[p + 1];
      if (begin == end) continue;
      const size_t count = end - begin;
      gids.resize(count);
      const uint32_t* slots = d.slots.data() + begin;
      for (size_t i = 0; i < count; ++i) gids[i] = static_cast<uint32_t>(slots[i] - base);
      for (size_t i = 0; i < count; ++i) seen[gids[i]] = 1;
      update_states(spec_.aggregates, set, d.moved, gids.data(), nullptr, begin, count);
    }
  }

  // Leaves deferred mode: the state array, with every kept row applied.
  void materialize_deferred() {
    allocate_dense_state();
    // Partitions own disjoint slices of the array (the NULL key: slot range_).
    parallel_tasks(threads_, parts_.size(), [&](int, size_t p) {
      std::vector<uint32_t> gids;
      apply_deferred(p, 0, dense_.states, dense_.dense_seen.data(), gids);
    });
    deferred_chunks_.clear();
    deferred_bytes_ = 0;
    deferred_ = false;
  }

  // Finalize of deferred dense-radix: each partition's rows are aggregated in
  // a per-thread scratch state of one partition's slots (in cache) and its
  // groups written into result_ at the partition's first slot; the blocks are
  // then moved together (no move at all when every slot has a group).
  void emit_deferred() {
    if (can_emit_direct()) {
      emit_deferred_direct();
      emitted_direct_ = true;
      return;
    }
    const size_t nparts = parts_.size();
    const size_t null_part = nparts - 1;
    const size_t span = size_t{1} << shift_;
    grow_result_parallel(range_ + 1);
    std::vector<size_t> kept(nparts, 0);
    std::vector<LocalTable> scratch(static_cast<size_t>(threads_));
    parallel_tasks(threads_, nparts, [&](int t, size_t p) {
      LocalTable& s = scratch[static_cast<size_t>(t)];
      if (s.dense_seen.empty()) {
        s.states.init(spec_.aggregates, narrow_);
        s.states.no_count = count_free_;
        s.states.resize(spec_.aggregates, span);
        s.dense_seen.assign(span, 0);
      }
      const bool null_key = p == null_part;
      const size_t base = null_key ? range_ : p << shift_;
      const size_t width = null_key ? 1 : std::min(span, range_ - base);
      s.states.clear(spec_.aggregates, width);
      std::memset(s.dense_seen.data(), 0, width);
      std::vector<uint32_t> gids;
      apply_deferred(p, base, s.states, s.dense_seen.data(), gids);
      std::vector<uint32_t> ids;
      ids.reserve(width);
      for (uint32_t i = 0; i < width; ++i) {
        if (s.dense_seen[i]) ids.push_back(i);
      }
      kept[p] = ids.size();
      if (ids.empty()) return;
      const int64_t first_key = spec_.key_min + static_cast<int64_t>(base);
      if (null_key) emit_at(base, s.states, ids, [](uint32_t) { return int64_t{0}; }, false);
      else emit_at(base, s.states, ids, [&](uint32_t i) { return first_key + static_cast<int64_t>(i); }, true);
    });
    squeeze_partitions(kept, nparts, null_part);
  }

  // Whether emit_deferred_direct can take this result: every aggregate
  // counts its group's rows (no FILTER, no NULL input) into one shared count
  // and is a count, an int64 sum or an integer min/max (the compact form:
  // count(*), sum, min, max, avg of an int2/int4 NOT NULL column).
  bool can_emit_direct() const {
    if (!spec_.compact_result || passes_ != 1 || spec_.aggregates.empty()) return false;
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      if (!counts_group_rows_[a] || count_source_[a] != count_source_[0]) return false;
      switch (spec_.aggregates[a].op) {
        case PartialOp::count_rows: case PartialOp::count_valid: case PartialOp::min_int: case PartialOp::max_int: break;
        case PartialOp::sum_int:
          if (!compact_sum_[a]) return false;
          break;
        default: return false;
      }
    }
    return true;
  }

  // emit_deferred for the shapes of can_emit_direct: each partition's rows
  // are aggregated straight into its slice of the result arrays (cache-sized,
  // zeroed by grow_result_parallel: the shared count marks the slots that
  // got rows), then the slice is compacted in place. No scratch state to
  // clear and no copy of it into the result (8M groups: the copy wrote the
  // result's 390 MB a second time).
  void emit_deferred_direct() {
    const size_t nparts = parts_.size();
    const size_t null_part = nparts - 1;
    const size_t span = size_t{1} << shift_;
    const auto source = static_cast<size_t>(count_source_[0]);
    grow_result_parallel(range_ + 1);
    std::vector<int64_t*> arrays;  // every result array (all int64 in this shape), for compaction
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      visit_result_fields(a, [&](auto member) {
        if constexpr (std::is_same_v<decltype(member), std::vector<int64_t> PartialStates::*>) {
          arrays.push_back((result_.states[a].*member).data());
        }
      });
    }
    // sum(v) and avg(v) keep the same sums of the same column (the planner
    // gives each aggregate its own input, but the column is moved once, so
    // their moved data is the same): summed once, copied into the other.
    const size_t naggs = spec_.aggregates.size();
    std::vector<int> same_sums(naggs, -1);
    for (size_t a = 0; a < naggs; ++a) {
      if (spec_.aggregates[a].op != PartialOp::sum_int) continue;
      for (size_t b = 0; b < a && same_sums[a] < 0; ++b) {
        if (spec_.aggregates[b].op != PartialOp::sum_int || same_sums[b] >= 0) continue;
        bool same = true;
        for (const DeferredChunk& d : deferred_chunks_) {
          const ColumnView& x = d.moved.values[static_cast<size_t>(spec_.aggregates[a].input)];
          const ColumnView& y = d.moved.values[static_cast<size_t>(spec_.aggregates[b].input)];
          same &= x.data == y.data && x.width == y.width;
        }
        if (same) same_sums[a] = static_cast<int>(b);
      }
    }
    std::vector<size_t> kept(nparts, 0);
    parallel_tasks(threads_, nparts, [&](int, size_t p) {
      const bool null_key = p == null_part;
      const size_t base = null_key ? range_ : p << shift_;
      const size_t width = null_key ? 1 : std::min(span, range_ - base);
      int64_t* count = result_.states[source].count.data() + base;
      // Every array's slice is written in order first, zeros included
      // (grow_result_parallel's zeros are long out of cache): the random
      // updates below then hit lines already in L2 instead of each missing
      // to memory (they were 60% of this function's time).
      std::fill_n(count, width, 0);
      for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
        const PartialOp op = spec_.aggregates[a].op;
        if (op == PartialOp::min_int) std::fill_n(result_.states[a].extreme_int.data() + base, width, INT64_MAX);
        if (op == PartialOp::max_int) std::fill_n(result_.states[a].extreme_int.data() + base, width, INT64_MIN);
        if (op == PartialOp::sum_int && same_sums[a] < 0) std::fill_n(result_.states[a].sum_int64.data() + base, width, 0);
      }
      std::vector<uint32_t> gids;
      for (const DeferredChunk& d : deferred_chunks_) {
        const uint32_t begin = d.start[p], end = d.start[p + 1];
        if (begin == end) continue;
        const size_t n = end - begin;
        gids.resize(n);
        const uint32_t* slots = d.slots.data() + begin;
        for (size_t i = 0; i < n; ++i) gids[i] = static_cast<uint32_t>(slots[i] - base);
        const uint32_t* g = gids.data();
        for (size_t i = 0; i < n; ++i) ++count[g[i]];
        for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
          const PartialAggregate& agg = spec_.aggregates[a];
          if (agg.op == PartialOp::count_rows || agg.op == PartialOp::count_valid) continue;  // the shared count
          if (same_sums[a] >= 0) continue;  // copied below
          const ColumnView& in = d.moved.values[static_cast<size_t>(agg.input)];
          with_values(in.width, in.data, [&](auto* column) {
            using T = std::remove_cv_t<std::remove_pointer_t<decltype(column)>>;
            if constexpr (std::is_integral_v<T>) {
              const T* v = column + begin;  // the moved column is in partition order
              if (agg.op == PartialOp::sum_int) {
                int64_t* sum = result_.states[a].sum_int64.data() + base;
                for (size_t i = 0; i < n; ++i) sum[g[i]] += static_cast<int64_t>(v[i]);
              } else if (agg.op == PartialOp::min_int) {
                int64_t* ext = result_.states[a].extreme_int.data() + base;
                for (size_t i = 0; i < n; ++i) ext[g[i]] = std::min(ext[g[i]], static_cast<int64_t>(v[i]));
              } else {
                int64_t* ext = result_.states[a].extreme_int.data() + base;
                for (size_t i = 0; i < n; ++i) ext[g[i]] = std::max(ext[g[i]], static_cast<int64_t>(v[i]));
              }
            }
          });
        }
      }
      for (size_t a = 0; a < naggs; ++a) {
        if (same_sums[a] < 0) continue;
        const int64_t* from = result_.states[static_cast<size_t>(same_sums[a])].sum_int64.data() + base;
        std::memcpy(result_.states[a].sum_int64.data() + base, from, width * sizeof(int64_t));
      }
      // Keys, and the slots without rows squeezed out of the slice.
      int64_t* keys = result_.keys.data() + base;
      const int64_t first_key = spec_.key_min + static_cast<int64_t>(base);
      size_t j = 0;
      for (size_t i = 0; i < width; ++i) {
        if (count[i] == 0) continue;
        if (j != i) {
          for (int64_t* array : arrays) array[base + j] = array[base + i];
        }
        keys[j++] = null_key ? 0 : first_key + static_cast<int64_t>(i);
      }
      std::memset(result_.key_valid.data() + base, null_key ? 0 : 1, j);
      kept[p] = j;
    });
    squeeze_partitions(kept, nparts, null_part);
  }

  // After a deferred emit wrote partition p's `kept[p]` groups at the
  // front of its slice (the NULL key's at range_): moves the slices together
  // in partition order, trims the result, and drops the deferred rows.
  void squeeze_partitions(const std::vector<size_t>& kept, size_t nparts, size_t null_part) {
    size_t at = 0;
    for (size_t p = 0; p < nparts; ++p) {
      const size_t base = p == null_part ? range_ : p << shift_;
      if (kept[p] > 0 && at != base) move_result_rows(base, at, kept[p]);
      at += kept[p];
    }
    shrink_result(at);
    deferred_chunks_.clear();
    deferred_bytes_ = 0;
  }

  void widen_aggregate(size_t a) {
    for (auto& l : locals_) l.states.widen(a);
    dense_.states.widen(a);
    for (auto& p : parts_) p.states.widen(a);
    narrow_[a] = 0;
  }

  // ---- thread-local variants ----------------------------------------------

  bool keys_in_range(const ChunkInput& chunk) const {
    const uint8_t* valid = chunk.keys.validity;
    bool ok = true;
    auto check = [&](auto* keys) {
      for (size_t r = 0; r < chunk.rows; ++r) {
        if (valid && !valid[r]) continue;
        const int64_t k = static_cast<int64_t>(keys[r]);
        ok &= k >= spec_.key_min && k <= spec_.key_max;
      }
    };
    if (chunk.keys.width == ColumnWidth::int32) check(static_cast<const int32_t*>(chunk.keys.data));
    else check(static_cast<const int64_t*>(chunk.keys.data));
    return ok;
  }

  // Moves the dense state into thread-local hash tables (combining is
  // order-independent, so the result is the same).
  void switch_to_hash() {
    std::vector<LocalTable> hashed(variant_ == Variant::dense ? static_cast<size_t>(threads_) : 1);
    for (auto& h : hashed) h.states.init(spec_.aggregates, narrow_);
    auto add = [&](LocalTable& h, bool null_key, int64_t key, const StateSet& from, size_t i) {
      uint32_t g;
      if (null_key) {
        if (h.null_group < 0) h.null_group = h.table.add_unindexed(0);
        g = static_cast<uint32_t>(h.null_group);
      } else {
        g = h.table.find_or_insert(key);
      }
      h.states.ensure(spec_.aggregates, h.table.groups());
      h.states.combine(spec_.aggregates, g, from, i);
    };
    if (variant_ == Variant::dense_radix) {
      if (deferred_) materialize_deferred();
      locals_.assign(1, std::move(dense_));
      dense_ = LocalTable{};
      parts_.clear();
    }
    for (size_t t = 0; t < locals_.size(); ++t) {
      const LocalTable& l = locals_[t];
      for (size_t i = 0; i <= range_; ++i) {
        if (l.dense_seen[i]) add(hashed[t], i == range_, spec_.key_min + static_cast<int64_t>(i), l.states, i);
      }
    }
    locals_ = std::move(hashed);
    variant_ = Variant::hash;
    switched_ = true;
  }

  // The thread-local hash variant was chosen from the group estimate, which a
  // sample can get badly wrong (a 32K-row sample of 10M rows with 8M groups
  // estimated 85K). Once the groups actually seen no longer fit what the
  // thread-local variant is for, the run moves to a radix variant.
  // rows_seen: rows sunk so far. Also true early, once the state outgrows L2
  // while nearly every row is a new group (it will outgrow the limit too, and
  // escalating early leaves fewer groups to move).
  bool local_state_too_large(uint64_t rows_seen) const {
    if (passes_ > 1 || !spec_.forced_variant.empty()) return false;
    uint64_t groups = 0;  // the merged table holds at least max, at most sum of these
    for (const auto& l : locals_) groups += l.table.groups();
    const uint64_t bytes = groups * bytes_per_group(spec_);
    if (bytes > l2_bytes_ * kLocalStateL2Multiple) return true;
    // Each worker's groups are new to it: their sum over the rows is the share of new groups.
    return bytes > l2_bytes_ && static_cast<double>(groups) >= kNewGroupFraction * static_cast<double>(rows_seen);
  }

  // Moves the thread-local hash state into the radix variant the groups seen
  // so far call for (dense-radix when the key range allows), then continues
  // there. Combining is order-independent, so the result is the same.
  void escalate_to_radix(uint64_t rows_seen) {
    std::vector<LocalTable> locals = std::move(locals_);
    locals_.clear();
    uint64_t seen = 0;
    for (const auto& l : locals) seen += l.table.groups();
    // While most rows so far started a new group, the groups keep growing with
    // the input: assume several times what was seen, and with a known key
    // range that fits, that the range fills (dense-radix).
    const bool growing = seen * 2 >= rows_seen;
    spec_.estimated_groups = std::max(spec_.estimated_groups, growing ? seen * kGrowingGroupsFactor : seen);
    AggregationSpec probe = spec_;
    if (growing && spec_.key_range_known && spec_.key_max >= spec_.key_min) {
      probe.estimated_groups = static_cast<uint64_t>(spec_.key_max - spec_.key_min) + 1;
    }
    const bool dense = !switched_ && spec_.key_range_known && spec_.key_max >= spec_.key_min && can_use_dense(probe, 1);
    variant_ = dense ? Variant::dense_radix : Variant::hash_radix;
    if (dense) range_ = static_cast<size_t>(spec_.key_max - spec_.key_min + 1);
    escalated_ = true;
    setup_radix(bytes_per_group(spec_), /*defer=*/false);
    const size_t null_part = parts_.size() - 1;
    // Partition p is merged by thread p % threads: each thread reads every
    // local's keys but writes only its own partitions.
    const int threads = threads_;
    parallel_for(threads, static_cast<size_t>(threads), [&](int, size_t begin, size_t end) {
      for (size_t owner = begin; owner < end; ++owner) {
        for (const LocalTable& l : locals) {
          const std::vector<int64_t>& keys = l.table.keys();
          for (uint32_t i = 0; i < keys.size(); ++i) {
            const bool null_key = static_cast<int64_t>(i) == l.null_group;
            size_t p;
            if (null_key) p = null_part;
            else if (dense) p = static_cast<size_t>(keys[i] - spec_.key_min) >> shift_;
            else p = hash_key(keys[i]) >> (64 - hash_bits_);
            if (p % static_cast<size_t>(threads) != owner) continue;
            if (dense) {
              const size_t slot = null_key ? range_ : static_cast<size_t>(keys[i] - spec_.key_min);
              dense_.dense_seen[slot] = 1;
              dense_.states.combine(spec_.aggregates, slot, l.states, i);
              continue;
            }
            Partition& part = parts_[p];
            uint32_t g = 0;
            if (null_key) {
              part.seen[0] = 1;
            } else {
              g = part.table.find_or_insert(keys[i]);
              part.states.ensure(spec_.aggregates, part.table.groups());
            }
            part.states.combine(spec_.aggregates, g, l.states, i);
          }
        }
      }
    });
  }

  void sink_local_parallel(const ChunkInput& chunk) {
    const int threads = chunk.rows >= kMinRowsPerThread * 2 ? threads_ : 1;
    parallel_for(threads, chunk.rows, [&](int t, size_t begin, size_t end) {
      sink_local(locals_[static_cast<size_t>(t)], chunk, begin, end);
    });
  }

  // Rows [begin, end) of chunk as a chunk of their own (views, no copies).
  static ChunkInput slice(const ChunkInput& chunk, size_t begin, size_t end) {
    auto offset = [&](const ColumnView& in) {
      ColumnView out = in;
      const size_t width = in.width == ColumnWidth::int32 || in.width == ColumnWidth::float32 ? 4 : 8;
      out.data = static_cast<const char*>(in.data) + begin * width;
      if (in.validity) out.validity = in.validity + begin;
      out.identity = {};  // no longer the whole stored column
      return out;
    };
    ChunkInput out;
    out.rows = end - begin;
    out.keys = offset(chunk.keys);
    for (const ColumnView& v : chunk.values) out.values.push_back(v.data ? offset(v) : v);
    for (const uint8_t* f : chunk.filters) out.filters.push_back(f ? f + begin : nullptr);
    return out;
  }

  bool in_pass(int64_t key) const {
    if (passes_ <= 1) return true;
    return static_cast<int>(hash_key(key) >> 58) % passes_ == pass_;
  }

  void sink_local(LocalTable& local, const ChunkInput& chunk, size_t begin, size_t end) {
    std::vector<uint32_t> gids(end - begin);
    const uint8_t* key_valid = chunk.keys.validity;
    if (variant_ == Variant::dense) {
      const int64_t base = spec_.key_min;
      auto assign = [&](auto* keys) {
        for (size_t r = begin; r < end; ++r) {
          const uint32_t g = (key_valid && !key_valid[r]) ? static_cast<uint32_t>(range_)
                                                          : static_cast<uint32_t>(static_cast<int64_t>(keys[r]) - base);
          gids[r - begin] = g;
        }
        // Seen marks after the loop keep the hot loop store-light.
        uint8_t* seen = local.dense_seen.data();
        for (size_t r = begin; r < end; ++r) seen[gids[r - begin]] = 1;
      };
      if (chunk.keys.width == ColumnWidth::int32) assign(static_cast<const int32_t*>(chunk.keys.data));
      else assign(static_cast<const int64_t*>(chunk.keys.data));
      // One key and no NULL keys (global aggregates, G = 1): every row is group 0.
      const bool single = range_ == 1 && key_valid == nullptr;
      update_states(spec_.aggregates, local.states, chunk, gids.data(), nullptr, begin, end - begin, single);
      return;
    }
    // Hash: rows of other passes are left out through a row list.
    const bool all_in = passes_ <= 1;
    std::vector<uint32_t> rows;
    if (!all_in) rows.reserve(end - begin);
    size_t kept = 0;
    auto assign = [&](auto* keys) {
      for (size_t r = begin; r < end; ++r) {
        uint32_t g;
        if (key_valid && !key_valid[r]) {
          if (!all_in && pass_ != 0) continue;
          if (local.null_group < 0) local.null_group = local.table.add_unindexed(0);
          g = static_cast<uint32_t>(local.null_group);
        } else {
          const int64_t key = static_cast<int64_t>(keys[r]);
          if (!all_in && !in_pass(key)) continue;
          g = local.table.find_or_insert(key);
        }
        if (!all_in) rows.push_back(static_cast<uint32_t>(r));
        gids[kept++] = g;
      }
    };
    if (chunk.keys.width == ColumnWidth::int32) assign(static_cast<const int32_t*>(chunk.keys.data));
    else assign(static_cast<const int64_t*>(chunk.keys.data));
    local.states.ensure(spec_.aggregates, local.table.groups());
    update_states(spec_.aggregates, local.states, chunk, gids.data(), all_in ? nullptr : rows.data(), begin, kept);
  }

  // Merges the state of the current pass into result_, then clears it.
  void flush_pass() {
    if (flushed_pass_ == pass_ && flushed_any_) return;
    if (!flushed_any_) choose_result_form();
    flushed_any_ = true;
    flushed_pass_ = pass_;
    if (variant_ == Variant::dense_radix || variant_ == Variant::hash_radix) { flush_radix(); return; }
    if (variant_ == Variant::dense) { merge_dense(); return; }
    merge_hash();
    for (auto& l : locals_) {
      l = LocalTable{};
      l.states.init(spec_.aggregates, narrow_);
    }
  }

  void merge_dense() {
    LocalTable& into = locals_[0];
    const size_t slots = range_ + 1;
    parallel_for(threads_, slots, [&](int, size_t begin, size_t end) {
      for (size_t t = 1; t < locals_.size(); ++t) {
        const LocalTable& from = locals_[t];
        for (size_t i = begin; i < end; ++i) {
          if (!from.dense_seen[i]) continue;
          into.states.combine(spec_.aggregates, i, from.states, i);
          into.dense_seen[i] = 1;
        }
      }
    });
    emit_dense(into);
  }

  // The result of a dense variant (range_ slots + the NULL key's) without
  // copying: the slots that got rows are compacted in place, every state
  // array on its own thread, and the arrays are moved into result_.
  void emit_dense(LocalTable& table) {
    const std::vector<uint8_t>& seen = table.dense_seen;
    std::vector<PartialStates>& states = table.states.states;
    StateSet& set = table.states;
    std::vector<size_t> kept;  // slots that got rows, when not all did
    size_t count = 0;
    for (size_t i = 0; i < range_; ++i) count += seen[i];
    const bool all = count == range_;
    if (!all) {
      kept.reserve(count);
      for (size_t i = 0; i < range_; ++i) {
        if (seen[i]) kept.push_back(i);
      }
    }
    const bool null_group = seen[range_] != 0;
    const size_t groups = count + (null_group ? 1 : 0);
    // Every (aggregate, array) pair is one task.
    std::vector<std::function<void()>> tasks;
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      auto compact = [&](auto& v) {
        if (!all) {
          for (size_t j = 0; j < kept.size(); ++j) v[j] = v[kept[j]];
        }
        if (null_group) v[count] = v[range_];
        v.resize(groups);
      };
      if (count_source_[a] != static_cast<int>(a)) states[a].count = {};  // another aggregate's count serves
      visit_result_fields(a, [&](auto member) {
        if constexpr (std::is_same_v<decltype(member), std::vector<int64_t> PartialStates::*>) {
          if (member == &PartialStates::sum_int64) {  // int64 sums as they are (compact form)
            tasks.emplace_back([&, a, compact] {
              compact(set.narrow_sum[a]);
              states[a].sum_int64 = std::move(set.narrow_sum[a]);
            });
            return;
          }
        }
        if constexpr (std::is_same_v<decltype(member), std::vector<__int128> PartialStates::*>) {
          if (member == &PartialStates::sum_int && set.narrow[a]) {
            tasks.emplace_back([&, a, compact] {
              compact(set.narrow_sum[a]);
              set.widen(a);
            });
            return;
          }
        }
        tasks.emplace_back([&, a, member, compact] { compact(states[a].*member); });
      });
    }
    tasks.emplace_back([&] {
      result_.keys.resize(groups);
      result_.key_valid.assign(groups, 1);
      for (size_t j = 0; j < count; ++j) result_.keys[j] = spec_.key_min + static_cast<int64_t>(all ? j : kept[j]);
      if (null_group) {
        result_.keys[count] = 0;
        result_.key_valid[count] = 0;
      }
    });
    parallel_tasks(threads_, tasks.size(), [&](int, size_t t) { tasks[t](); });
    result_.states = std::move(states);
    table = LocalTable{};
  }

  void merge_hash() {
    // Radix-partition every local's groups by key hash, then merge each
    // partition on one thread (no locks: a partition has one owner).
    const int partitions = locals_.size() == 1 ? 1 : threads_ * kPartitionsPerThread;
    if (partitions == 1) {
      // One worker: its table is already the result.
      LocalTable& l = locals_[0];
      std::vector<uint32_t> ids;
      ids.reserve(l.table.groups());
      for (uint32_t i = 0; i < l.table.groups(); ++i) {
        if (static_cast<int64_t>(i) != l.null_group) ids.push_back(i);
      }
      append_groups(l.states, ids, [&](uint32_t i) { return l.table.keys()[i]; }, true);
    } else {
      struct PartitionOut {
        KeyTable table;
        StateSet states;
      };
      std::vector<PartitionOut> parts(static_cast<size_t>(partitions));
      std::vector<std::vector<std::vector<uint32_t>>> lists(
          locals_.size(), std::vector<std::vector<uint32_t>>(static_cast<size_t>(partitions)));
      parallel_for(static_cast<int>(locals_.size()), locals_.size(), [&](int, size_t begin, size_t end) {
        for (size_t t = begin; t < end; ++t) {
          const LocalTable& l = locals_[t];
          for (uint32_t i = 0; i < l.table.groups(); ++i) {
            if (static_cast<int64_t>(i) == l.null_group) continue;
            const size_t p = hash_key(l.table.keys()[i]) % static_cast<uint64_t>(partitions);
            lists[t][p].push_back(i);
          }
        }
      });
      parallel_tasks(threads_, static_cast<size_t>(partitions), [&](int, size_t p) {
        PartitionOut& out = parts[p];
        size_t upper = 0;  // groups of this partition over all workers: sizes the table once
        for (size_t t = 0; t < locals_.size(); ++t) upper += lists[t][p].size();
        out.table = KeyTable(upper);
        out.states.init(spec_.aggregates, narrow_);
        out.states.resize(spec_.aggregates, std::max<size_t>(upper, 1));
        for (size_t t = 0; t < locals_.size(); ++t) {
          const LocalTable& l = locals_[t];
          for (uint32_t i : lists[t][p]) {
            const uint32_t g = out.table.find_or_insert(l.table.keys()[i]);
            out.states.combine(spec_.aggregates, g, l.states, i);
          }
        }
      });
      for (auto& part : parts) {
        std::vector<uint32_t> ids(part.table.groups());
        for (uint32_t i = 0; i < ids.size(); ++i) ids[i] = i;
        append_groups(part.states, ids, [&](uint32_t i) { return part.table.keys()[i]; }, true);
      }
    }
    // The NULL-key group: every local's NULL group combined.
    StateSet nulls;
    nulls.init(spec_.aggregates, narrow_);
    bool any_null = false;
    for (auto& l : locals_) {
      if (l.null_group < 0) continue;
      if (!any_null) { nulls.resize(spec_.aggregates, 1); any_null = true; }
      nulls.combine(spec_.aggregates, 0, l.states, static_cast<size_t>(l.null_group));
    }
    if (any_null) append_groups(nulls, {0}, [](uint32_t) { return int64_t{0}; }, false);
  }

  // ---- result assembly ------------------------------------------------------

  // The compact result form (AggregationSpec::compact_result), fixed before
  // the first group is emitted: aggregates that counted every row of their
  // group (no FILTER, no NULL input seen) give one count array, and int64
  // sums stay int64. One pass only: a later pass could still widen a sum.
  void choose_result_form() {
    count_free_.assign(spec_.aggregates.size(), 0);
    if (!spec_.compact_result || passes_ != 1) return;
    int first = -1;
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      compact_sum_[a] = narrow_[a];
      if (!counts_group_rows_[a]) continue;
      if (first < 0) {
        first = static_cast<int>(a);
        continue;
      }
      count_source_[a] = first;
      const PartialOp op = spec_.aggregates[a].op;
      count_free_[a] = op == PartialOp::count_rows || op == PartialOp::count_valid || op == PartialOp::sum_int ||
                       op == PartialOp::min_int || op == PartialOp::max_int;
    }
  }

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

  // Resizes every result array the aggregates use to `groups` entries.
  // grow_result for an empty result_, every array zero-filled (first touched)
  // on its own task: the page faults of hundreds of MB spread over the threads.
  void grow_result_parallel(size_t groups) {
    result_.states.assign(spec_.aggregates.size(), {});
    std::vector<std::function<void()>> tasks;
    tasks.emplace_back([&] { result_.keys.resize(groups); });
    tasks.emplace_back([&] { result_.key_valid.resize(groups); });
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      visit_result_fields(a, [&](auto member) {
        tasks.emplace_back([&, a, member] { (result_.states[a].*member).resize(groups); });
      });
    }
    parallel_tasks(threads_, tasks.size(), [&](int, size_t t) { tasks[t](); });
  }

  // Moves result rows [from, from + n) to [to, to + n) (to < from) in every array.
  void move_result_rows(size_t from, size_t to, size_t n) {
    auto move = [&](auto& v) { std::memmove(v.data() + to, v.data() + from, n * sizeof(v[0])); };
    move(result_.keys);
    move(result_.key_valid);
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      visit_result_fields(a, [&](auto member) { move(result_.states[a].*member); });
    }
  }

  void shrink_result(size_t groups) {
    result_.keys.resize(groups);
    result_.key_valid.resize(groups);
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      visit_result_fields(a, [&](auto member) { (result_.states[a].*member).resize(groups); });
    }
  }

  void grow_result(size_t groups) {
    if (result_.states.empty()) result_.states.resize(spec_.aggregates.size());
    result_.keys.resize(groups);
    result_.key_valid.resize(groups);
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      visit_result_fields(a, [&](auto member) { (result_.states[a].*member).resize(groups); });
    }
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
  // Every row's slot is written before it is read: a buffer that is not
  // zeroed when it grows (a kept chunk takes it, so each chunk of a
  // deferred run gets a fresh one: 4 MB zeroed per chunk on one thread).
  class SlotBuffer {
   public:
    uint32_t* data() { return data_.get(); }
    const uint32_t* data() const { return data_.get(); }
    uint32_t& operator[](size_t i) { return data_[i]; }
    void resize(size_t n) {
      if (n > capacity_) {
        data_ = std::make_unique_for_overwrite<uint32_t[]>(n);
        capacity_ = n;
      }
    }

   private:
    std::unique_ptr<uint32_t[]> data_;
    size_t capacity_ = 0;
  };
  SlotBuffer local_slot_;  // dense-radix: slot within the partition, partition order
  // deferred dense-radix: every chunk's partitioned rows, kept until finalize
  struct MoveBuffer {
    std::unique_ptr<uint64_t[]> data;
    size_t words = 0;
  };
  struct DeferredChunk {
    std::vector<uint32_t> start;               // partition p's rows: [start[p], start[p + 1])
    SlotBuffer slots;                          // each row's slot (range_ for the NULL key), partition order
    ChunkInput moved;                          // the columns in partition order (views into buffers)
    std::vector<MoveBuffer> buffers;
  };
  bool deferred_ = false;
  bool aggregated_deferred_ = false;
  bool emitted_direct_ = false;  // emit_deferred_direct ran (EXPLAIN)
  std::vector<DeferredChunk> deferred_chunks_;
  uint64_t deferred_bytes_ = 0;
  std::vector<int64_t> local_key_;    // hash-radix: key, partition order
  ChunkInput moved_;                  // the chunk's columns in partition order
  std::vector<MoveBuffer> moved_buffers_;
  AggregationResult result_;
  uint64_t rows_ = 0, groups_ = 0;
  double sink_ms_ = 0, finalize_ms_ = 0;
};

class CpuEngine final : public AggregateEngine {
 public:
  std::string name() const override { return "cpu"; }
  bool can_run(const AggregationSpec&) const override { return true; }
  std::unique_ptr<AggregationRun> start(const AggregationSpec& spec) override { return std::make_unique<CpuRun>(spec); }
};

}  // namespace

std::unique_ptr<AggregateEngine> make_cpu_engine() { return std::make_unique<CpuEngine>(); }

}  // namespace tally::executor
