#pragma once
// GroupByAggregator for one key width: the coordinator over the table owner
// (aggregation_table.cuh), the overflow observations
// (overflow_observer.cuh), the variants' launchers (*_launcher.cuh) and the
// extraction (result_extractor.cuh). It splits a chunk into launches,
// decides when overflow must be observed or settled, and when the result can
// come back in one round trip. Instantiated in typed_aggregator_int32.cu /
// typed_aggregator_int64.cu.
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "gpu/aggregator/aggregation_table.cuh"
#include "gpu/aggregator/chunk_ref.cuh"
#include "gpu/aggregator/dense_launcher.cuh"
#include "gpu/aggregator/global_launcher.cuh"
#include "gpu/aggregator/group_by_impl.hpp"
#include "gpu/aggregator/kernels/maintenance_kernels.cuh"
#include "gpu/aggregator/launch_context.cuh"
#include "gpu/aggregator/launch_limits.cuh"
#include "gpu/aggregator/overflow_observer.cuh"
#include "gpu/aggregator/partitioned_launcher.cuh"
#include "gpu/aggregator/result_extractor.cuh"
#include "gpu/aggregator/shared_launcher.cuh"
#include "gpu/aggregator/sort_launcher.cuh"
#include "gpu/aggregator/stream_sync.cuh"
#include "gpu/cuda_check.cuh"
#include "gpu/host_steps.hpp"

namespace tally::gpu {

namespace aggregator {
// Launches whose rows the spill buffer can absorb before the host must read
// the overflow counters: the host runs this many launches ahead of what it
// has observed without a stream synchronization (the buffer grows to this
// many launches' rows, within max_rows_per_launch).
constexpr uint64_t kSpillLaunches = 4;
}  // namespace aggregator

template <class K>
class TypedAggregator final : public GroupByAggregator::Impl {
  using ull = kernels::ull;

 public:
  TypedAggregator(const DeviceInfo& device, GroupBySpec spec, TableOptions options,
                  StreamHandle stream)
      : device_(made_current(device)),
        spec_(std::move(spec)),
        stream_(stream),
        plan_(plan_lanes(spec_)),
        lanes_(lane_set(plan_)),
        options_(resolved_options(options, device_, plan_)),
        count_sum_shape_(plan_.lanes.size() == 2 && plan_.lanes[0].kind == LaneKind::count_rows &&
                         plan_.lanes[1].kind == LaneKind::sum32 && plan_.lanes[1].column == 0),
        sync_(cs()),
        table_(device_, options_, lanes_, cs()),
        extractor_(spec_, plan_, device_, cs()),
        observer_(cs()) {}

  const GroupBySpec& spec() const override { return spec_; }
  StreamHandle stream() const override { return stream_; }
  uint64_t capacity() const override { return table_.capacity(); }

  LaunchReport consume(const ChunkPointers& chunk, Variant variant,
                       const VariantConfig& config) override {
    aggregator::validate_chunk(spec_, chunk);
    prepared_finish_ = false;  // a begin_finish() before this chunk extracted too early
    table_.ensure_ready();
    host_mark("table ready");
    note_key_range(chunk);
    LaunchReport report;
    report.variant = variant;
    report.used = config;
    for (int64_t off = 0; off < chunk.rows;
         off += static_cast<int64_t>(options_.max_rows_per_launch)) {
      const int64_t n =
          std::min<int64_t>(chunk.rows - off, static_cast<int64_t>(options_.max_rows_per_launch));
      kernels::ChunkRef<K> ref = aggregator::chunk_ref<K>(spec_, chunk, off, n);
      std::optional<KeyRange> range = chunk.key_range;
      // Not owning the output: the launch merges into the table, as it does
      // once the table may hold groups.
      if (variant == Variant::partitioned_hash && !options_.own_partitioned_output && n > 0)
        table_.note_groups();
      if (variant == Variant::partitioned_hash && !table_.may_have_groups() &&
          table_.direct_groups() == 0) {
        // The partitioned variant may own its output outright only while
        // nothing else holds groups: decided on exact host knowledge (settle
        // first), and the output's size is read back after (settle again).
        // Once the table holds groups it runs asynchronously like the others.
        {
          HostStepTimer timer(HostStep::settle);
          settle(report);
          if (table_.direct_groups() > 0 && n > 0) table_.materialize_direct(report, sync_);
        }
        {
          HostStepTimer timer(HostStep::launch);
          run_piece(ref, range, variant, config, report);
        }
        HostStepTimer timer(HostStep::settle);
        table_.settle_overflow(report, sync_);
        continue;
      }
      if (table_.direct_groups() > 0 && n > 0) {
        HostStepTimer timer(HostStep::settle);
        table_.materialize_direct(report, sync_);
      }
      // A table that holds every key of the range below its fill limit
      // cannot spill: such a launch needs no observation and no wait. Its
      // counters are still verified once, by settle() or with the result.
      if (cannot_overflow(range)) {
        {
          HostStepTimer timer(HostStep::launch);
          run_piece(ref, range, variant, config, report);
        }
        if (n > 0) table_.note_groups();
        observer_.set_unverified(true);
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
      if (n > 0) table_.note_groups();
      // Each observation costs a small device-to-host copy on the stream:
      // one per half a spill buffer of rows (every other launch).
      observer_.launched(static_cast<uint64_t>(n));
      if (2 * observer_.unobserved_rows() >= table_.spill_capacity()) {
        HostStepTimer timer(HostStep::observe);
        observe();
      }
    }
    return report;
  }

  // Reads every overflow observation still in flight (synchronizes), grows
  // the table and merges the spill if anything overflowed.
  void settle(LaunchReport& report) override {
    if (!observer_.unsettled()) return;
    observer_.clear();
    table_.settle_overflow(report, sync_);
  }

  KeyRange measure_key_range(const ChunkPointers& chunk) override {
    aggregator::validate_chunk(spec_, chunk);
    return measure(aggregator::chunk_ref<K>(spec_, chunk, 0, chunk.rows));
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
    if (observer_.outstanding()) settle(late);
    host_mark("settled");
    table_.ensure_ready();
    if (const uint64_t copy = checked_copy_slots()) {
      extractor_.enqueue_checked(table_, copy, sync_);
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
    if (observer_.outstanding()) return;  // settle() reads the counters on the host first
    table_.ensure_ready();
    const uint64_t copy = checked_copy_slots();
    if (copy == 0) return;
    extractor_.enqueue_checked(table_, copy, sync_);
    prepared_finish_ = true;
  }

  void keep_groups_where(std::vector<GroupTest> tests) override { extractor_.keep_groups_where(std::move(tests)); }

  // No-op unless begin_finish() enqueued (see ResultExtractor::prepare_result).
  void prepare_result() override {
    if (!prepared_finish_) return;
    extractor_.prepare_result(options_.estimated_groups, sync_);
  }

  // The partitioned variant's compact output stays where it is: with the
  // extracted global groups it is the device-side result.
  void finish_device() override {
    LaunchReport late;
    settle(late);
    table_.ensure_ready();
    extractor_.ensure(table_.may_have_groups() ? table_.capacity() + 2 : 2);
    extractor_.extract(table_);
  }

  uint64_t group_count() override {
    LaunchReport late;
    settle(late);
    return table_.group_count(sync_) + table_.direct_groups();
  }

  void reset() override {
    table_.forget_groups();
    // Spilled entries not merged yet belong to the forgotten groups.
    observer_.clear();
    seen_range_.reset();
    seen_range_known_ = true;
    prepared_finish_ = false;
  }

 private:
  // Makes the device current and its memory pool ready before anything is
  // allocated on it.
  static const DeviceInfo& made_current(const DeviceInfo& device) {
    TALLY_CUDA_CHECK(cudaSetDevice(device.ordinal));
    configure_memory_pool(device.ordinal);
    return device;
  }

  static kernels::LaneSet lane_set(const LanePlan& plan) {
    kernels::LaneSet lanes;
    lanes.count = static_cast<int>(plan.lanes.size());
    for (size_t l = 0; l < plan.lanes.size(); ++l) {
      const Lane& p = plan.lanes[l];
      lanes.lane[l] = kernels::LaneRef{p.kind,   static_cast<int8_t>(p.column), p.wide, static_cast<int8_t>(p.column2),
                                       p.real,   p.wide2,                       p.real2};
    }
    return lanes;
  }

  // The caller's options with out-of-range values replaced and the rows per
  // launch derived from device memory when not given.
  static TableOptions resolved_options(TableOptions options, const DeviceInfo& device,
                                       const LanePlan& plan) {
    if (!(options.max_fill > 0.05 && options.max_fill < 0.95)) options.max_fill = 0.5;
    if (options.hash == HashKind::range && options.key_range_hint.size() == 0)
      options.hash = HashKind::murmur;
    if (options.max_rows_per_launch == 0) {
      // spill (key + lanes), sort keys and payloads, gather, and the
      // partitioned variant's compact output (key + lanes).
      const uint64_t per_row = 2 * (8 + 8 * plan.lanes.size()) + 3 * sizeof(K) + 16;
      const uint64_t rows = device.total_memory / kScratchMemoryDivisor / per_row;
      options.max_rows_per_launch =
          std::clamp<uint64_t>(std::bit_floor(std::max<uint64_t>(rows, 1)), 1u << 16, 1ull << 31);
    }
    return options;
  }

  cudaStream_t cs() const { return reinterpret_cast<cudaStream_t>(stream_); }

  // ---- extraction ------------------------------------------------------------

  uint64_t checked_copy_slots() const {
    return aggregator::ResultExtractor<K>::checked_copy_slots(table_.capacity(), groups_bound());
  }

  std::optional<GroupByResult> complete_checked() {
    bool spilled = false;
    std::optional<GroupByResult> r = extractor_.complete_checked(table_, sync_, spilled);
    if (spilled) observer_.set_unverified(true);  // settle() reads the counters again and merges
    return r;
  }

  // Large tables: the group count first (one synchronization), then exactly
  // that many groups (a second one), so no copy is sized by the capacity.
  GroupByResult finish_counted() {
    // Counters and the special slots in one round trip; a spill the bound
    // ruled out (unverified launches) is settled and the count read again.
    uint64_t n = 0;
    for (;;) {
      const ull* h = extractor_.read_counts(table_, sync_);
      if (h[aggregator::kLost] != 0)
        throw Error(SqlState::internal_error, "GPU: hash table lost groups");
      if (h[aggregator::kSpillCount] != 0) {
        LaunchReport late;
        observer_.set_unverified(true);
        settle(late);
        continue;
      }
      observer_.set_unverified(false);
      n = h[aggregator::kOccupied] + (h[4] > 0) + (h[5] > 0);
      break;
    }
    host_mark("counted");
    return extractor_.copy_counted(table_, n, sync_);
  }

  // ---- overflow ----------------------------------------------------------------

  // Whether a launch over keys in `range` can leave a row or partial group
  // without a slot: not while every possible key of the range (catalog
  // statistics: all chunks' min and max) fits below the table's fill limit.
  // NULL and the empty marker have slots of their own.
  bool cannot_overflow(const std::optional<KeyRange>& range) const {
    if (!range || table_.needs_init()) return false;
    const auto limit =
        static_cast<uint64_t>(static_cast<double>(table_.capacity()) * options_.max_fill);
    // The kernels refuse a new key only once `occupied >= limit`, and at most
    // range->size() keys ever arrive: with size <= limit none is refused.
    return range->size() <= limit;
  }

  // The spill buffer for a launch of `rows` rows; a larger one replaces it
  // once the entries the old one holds are merged.
  kernels::SpillRef spill_ref(uint64_t rows) {
    const uint64_t cap = std::max<uint64_t>(rows, 1);
    if (cap > table_.spill_capacity()) {
      LaunchReport late;
      settle(late);
      table_.replace_spill(cap);
    }
    return table_.spill_view();
  }

  // Queues an observation of the overflow counters (overflow_observer.cuh),
  // reading the oldest first when the ring is full.
  void observe() {
    if (observer_.full()) {
      LaunchReport late;
      read_observation(true, late);
    }
    observer_.enqueue(table_.counter(aggregator::kOccupied));
  }

  // Reads the oldest observation (waiting for it when `wait`); returns false
  // when it has not completed. A spill or a loss settles synchronously.
  bool read_observation(bool wait, LaunchReport& report) {
    const ull* h = observer_.oldest(wait);
    if (!h) return false;
    if (h[aggregator::kLost] != 0 || h[aggregator::kSpillCount] != 0) {
      settle(report);  // grows and merges (or throws on a loss)
      return true;
    }
    if (h[aggregator::kOccupied] > 0) table_.note_groups();
    observer_.pop_oldest();
    return true;
  }

  // Before a launch of `rows` rows: makes sure the spill buffer can take them
  // with everything launched but not yet observed.
  void make_room_for(uint64_t rows, LaunchReport& report) {
    const uint64_t want = std::max<uint64_t>(
        rows, std::min<uint64_t>(aggregator::kSpillLaunches * rows, options_.max_rows_per_launch));
    if (want > table_.spill_capacity()) spill_ref(want);
    while (read_observation(false, report)) {
    }
    if (observer_.unsettled_rows() + rows > table_.spill_capacity() &&
        observer_.unobserved_rows() > 0)
      observe();
    while (observer_.unsettled_rows() + rows > table_.spill_capacity() && observer_.in_flight())
      read_observation(true, report);
    if (observer_.unsettled_rows() + rows > table_.spill_capacity()) settle(report);
  }

  // ---- chunks ------------------------------------------------------------------

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
    if (!seen_range_)
      seen_range_ = r;
    else
      seen_range_ = KeyRange{std::min(seen_range_->min, r.min), std::max(seen_range_->max, r.max)};
  }

  // Groups the table can hold at most by what the chunks' key ranges say
  // (UINT64_MAX: unknown): one per key of the range, the NULL key's.
  uint64_t groups_bound() const {
    if (!seen_range_known_) return UINT64_MAX;
    if (!seen_range_) return 1;  // only NULL keys (or none)
    const uint64_t n = seen_range_->size();
    return n >= UINT64_MAX - 1 ? UINT64_MAX : n + 1;
  }

  // The key range of a piece's non-NULL keys (synchronizes).
  KeyRange measure(const kernels::ChunkRef<K>& ref) {
    const long long init[2] = {std::numeric_limits<long long>::max(),
                               std::numeric_limits<long long>::min()};
    ull* range_min = table_.counter(aggregator::kRangeMin);
    ull* range_max = table_.counter(aggregator::kRangeMax);
    TALLY_CUDA_CHECK(cudaMemcpyAsync(range_min, init, sizeof(init), cudaMemcpyHostToDevice, cs()));
    if (ref.rows > 0) {
      const int grid = static_cast<int>(
          std::min<int64_t>(aggregator::fill_grid(device_), (ref.rows + 255) / 256));
      kernels::key_range_kernel<K><<<grid, 256, 0, cs()>>>(
          ref, reinterpret_cast<long long*>(range_min), reinterpret_cast<long long*>(range_max));
      TALLY_CUDA_CHECK_LAUNCH("key_range_kernel");
    }
    long long out[2];
    TALLY_CUDA_CHECK(cudaMemcpyAsync(out, range_min, sizeof(out), cudaMemcpyDeviceToHost, cs()));
    sync_.sync();
    return KeyRange{out[0], out[1]};
  }

  // One launch of `variant` over a piece: the configuration checked against
  // the device, the spill buffer sized for the piece, then the variant's
  // launcher with the views of the table and the spill.
  void run_piece(kernels::ChunkRef<K> ref, std::optional<KeyRange> range, Variant variant,
                 const VariantConfig& requested, LaunchReport& report) {
    VariantConfig c = aggregator::checked_config(device_, requested, report);
    const kernels::SpillRef spill = spill_ref(static_cast<uint64_t>(ref.rows));
    host_mark("checked");
    const aggregator::LaunchContext<K> ctx{
        device_,          spec_, plan_,         lanes_, options_.estimated_groups,
        count_sum_shape_, cs(),  table_.view(), spill};
    switch (variant) {
      case Variant::dense:
        aggregator::launch_dense(ctx, scratch_, ref, range ? *range : measure(ref), c, report);
        break;
      case Variant::shared_hash:
        aggregator::launch_shared_hash(ctx, scratch_, ref, c, report);
        break;
      case Variant::global_hash:
        aggregator::launch_global(ctx, ref, c, report);
        break;
      case Variant::sort:
        aggregator::launch_sort(ctx, scratch_, ref, range, c, report);
        break;
      case Variant::partitioned_hash:
        aggregator::launch_partitioned(ctx, scratch_, table_, ref, range ? *range : measure(ref), c,
                                       report);
        break;
    }
    report.used = c;
  }

  DeviceInfo device_;
  GroupBySpec spec_;
  StreamHandle stream_;
  LanePlan plan_;
  kernels::LaneSet lanes_;
  TableOptions options_;
  bool count_sum_shape_ = false;  // lanes = count(*) + sum(int4 column 0): kCountSum kernels
  aggregator::StreamSync sync_;
  aggregator::AggregationTable<K> table_;
  aggregator::ResultExtractor<K> extractor_;
  aggregator::LaunchScratch scratch_;
  // Declared last, destroyed first: it waits for the copies into pinned
  // memory before any buffer goes.
  aggregator::OverflowObserver observer_;
  // Union of the chunks' key ranges since the last reset (note_key_range);
  // known while every chunk came with one.
  std::optional<KeyRange> seen_range_;
  bool seen_range_known_ = true;
  // begin_finish() enqueued the extraction; finish() completes it.
  bool prepared_finish_ = false;
};

}  // namespace tally::gpu
