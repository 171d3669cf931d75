#pragma once
// Kernels that keep the global table: initialization, growth (rehash), spill
// merge, extraction of the groups, key range measurement, sort helpers.
#include <cstdint>
#include <limits>

#include "gpu/aggregator/kernels/views.cuh"
#include "gpu/warp_append.cuh"

namespace tally::gpu::kernels {

template <class T>
__global__ void fill_kernel(T* p, uint64_t n, T value) {
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    p[i] = value;
}

template <class T>
__global__ void iota_kernel(T* p, uint64_t n) {
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    p[i] = static_cast<T>(i);
}

template <class T>
__global__ void gather_kernel(const uint32_t* perm, uint64_t n, const T* src, T* dst) {
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    dst[i] = src[perm[i]];
}

// Readies the global table in one launch: keys of slots [first, capacity)
// set to the empty marker, every lane of slots [first, capacity + 2) (the
// two special slots included) set to its identity, and counters [0,
// clear_counters) zeroed. One launch instead of the memsets and fill
// launches it replaces (up to six runtime calls of tens of microseconds on
// the host's path to a query's first kernel).
template <class K>
__global__ void reset_table_kernel(K* keys, ull* lanes, uint64_t capacity, uint64_t first, LaneSet ls, ull* counters,
                                   int clear_counters) {
  const uint64_t tid = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tid < static_cast<uint64_t>(clear_counters)) counters[tid] = 0;
  const uint64_t stride = capacity + 2;
  for (uint64_t s = first + tid; s < stride; s += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    if (s < capacity) keys[s] = KeyTraits<K>::empty;
    for (int l = 0; l < ls.count; ++l) lanes[static_cast<uint64_t>(l) * stride + s] = lane_identity(ls.lane[l].kind);
  }
}

// Moves every group of `from` into `to` (which has room for all of them).
template <class K>
__global__ void rehash_kernel(GlobalTableRef<K> from, GlobalTableRef<K> to, int lanes, ull* lost) {
  for (uint64_t s = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; s < from.stride;
       s += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    if (from.lane(0)[s] == 0) continue;
    int64_t d;
    if (s == from.capacity) d = to.null_slot();
    else if (s == from.capacity + 1) d = static_cast<int64_t>(to.capacity + 1);
    else d = to.find_or_insert(from.keys[s]);
    if (d < 0) {
      atomicAdd(lost, 1ull);
      continue;
    }
    for (int l = 0; l < lanes; ++l) to.lane(l)[d] = from.lane(l)[s];
  }
}

template <class K>
__global__ void merge_spill_kernel(GlobalTableRef<K> table, SpillRef spill, uint64_t n, const __grid_constant__ LaneSet ls, ull* lost) {
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const int64_t s = table.find_or_insert(static_cast<K>(spill.keys[i]));
    if (s < 0) {
      atomicAdd(lost, 1ull);
      continue;
    }
    for (int l = 0; l < ls.count; ++l) {
      const ull v = spill.lanes[static_cast<uint64_t>(l) * spill.capacity + i];
      if (v != lane_identity(ls.lane[l].kind)) combine_global(ls.lane[l].kind, table.lane(l) + s, v);
    }
  }
}

// Appends every group of slots [first, stride): key (int64), NULL flag, lanes
// (SoA, stride out_stride), at positions each warp reserves at once.
template <class K>
__global__ void extract_kernel(GlobalTableRef<K> table, uint64_t first, int lanes, int64_t* out_keys,
                               uint8_t* out_null, ull* out_lanes, uint64_t out_stride, ull* out_count) {
  const unsigned lane = threadIdx.x & 31u;
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t s0 = first + static_cast<uint64_t>(blockIdx.x) * blockDim.x + (threadIdx.x & ~31u); s0 < table.stride;
       s0 += step) {
    const uint64_t s = s0 + lane;
    const bool has = s < table.stride && table.lane(0)[s] != 0;
    const ull i = warp_append(has, out_count);
    if (!has) continue;
    if (i >= out_stride) continue;
    const bool is_null = s == table.capacity;
    out_keys[i] = s < table.capacity ? static_cast<int64_t>(table.keys[s])
                                     : (is_null ? 0 : static_cast<int64_t>(KeyTraits<K>::empty));
    out_null[i] = is_null ? 1 : 0;
    for (int l = 0; l < lanes; ++l) out_lanes[static_cast<uint64_t>(l) * out_stride + i] = table.lane(l)[s];
  }
}

template <class K>
__global__ void key_range_kernel(ChunkRef<K> c, long long* out_min, long long* out_max) {
  long long lo = std::numeric_limits<long long>::max();
  long long hi = std::numeric_limits<long long>::min();
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < c.rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (c.key_null(r)) continue;
    const long long k = static_cast<long long>(c.keys[r]);
    lo = k < lo ? k : lo;
    hi = k > hi ? k : hi;
  }
  for (int d = 16; d > 0; d >>= 1) {
    const long long olo = __shfl_down_sync(0xffffffffu, lo, d);
    const long long ohi = __shfl_down_sync(0xffffffffu, hi, d);
    lo = olo < lo ? olo : lo;
    hi = ohi > hi ? ohi : hi;
  }
  if ((threadIdx.x & 31) == 0) {
    atomicMin(out_min, lo);
    atomicMax(out_max, hi);
  }
}

}  // namespace tally::gpu::kernels
