#pragma once
// The owner of an aggregation's device state: the global hash table (keys,
// lanes, the NULL key's and the empty marker's special slots), its counters,
// the spill buffer where rows and partial groups go that find no slot, and
// the partitioned variant's compact output. Sizes the table from the
// estimate, grows it when a spill shows the estimate was low, and merges the
// spill, so no group is lost. Kernels see it only through views
// (kernels::GlobalTableRef, SpillRef, DirectRef) passed by value.
//
// It also keeps the host's knowledge of the table: whether an ordinary slot
// may be taken (else a reset and an extraction touch only the special
// slots), and what a reset left pending for the next ensure_ready().
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "common/error.hpp"
#include "gpu/aggregator/kernels/maintenance_kernels.cuh"
#include "gpu/aggregator/kernels/views.cuh"
#include "gpu/aggregator/launch_limits.cuh"
#include "gpu/aggregator/stream_sync.cuh"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/rules/device_info.hpp"
#include "gpu/group_by.hpp"
#include "gpu/host_steps.hpp"
#include "gpu/simple_format.hpp"

namespace tally::gpu::aggregator {

// The table's device counters. kOccupied, kSpillCount, kLost and
// kDirectCount are read together (overflow observations, settle_overflow).
enum TableCounter : int {
  kOccupied = 0,
  kSpillCount,
  kLost,
  kDirectCount,
  kOutCount,
  kRangeMin,
  kRangeMax,
  kCounterCount
};

inline uint64_t next_pow2(uint64_t x) {
  return x <= 1 ? 1 : (uint64_t{1} << (64 - std::countl_zero(x - 1)));
}

// Where the partitioned variant writes the groups of the partitions a block
// owns outright: the compact output (owned) or the global table.
struct DirectOutput {
  bool owned = false;
  kernels::DirectRef ref;
};

template <class K>
class AggregationTable {
 public:
  using ull = kernels::ull;

  // `options` are already resolved (TypedAggregator::resolved_options) and
  // `device` is current. Allocates and initializes the table for
  // options.estimated_groups.
  AggregationTable(const DeviceInfo& device, const TableOptions& options,
                   const kernels::LaneSet& lanes, cudaStream_t stream)
      : fill_grid_(fill_grid(device)), options_(options), lanes_(lanes), stream_(stream) {
    counters_.ensure(kCounterCount * sizeof(ull), stream_);
    TALLY_CUDA_CHECK(cudaMemsetAsync(counters_.get(), 0, kCounterCount * sizeof(ull), stream_));
    allocate(capacity_for(options_.estimated_groups));
  }

  uint64_t capacity() const { return capacity_; }
  ull* counter(TableCounter c) const { return counters_.get<ull>() + c; }
  // The two special slots' first lane (their occupancy): NULL key, empty marker.
  const ull* special_slots() const { return lanes_buffer_.get<ull>() + capacity_; }

  uint64_t capacity_for(uint64_t groups) const {
    const double need = static_cast<double>(std::max<uint64_t>(groups, 1)) / options_.max_fill;
    return std::max<uint64_t>(1024, next_pow2(static_cast<uint64_t>(std::ceil(need))));
  }

  // The kernels' view. `hard`: fill up to the capacity (growth and merges,
  // which must place every group), else up to the fill limit.
  kernels::GlobalTableRef<K> view(bool hard = false) const {
    kernels::GlobalTableRef<K> t;
    t.keys = keys_.get<K>();
    t.lanes = lanes_buffer_.get<ull>();
    t.capacity = capacity_;
    t.stride = capacity_ + 2;
    t.occupied = counter(kOccupied);
    t.max_occupied =
        hard ? capacity_
             : static_cast<uint64_t>(static_cast<double>(capacity_) * options_.max_fill);
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

  // ---- host knowledge and reset ---------------------------------------------

  bool may_have_groups() const { return may_have_groups_; }
  void note_groups() { may_have_groups_ = true; }
  bool needs_init() const { return needs_init_; }

  // Forgets every group, keeping the allocations. The table is re-initialized
  // only when something may have claimed an ordinary slot; else its special
  // slots and the compact output's count are cleared. Nothing is enqueued
  // here: the next ensure_ready() does it all in one launch.
  void forget_groups() {
    if (may_have_groups_)
      needs_init_ = true;
    else
      special_needs_reset_ = true;
    static_assert(kOccupied == 0 && kSpillCount == 1 && kLost == 2 && kDirectCount == 3);
    reset_counters_ = kDirectCount + 1;  // kOccupied, kSpillCount, kLost, kDirectCount
    direct_groups_ = 0;
  }

  // Carries out what forget_groups() left pending (a table initialization,
  // or its special slots only, and the counters) in one launch.
  void ensure_ready() {
    if (needs_init_)
      init();
    else if (special_needs_reset_ || reset_counters_ > 0)
      reset_launch(capacity_, reset_counters_);
  }

  // Groups in the table (synchronizes): ordinary slots and the special ones.
  uint64_t group_count(StreamSync& sync) {
    ensure_ready();
    ull occupied = 0, special[2] = {0, 0};
    TALLY_CUDA_CHECK(cudaMemcpyAsync(&occupied, counter(kOccupied), sizeof(ull),
                                     cudaMemcpyDeviceToHost, stream_));
    TALLY_CUDA_CHECK(cudaMemcpyAsync(special, special_slots(), 2 * sizeof(ull),
                                     cudaMemcpyDeviceToHost, stream_));
    sync.sync();
    return occupied + (special[0] > 0) + (special[1] > 0);
  }

  // ---- spill and growth ---------------------------------------------------------

  uint64_t spill_capacity() const { return spill_capacity_; }
  // A spill buffer of `capacity` entries; the caller has merged what the old
  // one held (TypedAggregator::spill_ref settles first).
  void replace_spill(uint64_t capacity) {
    spill_keys_.release();
    spill_lanes_.release();
    spill_keys_.ensure(capacity * sizeof(int64_t), stream_);
    spill_lanes_.ensure(capacity * lane_count() * sizeof(ull), stream_);
    spill_capacity_ = capacity;
  }
  kernels::SpillRef spill_view() const {
    kernels::SpillRef s;
    s.keys = spill_keys_.get<int64_t>();
    s.lanes = spill_lanes_.get<ull>();
    s.capacity = spill_capacity_;
    s.count = counter(kSpillCount);
    return s;
  }

  // Reads the overflow counters; on spill grows the table and merges the
  // spilled rows/partials, so the chunk's result is complete when this returns.
  void settle_overflow(LaunchReport& report, StreamSync& sync) {
    ull h[4];
    TALLY_CUDA_CHECK(
        cudaMemcpyAsync(h, counter(kOccupied), sizeof(h), cudaMemcpyDeviceToHost, stream_));
    sync.sync();
    const ull occupied = h[0], spilled = h[1], lost = h[2];
    if (lost != 0)
      throw Error(SqlState::internal_error, "GPU: hash table lost groups during growth");
    direct_groups_ = h[3];
    if (occupied > 0) may_have_groups_ = true;
    if (spilled == 0) return;
    if (spilled > spill_capacity_)
      throw Error(SqlState::internal_error,
                  simple_format("GPU: spill buffer overflow ({} entries, capacity {})", spilled,
                                spill_capacity_));
    const uint64_t need = capacity_for(occupied + spilled);
    grow(std::max(need, capacity_ * 2));
    ++report.table_growths;
    report.spilled += spilled;
    merge_entries(spill_keys_, spill_lanes_, spill_capacity_, kSpillCount, spilled, "the spill",
                  sync);
    may_have_groups_ = true;
  }

  // ---- the partitioned variant's compact output --------------------------------

  // Groups in the compact output (host copy of kDirectCount, read by
  // settle_overflow after each launch that may own its output).
  uint64_t direct_groups() const { return direct_groups_; }
  const DeviceBuffer& direct_keys() const { return direct_keys_; }
  const DeviceBuffer& direct_lanes() const { return direct_lanes_; }
  uint64_t direct_capacity() const { return direct_capacity_; }

  // The output of a partitioned launch of `rows` sorted rows: owned outright
  // (room for one group per row) only when nothing else holds groups yet.
  DirectOutput direct_output(uint64_t rows) {
    DirectOutput out;
    out.owned = !may_have_groups_ && direct_groups_ == 0;
    if (out.owned) {
      if (rows > direct_capacity_) {
        direct_keys_.release();
        direct_lanes_.release();
        direct_keys_.ensure(rows * sizeof(int64_t), stream_);
        direct_lanes_.ensure(rows * lane_count() * sizeof(ull), stream_);
        direct_capacity_ = rows;
      }
      out.ref.keys = direct_keys_.get<int64_t>();
      out.ref.lanes = direct_lanes_.get<ull>();
      out.ref.capacity = direct_capacity_;
    }
    out.ref.count = counter(kDirectCount);
    out.ref.lost = counter(kLost);
    return out;
  }

  // Merges the compact output into the global table (growing it first),
  // before any other chunk is aggregated: from then on a key can only be in
  // one place, and later chunks merge into the table.
  void materialize_direct(LaunchReport& report, StreamSync& sync) {
    ensure_ready();
    const uint64_t n = direct_groups_;
    ull occupied = 0;
    TALLY_CUDA_CHECK(cudaMemcpyAsync(&occupied, counter(kOccupied), sizeof(ull),
                                     cudaMemcpyDeviceToHost, stream_));
    sync.sync();
    if (static_cast<double>(occupied + n) > static_cast<double>(capacity_) * options_.max_fill) {
      grow(std::max(capacity_for(occupied + n), capacity_ * 2));
      ++report.table_growths;
    }
    merge_entries(direct_keys_, direct_lanes_, direct_capacity_, kDirectCount, n,
                  "the partitioned output", sync);
    direct_groups_ = 0;
    may_have_groups_ = true;
  }

 private:
  size_t lane_count() const { return static_cast<size_t>(lanes_.count); }

  void allocate(uint64_t capacity) {
    capacity_ = capacity;
    keys_.release();
    lanes_buffer_.release();
    keys_.ensure(capacity_ * sizeof(K), stream_);
    lanes_buffer_.ensure((capacity_ + 2) * lane_count() * sizeof(ull), stream_);
    init();
  }

  void reset_launch(uint64_t first, int clear_counters) {
    const uint64_t slots = capacity_ + 2 - std::min(first, capacity_ + 2);
    const int grid = static_cast<int>(
        std::clamp<uint64_t>((slots + 255) / 256, 1, static_cast<uint64_t>(fill_grid_)));
    kernels::reset_table_kernel<K>
        <<<grid, 256, 0, stream_>>>(keys_.get<K>(), lanes_buffer_.get<ull>(), capacity_, first,
                                    lanes_, counters_.get<ull>(), clear_counters);
    TALLY_CUDA_CHECK_LAUNCH("reset_table_kernel");
    special_needs_reset_ = false;
    reset_counters_ = 0;
    host_mark("table reset");
  }

  // Every slot empty, kOccupied zero (and the counters a pending reset
  // clears); the spill count stays, a growth merges the spill after this.
  void init() {
    needs_init_ = false;
    may_have_groups_ = false;
    reset_launch(0, std::max(reset_counters_, static_cast<int>(kOccupied) + 1));
    host_mark("table init");
  }

  void grow(uint64_t new_capacity) {
    const kernels::GlobalTableRef<K> from = view();
    DeviceBuffer old_keys = std::move(keys_);
    DeviceBuffer old_lanes = std::move(lanes_buffer_);
    allocate(new_capacity);  // resets the occupancy counter
    kernels::GlobalTableRef<K> to = view(true);
    kernels::rehash_kernel<K>
        <<<fill_grid_, 256, 0, stream_>>>(from, to, lanes_.count, counter(kLost));
    TALLY_CUDA_CHECK_LAUNCH("rehash_kernel");
    may_have_groups_ = true;
    old_keys.release();
    old_lanes.release();
  }

  // Merges n (key, lanes) entries of a spill-shaped buffer into the global
  // table (the spill after an overflow, the partitioned variant's output),
  // resets the buffer's entry counter and fails if the table lost a group.
  void merge_entries(const DeviceBuffer& keys, const DeviceBuffer& lanes, uint64_t capacity,
                     TableCounter count_counter, uint64_t n, const char* what, StreamSync& sync) {
    kernels::SpillRef from;
    from.keys = keys.get<int64_t>();
    from.lanes = lanes.get<ull>();
    from.capacity = capacity;
    from.count = counter(count_counter);
    const int grid = static_cast<int>(std::min<uint64_t>(fill_grid_, (n + 255) / 256));
    kernels::merge_spill_kernel<K>
        <<<grid, 256, 0, stream_>>>(view(true), from, n, lanes_, counter(kLost));
    TALLY_CUDA_CHECK_LAUNCH("merge_spill_kernel");
    TALLY_CUDA_CHECK(cudaMemsetAsync(counter(count_counter), 0, sizeof(ull), stream_));
    ull lost = 0;
    TALLY_CUDA_CHECK(
        cudaMemcpyAsync(&lost, counter(kLost), sizeof(ull), cudaMemcpyDeviceToHost, stream_));
    sync.sync();
    if (lost != 0)
      throw Error(SqlState::internal_error,
                  simple_format("GPU: hash table lost groups merging {}", what));
  }

  int fill_grid_;
  TableOptions options_;
  kernels::LaneSet lanes_;
  cudaStream_t stream_;

  uint64_t capacity_ = 0;
  DeviceBuffer keys_, lanes_buffer_, counters_;
  uint64_t spill_capacity_ = 0;
  DeviceBuffer spill_keys_, spill_lanes_;
  uint64_t direct_capacity_ = 0;
  uint64_t direct_groups_ = 0;
  DeviceBuffer direct_keys_, direct_lanes_;
  bool may_have_groups_ = false;
  bool needs_init_ = false;
  // A reset pending: the special slots to reset (the table had no group),
  // and the counters [0, reset_counters_) to zero.
  bool special_needs_reset_ = false;
  int reset_counters_ = 0;
};

}  // namespace tally::gpu::aggregator
