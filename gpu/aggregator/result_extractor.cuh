#pragma once
// Extraction of the result: the extraction kernel compacts the global
// table's groups into arrays (keys, NULL flags, lanes), which come back to
// pinned memory with the counters in one batch of copies, and the host
// builds the GroupByResult from them (result_builder.hpp). Two paths:
// checked (one round trip: copies sized by the table or the key ranges,
// the counters verified after) and counted (the count first, then exactly
// that many groups).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "common/process_faults.hpp"
#include "gpu/aggregator/aggregation_table.cuh"
#include "gpu/aggregator/kernels/maintenance_kernels.cuh"
#include "gpu/aggregator/kernels/sift_kernel.cuh"
#include "gpu/aggregator/launch_limits.cuh"
#include "gpu/aggregator/result_builder.hpp"
#include "gpu/aggregator/stream_sync.cuh"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/host_steps.hpp"
#include "gpu/pageable_copy.cuh"
#include "gpu/pinned_pool.cuh"
#include "gpu/simple_format.hpp"

namespace tally::gpu::aggregator {

// A table of at most this many slots (capacity + 2 special) is copied back
// whole with its counters in one round trip; a larger one is counted first
// and copied exactly (two round trips, copies sized by the groups): 2^15
// slots of key + 3 lanes are ~1 MB, ~40 us over PCIe, about one round trip.
constexpr uint64_t kCheckedExtractSlots = (uint64_t{1} << 15) + 2;
// A larger table's groups come back in the same one round trip when the
// chunks' key ranges (catalog statistics) allow at most this many: then
// the copy is sized by the bound, not the capacity (2^20 entries of key + 2
// lanes + NULL flag: 26 MB of pinned staging, ~1 ms over PCIe).
constexpr uint64_t kBoundedExtractSlots = (uint64_t{1} << 20) + 2;
// prepare_result() maps arrays for at least this many groups whatever the
// estimate (a few pages per array: an estimate off by little costs nothing).
constexpr uint64_t kPreparedResultFloor = 4096;
// A counted result of more bytes comes back into pageable memory through
// copy_to_pageable's pooled pieces: pinning a block for it (cudaHostAlloc,
// rounded up to a power of two and then kept by the pool) took 2.4 s of a
// 7.5 s first run for H2O q10's 1e8 groups, longer than the copy itself.
constexpr size_t kPinnedResultMaxBytes = size_t{256} << 20;
// A counted result of at least this many groups is sifted by HAVING's group
// tests on the device before it is copied back; fewer are copied and sifted
// on the host, sparing the round trip that reads the kept count.
constexpr uint64_t kDeviceSiftGroups = uint64_t{1} << 16;

template <class K>
class ResultExtractor {
 public:
  using ull = kernels::ull;

  ResultExtractor(const GroupBySpec& spec, const LanePlan& plan, const DeviceInfo& device,
                  cudaStream_t stream)
      : spec_(spec), plan_(plan), fill_grid_(fill_grid(device)), stream_(stream) {}

  // Extracted entries the checked path copies back with the counters: every
  // slot of a small table, else as many as the chunks' key ranges allow
  // groups (`groups_bound`) when that is at most kBoundedExtractSlots; 0:
  // neither, count first (copy_counted).
  static uint64_t checked_copy_slots(uint64_t capacity, uint64_t groups_bound) {
    const uint64_t slots = capacity + 2;
    if (slots <= kCheckedExtractSlots) return slots;
    if (groups_bound <= kBoundedExtractSlots) return std::min(slots, groups_bound);
    return 0;
  }

  // The group tests the next result applies (GroupByAggregator::keep_groups_where).
  void keep_groups_where(std::vector<GroupTest> tests) { tests_ = std::move(tests); }

  // Output arrays for at least n groups.
  void ensure(uint64_t n) {
    if (n <= out_stride_) return;
    out_keys_.release();
    out_null_.release();
    out_lanes_.release();
    out_keys_.ensure(n * sizeof(int64_t), stream_);
    out_null_.ensure(n, stream_);
    out_lanes_.ensure(n * plan_.lanes.size() * sizeof(ull), stream_);
    out_stride_ = n;
  }

  // Scans the whole table, or only its two special slots while no ordinary
  // slot can be taken.
  void extract(const AggregationTable<K>& table) {
    TALLY_CUDA_CHECK(cudaMemsetAsync(table.counter(kOutCount), 0, sizeof(ull), stream_));
    const uint64_t first = table.may_have_groups() ? 0 : table.capacity();
    const int grid = table.may_have_groups() ? fill_grid_ : 1;
    kernels::extract_kernel<K><<<grid, 256, 0, stream_>>>(
        table.view(), first, static_cast<int>(plan_.lanes.size()), out_keys_.get<int64_t>(),
        out_null_.get<uint8_t>(), out_lanes_.get<ull>(), out_stride_, table.counter(kOutCount));
    TALLY_CUDA_CHECK_LAUNCH("extract_kernel");
  }

  // The extraction kernel over the whole table, then one batch of copies
  // (the overflow counters, the extracted count, the first `copy` extracted
  // entries and the partitioned output) and the event complete_checked()
  // waits for.
  void enqueue_checked(const AggregationTable<K>& table, uint64_t copy, StreamSync& sync) {
    const uint64_t slots = table.capacity() + 2;
    ensure(slots);
    extract(table);
    const size_t L = plan_.lanes.size();
    const uint64_t nd = table.direct_groups();
    const uint64_t stride = copy + nd;  // entries per region: table groups, then the direct output
    const size_t keys_at = 64, lanes_at = keys_at + stride * 8,
                 nulls_at = lanes_at + L * stride * 8;
    staging_.ensure(nulls_at + copy + 64);
    char* h = staging_.get<char>();
    TALLY_CUDA_CHECK(cudaMemcpyAsync(h, table.counter(kOccupied), kCounterCount * sizeof(ull),
                                     cudaMemcpyDeviceToHost, stream_));
    enqueue_output_copies(table, h, copy, stride, nd);
    sync.record();
    checked_copy_ = copy;
    checked_direct_ = nd;
    host_mark("extract enqueued");
  }

  // Waits for enqueue_checked()'s copies and builds the result. nullopt when
  // the counters show a spill or loss that no observation covered
  // (`spilled` set: the caller settles) or more groups than were copied (the
  // caller extracts again), so the result is exact whatever the bounds
  // assumed.
  std::optional<GroupByResult> complete_checked(const AggregationTable<K>& table, StreamSync& sync,
                                                bool& spilled) {
    sync.wait();
    host_mark("copied");
    const uint64_t slots = table.capacity() + 2;
    const uint64_t copy = checked_copy_, nd = checked_direct_;
    const size_t L = plan_.lanes.size();
    const uint64_t stride = copy + nd;
    const size_t keys_at = 64, lanes_at = keys_at + stride * 8,
                 nulls_at = lanes_at + L * stride * 8;
    const char* h = staging_.get<char>();
    ull c[kCounterCount];
    std::memcpy(c, h, sizeof(c));
    if (c[kLost] != 0) throw Error(SqlState::internal_error, "GPU: hash table lost groups");
    if (c[kSpillCount] != 0 || c[kDirectCount] != nd) {
      spilled = true;
      return std::nullopt;
    }
    const uint64_t ng = c[kOutCount];
    if (ng > slots)
      throw Error(SqlState::internal_error,
                  simple_format("GPU: extracted {} groups from {} slots", ng, slots));
    if (ng > copy)
      return std::nullopt;  // more groups than the key ranges allow: statistics were off
    GroupByResult r = build(h, keys_at, lanes_at, nulls_at, stride, ng, copy, nd);
    on_device(r, {{out_keys_.get<int64_t>(), ng}, {table.direct_keys().template get<int64_t>(), nd}});
    host_mark("result built");
    return r;
  }

  // The counted path's first round trip: the counters and the special
  // slots' occupancy, into `h` (pinned, 6 values).
  ull* read_counts(const AggregationTable<K>& table, StreamSync& sync) {
    staging_.ensure(64);
    ull* h = staging_.get<ull>();
    TALLY_CUDA_CHECK(cudaMemcpyAsync(h, table.counter(kOccupied), 4 * sizeof(ull),
                                     cudaMemcpyDeviceToHost, stream_));
    TALLY_CUDA_CHECK(cudaMemcpyAsync(h + 4, table.special_slots(), 2 * sizeof(ull),
                                     cudaMemcpyDeviceToHost, stream_));
    sync.sync();
    return h;
  }

  // The counted path's second round trip: extracts exactly `n` table groups
  // (read_counts) and copies them and the partitioned variant's compact
  // output (disjoint keys, see AggregationTable::materialize_direct) back in
  // one batch into pinned memory: [count | keys | lanes (L x total) | NULL flags].
  GroupByResult copy_counted(const AggregationTable<K>& table, uint64_t n, StreamSync& sync) {
    ensure(n + 2);
    extract(table);
    if (!tests_.empty() && n + table.direct_groups() >= kDeviceSiftGroups) {
      if (std::optional<GroupByResult> r = copy_sifted(table, n, sync)) return std::move(*r);
    }
    const size_t L = plan_.lanes.size();
    const uint64_t nd = table.direct_groups();
    const uint64_t ng = n;
    const uint64_t total = ng + nd;
    const size_t keys_at = 64, lanes_at = keys_at + total * 8, nulls_at = lanes_at + L * total * 8;
    const size_t bytes = nulls_at + total + 64;
    if (bytes > kPinnedResultMaxBytes && tests_.empty()) {
      if (std::optional<GroupByResult> r = copy_placed(table, ng, nd)) return std::move(*r);
    }
    std::unique_ptr<char[]> pageable;
    char* h = nullptr;
    if (bytes > kPinnedResultMaxBytes) {
      pageable.reset(new char[bytes]);
      h = pageable.get();
      std::vector<HostCopy> copies;
      copies.push_back({h, table.counter(kOutCount), sizeof(ull)});
      if (ng > 0) {
        copies.push_back({h + keys_at, out_keys_.get(), ng * 8});
        for (size_t l = 0; l < L; ++l)
          copies.push_back({h + lanes_at + l * total * 8, out_lanes_.get<ull>() + l * out_stride_, ng * 8});
        copies.push_back({h + nulls_at, out_null_.get(), ng});
      }
      if (nd > 0) {
        copies.push_back({h + keys_at + ng * 8, table.direct_keys().get(), nd * 8});
        for (size_t l = 0; l < L; ++l)
          copies.push_back({h + lanes_at + ng * 8 + l * total * 8,
                            table.direct_lanes().template get<ull>() + l * table.direct_capacity(), nd * 8});
      }
      copy_to_pageable(copies, stream_);
    } else {
      staging_.ensure(bytes);
      h = staging_.get<char>();
      TALLY_CUDA_CHECK(
          cudaMemcpyAsync(h, table.counter(kOutCount), sizeof(ull), cudaMemcpyDeviceToHost, stream_));
      enqueue_output_copies(table, h, ng, total, nd);
    }
    sync.sync();
    host_mark("copied");
    ull count = 0;
    std::memcpy(&count, h, sizeof(ull));
    if (count != n)
      throw Error(SqlState::internal_error,
                  simple_format("GPU: extracted {} groups, expected {}", count, n));
    GroupByResult r = build(h, keys_at, lanes_at, nulls_at, total, ng, ng, nd);
    on_device(r, {{out_keys_.get<int64_t>(), ng}, {table.direct_keys().template get<int64_t>(), nd}});
    host_mark("result built");
    return r;
  }

  // copy_counted's `ng` extracted groups and `nd` direct ones (the
  // extraction enqueued) copied from the device straight into the result's
  // arrays (place_result), where every array holds its source's words as
  // they are: a hundred million groups' gigabytes cross host memory once,
  // not into staging and again into the arrays. nullopt where some array is
  // computed from its lanes.
  std::optional<GroupByResult> copy_placed(const AggregationTable<K>& table, uint64_t ng, uint64_t nd) {
    GroupByResult r = std::exchange(spare_, GroupByResult{});
    const uint64_t total = ng + nd;
    const long faults_before = process_minor_faults();
    const std::optional<std::vector<PlacedArray>> placed = place_result(spec_, plan_, r, total);
    if (!placed) {
      spare_ = std::move(r);
      return std::nullopt;
    }
    host_mark("arrays placed", process_minor_faults() - faults_before, "page faults");
    ull count = 0;
    std::vector<HostCopy> copies;
    copies.push_back({&count, table.counter(kOutCount), sizeof(ull)});
    for (const PlacedArray& a : *placed) {
      if (a.source == kNullFlagsSource) {
        if (ng > 0) copies.push_back({a.data, out_null_.get(), ng});
        std::memset(a.data + ng, 0, nd);  // the direct region has no NULL key
        continue;
      }
      const bool keys = a.source == kKeysSource;
      const void* from = keys ? out_keys_.get() : static_cast<const void*>(out_lanes_.get<ull>() + a.source * out_stride_);
      if (ng > 0) copies.push_back({a.data, from, ng * 8});
      if (nd > 0) {
        const void* direct = keys ? table.direct_keys().get()
                                  : static_cast<const void*>(table.direct_lanes().template get<ull>() +
                                                             a.source * table.direct_capacity());
        copies.push_back({a.data + ng * 8, direct, nd * 8});
      }
    }
    copy_to_pageable(copies, stream_);
    host_mark("copied");
    if (count != ng)
      throw Error(SqlState::internal_error, simple_format("GPU: extracted {} groups, expected {}", count, ng));
    host_tested_ = false;
    on_device(r, {{out_keys_.get<int64_t>(), ng}, {table.direct_keys().template get<int64_t>(), nd}});
    host_mark("result built");
    return r;
  }

  // copy_counted's groups sifted by the group tests on the device (the
  // extraction enqueued): the passing ones come back, the others are
  // counted as dropped. nullopt where the tests are more than the kernel
  // takes or the passing groups too many for pinned staging: the caller
  // copies them all.
  std::optional<GroupByResult> copy_sifted(const AggregationTable<K>& table, uint64_t n, StreamSync& sync) {
    const std::vector<LaneTest> tested = lane_tests(spec_, plan_, tests_);
    if (tested.empty() || tested.size() > static_cast<size_t>(kernels::kMaxSiftTests)) return std::nullopt;
    kernels::SiftTests tests;
    tests.count = static_cast<int>(tested.size());
    std::copy(tested.begin(), tested.end(), tests.test);
    const size_t L = plan_.lanes.size();
    const uint64_t nd = table.direct_groups(), total = n + nd;
    sift_keys_.ensure(total * 8, stream_);
    sift_null_.ensure(total, stream_);
    sift_lanes_.ensure(total * L * 8, stream_);
    sift_count_.ensure(sizeof(ull), stream_);
    TALLY_CUDA_CHECK(cudaMemsetAsync(sift_count_.get(), 0, sizeof(ull), stream_));
    const kernels::SiftRegion table_region{out_keys_.get<int64_t>(), out_null_.get<uint8_t>(), out_lanes_.get<ull>(), out_stride_, n};
    const kernels::SiftRegion direct_region{table.direct_keys().template get<int64_t>(), nullptr,
                                           table.direct_lanes().template get<ull>(), table.direct_capacity(), nd};
    kernels::sift_kernel<<<fill_grid_, 256, 0, stream_>>>(tests, table_region, direct_region, static_cast<int>(L),
                                                          sift_keys_.get<int64_t>(), sift_null_.get<uint8_t>(),
                                                          sift_lanes_.get<ull>(), total, sift_count_.get<ull>());
    TALLY_CUDA_CHECK_LAUNCH("sift_kernel");
    staging_.ensure(64);
    ull* counts = staging_.get<ull>();
    TALLY_CUDA_CHECK(cudaMemcpyAsync(counts, table.counter(kOutCount), sizeof(ull), cudaMemcpyDeviceToHost, stream_));
    TALLY_CUDA_CHECK(cudaMemcpyAsync(counts + 1, sift_count_.get(), sizeof(ull), cudaMemcpyDeviceToHost, stream_));
    sync.sync();
    if (counts[0] != n)
      throw Error(SqlState::internal_error, simple_format("GPU: extracted {} groups, expected {}", counts[0], n));
    const uint64_t m = counts[1];
    const size_t keys_at = 64, lanes_at = keys_at + m * 8, nulls_at = lanes_at + L * m * 8;
    const size_t bytes = nulls_at + m + 64;
    if (bytes > kPinnedResultMaxBytes) return std::nullopt;
    staging_.ensure(bytes);
    char* h = staging_.get<char>();
    if (m > 0) {
      TALLY_CUDA_CHECK(cudaMemcpyAsync(h + keys_at, sift_keys_.get(), m * 8, cudaMemcpyDeviceToHost, stream_));
      TALLY_CUDA_CHECK(cudaMemcpy2DAsync(h + lanes_at, m * 8, sift_lanes_.get(), total * 8, m * 8, L,
                                         cudaMemcpyDeviceToHost, stream_));
      TALLY_CUDA_CHECK(cudaMemcpyAsync(h + nulls_at, sift_null_.get(), m, cudaMemcpyDeviceToHost, stream_));
      sync.sync();
    }
    host_mark("copied");
    host_mark("group tests on the device", static_cast<long>(total - m), "dropped");
    GroupByResult r = build(h, keys_at, lanes_at, nulls_at, m, m, m, 0, total - m);
    on_device(r, {{sift_keys_.get<int64_t>(), m}});
    host_mark("result built");
    return r;
  }

  // Enqueues the copies of the extracted output into pinned memory at `h`
  // laid out as build() reads it: the first `n` extracted entries and the
  // `nd` direct ones after them, in regions of `stride` entries (keys at 64,
  // then L lanes, then NULL flags).
  void enqueue_output_copies(const AggregationTable<K>& table, char* h, uint64_t n, uint64_t stride, uint64_t nd) {
    const size_t L = plan_.lanes.size();
    const size_t keys_at = 64, lanes_at = keys_at + stride * 8, nulls_at = lanes_at + L * stride * 8;
    if (n > 0) {
      TALLY_CUDA_CHECK(cudaMemcpyAsync(h + keys_at, out_keys_.get(), n * 8, cudaMemcpyDeviceToHost, stream_));
      TALLY_CUDA_CHECK(cudaMemcpy2DAsync(h + lanes_at, stride * 8, out_lanes_.get(), out_stride_ * 8, n * 8, L,
                                         cudaMemcpyDeviceToHost, stream_));
      TALLY_CUDA_CHECK(cudaMemcpyAsync(h + nulls_at, out_null_.get(), n, cudaMemcpyDeviceToHost, stream_));
    }
    if (nd > 0) {
      TALLY_CUDA_CHECK(cudaMemcpyAsync(h + keys_at + n * 8, table.direct_keys().get(), nd * 8,
                                       cudaMemcpyDeviceToHost, stream_));
      TALLY_CUDA_CHECK(cudaMemcpy2DAsync(h + lanes_at + n * 8, stride * 8, table.direct_lanes().get(),
                                         table.direct_capacity() * 8, nd * 8, L, cudaMemcpyDeviceToHost, stream_));
    }
  }

  // Allocates and touches the arrays of the result enqueue_checked() copies
  // back (sized by its copy), so that the build writes into pages already
  // mapped: the caller calls this while it waits for the GPU anyway. A fresh
  // array's first touch costs a page fault per 4 KiB (the kernel zeroes the
  // page); at 2^16 groups that is most of the host's time between the copy
  // and the result.
  void prepare_result(uint64_t estimated_groups, const StreamSync& sync) {
    // The copy is a bound (the key range's size, up to 2^20): sparse keys
    // may leave most of it unused, and zeroing unused megabytes would delay
    // a short query. Capped at the estimate with a margin; a result that
    // outgrows the arrays is built into fresh ones (exact either way).
    const uint64_t hint =
        std::max<uint64_t>(estimated_groups + estimated_groups / 4, kPreparedResultFloor);
    const uint64_t n = std::min(checked_copy_, hint) + checked_direct_;
    const bool gpu_busy = prepare_result_arrays(spare_, spec_, plan_, n, [&sync] { return sync.busy(); });
    host_mark(gpu_busy ? "result prepared" : "result partly prepared", static_cast<long>(n),
              "groups");
  }

 private:
  // Records where `r`'s keys are on the device (GroupByResult::device_keys),
  // unless the host's group tests reordered them.
  void on_device(GroupByResult& r, std::initializer_list<GroupByResult::DeviceKeys> regions) const {
    if (host_tested_) return;
    for (const GroupByResult::DeviceKeys& k : regions)
      if (k.count > 0) r.device_keys.push_back(k);
  }

  // `sifted`: the groups the device's group tests dropped, where they ran
  // there (the host then tests none).
  GroupByResult build(const char* h, size_t keys_at, size_t lanes_at, size_t nulls_at,
                      uint64_t stride, uint64_t ng, uint64_t direct_at, uint64_t nd,
                      std::optional<uint64_t> sifted = std::nullopt) {
    ExtractedGroups g;
    g.keys = h + keys_at;
    g.lanes = reinterpret_cast<const uint64_t*>(h + lanes_at);
    g.nulls = reinterpret_cast<const uint8_t*>(h + nulls_at);
    g.stride = stride;
    g.table_groups = ng;
    g.direct_at = direct_at;
    g.direct_groups = nd;
    // The group tests sift the staging (ours to write) before any array is built.
    uint64_t dropped = sifted.value_or(0);
    host_tested_ = !tests_.empty() && !sifted;
    if (host_tested_) {
      g = keep_passing_groups(spec_, plan_, tests_, g, dropped);
      host_mark("group tests", static_cast<long>(dropped), "dropped");
    }
    GroupByResult r = build_result(spec_, plan_, std::exchange(spare_, GroupByResult{}), g);
    r.dropped = dropped;
    return r;
  }

  const GroupBySpec& spec_;
  const LanePlan& plan_;
  int fill_grid_;
  cudaStream_t stream_;
  uint64_t out_stride_ = 0;
  DeviceBuffer out_keys_, out_null_, out_lanes_;
  // copy_sifted's output and its count.
  DeviceBuffer sift_keys_, sift_null_, sift_lanes_, sift_count_;
  PinnedBuffer staging_;
  // What enqueue_checked() copies: checked_copy_ table entries and
  // checked_direct_ partitioned-output groups.
  uint64_t checked_copy_ = 0, checked_direct_ = 0;
  // prepare_result()'s arrays, which the next build fills.
  GroupByResult spare_;
  std::vector<GroupTest> tests_;
  bool host_tested_ = false;  // the last build ran the group tests on the host
};

}  // namespace tally::gpu::aggregator
