// The top-codes table (top_codes_table.cuh): kernels and their host side.
#include "gpu/engine/top_codes_table.cuh"

#include <algorithm>
#include <bit>
#include <thread>

#include "common/murmur_mix.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/pageable_copy.cuh"
#include "gpu/warp_append.cuh"

namespace tally::gpu {
namespace {

constexpr uint64_t kFreeKey = ~uint64_t{0};
// Slots a key tries before its row goes to the overflow rows: far more than
// linear probing needs at the table's load when the estimate holds.
constexpr uint64_t kMaxProbes = 64;
constexpr int kThreads = 256;
static_assert(kThreads % 32 == 0, "add_kernel steps whole warps");
constexpr int64_t kMaxBlocks = 8192;

__device__ inline uint64_t load(const uint64_t* p) { return *reinterpret_cast<const volatile uint64_t*>(p); }

__host__ __device__ inline uint64_t* entry_at(const TopCodesView& t, uint64_t e) { return t.entries + e * static_cast<uint64_t>(2 + t.k); }
// A count word's two halves: the values, and every row where counted.
constexpr uint64_t kRowUnit = uint64_t{1} << 32;
__host__ __device__ inline unsigned values_of(uint64_t counted) { return static_cast<unsigned>(counted); }
__host__ __device__ inline unsigned rows_of(uint64_t counted) { return static_cast<unsigned>(counted >> 32); }
// What one row adds to its entry's count word.
__device__ inline uint64_t row_count(const TopCodesView& t, bool valued) { return (valued ? 1 : 0) | (t.every_row ? kRowUnit : 0); }

// The entry of sort key `key`, claiming a free slot for a new key; -1 when
// `probes` slots all hold other keys.
__device__ int64_t entry_of(const TopCodesView& t, uint64_t key, uint64_t probes) {
  if (key == kFreeKey) return static_cast<int64_t>(t.capacity + 1);
  if (t.direct) {
    const uint64_t at = key - t.base;
    return at < t.capacity ? static_cast<int64_t>(at) : -1;
  }
  const uint64_t mask = t.capacity - 1;
  uint64_t h = murmur_fmix64(key) & mask;
  for (uint64_t p = 0; p < probes; ++p, h = (h + 1) & mask) {
    uint64_t* slot = entry_at(t, h);
    uint64_t seen = load(slot);
    if (seen == key) return static_cast<int64_t>(h);
    if (seen == kFreeKey) {
      seen = atomicCAS(reinterpret_cast<unsigned long long*>(slot), kFreeKey, key);
      if (seen == kFreeKey || seen == key) return static_cast<int64_t>(h);
    }
  }
  return -1;
}

// Adds `counted` (row_count's, or an entry's whole count word) to entry e's count word.
__device__ void count_rows(const TopCodesView& t, int64_t e, uint64_t counted) {
  atomicAdd(reinterpret_cast<unsigned long long*>(entry_at(t, static_cast<uint64_t>(e)) + 1), static_cast<unsigned long long>(counted));
}

// Offers `code` to entry e's ranks (the cascade of top_codes_table.cuh).
__device__ void offer(const TopCodesView& t, int64_t e, uint64_t code) {
  uint64_t* rank = entry_at(t, static_cast<uint64_t>(e)) + 2;
  auto* cell = reinterpret_cast<unsigned long long*>(rank);
  if (t.largest) {
    if (code <= load(rank + t.k - 1)) return;
    for (int i = 0; i < t.k; ++i) {
      if (code <= load(rank + i)) continue;  // it would be displaced at once: it goes on
      const uint64_t old = atomicMax(cell + i, code);
      if (old < code) code = old;
    }
  } else {
    if (code >= load(rank + t.k - 1)) return;
    for (int i = 0; i < t.k; ++i) {
      if (code >= load(rank + i)) continue;
      const uint64_t old = atomicMin(cell + i, code);
      if (old > code) code = old;
    }
  }
}

__global__ void init_kernel(const __grid_constant__ TopCodesView t) {
  const uint64_t entries = t.capacity + 2;
  const uint64_t worst = t.largest ? 0 : kFreeKey;  // the ranks start at the code no code is worse than
  for (uint64_t e = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; e < entries; e += gridDim.x * static_cast<uint64_t>(blockDim.x)) {
    uint64_t* entry = entry_at(t, e);
    entry[0] = t.direct && e < t.capacity ? t.base + e : kFreeKey;
    entry[1] = 0;
    for (int i = 0; i < t.k; ++i) entry[2 + i] = worst;
  }
}

// Whole warps step through the rows together (kThreads is a multiple of
// 32), so that the rows of the NULL key, which all count into one entry,
// add to its count word once per warp: with a few percent of NULL keys that
// one word's atomics bounded the kernel.
__global__ void add_kernel(const __grid_constant__ TopCodesView t, const __grid_constant__ CollectArgs a, int64_t rows) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x; base < rows; base += stride) {
    const int64_t r = base + threadIdx.x;
    const bool in = r < rows && (a.filter == nullptr || a.filter[r] != 0);
    const bool valued = in && (a.value_valid == nullptr || a.value_valid[r] != 0);
    const bool counted = valued || (in && t.every_row);
    const bool null_key = counted && a.key_valid != nullptr && a.key_valid[r] == 0;
    if (a.key_valid != nullptr) {
      const unsigned nulls = __ballot_sync(0xffffffffu, null_key);
      if (nulls != 0) {
        const unsigned valued_nulls = __ballot_sync(0xffffffffu, null_key && valued);
        if ((threadIdx.x & 31u) == static_cast<unsigned>(__ffs(nulls) - 1)) {
          const uint64_t words = static_cast<uint64_t>(__popc(valued_nulls)) +
                                 (t.every_row ? static_cast<uint64_t>(__popc(nulls)) * kRowUnit : 0);
          count_rows(t, static_cast<int64_t>(t.capacity), words);
        }
      }
    }
    if (!counted) continue;
    if (null_key) {
      if (valued) offer(t, static_cast<int64_t>(t.capacity), order_code(a, r));
      continue;
    }
    const uint64_t key = sort_key(a, r);
    const int64_t e = entry_of(t, key, kMaxProbes);
    if (e < 0) {
      if (valued) {
        const unsigned long long at = atomicAdd(a.count, 1ULL);
        a.out_keys[at] = key;
        a.out_codes[at] = order_code(a, r);
      } else {
        a.out_bare_keys[atomicAdd(a.bare_count, 1ULL)] = key;
      }
      continue;
    }
    count_rows(t, e, row_count(t, valued));
    if (valued) offer(t, e, order_code(a, r));
  }
}

// Every entry of `from` into `to` (no probe limit: `to` has room for all):
// count words added, each entry's kept codes offered.
__global__ void merge_kernel(const __grid_constant__ TopCodesView to, const __grid_constant__ TopCodesView from) {
  const uint64_t entries = from.capacity + 2;
  for (uint64_t e = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; e < entries; e += gridDim.x * static_cast<uint64_t>(blockDim.x)) {
    const uint64_t* entry = entry_at(from, e);
    const uint64_t counted = entry[1];
    if (counted == 0) continue;
    const int64_t into = e == from.capacity       ? static_cast<int64_t>(to.capacity)
                         : e == from.capacity + 1 ? static_cast<int64_t>(to.capacity + 1)
                                                  : entry_of(to, entry[0], to.capacity);
    count_rows(to, into, counted);
    for (unsigned i = 0; i < min(values_of(counted), static_cast<unsigned>(from.k)); ++i) offer(to, into, entry[2 + i]);
  }
}

// The overflow rows into `to`: (key, code) pairs, then the bare keys.
__global__ void overflow_kernel(const __grid_constant__ TopCodesView to, const __grid_constant__ TopCodesOverflow o) {
  const uint64_t stride = gridDim.x * static_cast<uint64_t>(blockDim.x);
  for (uint64_t r = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; r < o.rows + o.bare_rows; r += stride) {
    const bool valued = r < o.rows;
    const int64_t e = entry_of(to, valued ? o.keys[r] : o.bare_keys[r - o.rows], to.capacity);
    count_rows(to, e, row_count(to, valued));
    if (valued) offer(to, e, o.codes[r]);
  }
}

// One entry's picks: the value at each pick's ascending position is rank
// n-1-position (largest) or rank position (smallest), below k by the shape.
__device__ void pick_entry(const TopCodesView& t, const uint64_t* entry, unsigned n, const PickArgs& p, uint64_t* codes,
                           uint64_t* positions) {
  int at = 0;
  for (int i = 0; i < p.count; ++i) {
    uint64_t pos[2];
    const int k = tally::ordered_pick_positions(p.picks[i], n, pos);
    for (int j = 0; j < k; ++j, ++at) {
      const uint64_t rank = t.largest ? n - 1 - pos[j] : pos[j];
      codes[at] = entry[2 + rank];
      positions[at] = pos[j];
    }
  }
}

// The occupied entries, compacted in any order (one atomic per warp), each
// with its values and, where counted, every row (out_rows); the NULL key's
// block to its own place.
__global__ void pick_kernel(const __grid_constant__ TopCodesView t, const __grid_constant__ PickArgs p, uint64_t* out_keys,
                            unsigned* out_counts, unsigned* out_rows, uint64_t* out_codes, uint64_t* out_positions,
                            unsigned long long* out_n, uint64_t* null_codes, uint64_t* null_positions) {
  const uint64_t entries = t.capacity + 2;
  const uint64_t stride = gridDim.x * static_cast<uint64_t>(blockDim.x);
  for (uint64_t base = blockIdx.x * static_cast<uint64_t>(blockDim.x); base < entries; base += stride) {
    const uint64_t e = base + threadIdx.x;
    const uint64_t* entry = e < entries ? entry_at(t, e) : nullptr;
    const uint64_t counted = entry ? entry[1] : 0;
    const unsigned n = values_of(counted);
    const bool keyed = counted != 0 && e != t.capacity;
    if (n > 0 && e == t.capacity) pick_entry(t, entry, n, p, null_codes, null_positions);
    const unsigned long long at = warp_append(keyed, out_n);
    if (!keyed) continue;
    out_keys[at] = e == t.capacity + 1 ? kFreeKey : entry[0];
    out_counts[at] = n;
    if (out_rows != nullptr) out_rows[at] = rows_of(counted);
    // A key without values (rows counted, none valued) keeps an unread block.
    if (n > 0) pick_entry(t, entry, n, p, out_codes + at * p.per, out_positions + at * p.per);
  }
}

unsigned grid_for(uint64_t items) {
  return static_cast<unsigned>(std::clamp<int64_t>(static_cast<int64_t>((items + kThreads - 1) / kThreads), 1, kMaxBlocks));
}

}  // namespace

TopCodesTable::TopCodesTable(TopCodesShape shape, uint64_t expected_keys, uint64_t max_keys, cudaStream_t stream,
                             std::optional<SortKeyRange> keys)
    : shape_(shape) {
  // Half full at the expected keys; never more slots than twice the rows.
  const uint64_t want = std::max<uint64_t>(expected_keys == 0 ? uint64_t{1} << 16 : 2 * expected_keys, 4096);
  const uint64_t bound = std::max<uint64_t>(2 * max_keys, 4096);
  const uint64_t slots = std::bit_ceil(std::min(want, bound));
  // Direct where the range takes no more entries than the hashed slots (the
  // free marker, kept apart, is never a direct entry's key).
  if (keys && keys->high >= keys->low && keys->high != kFreeKey && keys->high - keys->low < slots) {
    allocate(keys->high - keys->low + 1, stream, keys->low);
    return;
  }
  allocate(slots, stream);
}

void TopCodesTable::allocate(uint64_t capacity, cudaStream_t stream, std::optional<uint64_t> direct_base) {
  made_direct_ = made_direct_ || direct_base.has_value();
  view_ = TopCodesView{nullptr, capacity, direct_base.value_or(0), shape_.k, shape_.largest ? 1 : 0, direct_base ? 1 : 0, view_.every_row};
  entries_ = DeviceBuffer((capacity + 2) * static_cast<uint64_t>(2 + shape_.k) * sizeof(uint64_t), stream);
  view_.entries = entries_.get<uint64_t>();
  init_kernel<<<grid_for(capacity + 2), kThreads, 0, stream>>>(view_);
  TALLY_CUDA_CHECK_LAUNCH("top_codes init_kernel");
}

void TopCodesTable::add(const CollectArgs& a, int64_t rows, cudaStream_t stream) {
  if (rows <= 0) return;
  add_kernel<<<grid_for(static_cast<uint64_t>(rows)), kThreads, 0, stream>>>(view_, a, rows);
  TALLY_CUDA_CHECK_LAUNCH("top_codes add_kernel");
}

tally::KeyedPicks TopCodesTable::picked(const std::vector<tally::OrderedPick>& picks, const TopCodesOverflow& overflow, int key_kind,
                                        cudaStream_t stream) {
  const uint64_t left = overflow.rows + overflow.bare_rows;
  if (left > 0) {
    // Rebuilt with room for every key the table and the overflow rows can hold.
    ++rebuilds_;
    DeviceBuffer entries = std::move(entries_);
    const TopCodesView old = view_;
    allocate(std::bit_ceil(2 * (old.capacity + left)), stream);
    merge_kernel<<<grid_for(old.capacity + 2), kThreads, 0, stream>>>(view_, old);
    TALLY_CUDA_CHECK_LAUNCH("top_codes merge_kernel");
    overflow_kernel<<<grid_for(left), kThreads, 0, stream>>>(view_, overflow);
    TALLY_CUDA_CHECK_LAUNCH("top_codes overflow_kernel");
  }
  PickArgs args;
  args.count = static_cast<int>(picks.size());
  args.per = tally::ordered_picks_per_group(picks);
  std::copy(picks.begin(), picks.end(), args.picks);
  const uint64_t most = view_.capacity + 1;  // keyed entries at most
  const auto per = static_cast<uint64_t>(args.per);
  const bool every_row = view_.every_row != 0;
  DeviceBuffer keys(most * sizeof(uint64_t), stream), counts(most * sizeof(unsigned), stream);
  DeviceBuffer rows(every_row ? most * sizeof(unsigned) : 1, stream);
  DeviceBuffer codes(most * per * sizeof(uint64_t), stream), positions(most * per * sizeof(uint64_t), stream);
  DeviceBuffer tail((2 * per + 1) * sizeof(uint64_t), stream);  // the NULL key's codes and positions; the entries' count
  auto* n_out = reinterpret_cast<unsigned long long*>(tail.get<uint64_t>() + 2 * per);
  TALLY_CUDA_CHECK(cudaMemsetAsync(n_out, 0, sizeof *n_out, stream));
  pick_kernel<<<grid_for(view_.capacity + 2), kThreads, 0, stream>>>(
      view_, args, keys.get<uint64_t>(), counts.get<unsigned>(), every_row ? rows.get<unsigned>() : nullptr, codes.get<uint64_t>(),
      positions.get<uint64_t>(), n_out, tail.get<uint64_t>(), tail.get<uint64_t>() + per);
  TALLY_CUDA_CHECK_LAUNCH("top_codes pick_kernel");
  uint64_t null_counted = 0;
  std::vector<uint64_t> tail_host(2 * per + 1);
  TALLY_CUDA_CHECK(cudaMemcpyAsync(&null_counted, entry_at(view_, view_.capacity) + 1, sizeof null_counted, cudaMemcpyDeviceToHost, stream));
  TALLY_CUDA_CHECK(cudaMemcpyAsync(tail_host.data(), tail.get(), tail.bytes(), cudaMemcpyDeviceToHost, stream));
  TALLY_CUDA_CHECK(cudaStreamSynchronize(stream));
  const uint64_t n = tail_host[2 * per];
  const unsigned null_rows = values_of(null_counted);
  tally::KeyedPicks out;
  out.per_key = args.per;
  out.null_key_rows = null_rows;
  out.null_key_every_row = every_row ? rows_of(null_counted) : 0;
  const bool null_block = null_rows > 0 || out.null_key_every_row > 0;
  std::vector<uint64_t> sort_keys;
  std::vector<unsigned> lengths, every;
  {
    // Each host array sized on a thread of its own: at a million keys they
    // are tens of megabytes of fresh pages, which one thread faults in
    // slowly on a virtualized host.
    const size_t kept = (n + (null_block ? 1 : 0)) * per;
    std::thread a([&] { sort_keys.resize(n); });
    std::thread b([&] { lengths.resize(n); });
    std::thread c([&] { out.codes.resize(kept); });
    std::thread d([&] { out.keys.resize(n); });
    std::thread e([&] {
      out.counts.resize(n);
      if (every_row) out.every_row.resize(n);
    });
    if (every_row) every.resize(n);
    out.positions.resize(kept);
    for (std::thread* t : {&a, &b, &c, &d, &e}) t->join();
  }
  if (n > 0) {
    // Tens of megabytes at a million keys: through pinned pieces on several
    // threads (cudaMemcpyAsync into pageable memory stages on one).
    std::vector<HostCopy> copies{{sort_keys.data(), keys.get(), n * sizeof(uint64_t)},
                                     {lengths.data(), counts.get(), n * sizeof(unsigned)},
                                     {out.codes.data(), codes.get(), n * per * sizeof(uint64_t)},
                                     {out.positions.data(), positions.get(), n * per * sizeof(uint64_t)}};
    if (every_row) copies.push_back({every.data(), rows.get(), n * sizeof(unsigned)});
    copy_to_pageable(copies, stream);
  }
  if (null_rows > 0) {
    std::copy(tail_host.begin(), tail_host.begin() + static_cast<std::ptrdiff_t>(per), out.codes.begin() + static_cast<std::ptrdiff_t>(n * per));
    std::copy(tail_host.begin() + static_cast<std::ptrdiff_t>(per), tail_host.begin() + static_cast<std::ptrdiff_t>(2 * per),
              out.positions.begin() + static_cast<std::ptrdiff_t>(n * per));
  }
  for (uint64_t i = 0; i < n; ++i) {
    out.keys[i] = key_of_sort_key(sort_keys[i], key_kind);
    out.counts[i] = lengths[i];
    if (every_row) out.every_row[i] = every[i];
  }
  return out;
}

}  // namespace tally::gpu
