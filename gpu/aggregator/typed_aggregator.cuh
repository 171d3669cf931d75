#pragma once
// GroupByAggregator for one key width: owns the global table, the spill and
// scratch buffers, checks launch configurations against the device and
// launches the variant kernels. Instantiated in group_by_int32.cu / _int64.cu.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>
#include <bit>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include "gpu/simple_format.hpp"
#include <string>
#include <vector>

#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/event_wait.cuh"
#include "gpu/aggregator/group_by_impl.hpp"
#include "gpu/host_steps.hpp"
#include "gpu/aggregator/kernels/aggregate_kernels.cuh"
#include "gpu/aggregator/kernels/dictionary_kernels.cuh"
#include "gpu/aggregator/kernels/maintenance_kernels.cuh"
#include "gpu/aggregator/kernels/partition_count_sum_kernel.cuh"
#include "gpu/aggregator/kernels/partition_kernels.cuh"
#include "gpu/pinned_pool.cuh"
#include "gpu/variant_rules.hpp"

namespace tally::gpu {

namespace detail {
// Spill and sort scratch per launch: gpu::kScratchMemoryDivisor (group_by.hpp);
// larger chunks are aggregated in several launches.
using gpu::kScratchMemoryDivisor;
// Rows per thread of the sorted-run kernel, as a multiple of rows_per_thread.
constexpr int kSortRunMultiplier = 16;
// Fill kernels: blocks per SM for memory-bound grid-stride loops.
constexpr int kFillBlocksPerSm = 8;
// Partitioned variant: a partition with more rows than this many times a
// block's fair share (rows / grid) is cut into pieces shared by several
// blocks; 2 keeps balanced partitions whole when there are fewer of them than
// blocks (e.g. 256 partitions on 264 resident blocks).
constexpr int64_t kPieceShare = 2;
// Bytes of static shared memory the partition kernel declares (item bounds,
// flags, output cursor), kept out of its dynamic table's budget.
constexpr size_t kPartitionStaticShared = 128;
// Shared-memory variant: with more per-lane replicas than this the tables are
// tiny and a scalar probe is cheaper than a 16-byte bucket probe (measured on
// the H100: scalar wins at 16 replicas, buckets at 1-4).
constexpr uint32_t kMaxBucketedReplicas = 4;
// Launches whose rows the spill buffer can absorb before the host must read
// the overflow counters: the host runs this many launches ahead of what it
// has observed without a stream synchronization (the buffer grows to this
// many launches' rows, within max_rows_per_launch).
constexpr uint64_t kSpillLaunches = 4;
// Overflow observations in flight (pinned counter copies + events).
constexpr int kObservationRing = 8;
// finish() copies a table of at most this many slots (capacity + 2 special)
// back whole with its counters in one round trip; a larger one is counted
// first and copied exactly (two round trips, copies sized by the groups):
// 2^15 slots of key + 3 lanes are ~1 MB, ~40 us over PCIe, about one round trip.
constexpr uint64_t kCheckedExtractSlots = (uint64_t{1} << 15) + 2;
// A larger table's groups come back in the same one round trip when the
// chunks' key ranges (catalog statistics) allow at most this many: then
// the copy is sized by the bound, not the capacity (2^20 entries of key + 2
// lanes + NULL flag: 26 MB of pinned staging, ~1 ms over PCIe).
constexpr uint64_t kBoundedExtractSlots = (uint64_t{1} << 20) + 2;
// prepare_result() maps arrays for at least this many groups whatever the
// estimate (a few pages per array: an estimate off by little costs nothing).
constexpr uint64_t kPreparedResultFloor = 4096;
// prepare_result() zeroes this much between two looks at whether the GPU is
// done (~10-20 us of the H100 host's time; an event query is ~1 us).
constexpr uint64_t kPrepareStepBytes = 256 * 1024;

// Kernel attributes and occupancy per (device, kernel, block size, shared
// memory): the runtime answers each query in microseconds, and a query of
// many chunks asked the same questions for every chunk on the host's
// critical path. They never change for a loaded kernel.
struct OccupancyCache {
  std::mutex mutex;
  std::map<std::pair<int, const void*>, cudaFuncAttributes> attributes;
  std::map<std::tuple<int, const void*, int, size_t>, int> blocks;
};
inline OccupancyCache& occupancy_cache() {
  static OccupancyCache* cache = new OccupancyCache;  // never destroyed: used until exit
  return *cache;
}
inline cudaFuncAttributes cached_attributes(int device, const void* kernel) {
  OccupancyCache& c = occupancy_cache();
  {
    std::lock_guard lock(c.mutex);
    const auto it = c.attributes.find({device, kernel});
    if (it != c.attributes.end()) return it->second;
  }
  cudaFuncAttributes attr{};
  TALLY_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  first_use_counts().kernel_first_lookups.fetch_add(1, std::memory_order_relaxed);  // this kernel's first use here
  std::lock_guard lock(c.mutex);
  c.attributes[{device, kernel}] = attr;
  return attr;
}
inline int cached_occupancy(int device, const void* kernel, int threads, size_t smem) {
  OccupancyCache& c = occupancy_cache();
  const auto key = std::make_tuple(device, kernel, threads, smem);
  {
    std::lock_guard lock(c.mutex);
    const auto it = c.blocks.find(key);
    if (it != c.blocks.end()) return it->second;
  }
  int blocks = 0;
  TALLY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, smem));
  std::lock_guard lock(c.mutex);
  c.blocks[key] = blocks;
  return blocks;
}

// cudaFuncSetAttribute(MaxDynamicSharedMemorySize) per (device, kernel):
// the largest size set so far. The attribute is an upper bound a launch may
// use, so a launch needing no more than what is set calls nothing (the
// runtime call took microseconds on every launch); it only ever grows, so a
// concurrent launch of the same kernel with a larger size can never be
// lowered under another's feet (the unconditional calls could).
struct SharedLimitCache {
  std::mutex mutex;
  std::map<std::pair<int, const void*>, size_t> bytes;
};
inline SharedLimitCache& shared_limit_cache() {
  static SharedLimitCache* cache = new SharedLimitCache;  // never destroyed: used until exit
  return *cache;
}
// Makes `kernel` launchable with `bytes` of dynamic shared memory; returns
// whether the runtime had to be called (false: an earlier call covers it).
inline bool ensure_dynamic_shared(int device, const void* kernel, size_t bytes) {
  SharedLimitCache& c = shared_limit_cache();
  std::lock_guard lock(c.mutex);  // held across the call: the recorded size is the set one
  size_t& set = c.bytes[{device, kernel}];
  if (set >= bytes && set > 0) return false;
  TALLY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  set = std::max(set, bytes);
  return true;
}

// Readies the global table in one launch: keys of slots [first, capacity)
// set to the empty marker, every lane of slots [first, capacity + 2) (the
// two special slots included) set to its identity, and counters [0,
// clear_counters) zeroed. Replaces the memsets and fill launches a reset and
// a table initialization took (up to six runtime calls, 20-50 us of the
// host's path to a query's first kernel on the H100 host).
template <class K>
__global__ void reset_table_kernel(K* keys, kernels::ull* lanes, uint64_t capacity, uint64_t first, kernels::LaneSet ls,
                                   kernels::ull* counters, int clear_counters) {
  const uint64_t tid = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tid < static_cast<uint64_t>(clear_counters)) counters[tid] = 0;
  const uint64_t stride = capacity + 2;
  for (uint64_t s = first + tid; s < stride; s += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    if (s < capacity) keys[s] = kernels::KeyTraits<K>::empty;
    for (int l = 0; l < ls.count; ++l) lanes[static_cast<uint64_t>(l) * stride + s] = kernels::lane_identity(ls.lane[l].kind);
  }
}

inline uint64_t next_pow2(uint64_t x) { return x <= 1 ? 1 : (uint64_t{1} << (64 - std::countl_zero(x - 1))); }
}  // namespace detail

template <class K>
class TypedAggregator final : public GroupByAggregator::Impl {
  using ull = kernels::ull;

 public:
  TypedAggregator(const DeviceInfo& device, GroupBySpec spec, TableOptions options, StreamHandle stream)
      : device_(device), spec_(std::move(spec)), options_(options), stream_(stream) {
    TALLY_CUDA_CHECK(cudaSetDevice(device_.ordinal));
    configure_memory_pool(device_.ordinal);
    plan_ = plan_lanes(spec_);
    lanes_.count = static_cast<int>(plan_.lanes.size());
    for (size_t l = 0; l < plan_.lanes.size(); ++l)
      lanes_.lane[l] = kernels::LaneRef{plan_.lanes[l].kind, static_cast<int8_t>(plan_.lanes[l].column),
                                        plan_.lanes[l].wide};
    if (!(options_.max_fill > 0.05 && options_.max_fill < 0.95)) options_.max_fill = 0.5;
    if (options_.hash == HashKind::range && options_.key_range_hint.size() == 0) options_.hash = HashKind::murmur;
    count_sum_shape_ = plan_.lanes.size() == 2 && plan_.lanes[0].kind == LaneKind::count_rows &&
                       plan_.lanes[1].kind == LaneKind::sum32 && plan_.lanes[1].column == 0;
    if (options_.max_rows_per_launch == 0) {
      // spill (key + lanes), sort keys and payloads, gather, and the
      // partitioned variant's compact output (key + lanes).
      const uint64_t per_row = 2 * (8 + 8 * plan_.lanes.size()) + 3 * sizeof(K) + 16;
      const uint64_t rows = device_.total_memory / detail::kScratchMemoryDivisor / per_row;
      options_.max_rows_per_launch = std::clamp<uint64_t>(std::bit_floor(std::max<uint64_t>(rows, 1)), 1u << 16, 1ull << 31);
    }
    counters_.ensure(kCounterCount * sizeof(ull), cs());
    TALLY_CUDA_CHECK(cudaMemsetAsync(counters_.get(), 0, kCounterCount * sizeof(ull), cs()));
    allocate_table(capacity_for(options_.estimated_groups));
  }

  ~TypedAggregator() override {
    // Destructor: errors cannot be thrown; the copies into the pinned
    // counters must be done before the memory goes.
    if (pinned_counters_) (void)cudaStreamSynchronize(cs());
    for (cudaEvent_t e : observation_events_)
      if (e) (void)cudaEventDestroy(e);
    if (sync_event_) (void)cudaEventDestroy(sync_event_);
  }

  const GroupBySpec& spec() const override { return spec_; }
  StreamHandle stream() const override { return stream_; }
  uint64_t capacity() const override { return capacity_; }

  LaunchReport consume(const ChunkPointers& chunk, Variant variant, const VariantConfig& config) override {
    validate(chunk);
    prepared_finish_ = false;  // a begin_finish() before this chunk extracted too early
    ensure_table();
    host_mark("table ready");
    note_key_range(chunk);
    LaunchReport report;
    report.variant = variant;
    report.used = config;
    for (int64_t off = 0; off < chunk.rows; off += static_cast<int64_t>(options_.max_rows_per_launch)) {
      const int64_t n = std::min<int64_t>(chunk.rows - off, static_cast<int64_t>(options_.max_rows_per_launch));
      kernels::ChunkRef<K> ref = make_ref(chunk, off, n);
      std::optional<KeyRange> range = chunk.key_range;
      // Not owning the output: the launch merges into the table, as it does
      // once the table may hold groups.
      if (variant == Variant::partitioned_hash && !options_.own_partitioned_output && n > 0) table_may_have_groups_ = true;
      if (variant == Variant::partitioned_hash && !table_may_have_groups_ && direct_groups_ == 0) {
        // The partitioned variant may own its output outright only while
        // nothing else holds groups: decided on exact host knowledge (settle
        // first), and the output's size is read back after (settle again).
        // Once the table holds groups it runs asynchronously like the others.
        {
          HostStepTimer timer(HostStep::settle);
          settle(report);
          if (direct_groups_ > 0 && n > 0) materialize_direct(report);
        }
        {
          HostStepTimer timer(HostStep::launch);
          run_piece(ref, range, variant, config, report);
        }
        HostStepTimer timer(HostStep::settle);
        settle_overflow(report);
        continue;
      }
      if (direct_groups_ > 0 && n > 0) {
        HostStepTimer timer(HostStep::settle);
        materialize_direct(report);
      }
      // A table that holds every key of the range below its fill limit
      // cannot spill: such a launch needs no observation and no wait. Its
      // counters are still verified once, by settle() or with the result.
      if (cannot_overflow(range)) {
        {
          HostStepTimer timer(HostStep::launch);
          run_piece(ref, range, variant, config, report);
        }
        if (n > 0) table_may_have_groups_ = true;
        unverified_ = true;
        continue;
      }
      {
        HostStepTimer timer(HostStep::make_room);
        make_room_for(static_cast<uint64_t>(n), report);
      }
      {
        HostStepTimer timer(HostStep::launch);
        run_piece(ref, range, variant, config, report);
      }
      // Every variant but a partitioned one owning its output puts each
      // non-NULL key into an ordinary slot (see above).
      if (n > 0) table_may_have_groups_ = true;
      // Each observation costs a small device-to-host copy on the stream:
      // one per half a spill buffer of rows (every other launch).
      unobserved_rows_ += static_cast<uint64_t>(n);
      unsettled_rows_ += static_cast<uint64_t>(n);
      if (2 * unobserved_rows_ >= spill_capacity_) {
        HostStepTimer timer(HostStep::observe);
        observe();
      }
    }
    return report;
  }

  // Reads every overflow observation still in flight (synchronizes), grows
  // the table and merges the spill if anything overflowed.
  void settle(LaunchReport& report) override {
    if (observations_.empty() && unsettled_rows_ == 0 && !unverified_) return;
    observations_.clear();
    unsettled_rows_ = 0;
    unobserved_rows_ = 0;
    unverified_ = false;
    settle_overflow(report);
  }

  KeyRange measure_key_range(const ChunkPointers& chunk) override {
    validate(chunk);
    return measure(make_ref(chunk, 0, chunk.rows));
  }

  GroupByResult finish() override {
    LaunchReport late;
    if (prepared_finish_) {
      // begin_finish() enqueued the extraction and its copies already.
      prepared_finish_ = false;
      if (auto r = complete_checked()) return std::move(*r);
      settle(late);  // a spill the bound ruled out happened after all: grow, merge, extract again
      return finish_counted();
    }
    // Observed launches settle here; launches the key-range bound exempted
    // from observation (see consume) are verified by the counters read
    // together with the result below.
    if (!observations_.empty() || unsettled_rows_ > 0) settle(late);
    host_mark("settled");
    ensure_table();
    if (const uint64_t copy = checked_copy_slots()) {
      enqueue_checked(copy);
      if (auto r = complete_checked()) return std::move(*r);
      settle(late);
    }
    return finish_counted();
  }

  // Enqueues finish()'s extraction and copies behind the work queued so far
  // when they need no host decision (no overflow observation outstanding,
  // a table or a key-range bound small enough to copy back whole), so that
  // they run while the host still waits for the last chunk or writes its
  // report; finish() then only waits. A consume() in between cancels it.
  void begin_finish() override {
    prepared_finish_ = false;
    if (!observations_.empty() || unsettled_rows_ > 0) return;  // settle() reads the counters on the host first
    ensure_table();
    const uint64_t copy = checked_copy_slots();
    if (copy == 0) return;
    enqueue_checked(copy);
    prepared_finish_ = true;
  }

 private:
  // Extracted entries finish() copies back in one round trip with the
  // counters: every slot of a small table, else as many as the chunks' key
  // ranges allow groups (groups_bound) when that is at most
  // kBoundedExtractSlots; 0: neither, count first (finish_counted).
  uint64_t checked_copy_slots() const {
    const uint64_t slots = capacity_ + 2;
    if (slots <= detail::kCheckedExtractSlots) return slots;
    const uint64_t bound = groups_bound();
    if (bound <= detail::kBoundedExtractSlots) return std::min(slots, bound);
    return 0;
  }

  // The extraction kernel over the whole table, then one batch of copies
  // (the overflow counters, the extracted count, the first `copy` extracted
  // entries and the partitioned output) and an event complete_checked()
  // waits for.
  void enqueue_checked(uint64_t copy) {
    const uint64_t slots = capacity_ + 2;
    ensure_extract(slots);
    extract(slots);
    const size_t L = plan_.lanes.size();
    const uint64_t nd = direct_groups_;
    const uint64_t stride = copy + nd;  // entries per region: table groups, then the direct output
    const size_t keys_at = 64, lanes_at = keys_at + stride * 8, nulls_at = lanes_at + L * stride * 8;
    result_staging_.ensure(nulls_at + copy + 64);
    char* h = result_staging_.get<char>();
    TALLY_CUDA_CHECK(cudaMemcpyAsync(h, counter(kOccupied), kCounterCount * sizeof(ull), cudaMemcpyDeviceToHost, cs()));
    TALLY_CUDA_CHECK(cudaMemcpyAsync(h + keys_at, out_keys_.get(), copy * 8, cudaMemcpyDeviceToHost, cs()));
    TALLY_CUDA_CHECK(cudaMemcpy2DAsync(h + lanes_at, stride * 8, out_lanes_.get(), out_stride_ * 8, copy * 8, L,
                                       cudaMemcpyDeviceToHost, cs()));
    TALLY_CUDA_CHECK(cudaMemcpyAsync(h + nulls_at, out_null_.get(), copy, cudaMemcpyDeviceToHost, cs()));
    if (nd > 0) {
      TALLY_CUDA_CHECK(cudaMemcpyAsync(h + keys_at + copy * 8, dir_keys_.get(), nd * 8, cudaMemcpyDeviceToHost, cs()));
      TALLY_CUDA_CHECK(cudaMemcpy2DAsync(h + lanes_at + copy * 8, stride * 8, dir_lanes_.get(), dir_capacity_ * 8, nd * 8,
                                         L, cudaMemcpyDeviceToHost, cs()));
    }
    if (!sync_event_) TALLY_CUDA_CHECK(cudaEventCreateWithFlags(&sync_event_, cudaEventDisableTiming));
    TALLY_CUDA_CHECK(cudaEventRecord(sync_event_, cs()));
    checked_copy_ = copy;
    checked_direct_ = nd;
    host_mark("extract enqueued");
  }

  // Waits for enqueue_checked()'s copies and builds the result. nullopt when
  // the counters show a spill or loss that no observation covered, or more
  // groups than were copied (the caller settles and extracts again), so the
  // result is exact whatever the bounds assumed.
  std::optional<GroupByResult> complete_checked() {
    wait_event(sync_event_);
    host_mark("copied");
    const uint64_t slots = capacity_ + 2;
    const uint64_t copy = checked_copy_, nd = checked_direct_;
    const size_t L = plan_.lanes.size();
    const uint64_t stride = copy + nd;
    const size_t keys_at = 64, lanes_at = keys_at + stride * 8, nulls_at = lanes_at + L * stride * 8;
    const char* h = result_staging_.get<char>();
    ull c[kCounterCount];
    std::memcpy(c, h, sizeof(c));
    if (c[kLost] != 0) throw Error(SqlState::internal_error, "GPU: hash table lost groups");
    if (c[kSpillCount] != 0 || c[kDirectCount] != nd) {
      unverified_ = true;  // settle() reads the counters again and merges
      return std::nullopt;
    }
    const uint64_t ng = c[kOutCount];
    if (ng > slots) throw Error(SqlState::internal_error, simple_format("GPU: extracted {} groups from {} slots", ng, slots));
    if (ng > copy) return std::nullopt;  // more groups than the key ranges allow: statistics were off
    GroupByResult r = build_result(h + keys_at, reinterpret_cast<const ull*>(h + lanes_at),
                                   reinterpret_cast<const uint8_t*>(h + nulls_at), stride, ng, copy, nd);
    host_mark("result built");
    return r;
  }

 public:
  // Large tables: the group count first (one synchronization), then exactly
  // that many groups (a second one), so no copy is sized by the capacity.
  GroupByResult finish_counted() {
    // Counters and the special slots in one round trip; a spill the bound
    // ruled out (unverified launches) is settled and the count read again.
    uint64_t n = 0;
    for (;;) {
      result_staging_.ensure(64);
      ull* h = result_staging_.get<ull>();
      TALLY_CUDA_CHECK(cudaMemcpyAsync(h, counter(kOccupied), 4 * sizeof(ull), cudaMemcpyDeviceToHost, cs()));
      TALLY_CUDA_CHECK(cudaMemcpyAsync(h + 4, table_lanes_.get<ull>() + capacity_, 2 * sizeof(ull),
                                       cudaMemcpyDeviceToHost, cs()));
      sync_stream();
      if (h[kLost] != 0) throw Error(SqlState::internal_error, "GPU: hash table lost groups");
      if (h[kSpillCount] != 0) {
        LaunchReport late;
        unverified_ = true;
        settle(late);
        continue;
      }
      unverified_ = false;
      n = h[kOccupied] + (h[4] > 0) + (h[5] > 0);
      break;
    }
    host_mark("counted");
    ensure_extract(n + 2);
    extract(n + 2);
    const size_t L = plan_.lanes.size();
    // Groups of the global table first, then the partitioned variant's compact
    // output (disjoint keys, see materialize_direct). Everything comes back
    // in one batch of copies into pinned memory and one synchronization:
    // [count | keys | lanes (L x total) | NULL flags].
    const uint64_t nd = direct_groups_;
    const uint64_t ng = n;
    const uint64_t total = ng + nd;
    const size_t keys_at = 64, lanes_at = keys_at + total * 8, nulls_at = lanes_at + L * total * 8;
    result_staging_.ensure(nulls_at + total + 64);
    char* h = result_staging_.get<char>();
    TALLY_CUDA_CHECK(cudaMemcpyAsync(h, counter(kOutCount), sizeof(ull), cudaMemcpyDeviceToHost, cs()));
    if (ng > 0) {
      TALLY_CUDA_CHECK(cudaMemcpyAsync(h + keys_at, out_keys_.get(), ng * 8, cudaMemcpyDeviceToHost, cs()));
      TALLY_CUDA_CHECK(cudaMemcpy2DAsync(h + lanes_at, total * 8, out_lanes_.get(), out_stride_ * 8, ng * 8, L,
                                         cudaMemcpyDeviceToHost, cs()));
      TALLY_CUDA_CHECK(cudaMemcpyAsync(h + nulls_at, out_null_.get(), ng, cudaMemcpyDeviceToHost, cs()));
    }
    if (nd > 0) {
      TALLY_CUDA_CHECK(cudaMemcpyAsync(h + keys_at + ng * 8, dir_keys_.get(), nd * 8, cudaMemcpyDeviceToHost, cs()));
      TALLY_CUDA_CHECK(cudaMemcpy2DAsync(h + lanes_at + ng * 8, total * 8, dir_lanes_.get(), dir_capacity_ * 8, nd * 8, L,
                                         cudaMemcpyDeviceToHost, cs()));
    }
    sync_stream();
    host_mark("copied");
    ull count = 0;
    std::memcpy(&count, h, sizeof(ull));
    if (count != n) throw Error(SqlState::internal_error, simple_format("GPU: extracted {} groups, expected {}", count, n));
    GroupByResult r = build_result(h + keys_at, reinterpret_cast<const ull*>(h + lanes_at),
                                   reinterpret_cast<const uint8_t*>(h + nulls_at), total, ng, ng, nd);
    host_mark("result built");
    return r;
  }

  // Allocates and touches the arrays of the result begin_finish() enqueued
  // (sized by its copy), so that finish() writes into pages already mapped:
  // the caller calls this while it waits for the GPU anyway. A fresh array's
  // first touch costs a page fault per 4 KiB (the kernel zeroes the page);
  // at 2^16 groups that was most of the host's 240-950 us between the copy
  // and the result (bench/RESULTS.md). No-op unless begin_finish() enqueued.
  void prepare_result() override {
    if (!prepared_finish_) return;
    // The copy is a bound (the key range's size, up to 2^20): sparse keys
    // may leave most of it unused, and zeroing unused megabytes would delay
    // a short query. Capped at the estimate with a margin; a result that
    // outgrows the arrays is built into fresh ones (exact either way).
    const uint64_t hint = std::max<uint64_t>(options_.estimated_groups + options_.estimated_groups / 4,
                                             detail::kPreparedResultFloor);
    const uint64_t n = std::min(checked_copy_, hint) + checked_direct_;
    const size_t A = spec_.aggregates.size();
    // Grown a step at a time (value-initialized: the zero fill is the first
    // touch) and only while the GPU is still busy: once the copies are done
    // (the event complete_checked() waits for) the rest is left to the
    // build, so a short query never waits for its arrays being zeroed. A
    // partly grown array keeps its capacity, which the build writes into.
    bool gpu_busy = true;
    auto touch = [&](auto& v) {
      if (v.size() >= n) return;
      if (v.capacity() < n) {
        v.clear();
        v.reserve(n);
      }
      const uint64_t step = std::max<uint64_t>(1, detail::kPrepareStepBytes / sizeof(v[0]));
      while (gpu_busy && v.size() < n) {
        if (cudaEventQuery(sync_event_) != cudaErrorNotReady) gpu_busy = false;  // done (or failed: the wait says)
        else v.resize(std::min<uint64_t>(n, v.size() + step));
      }
    };
    touch(spare_.keys);
    touch(spare_.key_is_null);
    spare_.aggregates.resize(A);
    for (size_t a = 0; a < A; ++a) {
      AggregateValues& vals = spare_.aggregates[a];
      touch(vals.nonnull);
      switch (spec_.aggregates[a].op) {
        case AggOp::count_star:
        case AggOp::count: break;
        case AggOp::min:
        case AggOp::max: touch(vals.extreme); break;
        case AggOp::sum:
        case AggOp::avg: touch(vals.value); break;
      }
    }
    host_mark(gpu_busy ? "result prepared" : "result partly prepared", static_cast<long>(n), "groups");
  }

  // The result from extracted groups in pinned memory: `ng` table groups at
  // [0, ng) and `nd` partitioned-output groups at [direct_at, direct_at + nd)
  // of each region (keys, and each lane at lanes + lane * stride); NULL flags
  // for the table groups. Column at a time: one tight loop per aggregate and
  // lane, into prepare_result()'s arrays when they are large enough. Marks
  // each region with the thread's page faults in it (EXPLAIN ANALYZE's end path).
  GroupByResult build_result(const char* keys, const ull* lanes, const uint8_t* nulls, uint64_t stride, uint64_t ng,
                             uint64_t direct_at, uint64_t nd) {
    const uint64_t total = ng + nd;
    const bool timed = active_host_timeline() != nullptr;
    ThreadUsage usage = timed ? thread_usage() : ThreadUsage{};
    if (timed) {
      host_mark("build on cpu", sched_getcpu(), "");
      host_mark("clock probe", clock_probe_mhz(), "MHz");
    }
    const long switches_at_start = usage.switches;
    // Marks a region with the faults taken since the last.
    auto region = [&](const char* label) {
      if (!timed) return;
      const ThreadUsage now = thread_usage();
      host_mark(label, now.minor_faults - usage.minor_faults, "faults");
      usage = now;
    };
    GroupByResult result = std::move(spare_);
    spare_ = GroupByResult{};
    // Every array is written once: a prepared one (touched while the GPU
    // ran) is cut to size and overwritten; else reserved and assigned,
    // converting as it copies (no zero fill first: at 2^16 groups a
    // resize-then-overwrite wrote every array twice).
    // Region [0, ng) then [direct_at, direct_at + nd) of `src` into `out`.
    auto gather = [&](const auto* src, auto& out) {
      if (out.size() >= total) {
        out.resize(total);
        std::copy(src, src + ng, out.data());
        std::copy(src + direct_at, src + direct_at + nd, out.data() + ng);
      } else {
        out.clear();
        out.reserve(total);
        out.assign(src, src + ng);
        out.insert(out.end(), src + direct_at, src + direct_at + nd);
      }
    };
    gather(reinterpret_cast<const int64_t*>(keys), result.keys);
    region("keys");
    if (result.key_is_null.size() >= total) {
      result.key_is_null.resize(total);
      std::memcpy(result.key_is_null.data(), nulls, ng);
      std::memset(result.key_is_null.data() + ng, 0, nd);  // the partitioned output has no NULL key
    } else {
      result.key_is_null.clear();
      result.key_is_null.reserve(total);
      result.key_is_null.assign(nulls, nulls + ng);
      result.key_is_null.resize(total, 0);
    }
    region("null flags");
    // Lane `l` as one contiguous column of `total` values, each the lane's
    // 64 bits read as signed and converted to the array's type.
    auto column = [&](int l, auto& out) { gather(reinterpret_cast<const int64_t*>(lanes + static_cast<size_t>(l) * stride), out); };
    static constexpr const char* kAggregateLabels[] = {"aggregate 0", "aggregate 1", "aggregate 2", "aggregate 3",
                                                        "aggregate 4", "aggregate 5", "aggregate 6", "aggregate 7"};
    result.aggregates.resize(spec_.aggregates.size());
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      const AggregateSpec& as = spec_.aggregates[a];
      const AggregateLanes& al = plan_.aggregates[a];
      AggregateValues& vals = result.aggregates[a];
      vals.op = as.op;
      column(al.nonnull_lane, vals.nonnull);
      switch (as.op) {
        case AggOp::count_star:
        case AggOp::count:
          // The count is `nonnull` (value_at): no other array.
          vals.value.clear();
          vals.extreme.clear();
          break;
        case AggOp::min:
        case AggOp::max:
          column(al.value_lane, vals.extreme);
          vals.value.clear();
          break;
        case AggOp::sum:
        case AggOp::avg:
          vals.extreme.clear();
          if (al.value_hi_lane >= 0) {
            // Wide sums: an unsigned low lane plus a signed high lane counted in 2^32.
            if (vals.value.size() < total) vals.value.clear();  // not prepared: a fresh array
            vals.value.resize(total);
            const ull* lo = lanes + static_cast<size_t>(al.value_lane) * stride;
            const ull* hi = lanes + static_cast<size_t>(al.value_hi_lane) * stride;
            auto wide = [](ull l, ull h) {
              return static_cast<__int128>(static_cast<uint64_t>(l)) +
                     static_cast<__int128>(static_cast<int64_t>(h)) * (static_cast<__int128>(1) << 32);
            };
            __int128* out = vals.value.data();
            for (uint64_t g = 0; g < ng; ++g) out[g] = wide(lo[g], hi[g]);
            for (uint64_t g = 0; g < nd; ++g) out[ng + g] = wide(lo[direct_at + g], hi[direct_at + g]);
          } else {
            column(al.value_lane, vals.value);
          }
          break;
      }
      region(a < std::size(kAggregateLabels) ? kAggregateLabels[a] : "aggregates");
    }
    if (timed) host_mark("build switches", thread_usage().switches - switches_at_start, "");
    return result;
  }

  // The partitioned variant's compact output stays where it is: with the
  // extracted global groups it is the device-side result.
  void finish_device() override {
    LaunchReport late;
    settle(late);
    ensure_table();
    ensure_extract(table_may_have_groups_ ? capacity_ + 2 : 2);
    extract(capacity_ + 2);
  }

  uint64_t group_count() override {
    LaunchReport late;
    settle(late);
    return global_group_count() + direct_groups_;
  }

  void reset() override {
    // The table is re-initialized only when something may have claimed an
    // ordinary slot (a host-side flag kept from the overflow check); else its
    // special slots and the compact output's count are cleared.
    // Nothing is enqueued here: the next ensure_table() (the first consume,
    // or finish) does it all in one launch.
    if (table_may_have_groups_) table_needs_init_ = true;
    else special_needs_reset_ = true;
    // Spilled entries not merged yet belong to the forgotten groups.
    observations_.clear();
    unsettled_rows_ = 0;
    unobserved_rows_ = 0;
    unverified_ = false;
    static_assert(kOccupied == 0 && kSpillCount == 1 && kLost == 2 && kDirectCount == 3);
    reset_counters_ = kDirectCount + 1;  // kOccupied, kSpillCount, kLost, kDirectCount
    direct_groups_ = 0;
    seen_range_.reset();
    seen_range_known_ = true;
    prepared_finish_ = false;
  }

 private:
  // Waits for everything enqueued on the stream so far, polling an event
  // (event_wait.cuh) rather than sleeping in cudaStreamSynchronize.
  void sync_stream() {
    if (!sync_event_) TALLY_CUDA_CHECK(cudaEventCreateWithFlags(&sync_event_, cudaEventDisableTiming));
    TALLY_CUDA_CHECK(cudaEventRecord(sync_event_, cs()));
    wait_event(sync_event_);
  }

  // Whether a launch over keys in `range` can leave a row or partial group
  // without a slot: not while every possible key of the range (catalog
  // statistics: all chunks' min and max) fits below the table's fill limit.
  // NULL and the empty marker have slots of their own.
  bool cannot_overflow(const std::optional<KeyRange>& range) const {
    if (!range || table_needs_init_) return false;
    const auto limit = static_cast<uint64_t>(static_cast<double>(capacity_) * options_.max_fill);
    // The kernels refuse a new key only once `occupied >= limit`, and at most
    // range->size() keys ever arrive: with size <= limit none is refused.
    return range->size() <= limit;
  }

  uint64_t global_group_count() {
    ensure_table();
    ull occupied = 0, special[2] = {0, 0};
    TALLY_CUDA_CHECK(cudaMemcpyAsync(&occupied, counter(kOccupied), sizeof(ull), cudaMemcpyDeviceToHost, cs()));
    TALLY_CUDA_CHECK(cudaMemcpyAsync(special, table_lanes_.get<ull>() + capacity_, 2 * sizeof(ull),
                                     cudaMemcpyDeviceToHost, cs()));
    sync_stream();
    return occupied + (special[0] > 0) + (special[1] > 0);
  }

  // kOccupied, kSpillCount, kLost and kDirectCount are read together.
  enum Counter { kOccupied = 0, kSpillCount, kLost, kDirectCount, kOutCount, kRangeMin, kRangeMax, kCounterCount };

  cudaStream_t cs() const { return reinterpret_cast<cudaStream_t>(stream_); }
  ull* counter(Counter c) const { return counters_.get<ull>() + c; }
  int fill_grid() const { return std::max(1, device_.sm_count * detail::kFillBlocksPerSm); }

  uint64_t capacity_for(uint64_t groups) const {
    const double need = static_cast<double>(std::max<uint64_t>(groups, 1)) / options_.max_fill;
    return std::max<uint64_t>(1024, detail::next_pow2(static_cast<uint64_t>(std::ceil(need))));
  }

  kernels::GlobalTableRef<K> table_ref(bool hard = false) const {
    kernels::GlobalTableRef<K> t;
    t.keys = table_keys_.get<K>();
    t.lanes = table_lanes_.get<ull>();
    t.capacity = capacity_;
    t.stride = capacity_ + 2;
    t.occupied = counter(kOccupied);
    t.max_occupied = hard ? capacity_ : static_cast<uint64_t>(static_cast<double>(capacity_) * options_.max_fill);
    t.hash = options_.hash;
    if (t.hash == HashKind::range) {
      // Keep the hint's significant bits that the table has room for.
      const uint64_t span = options_.key_range_hint.size();
      const int span_bits = span <= 1 ? 0 : 64 - std::countl_zero(span - 1);
      const int cap_bits = std::countr_zero(capacity_);
      t.range_base = static_cast<uint64_t>(options_.key_range_hint.min);
      t.range_shift = std::max(0, span_bits - cap_bits);
    }
    return t;
  }

  void allocate_table(uint64_t capacity) {
    capacity_ = capacity;
    table_keys_.release();
    table_lanes_.release();
    table_keys_.ensure(capacity_ * sizeof(K), cs());
    table_lanes_.ensure((capacity_ + 2) * plan_.lanes.size() * sizeof(ull), cs());
    init_table();
  }

  // Carries out what reset() left pending (a table initialization, or its
  // special slots only, and the counters) in one launch.
  void ensure_table() {
    if (table_needs_init_) init_table();
    else if (special_needs_reset_ || reset_counters_ > 0) reset_launch(capacity_, reset_counters_);
  }

  void reset_launch(uint64_t first, int clear_counters) {
    const uint64_t slots = capacity_ + 2 - std::min(first, capacity_ + 2);
    const int grid = static_cast<int>(std::clamp<uint64_t>((slots + 255) / 256, 1, static_cast<uint64_t>(fill_grid())));
    detail::reset_table_kernel<K><<<grid, 256, 0, cs()>>>(table_keys_.get<K>(), table_lanes_.get<ull>(), capacity_, first, lanes_,
                                                          counters_.get<ull>(), clear_counters);
    TALLY_CUDA_CHECK_LAUNCH("reset_table_kernel");
    special_needs_reset_ = false;
    reset_counters_ = 0;
    host_mark("table reset");
  }

  // Every slot empty, kOccupied zero (and the counters a pending reset()
  // clears); the spill count stays, a growth merges the spill after this.
  void init_table() {
    table_needs_init_ = false;
    table_may_have_groups_ = false;
    reset_launch(0, std::max(reset_counters_, static_cast<int>(kOccupied) + 1));
    host_mark("table init");
  }

  // Keeps the union of the key ranges the chunks came with (catalog
  // statistics): with every chunk's range known, no more than its size + 1
  // (the NULL key) groups exist, which bounds what finish() must copy back.
  void note_key_range(const ChunkPointers& chunk) {
    if (chunk.rows <= 0 || !seen_range_known_) return;
    if (!chunk.key_range) {
      seen_range_known_ = false;
      seen_range_.reset();
      return;
    }
    const KeyRange r = *chunk.key_range;
    if (r.max < r.min) return;  // no non-NULL key
    if (!seen_range_) seen_range_ = r;
    else seen_range_ = KeyRange{std::min(seen_range_->min, r.min), std::max(seen_range_->max, r.max)};
  }

  // Groups the table can hold at most by what the chunks' key ranges say
  // (UINT64_MAX: unknown): one per key of the range, the NULL key's.
  uint64_t groups_bound() const {
    if (!seen_range_known_) return UINT64_MAX;
    if (!seen_range_) return 1;  // only NULL keys (or none)
    const uint64_t n = seen_range_->size();
    return n >= UINT64_MAX - 1 ? UINT64_MAX : n + 1;
  }

  void validate(const ChunkPointers& chunk) const {
    if (chunk.rows < 0) throw Error(SqlState::internal_error, "GPU: negative row count");
    if (chunk.values.size() != spec_.columns.size())
      throw Error(SqlState::internal_error, "GPU: chunk has " + std::to_string(chunk.values.size()) +
                                                " value columns, the aggregation expects " +
                                                std::to_string(spec_.columns.size()));
    if (chunk.rows > 0 && !chunk.key.data) throw Error(SqlState::internal_error, "GPU: chunk without key data");
    for (size_t c = 0; c < chunk.values.size(); ++c) {
      if (chunk.rows > 0 && !chunk.values[c].data)
        throw Error(SqlState::internal_error, "GPU: chunk without data for column " + std::to_string(c));
      if (chunk.values[c].validity && !spec_.columns[c].may_have_nulls)
        throw Error(SqlState::internal_error,
                    "GPU: column " + std::to_string(c) + " has NULLs but was declared NOT NULL");
    }
  }

  kernels::ChunkRef<K> make_ref(const ChunkPointers& chunk, int64_t off, int64_t n) const {
    kernels::ChunkRef<K> r;
    r.keys = static_cast<const K*>(chunk.key.data) + off;
    r.key_validity = chunk.key.validity ? chunk.key.validity + off : nullptr;
    r.rows = n;
    for (size_t c = 0; c < chunk.values.size(); ++c) {
      const bool wide = spec_.columns[c].type == ValueType::int64;
      r.columns[c].wide = wide;
      r.columns[c].data = static_cast<const char*>(chunk.values[c].data) + off * (wide ? 8 : 4);
      r.columns[c].validity = chunk.values[c].validity ? chunk.values[c].validity + off : nullptr;
    }
    return r;
  }

  KeyRange measure(const kernels::ChunkRef<K>& ref) {
    const long long init[2] = {std::numeric_limits<long long>::max(), std::numeric_limits<long long>::min()};
    TALLY_CUDA_CHECK(cudaMemcpyAsync(counter(kRangeMin), init, sizeof(init), cudaMemcpyHostToDevice, cs()));
    if (ref.rows > 0) {
      const int grid = static_cast<int>(std::min<int64_t>(fill_grid(), (ref.rows + 255) / 256));
      kernels::key_range_kernel<K><<<grid, 256, 0, cs()>>>(ref, reinterpret_cast<long long*>(counter(kRangeMin)),
                                                           reinterpret_cast<long long*>(counter(kRangeMax)));
      TALLY_CUDA_CHECK_LAUNCH("key_range_kernel");
    }
    long long out[2];
    TALLY_CUDA_CHECK(cudaMemcpyAsync(out, counter(kRangeMin), sizeof(out), cudaMemcpyDeviceToHost, cs()));
    sync_stream();
    return KeyRange{out[0], out[1]};
  }

  kernels::SpillRef spill_ref(uint64_t rows) {
    const uint64_t cap = std::max<uint64_t>(rows, 1);
    if (cap > spill_capacity_) {
      // Unmerged entries live in the old buffer: merge them before it goes.
      LaunchReport late;
      settle(late);
      spill_keys_.release();
      spill_lanes_.release();
      spill_keys_.ensure(cap * sizeof(int64_t), cs());
      spill_lanes_.ensure(cap * plan_.lanes.size() * sizeof(ull), cs());
      spill_capacity_ = cap;
    }
    kernels::SpillRef s;
    s.keys = spill_keys_.get<int64_t>();
    s.lanes = spill_lanes_.get<ull>();
    s.capacity = spill_capacity_;
    s.count = counter(kSpillCount);
    return s;
  }

  // ---- launch configuration checks ----------------------------------------

  VariantConfig checked(const VariantConfig& in, LaunchReport& report) const {
    VariantConfig c = in;
    const int tpb = std::clamp((c.launch.threads_per_block + 31) / 32 * 32, 32, device_.max_threads_per_block);
    if (tpb != c.launch.threads_per_block)
      report.adjustments.push_back(simple_format("threads_per_block {} -> {}", c.launch.threads_per_block, tpb));
    c.launch.threads_per_block = tpb;
    int rpt = c.launch.rows_per_thread >= 8 ? 8 : c.launch.rows_per_thread >= 4 ? 4 : c.launch.rows_per_thread >= 2 ? 2 : 1;
    if (rpt != c.launch.rows_per_thread)
      report.adjustments.push_back(simple_format("rows_per_thread {} -> {} (supported: 1, 2, 4, 8)", c.launch.rows_per_thread, rpt));
    c.launch.rows_per_thread = rpt;
    const int bps = std::clamp(c.launch.blocks_per_sm, 1, std::max(1, device_.max_blocks_per_sm));
    if (bps != c.launch.blocks_per_sm) report.adjustments.push_back(simple_format("blocks_per_sm {} -> {}", c.launch.blocks_per_sm, bps));
    c.launch.blocks_per_sm = bps;
    const int fill = std::clamp(c.launch.fill_factor_percent, 10, 95);
    if (fill != c.launch.fill_factor_percent)
      report.adjustments.push_back(simple_format("fill_factor_percent {} -> {}", c.launch.fill_factor_percent, fill));
    c.launch.fill_factor_percent = fill;
    return c;
  }

  // Lowers threads_per_block to what `kernel` can launch with (its register
  // use limits the block size; the generic-lane kernels need more registers).
  template <class Kernel>
  void clamp_threads(Kernel kernel, VariantConfig& c, LaunchReport& report) const {
    const cudaFuncAttributes attr = detail::cached_attributes(device_.ordinal, reinterpret_cast<const void*>(kernel));
    const int limit = attr.maxThreadsPerBlock / 32 * 32;
    if (limit >= 32 && c.launch.threads_per_block > limit) {
      report.adjustments.push_back(simple_format("threads_per_block {} -> {} (kernel uses {} registers per thread)",
                                                 c.launch.threads_per_block, limit, attr.numRegs));
      c.launch.threads_per_block = limit;
    }
  }

  // Clamps blocks_per_sm to what the occupancy calculator allows for `kernel`.
  template <class Kernel>
  int occupancy_grid(Kernel kernel, VariantConfig& c, size_t smem, int64_t work_items, LaunchReport& report) const {
    const int max_blocks = detail::cached_occupancy(device_.ordinal, reinterpret_cast<const void*>(kernel),
                                                    c.launch.threads_per_block, smem);
    if (max_blocks < 1)
      throw Error(SqlState::internal_error,
                  simple_format("GPU: kernel cannot launch with {} threads and {} bytes of shared memory",
                              c.launch.threads_per_block, smem));
    if (c.launch.blocks_per_sm > max_blocks) {
      report.adjustments.push_back(
          simple_format("blocks_per_sm {} -> {} (occupancy limit at {} B shared memory)", c.launch.blocks_per_sm, max_blocks, smem));
      c.launch.blocks_per_sm = max_blocks;
    }
    const int64_t grid = std::min<int64_t>(static_cast<int64_t>(device_.sm_count) * c.launch.blocks_per_sm,
                                           std::max<int64_t>(work_items, 1));
    return static_cast<int>(grid);
  }

  // ---- variants ----------------------------------------------------------

  void run_piece(kernels::ChunkRef<K> ref, std::optional<KeyRange> range, Variant variant, const VariantConfig& requested,
                 LaunchReport& report) {
    VariantConfig c = checked(requested, report);
    const kernels::SpillRef spill = spill_ref(static_cast<uint64_t>(ref.rows));
    host_mark("checked");
    switch (variant) {
      case Variant::dense: {
        const KeyRange kr = range ? *range : measure(ref);
        const uint64_t size = kr.size();
        const uint32_t fit = dense_slots_fitting(spec_, plan_, device_.shared_memory_per_block_optin);
        if (size > fit)
          throw Error(SqlState::feature_not_supported,
                      simple_format("GPU: dense variant cannot hold a key range of {} in {} shared slots", size, fit));
        launch_shared<true>(ref, c, static_cast<uint32_t>(size), kr.min, false, spill, report);
        break;
      }
      case Variant::shared_hash: {
        const double est = static_cast<double>(std::max<uint64_t>(options_.estimated_groups, 1));
        const uint64_t want = static_cast<uint64_t>(est / c.fill()) + 16;
        launch_shared<false>(ref, c, static_cast<uint32_t>(std::min<uint64_t>(want, UINT32_MAX / 2)), 0, false, spill,
                             report);
        break;
      }
      case Variant::global_hash:
        launch_global(ref, c, spill, report);
        break;
      case Variant::sort: {
        const auto bits = sort_bits(range ? &*range : nullptr, 0);
        const kernels::ChunkRef<K> sorted = sort_piece(ref, bits.first, bits.second);
        const int run = c.launch.rows_per_thread * detail::kSortRunMultiplier;
        const int64_t threads = (sorted.rows + run - 1) / run;
        const int grid = static_cast<int>((threads + c.launch.threads_per_block - 1) / c.launch.threads_per_block);
        report.grid_blocks = grid;
        if (grid > 0) {
          kernels::sorted_run_kernel<K><<<grid, c.launch.threads_per_block, 0, cs()>>>(sorted, lanes_, table_ref(), spill, run);
          TALLY_CUDA_CHECK_LAUNCH("sorted_run_kernel");
        }
        break;
      }
      case Variant::partitioned_hash: {
        const KeyRange kr = range ? *range : measure(ref);
        int pbits = c.partition_bits;
        if (pbits <= 0) {
          ChunkFacts facts;
          facts.rows = static_cast<uint64_t>(ref.rows);
          facts.key_range = kr;
          facts.estimated_groups = options_.estimated_groups;
          pbits = default_launch_config(Variant::partitioned_hash, spec_, device_, facts).partition_bits;
          report.adjustments.push_back(simple_format("partition_bits 0 -> {} (from the estimate)", pbits));
        }
        pbits = std::clamp(pbits, 1, kMaxPartitionBits);
        c.partition_bits = pbits;
        const auto bits = sort_bits(&kr, pbits);
        const kernels::ChunkRef<K> sorted = sort_piece(ref, bits.first, bits.second);
        host_mark("sorted");
        launch_partitioned(sorted, bits.first, bits.second - bits.first, c, spill, report);
        host_mark("kernel");
        break;
      }
    }
    report.used = c;
  }

  // Lays out the lanes in shared memory: 8-byte arrays first for alignment.
  kernels::SharedLayout shared_layout(uint32_t slots, uint32_t replicas, bool with_keys) const {
    kernels::SharedLayout lay{};
    const uint32_t total = (slots + 2) * replicas;
    uint32_t off = 0;
    if (with_keys && sizeof(K) == 8) {
      lay.keys_offset = off;
      off += total * 8;
    }
    for (size_t l = 0; l < plan_.lanes.size(); ++l) {
      const Lane& lane = plan_.lanes[l];
      if ((lane.kind == LaneKind::min || lane.kind == LaneKind::max) && lane.wide) {
        lay.offset[l] = off;
        off += total * 8;
      }
    }
    for (size_t l = 0; l < plan_.lanes.size(); ++l) {
      const Lane& lane = plan_.lanes[l];
      if ((lane.kind == LaneKind::min || lane.kind == LaneKind::max) && lane.wide) continue;
      lay.offset[l] = off;
      off += total * static_cast<uint32_t>(shared_lane_bytes(lane));
    }
    if (with_keys && sizeof(K) == 4) {
      off = (off + 15) / 16 * 16;  // bucketed probing loads 16 bytes at a time
      lay.keys_offset = off;
      off += total * 4;
    }
    lay.counter_offset = (off + 15) / 16 * 16;
    lay.total_bytes = lay.counter_offset + 16;
    return lay;
  }

  template <bool kDense, int R>
  void launch_shared_r(const kernels::ChunkRef<K>& ref, VariantConfig& c, kernels::SharedParams p,
                       const kernels::SpillRef& spill, LaunchReport& report) {
    auto kernel = kernels::shared_aggregate_kernel<K, R, kDense>;
    if constexpr (R >= 2) {
      const bool fast = count_sum_shape_ && !ref.key_validity && !ref.columns[0].validity && !ref.columns[0].wide &&
                        !p.warp_preaggregate;
      if (fast) kernel = kernels::shared_aggregate_kernel<K, R, kDense, true>;
    }
    const kernels::SharedLayout lay = shared_layout(p.slots, p.replicas, !kDense);
    detail::ensure_dynamic_shared(device_.ordinal, reinterpret_cast<const void*>(kernel), lay.total_bytes);
    host_mark("shared limit");
    clamp_threads(kernel, c, report);
    const int64_t tiles = (ref.rows + static_cast<int64_t>(c.launch.threads_per_block) * R - 1) /
                          (static_cast<int64_t>(c.launch.threads_per_block) * R);
    const int grid = occupancy_grid(kernel, c, lay.total_bytes, tiles, report);
    host_mark("occupancy");
    report.grid_blocks = grid;
    report.shared_slots = p.slots;
    kernel<<<grid, c.launch.threads_per_block, lay.total_bytes, cs()>>>(ref, lanes_, lay, p, table_ref(), spill);
    TALLY_CUDA_CHECK_LAUNCH("shared_aggregate_kernel");
    host_mark("kernel");
  }

  // Sizes the shared table within the budget that blocks_per_sm leaves.
  template <bool kDense>
  void launch_shared(const kernels::ChunkRef<K>& ref, VariantConfig& c, uint32_t want_slots, int64_t dense_min,
                     bool flush_on_fill, const kernels::SpillRef& spill, LaunchReport& report) {
    if (ref.rows == 0) return;
    if constexpr (!kDense) {
      if (!flush_on_fill && !c.warp_preaggregate && can_use_dictionary(spec_, device_, options_.estimated_groups)) {
        launch_dictionary(ref, c, spill, report);
        return;
      }
    }
    size_t budget = shared_budget_per_block(device_, c.launch.blocks_per_sm);
    uint32_t fit = kDense ? dense_slots_fitting(spec_, plan_, budget) : hash_slots_fitting(spec_, plan_, budget);
    if (kDense && want_slots > fit) {
      // The range must fit: lower blocks_per_sm until it does.
      while (c.launch.blocks_per_sm > 1 && want_slots > fit) {
        --c.launch.blocks_per_sm;
        budget = shared_budget_per_block(device_, c.launch.blocks_per_sm);
        fit = dense_slots_fitting(spec_, plan_, budget);
      }
      report.adjustments.push_back(simple_format("blocks_per_sm -> {} so that {} dense slots fit", c.launch.blocks_per_sm, want_slots));
    }
    const int tile = c.launch.threads_per_block * c.launch.rows_per_thread;
    uint32_t slots = std::min(want_slots, fit);
    if (!kDense) {
      // Room for a tile of new keys above the flush threshold.
      const uint32_t min_slots = static_cast<uint32_t>(2.0 * tile / c.fill()) + 64;
      if (flush_on_fill && slots < min_slots) {
        const int rpt = c.launch.rows_per_thread;
        while (c.launch.rows_per_thread > 1 && fit < static_cast<uint32_t>(2.0 * c.launch.threads_per_block * c.launch.rows_per_thread / c.fill()) + 64)
          c.launch.rows_per_thread /= 2;
        if (rpt != c.launch.rows_per_thread)
          report.adjustments.push_back(simple_format("rows_per_thread {} -> {} so a tile fits the shared table", rpt, c.launch.rows_per_thread));
      }
      if (want_slots > fit && !flush_on_fill)
        report.adjustments.push_back(simple_format("shared hash table clamped to {} slots ({} B per block)", fit, budget));
      slots = std::max<uint32_t>(std::min(want_slots, fit), std::min<uint32_t>(fit, 64));
    }
    // Per-lane copies only while they fit next to the table (and never with
    // flush_on_fill, whose threshold counts one table).
    uint32_t replicas = static_cast<uint32_t>(std::clamp(c.shared_replicas, 1, 32));
    replicas = std::bit_floor(replicas);
    if (flush_on_fill) replicas = 1;
    while (replicas > 1 && (static_cast<uint64_t>(slots) + 2) * replicas > static_cast<uint64_t>(fit) + 2) replicas /= 2;
    if (static_cast<int>(replicas) != c.shared_replicas) {
      report.adjustments.push_back(simple_format("shared_replicas {} -> {}", c.shared_replicas, replicas));
      c.shared_replicas = static_cast<int>(replicas);
    }
    // Bucketed probes pay off where probes run past the home slot (few
    // replicas, larger tables); see shared_find_or_insert.
    const bool bucketed = !kDense && replicas <= detail::kMaxBucketedReplicas;
    if (bucketed) slots = kernels::aligned_hash_slots<K>(slots);
    kernels::SharedParams p;
    p.replicas = replicas;
    p.dense_min = dense_min;
    p.slots = slots;
    p.bucketed = bucketed;
    if (bucketed) p.area_magic = kernels::hash_area_magic<K>(slots);
    p.insert_limit = static_cast<uint32_t>(slots * c.fill() * replicas);
    const double thr = slots * c.fill() - static_cast<double>(c.launch.threads_per_block) * c.launch.rows_per_thread;
    p.flush_threshold = thr > 0 ? static_cast<uint32_t>(thr) : 0;
    p.flush_on_fill = flush_on_fill;
    p.warp_preaggregate = c.warp_preaggregate;
    p.hash = c.hash;
    switch (c.launch.rows_per_thread) {
      case 1: launch_shared_r<kDense, 1>(ref, c, p, spill, report); break;
      case 2: launch_shared_r<kDense, 2>(ref, c, p, spill, report); break;
      case 4: launch_shared_r<kDense, 4>(ref, c, p, spill, report); break;
      default: launch_shared_r<kDense, 8>(ref, c, p, spill, report); break;
    }
  }

  // SHARED-MEMORY HASH with a key dictionary (kernels/dictionary_kernels.cuh):
  // one block builds a cuckoo table from a sample of the chunk, then the
  // aggregation indexes per-lane accumulator copies by the key's table slot.
  void launch_dictionary(const kernels::ChunkRef<K>& ref, VariantConfig& c, const kernels::SpillRef& spill,
                         LaunchReport& report) {
    const DictionarySizing z = dictionary_sizing(spec_, options_.estimated_groups);
    const auto fits = [&](uint32_t r) {
      return dictionary_shared_bytes(spec_, plan_, z, r) <= shared_budget_per_block(device_, c.launch.blocks_per_sm);
    };
    while (c.launch.blocks_per_sm > 1 && !fits(1)) {
      --c.launch.blocks_per_sm;
      report.adjustments.push_back(simple_format("blocks_per_sm -> {} so that the dictionary fits", c.launch.blocks_per_sm));
    }
    uint32_t replicas = std::bit_floor(static_cast<uint32_t>(std::clamp(c.shared_replicas, 1, 32)));
    while (replicas > 1 && !fits(replicas)) replicas /= 2;
    if (static_cast<int>(replicas) != c.shared_replicas) {
      report.adjustments.push_back(simple_format("shared_replicas {} -> {}", c.shared_replicas, replicas));
      c.shared_replicas = static_cast<int>(replicas);
    }
    // Device image: the cuckoo table's keys, the multipliers the build kernel
    // chose for them, then the sample's set of distinct keys.
    const size_t table_bytes = static_cast<size_t>(z.slots) * sizeof(K);
    const size_t hash_offset = (table_bytes + 15) / 16 * 16;
    const size_t set_offset = (hash_offset + sizeof(kernels::DictionaryHash) + 15) / 16 * 16;
    const size_t set_bytes = static_cast<size_t>(z.set_slots) * sizeof(K);
    dict_.ensure(set_offset + set_bytes, cs());
    kernels::DictionaryRef<K> d;
    d.keys = dict_.get<K>();
    d.hash = reinterpret_cast<kernels::DictionaryHash*>(dict_.get<unsigned char>() + hash_offset);
    d.slots = z.slots;
    d.set = reinterpret_cast<K*>(dict_.get<unsigned char>() + set_offset);
    d.set_slots = z.set_slots;
    // The sample: one row per thread over many blocks into the set (its
    // latency, one random load per row, hidden by the whole GPU); then one
    // block places the set's keys.
    kernels::fill_kernel<K><<<(z.set_slots + 255) / 256, 256, 0, cs()>>>(d.set, z.set_slots, kernels::KeyTraits<K>::empty);
    TALLY_CUDA_CHECK_LAUNCH("fill_kernel(dictionary set)");
    TALLY_CUDA_CHECK(cudaMemsetAsync(&d.hash->distinct, 0, sizeof(uint32_t), cs()));
    const int64_t samples = static_cast<int64_t>(dictionary_sample_rows(z, static_cast<uint64_t>(ref.rows)));
    const int sample_grid = static_cast<int>(std::min<int64_t>((samples + 255) / 256, static_cast<int64_t>(device_.sm_count) * 8));
    kernels::dictionary_sample_kernel<K><<<std::max(sample_grid, 1), 256, 0, cs()>>>(ref, samples, z.ids, d);
    TALLY_CUDA_CHECK_LAUNCH("dictionary_sample_kernel");
    auto build = kernels::dictionary_build_kernel<K>;
    const size_t build_bytes = set_bytes + table_bytes + 16;
    detail::ensure_dynamic_shared(device_.ordinal, reinterpret_cast<const void*>(build), build_bytes);
    const cudaFuncAttributes attr = detail::cached_attributes(device_.ordinal, reinterpret_cast<const void*>(build));
    build<<<1, std::min(1024, attr.maxThreadsPerBlock) / 32 * 32, build_bytes, cs()>>>(d);
    TALLY_CUDA_CHECK_LAUNCH("dictionary_build_kernel");

    kernels::SharedLayout lay = shared_layout(z.slots + z.extra_slots, replicas, false);
    kernels::DictionaryParams dp;
    uint32_t off = (lay.total_bytes + 15) / 16 * 16;
    lay.keys_offset = off;
    off += (z.extra_slots * static_cast<uint32_t>(sizeof(K)) + 15) / 16 * 16;
    dp.keys_offset = off;
    off += static_cast<uint32_t>(table_bytes);
    lay.total_bytes = off;
    dp.extra_slots = z.extra_slots;
    dp.extra_limit = z.extra_slots / 2;
    kernels::SharedParams p;
    p.slots = z.slots + z.extra_slots;
    p.replicas = replicas;
    p.hash = HashKind::murmur;
    report.shared_slots = p.slots;
    if (c.launch.rows_per_thread < 2) {
      report.adjustments.push_back("rows_per_thread 1 -> 2 (dictionary kernel: 2, 4 or 8)");
      c.launch.rows_per_thread = 2;
    }
    switch (c.launch.rows_per_thread) {
      case 2: launch_dictionary_r<2>(ref, c, lay, p, dp, d, spill, report); break;
      case 4: launch_dictionary_r<4>(ref, c, lay, p, dp, d, spill, report); break;
      default: launch_dictionary_r<8>(ref, c, lay, p, dp, d, spill, report); break;
    }
  }

  template <int R>
  void launch_dictionary_r(const kernels::ChunkRef<K>& ref, VariantConfig& c, const kernels::SharedLayout& lay,
                           const kernels::SharedParams& p, const kernels::DictionaryParams& dp,
                           const kernels::DictionaryRef<K>& d, const kernels::SpillRef& spill, LaunchReport& report) {
    auto kernel = kernels::dictionary_aggregate_kernel<K, R>;
    if (count_sum_shape_ && !ref.key_validity && !ref.columns[0].validity && !ref.columns[0].wide) {
      kernel = kernels::dictionary_count_sum_kernel<K, R, false>;
      // 16-byte loads of 4 keys and 4 values where both columns allow them.
      if constexpr (sizeof(K) == 4 && R % 4 == 0) {
        const auto aligned = [](const void* q) { return reinterpret_cast<uintptr_t>(q) % 16 == 0; };
        if (aligned(ref.keys) && aligned(ref.columns[0].data)) kernel = kernels::dictionary_count_sum_kernel<K, R, true>;
      }
    }
    detail::ensure_dynamic_shared(device_.ordinal, reinterpret_cast<const void*>(kernel), lay.total_bytes);
    clamp_threads(kernel, c, report);
    const int64_t tiles = (ref.rows + static_cast<int64_t>(c.launch.threads_per_block) * R - 1) /
                          (static_cast<int64_t>(c.launch.threads_per_block) * R);
    const int grid = occupancy_grid(kernel, c, lay.total_bytes, tiles, report);
    report.grid_blocks = grid;
    kernel<<<grid, c.launch.threads_per_block, lay.total_bytes, cs()>>>(ref, lanes_, lay, p, dp, d, table_ref(), spill);
    TALLY_CUDA_CHECK_LAUNCH("dictionary_aggregate_kernel");
    host_mark("kernel");
  }

  // count(*) + sum(int4 NOT NULL) without NULL keys: the partitioned variant
  // runs partition_count_sum_kernel (lanes fixed at compile time).
  bool count_sum_fast(const kernels::ChunkRef<K>& sorted) const {
    return count_sum_shape_ && !sorted.key_validity && !sorted.columns[0].validity && !sorted.columns[0].wide;
  }

  // The partition kernel's shared-table parameters for `slots` (aligned).
  static kernels::SharedParams partition_params(uint32_t slots, double tile, const VariantConfig& c) {
    kernels::SharedParams p;
    p.slots = slots;
    p.replicas = 1;
    p.insert_limit = static_cast<uint32_t>(slots * c.fill());
    const double thr = slots * c.fill() - tile;
    p.flush_threshold = thr >= 1 ? static_cast<uint32_t>(thr) : 0;
    p.flush_on_fill = true;
    p.hash = c.hash == HashKind::range ? HashKind::murmur : c.hash;
    p.area_magic = kernels::hash_area_magic<K>(slots);
    p.bucketed = true;
    return p;
  }

  // The partition kernel's shared layout. The count+sum kernel adds its list
  // of claimed slots (uint16) with room for every claim the table allows:
  // with the fill check the occupancy stays <= flush_threshold + one tile <=
  // insert_limit (the tile the kernel runs: rows_per_thread is 1, 2, 4 or 8
  // here, and clamp_threads only lowers the threads); without it, the insert
  // limit plus one claim per thread that passed the limit check before the
  // occupancy counted the others, and never more than the slots.
  kernels::SharedLayout partition_layout(const kernels::SharedParams& p, bool count_sum, int threads) const {
    kernels::SharedLayout lay = shared_layout(p.slots, 1, true);
    if (count_sum) {
      lay.list_capacity =
          p.flush_threshold > 0
              ? p.insert_limit
              : static_cast<uint32_t>(std::min<uint64_t>(
                    p.slots, static_cast<uint64_t>(p.insert_limit) + static_cast<uint64_t>(threads)));
      lay.list_offset = lay.total_bytes;
      lay.total_bytes += (2 * lay.list_capacity + 15) / 16 * 16;
    }
    return lay;
  }

  // The most slots a partition table may have within `budget` bytes: the
  // generic kernel's table, or the count+sum kernel's with its list (slot
  // indices < 2^16 there; H100, 2 x 1024 threads, 2 rows per thread, fill
  // 70%: 6 626 rather than 7 218 slots).
  uint32_t partition_slots_fitting(size_t budget, bool count_sum, const VariantConfig& c) const {
    uint32_t fit = hash_slots_fitting(spec_, plan_, budget);
    if (!count_sum) return fit;
    constexpr uint32_t kMaxListedSlots = 65532;  // aligned, and indices of ordinary slots < 65535
    fit = std::min(fit, kMaxListedSlots);
    const double tile = static_cast<double>(c.launch.threads_per_block) * c.launch.rows_per_thread;
    while (fit > 0) {
      const kernels::SharedParams p = partition_params(kernels::aligned_hash_slots<K>(fit), tile, c);
      if (partition_layout(p, true, c.launch.threads_per_block).total_bytes <= budget) break;
      fit = fit > 64 ? fit - 16 : 0;
    }
    return fit;
  }

  // PARTITIONED, after the sort: partition boundaries, then one block per
  // partition (partition_kernels.cuh). The shared table is sized for the
  // expected groups of one partition (estimate / partitions) with slack and
  // one tile of new keys (the fill check runs at tile starts), within what
  // blocks_per_sm leaves.
  void launch_partitioned(const kernels::ChunkRef<K>& sorted, int begin_bit, int bits, VariantConfig& c,
                          const kernels::SpillRef& spill, LaunchReport& report) {
    if (sorted.rows == 0) return;
    const uint32_t parts = 1u << bits;
    part_starts_.ensure((parts + 1) * sizeof(int64_t), cs());
    part_pieces_.ensure(2 * (parts + 1) * sizeof(uint32_t), cs());
    kernels::partition_bounds_kernel<K><<<(parts + 256) / 256, 256, 0, cs()>>>(sorted.keys, sorted.rows, begin_bit, parts,
                                                                              part_starts_.get<int64_t>());
    TALLY_CUDA_CHECK_LAUNCH("partition_bounds_kernel");
    // Own the output outright only when nothing else holds groups yet.
    const bool direct = !table_may_have_groups_ && direct_groups_ == 0;
    kernels::DirectRef out;
    if (direct) {
      const uint64_t need = static_cast<uint64_t>(sorted.rows);
      if (need > dir_capacity_) {
        dir_keys_.release();
        dir_lanes_.release();
        dir_keys_.ensure(need * sizeof(int64_t), cs());
        dir_lanes_.ensure(need * plan_.lanes.size() * sizeof(ull), cs());
        dir_capacity_ = need;
      }
      out.keys = dir_keys_.get<int64_t>();
      out.lanes = dir_lanes_.get<ull>();
      out.capacity = dir_capacity_;
    }
    out.count = counter(kDirectCount);
    out.lost = counter(kLost);

    // Leave room for the kernel's static shared variables, or the occupancy
    // check drops to one block per SM (seen on the H100: 2^26 groups ran at
    // one 1024-thread block per SM with tables sized for two).
    const size_t budget = shared_budget_per_block(device_, c.launch.blocks_per_sm) - detail::kPartitionStaticShared;
    const bool count_sum = count_sum_fast(sorted);
    const uint32_t fit = partition_slots_fitting(budget, count_sum, c);
    const double tile = static_cast<double>(c.launch.threads_per_block) * c.launch.rows_per_thread;
    const double per_partition = static_cast<double>(std::max<uint64_t>(options_.estimated_groups, 1)) / parts;
    const double want = (per_partition * kPartitionSlack + tile) / c.fill() + 64;
    uint32_t slots = static_cast<uint32_t>(std::min<double>(want, fit));
    if (want > fit)
      report.adjustments.push_back(simple_format("partition table clamped to {} slots ({} B per block)", fit, budget));
    slots = kernels::aligned_hash_slots<K>(std::max<uint32_t>(slots, std::min<uint32_t>(fit, 64)));
    const kernels::SharedParams p = partition_params(slots, tile, c);
    c.shared_replicas = 1;
    report.shared_slots = slots;
    switch (c.launch.rows_per_thread) {
      case 1: launch_partitioned_r<1>(sorted, parts, direct, out, c, p, spill, report); break;
      case 2: launch_partitioned_r<2>(sorted, parts, direct, out, c, p, spill, report); break;
      case 4: launch_partitioned_r<4>(sorted, parts, direct, out, c, p, spill, report); break;
      default: launch_partitioned_r<8>(sorted, parts, direct, out, c, p, spill, report); break;
    }
  }

  // The count+sum partition kernel for a fill-check mode and a hash.
  template <int R>
  static const void* count_sum_kernel_of(bool fill_checked, bool identity) {
    using namespace kernels;
    if (fill_checked)
      return identity ? reinterpret_cast<const void*>(partition_count_sum_kernel<K, R, true, true>)
                      : reinterpret_cast<const void*>(partition_count_sum_kernel<K, R, true, false>);
    return identity ? reinterpret_cast<const void*>(partition_count_sum_kernel<K, R, false, true>)
                    : reinterpret_cast<const void*>(partition_count_sum_kernel<K, R, false, false>);
  }

  template <int R>
  void launch_partitioned_r(const kernels::ChunkRef<K>& sorted, uint32_t parts, bool direct,
                            const kernels::DirectRef& out, VariantConfig& c, const kernels::SharedParams& p,
                            const kernels::SpillRef& spill, LaunchReport& report) {
    // count(*) + sum(int4 NOT NULL) without NULL keys: the kernel with the
    // lanes fixed at compile time (partition_count_sum_kernel.cuh).
    const bool fast = count_sum_fast(sorted);
    const bool fill_checked = p.flush_threshold > 0;  // see partition_count_sum_kernel
    // The shared table's hash is fixed at compile time there: identity (dense
    // ranges) or murmur (count_sum_home).
    const bool identity = p.hash == HashKind::identity;
    const void* kernel = !fast ? reinterpret_cast<const void*>(kernels::partition_aggregate_kernel<K, R>)
                               : count_sum_kernel_of<R>(fill_checked, identity);
    const kernels::SharedLayout lay = partition_layout(p, fast, c.launch.threads_per_block);
    TALLY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(lay.total_bytes)));
    clamp_threads(kernel, c, report);
    const int64_t tile = static_cast<int64_t>(c.launch.threads_per_block) * R;
    const int64_t slots_of_blocks = static_cast<int64_t>(device_.sm_count) * c.launch.blocks_per_sm;
    const int grid = occupancy_grid(kernel, c, lay.total_bytes, std::max<int64_t>(parts, slots_of_blocks), report);
    report.grid_blocks = grid;
    // Pieces of at most twice a block's fair share of the rows: balanced
    // partitions stay whole (owned outright), a dominant one is shared.
    const int64_t piece_rows =
        std::max<int64_t>(tile, (detail::kPieceShare * sorted.rows + grid - 1) / std::max(grid, 1));
    uint32_t* pieces = part_pieces_.get<uint32_t>();
    kernels::partition_pieces_kernel<K><<<(parts + 256) / 256, 256, 0, cs()>>>(part_starts_.get<int64_t>(), parts,
                                                                           piece_rows, pieces);
    TALLY_CUDA_CHECK_LAUNCH("partition_pieces_kernel");
    uint32_t* first_item = pieces + (parts + 1);
    size_t temp = 0;
    TALLY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp, pieces, first_item, parts + 1, cs()));
    sort_temp_.ensure(temp, cs());
    TALLY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(sort_temp_.get(), temp, pieces, first_item, parts + 1, cs()));
    // Items <= parts + rows / piece_rows.
    const uint64_t max_items = parts + static_cast<uint64_t>(sorted.rows / piece_rows) + 1;
    part_items_.ensure(max_items * sizeof(kernels::PartitionItem), cs());
    kernels::PartitionItem* work = part_items_.get<kernels::PartitionItem>();
    kernels::partition_items_kernel<K><<<(parts + 255) / 256, 256, 0, cs()>>>(first_item, part_starts_.get<int64_t>(),
                                                                             parts, work);
    TALLY_CUDA_CHECK_LAUNCH("partition_items_kernel");
    const uint32_t* item_count = first_item + parts;  // stays on the device
    const auto launch_count_sum = [&](auto kern) {
      kern<<<grid, c.launch.threads_per_block, lay.total_bytes, cs()>>>(sorted, lay, p, work, item_count, direct,
                                                                      table_ref(), spill, out);
    };
    if (fast && fill_checked && identity) launch_count_sum(kernels::partition_count_sum_kernel<K, R, true, true>);
    else if (fast && fill_checked) launch_count_sum(kernels::partition_count_sum_kernel<K, R, true, false>);
    else if (fast && identity) launch_count_sum(kernels::partition_count_sum_kernel<K, R, false, true>);
    else if (fast) launch_count_sum(kernels::partition_count_sum_kernel<K, R, false, false>);
    else
      kernels::partition_aggregate_kernel<K, R><<<grid, c.launch.threads_per_block, lay.total_bytes, cs()>>>(
          sorted, lanes_, lay, p, work, item_count, direct, table_ref(), spill, out);
    TALLY_CUDA_CHECK_LAUNCH("partition_aggregate_kernel");
  }

  template <int R>
  void launch_global_r(const kernels::ChunkRef<K>& ref, VariantConfig& c, const kernels::SpillRef& spill,
                       LaunchReport& report) {
    auto kernel = kernels::global_aggregate_kernel<K, R>;
    clamp_threads(kernel, c, report);
    const int64_t tiles = (ref.rows + static_cast<int64_t>(c.launch.threads_per_block) * R - 1) /
                          (static_cast<int64_t>(c.launch.threads_per_block) * R);
    const int grid = occupancy_grid(kernel, c, 0, tiles, report);
    report.grid_blocks = grid;
    kernel<<<grid, c.launch.threads_per_block, 0, cs()>>>(ref, lanes_, table_ref(), spill);
    TALLY_CUDA_CHECK_LAUNCH("global_aggregate_kernel");
    host_mark("kernel");
  }

  void launch_global(const kernels::ChunkRef<K>& ref, VariantConfig& c, const kernels::SpillRef& spill,
                     LaunchReport& report) {
    if (ref.rows == 0) return;
    switch (c.launch.rows_per_thread) {
      case 1: launch_global_r<1>(ref, c, spill, report); break;
      case 2: launch_global_r<2>(ref, c, spill, report); break;
      case 4: launch_global_r<4>(ref, c, spill, report); break;
      default: launch_global_r<8>(ref, c, spill, report); break;
    }
  }

  // Radix bits [begin, end) to sort on. CUB flips the sign bit of signed keys,
  // so the bits that differ within [min, max] are computed on flipped values.
  // partition_bits = 0: every differing bit (a full sort of the range).
  std::pair<int, int> sort_bits(const KeyRange* range, int partition_bits) const {
    constexpr int kBits = 8 * sizeof(K);
    int end = kBits;
    if (range && range->max >= range->min) {
      using U = std::make_unsigned_t<K>;
      const U sign = U{1} << (kBits - 1);
      const U lo = static_cast<U>(static_cast<K>(range->min)) ^ sign;
      const U hi = static_cast<U>(static_cast<K>(range->max)) ^ sign;
      end = std::max(1, kBits - std::countl_zero(static_cast<U>(lo ^ hi)));
    }
    if (partition_bits <= 0) return {0, end};
    end = std::max(end, std::min(partition_bits, kBits));
    return {end - std::min(partition_bits, end), end};
  }

  // Sorts a piece by key bits [begin, end) and returns a view of the sorted
  // rows: with a single NOT NULL value column and no NULL keys the value rides
  // along as the sort payload; otherwise rows are sorted by index and gathered.
  kernels::ChunkRef<K> sort_piece(const kernels::ChunkRef<K>& ref, int begin, int end) {
    const uint64_t n = static_cast<uint64_t>(ref.rows);
    kernels::ChunkRef<K> out = ref;
    if (n == 0) return out;
    const bool payload_value =
        spec_.columns.size() == 1 && !ref.key_validity && !ref.columns[0].validity;
    const bool wide_payload = payload_value && ref.columns[0].wide;
    sort_keys_.ensure(n * sizeof(K), cs());
    const size_t pw = wide_payload ? 8 : 4;
    sort_payload_in_.ensure(n * pw, cs());
    sort_payload_out_.ensure(n * pw, cs());
    const int grid = fill_grid();
    const void* payload_in = nullptr;
    if (payload_value) {
      payload_in = ref.columns[0].data;
    } else {
      kernels::iota_kernel<uint32_t><<<grid, 256, 0, cs()>>>(sort_payload_in_.get<uint32_t>(), n);
      TALLY_CUDA_CHECK_LAUNCH("iota_kernel");
      payload_in = sort_payload_in_.get();
    }
    size_t temp = 0;
    if (wide_payload) {
      TALLY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp, ref.keys, sort_keys_.get<K>(),
                                                       static_cast<const uint64_t*>(payload_in),
                                                       sort_payload_out_.get<uint64_t>(), n, begin, end, cs()));
      sort_temp_.ensure(temp, cs());
      TALLY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp_.get(), temp, ref.keys, sort_keys_.get<K>(),
                                                       static_cast<const uint64_t*>(payload_in),
                                                       sort_payload_out_.get<uint64_t>(), n, begin, end, cs()));
    } else {
      TALLY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp, ref.keys, sort_keys_.get<K>(),
                                                       static_cast<const uint32_t*>(payload_in),
                                                       sort_payload_out_.get<uint32_t>(), n, begin, end, cs()));
      sort_temp_.ensure(temp, cs());
      TALLY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp_.get(), temp, ref.keys, sort_keys_.get<K>(),
                                                       static_cast<const uint32_t*>(payload_in),
                                                       sort_payload_out_.get<uint32_t>(), n, begin, end, cs()));
    }
    out.keys = sort_keys_.get<K>();
    if (payload_value) {
      out.columns[0].data = sort_payload_out_.get();
      return out;
    }
    // Gather NULL flags and value columns through the permutation.
    const uint32_t* perm = sort_payload_out_.get<uint32_t>();
    size_t gather_bytes = ref.key_validity ? n : 0;
    for (size_t c = 0; c < spec_.columns.size(); ++c)
      gather_bytes += n * (ref.columns[c].wide ? 8 : 4) + (ref.columns[c].validity ? n : 0) + 16;
    sort_gather_.ensure(gather_bytes + 16, cs());
    char* dst = sort_gather_.get<char>();
    auto place = [&](size_t bytes) {
      char* p = dst;
      dst += (bytes + 15) / 16 * 16;
      return p;
    };
    if (ref.key_validity) {
      uint8_t* kv = reinterpret_cast<uint8_t*>(place(n));
      kernels::gather_kernel<uint8_t><<<grid, 256, 0, cs()>>>(perm, n, ref.key_validity, kv);
      TALLY_CUDA_CHECK_LAUNCH("gather_kernel(key validity)");
      out.key_validity = kv;
    }
    for (size_t c = 0; c < spec_.columns.size(); ++c) {
      if (ref.columns[c].wide) {
        int64_t* d = reinterpret_cast<int64_t*>(place(n * 8));
        kernels::gather_kernel<int64_t><<<grid, 256, 0, cs()>>>(perm, n, static_cast<const int64_t*>(ref.columns[c].data), d);
        out.columns[c].data = d;
      } else {
        int32_t* d = reinterpret_cast<int32_t*>(place(n * 4));
        kernels::gather_kernel<int32_t><<<grid, 256, 0, cs()>>>(perm, n, static_cast<const int32_t*>(ref.columns[c].data), d);
        out.columns[c].data = d;
      }
      TALLY_CUDA_CHECK_LAUNCH("gather_kernel(values)");
      if (ref.columns[c].validity) {
        uint8_t* v = reinterpret_cast<uint8_t*>(place(n));
        kernels::gather_kernel<uint8_t><<<grid, 256, 0, cs()>>>(perm, n, ref.columns[c].validity, v);
        TALLY_CUDA_CHECK_LAUNCH("gather_kernel(validity)");
        out.columns[c].validity = v;
      }
    }
    return out;
  }

  // ---- growth --------------------------------------------------------------

  // Overflow is observed without stalling the stream: after each launch the
  // counters (occupied, spilled, lost, direct) are copied into pinned host
  // memory and an event is recorded; the host reads an observation once its
  // event has completed. The spill buffer holds kSpillLaunches launches' rows,
  // and a row spills at most once, so rows launched since the last observed
  // zero spill count bound what the buffer may hold: the host waits for an
  // older observation (the GPU keeps running the queued launches) only when
  // the next launch could overflow the buffer, and synchronizes to grow the
  // table only when a spill actually happened.
  struct Observation {
    int slot = 0;
    uint64_t rows = 0;  // rows launched up to and including this observation's launch, since the previous one
  };

  void observe() {
    if (!pinned_counters_) {
      observation_staging_.ensure(detail::kObservationRing * 4 * sizeof(ull));
      pinned_counters_ = observation_staging_.get<ull>();
      for (auto& e : observation_events_) TALLY_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    }
    if (static_cast<int>(observations_.size()) == detail::kObservationRing) {
      LaunchReport late;
      read_observation(true, late);
    }
    const int slot = next_observation_slot_;
    next_observation_slot_ = (next_observation_slot_ + 1) % detail::kObservationRing;
    TALLY_CUDA_CHECK(cudaMemcpyAsync(pinned_counters_ + 4 * slot, counter(kOccupied), 4 * sizeof(ull),
                                     cudaMemcpyDeviceToHost, cs()));
    TALLY_CUDA_CHECK(cudaEventRecord(observation_events_[slot], cs()));
    observations_.push_back(Observation{slot, unobserved_rows_});
    unobserved_rows_ = 0;
  }

  // Reads the oldest observation (waiting for it when `wait`); returns false
  // when it has not completed. A spill or a loss settles synchronously.
  bool read_observation(bool wait, LaunchReport& report) {
    if (observations_.empty()) return false;
    const Observation o = observations_.front();
    cudaEvent_t e = observation_events_[o.slot];
    if (wait) {
      wait_event(e);
    } else {
      const cudaError_t q = cudaEventQuery(e);
      if (q == cudaErrorNotReady) return false;
      TALLY_CUDA_CHECK(q);
    }
    const ull* h = pinned_counters_ + 4 * o.slot;
    if (h[2] != 0 || h[1] != 0) {
      settle(report);  // grows and merges (or throws on a loss)
      return true;
    }
    if (h[0] > 0) table_may_have_groups_ = true;
    observations_.pop_front();
    unsettled_rows_ -= std::min(unsettled_rows_, o.rows);
    return true;
  }

  // Before a launch of `rows` rows: makes sure the spill buffer can take them
  // with everything launched but not yet observed.
  void make_room_for(uint64_t rows, LaunchReport& report) {
    const uint64_t want = std::max<uint64_t>(
        rows, std::min<uint64_t>(detail::kSpillLaunches * rows, options_.max_rows_per_launch));
    if (want > spill_capacity_) spill_ref(want);
    while (read_observation(false, report)) {
    }
    if (unsettled_rows_ + rows > spill_capacity_ && unobserved_rows_ > 0) observe();
    while (unsettled_rows_ + rows > spill_capacity_ && !observations_.empty()) read_observation(true, report);
    if (unsettled_rows_ + rows > spill_capacity_) settle(report);
  }


  // Reads the overflow counters; on spill grows the table and merges the
  // spilled rows/partials, so the chunk's result is complete when this returns.
  void settle_overflow(LaunchReport& report) {
    ull h[4];
    TALLY_CUDA_CHECK(cudaMemcpyAsync(h, counter(kOccupied), sizeof(h), cudaMemcpyDeviceToHost, cs()));
    sync_stream();
    const ull occupied = h[0], spilled = h[1], lost = h[2];
    if (lost != 0) throw Error(SqlState::internal_error, "GPU: hash table lost groups during growth");
    direct_groups_ = h[3];
    if (occupied > 0) table_may_have_groups_ = true;
    if (spilled == 0) return;
    if (spilled > spill_capacity_)
      throw Error(SqlState::internal_error,
                  simple_format("GPU: spill buffer overflow ({} entries, capacity {})", spilled, spill_capacity_));
    const uint64_t need = capacity_for(occupied + spilled);
    grow(std::max(need, capacity_ * 2));
    ++report.table_growths;
    report.spilled += spilled;
    merge_entries(spill_keys_, spill_lanes_, spill_capacity_, kSpillCount, spilled, "the spill");
    table_may_have_groups_ = true;
  }

  // Merges n (key, lanes) entries of a spill-shaped buffer into the global
  // table (the spill after an overflow, the partitioned variant's output),
  // resets the buffer's entry counter and fails if the table lost a group.
  void merge_entries(DeviceBuffer& keys, DeviceBuffer& lanes, uint64_t capacity, Counter count_counter, uint64_t n,
                     const char* what) {
    kernels::SpillRef from;
    from.keys = keys.get<int64_t>();
    from.lanes = lanes.get<ull>();
    from.capacity = capacity;
    from.count = counter(count_counter);
    const int grid = static_cast<int>(std::min<uint64_t>(fill_grid(), (n + 255) / 256));
    kernels::merge_spill_kernel<K><<<grid, 256, 0, cs()>>>(table_ref(true), from, n, lanes_, counter(kLost));
    TALLY_CUDA_CHECK_LAUNCH("merge_spill_kernel");
    TALLY_CUDA_CHECK(cudaMemsetAsync(counter(count_counter), 0, sizeof(ull), cs()));
    ull lost = 0;
    TALLY_CUDA_CHECK(cudaMemcpyAsync(&lost, counter(kLost), sizeof(ull), cudaMemcpyDeviceToHost, cs()));
    sync_stream();
    if (lost != 0) throw Error(SqlState::internal_error, simple_format("GPU: hash table lost groups merging {}", what));
  }

  // Merges the partitioned variant's compact output into the global table
  // (growing it first), before any other chunk is aggregated: from then on a
  // key can only be in one place, and later chunks merge into the table.
  void materialize_direct(LaunchReport& report) {
    ensure_table();
    const uint64_t n = direct_groups_;
    ull occupied = 0;
    TALLY_CUDA_CHECK(cudaMemcpyAsync(&occupied, counter(kOccupied), sizeof(ull), cudaMemcpyDeviceToHost, cs()));
    sync_stream();
    if (static_cast<double>(occupied + n) > static_cast<double>(capacity_) * options_.max_fill) {
      grow(std::max(capacity_for(occupied + n), capacity_ * 2));
      ++report.table_growths;
    }
    merge_entries(dir_keys_, dir_lanes_, dir_capacity_, kDirectCount, n, "the partitioned output");
    direct_groups_ = 0;
    table_may_have_groups_ = true;
  }

  void grow(uint64_t new_capacity) {
    const kernels::GlobalTableRef<K> from = table_ref();
    DeviceBuffer old_keys = std::move(table_keys_);
    DeviceBuffer old_lanes = std::move(table_lanes_);
    allocate_table(new_capacity);  // resets the occupancy counter
    kernels::GlobalTableRef<K> to = table_ref(true);
    const int grid = fill_grid();
    kernels::rehash_kernel<K><<<grid, 256, 0, cs()>>>(from, to, lanes_.count, counter(kLost));
    TALLY_CUDA_CHECK_LAUNCH("rehash_kernel");
    table_may_have_groups_ = true;
    old_keys.release();
    old_lanes.release();
  }

  // ---- extraction ------------------------------------------------------------

  void ensure_extract(uint64_t n) {
    if (n <= out_stride_) return;
    out_keys_.release();
    out_null_.release();
    out_lanes_.release();
    out_keys_.ensure(n * sizeof(int64_t), cs());
    out_null_.ensure(n, cs());
    out_lanes_.ensure(n * plan_.lanes.size() * sizeof(ull), cs());
    out_stride_ = n;
  }

  // Scans the whole table, or only its two special slots while no ordinary
  // slot can be taken.
  void extract(uint64_t) {
    TALLY_CUDA_CHECK(cudaMemsetAsync(counter(kOutCount), 0, sizeof(ull), cs()));
    const uint64_t first = table_may_have_groups_ ? 0 : capacity_;
    const int grid = table_may_have_groups_ ? fill_grid() : 1;
    kernels::extract_kernel<K><<<grid, 256, 0, cs()>>>(table_ref(), first, lanes_.count, out_keys_.get<int64_t>(),
                                                             out_null_.get<uint8_t>(), out_lanes_.get<ull>(),
                                                             out_stride_, counter(kOutCount));
    TALLY_CUDA_CHECK_LAUNCH("extract_kernel");
  }

  DeviceInfo device_;
  bool count_sum_shape_ = false;  // lanes = count(*) + sum(int4 column 0): kCountSum kernels
  GroupBySpec spec_;
  TableOptions options_;
  StreamHandle stream_;
  LanePlan plan_;
  kernels::LaneSet lanes_;

  uint64_t capacity_ = 0;
  DeviceBuffer table_keys_, table_lanes_, counters_;
  uint64_t spill_capacity_ = 0;
  DeviceBuffer spill_keys_, spill_lanes_;
  DeviceBuffer sort_keys_, sort_payload_in_, sort_payload_out_, sort_temp_, sort_gather_;
  uint64_t out_stride_ = 0;
  DeviceBuffer out_keys_, out_null_, out_lanes_;
  // Partitioned variant: compact output of partitions owned outright, and
  // the partition boundaries of the last sort.
  uint64_t dir_capacity_ = 0;
  uint64_t direct_groups_ = 0;  // host copy of kDirectCount after each launch
  DeviceBuffer dir_keys_, dir_lanes_, part_starts_, part_pieces_, part_items_;
  DeviceBuffer dict_;  // shared hash: the key dictionary's device image
  // Host-side knowledge of the global table: whether an ordinary slot may be
  // taken (else reset and extraction touch only the special slots), and
  // whether a reset is pending.
  bool table_may_have_groups_ = false;
  bool table_needs_init_ = false;
  // reset() pending: the special slots to reset (the table had no group),
  // and the counters [0, reset_counters_) to zero (see ensure_table).
  bool special_needs_reset_ = false;
  int reset_counters_ = 0;
  // Asynchronous overflow observations (see observe()).
  PinnedBuffer observation_staging_, result_staging_;
  ull* pinned_counters_ = nullptr;  // in observation_staging_
  cudaEvent_t observation_events_[detail::kObservationRing] = {};
  int next_observation_slot_ = 0;
  std::deque<Observation> observations_;
  uint64_t unsettled_rows_ = 0;  // rows launched since the last observed zero spill count
  uint64_t unobserved_rows_ = 0;  // rows launched since the last observation was queued
  // Launches exempted from observation by cannot_overflow() ran since the
  // counters were last read: settle() and finish() read them.
  bool unverified_ = false;
  cudaEvent_t sync_event_ = nullptr;  // sync_stream(), enqueue_checked()
  // Union of the chunks' key ranges since the last reset (note_key_range);
  // known while every chunk came with one.
  std::optional<KeyRange> seen_range_;
  bool seen_range_known_ = true;
  // begin_finish() enqueued the extraction of checked_copy_ entries (and
  // checked_direct_ partitioned-output groups); finish() completes it.
  bool prepared_finish_ = false;
  uint64_t checked_copy_ = 0, checked_direct_ = 0;
  // prepare_result()'s arrays, which the next build_result() fills.
  GroupByResult spare_;
};

}  // namespace tally::gpu
