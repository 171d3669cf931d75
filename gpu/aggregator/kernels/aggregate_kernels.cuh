#pragma once
// The aggregation kernels. Each processes any chunk and merges into the global
// table; none chooses its own launch configuration (the host launchers in
// gpu/aggregator/*_launcher.cuh do, from LaunchConfig).
#include <cstdint>

#include "gpu/aggregator/kernels/shared_table.cuh"
#include "gpu/aggregator/kernels/views.cuh"

namespace tally::gpu::kernels {

// Keys per 16-byte bucket of the shared hash table: one vector load checks a
// whole bucket, so a warp's probes end after one load for almost every lane
// (with one key per load, most lanes of a warp idle while the longest probe
// finishes).
template <class K>
inline constexpr uint32_t kBucketKeys = 16 / sizeof(K);

// Shared hash slot counts are adjusted so that every replica's key array starts
// on a 16-byte boundary: (slots + 2) is a multiple of the bucket width.
template <class K>
__host__ __device__ constexpr uint32_t aligned_hash_slots(uint32_t slots) {
  constexpr uint32_t w = kBucketKeys<K>;
  const uint32_t s = (slots + 2) / w * w;
  return s < 2 * w ? 2 * w - 2 : s - 2;
}

// Four (int32) or two (int64) keys at a 16-byte aligned shared address, read
// volatile: other threads insert concurrently. No "memory" clobber: it keeps
// the compiler from scheduling other loads across the probe.
template <class K>
__device__ __forceinline__ void load_bucket(const K* p, K (&out)[kBucketKeys<K>]) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(p));
  if constexpr (sizeof(K) == 4) {
    asm volatile("ld.volatile.shared.v4.s32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(out[0]), "=r"(out[1]), "=r"(out[2]), "=r"(out[3])
                 : "r"(addr));
  } else {
    long long a, b;
    asm volatile("ld.volatile.shared.v2.s64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "r"(addr));
    out[0] = static_cast<K>(a);
    out[1] = static_cast<K>(b);
  }
}

// Keys probed by the bucketed table: the largest multiple of the bucket width
// <= slots.
template <class K>
__host__ __device__ constexpr uint32_t hash_probe_area(uint32_t slots) {
  return slots / kBucketKeys<K> * kBucketKeys<K>;
}
template <class K>
constexpr uint64_t hash_area_magic(uint32_t slots) {
  return UINT64_MAX / hash_probe_area<K>(slots) + 1;
}

// Shared-memory hash insert with linear probing over 16-byte buckets (the
// partitioned variant's larger tables, where probes run longer): the probe
// order is exactly linear probing from the home slot (an empty slot is never
// skipped without a CAS), only the loads are wider. p.slots must come from
// aligned_hash_slots and p.area_magic from hash_area_magic, `keys` be 16-byte
// aligned. -1 when the occupancy limit is reached or the table is full.
// kCountEach = false: the caller keeps the occupancy itself (no limit check,
// no atomic per insert; *claimed counts this thread's inserts), for tables
// whose fill check already keeps them below the limit.
template <class K, bool kCountEach = true>
__device__ __forceinline__ int64_t shared_find_or_insert_bucketed(K* keys, uint32_t* occupied, const SharedParams& p,
                                                                  uint32_t limit, K key, uint32_t* claimed = nullptr) {
  constexpr uint32_t W = kBucketKeys<K>;
  const uint32_t buckets = p.slots / W;
  const uint32_t area = buckets * W;
  const uint64_t h = hash_key(key, p.hash);
  // murmur: multiply-shift of the mixed bits; identity: key mod area (a dense
  // range of at most `area` keys lands collision-free), through fastmod on the
  // low 32 bits.
  const uint32_t i = p.hash == HashKind::murmur
                         ? static_cast<uint32_t>(((h & 0xffffffffull) * area) >> 32)
                         : static_cast<uint32_t>(__umul64hi(p.area_magic * static_cast<uint32_t>(h), area));
  uint32_t b = i / W;
  uint32_t first = i % W;
  for (uint32_t n = 0; n <= buckets; ++n) {
    K cur[W];
    load_bucket(keys + b * W, cur);
#pragma unroll
    for (uint32_t q = 0; q < W; ++q) {
      if (q < first) continue;
      const uint32_t s = b * W + q;
      if (cur[q] == key) return s;
      if (cur[q] == KeyTraits<K>::empty) {
        if constexpr (kCountEach) {
          if (load_volatile(occupied) >= limit) return -1;
        }
        const K old = atomic_cas(keys + s, KeyTraits<K>::empty, key);
        if (old == KeyTraits<K>::empty) {
          if constexpr (kCountEach) atomicAdd(occupied, 1u);
          else ++*claimed;
          return s;
        }
        if (old == key) return s;
      }
    }
    first = 0;
    b = b + 1 == buckets ? 0 : b + 1;
  }
  return -1;
}

// Scalar linear probing (one key per load), used by the shared-memory variant
// when it keeps many per-lane replicas: their tables are tiny and the home
// slot almost always holds the key, and there the scalar probe is faster
// (at a few hundred groups or more with <= 4 replicas the bucketed probe
// wins). -1 when the occupancy limit is reached or the table is full.
template <class K>
__device__ __forceinline__ int64_t shared_find_or_insert(K* keys, uint32_t* occupied, uint32_t slots,
                                                         uint32_t limit, K key, HashKind hash) {
  const uint64_t h = hash_key(key, hash);
  uint32_t i = hash != HashKind::murmur ? static_cast<uint32_t>(h % slots)
                                        : static_cast<uint32_t>(((h & 0xffffffffull) * slots) >> 32);
  for (uint32_t p = 0; p < slots; ++p) {
    const K cur = load_volatile(keys + i);
    if (cur == key) return i;
    if (cur == KeyTraits<K>::empty) {
      if (load_volatile(occupied) >= limit) return -1;
      const K old = atomic_cas(keys + i, KeyTraits<K>::empty, key);
      if (old == KeyTraits<K>::empty) {
        atomicAdd(occupied, 1u);
        return i;
      }
      if (old == key) return i;
    }
    if (++i == slots) i = 0;
  }
  return -1;
}

// Merges every non-empty shared slot into the global table (or the spill).
// Slots are laid out replica-major: replica r owns [r * region, (r+1) * region)
// with region = slots + 2 (the last two: NULL key, empty-marker key).
template <class K, bool kDense>
__device__ void shared_flush(const SharedTable& t, const SharedLayout& lay, const LaneSet& ls, const SharedParams& p,
                             const GlobalTableRef<K>& table, const SpillRef& spill) {
  const K* keys = reinterpret_cast<const K*>(t.base + lay.keys_offset);
  const uint32_t region = p.slots + 2;
  for (uint32_t s = threadIdx.x; s < t.total_slots; s += blockDim.x) {
    if (t.u32(lay, 0)[s] == 0) continue;  // lane 0 counts rows: empty slot
    ull vals[kMaxLanes];
    for (int l = 0; l < ls.count; ++l) vals[l] = shared_lane_value(t, lay, ls.lane[l], l, s, p.split_flush_rows > 0);
    const uint32_t local = s % region;
    const bool is_null = local == p.slots;
    K key = KeyTraits<K>::empty;  // local slot slots+1 holds the empty-marker key
    if (local < p.slots) key = kDense ? static_cast<K>(static_cast<uint64_t>(p.dense_min) + local) : keys[s];
    table.add_partial(ls, spill, key, is_null, vals);
  }
}

// DENSE (kDense) and SHARED-MEMORY HASH variants. Each block takes a
// contiguous range of tiles (tile = blockDim * R rows), so on partitioned input
// a block sees few partitions; with flush_on_fill the table is flushed and
// reset when full instead of sending rows to the global table. With
// p.replicas > 1 each lane (modulo replicas) has its own copy of the table, so
// few groups do not serialize a warp's atomics on one address.
// kCountSum: the common shape count(*) + sum(int4 NOT NULL) with no NULL keys,
// with the lanes fixed at compile time.
template <class K, int R, bool kDense, bool kCountSum = false>
__global__ void shared_aggregate_kernel(const __grid_constant__ ChunkRef<K> c, const __grid_constant__ LaneSet ls, const __grid_constant__ SharedLayout lay, SharedParams p,
                                        GlobalTableRef<K> table, SpillRef spill) {
  extern __shared__ __align__(16) unsigned char smem[];
  const SharedTable t{smem, (p.slots + 2) * p.replicas};
  const uint32_t rbase = (threadIdx.x & (p.replicas - 1)) * (p.slots + 2);
  K* skeys = reinterpret_cast<K*>(smem + lay.keys_offset);
  uint32_t* occupied = reinterpret_cast<uint32_t*>(smem + lay.counter_offset);
  shared_init<K>(t, lay, ls, !kDense);
  __syncthreads();

  const int64_t tile = static_cast<int64_t>(blockDim.x) * R;
  const int64_t tiles = (c.rows + tile - 1) / tile;
  const int64_t t_begin = tiles * blockIdx.x / gridDim.x;
  const int64_t t_end = tiles * (blockIdx.x + 1) / gridDim.x;
  const bool v0_present = ls.count > 0 && c.columns[0].data != nullptr;
  // Split sums (kDense): tiles between flushes.
  const int64_t split_tiles = p.split_flush_rows == 0 ? 0 : tile >= p.split_flush_rows ? 1 : p.split_flush_rows / tile;

  for (int64_t ti = t_begin; ti < t_end; ++ti) {
    if constexpr (kDense && !kCountSum) {
      if (split_tiles > 0 && ti > t_begin && (ti - t_begin) % split_tiles == 0) {
        __syncthreads();
        shared_flush<K, kDense>(t, lay, ls, p, table, spill);
        __syncthreads();
        shared_init<K>(t, lay, ls, false);
        __syncthreads();
      }
    }
    if constexpr (!kDense) {
      if (p.flush_on_fill) {
        __syncthreads();
        const bool full = *occupied > p.flush_threshold;
        __syncthreads();  // every thread has read the same value before any inserts again
        if (full) {
          shared_flush<K, kDense>(t, lay, ls, p, table, spill);
          __syncthreads();
          shared_init<K>(t, lay, ls, true);
          __syncthreads();
        }
      }
    }
    K key[R];
    bool knull[R];
    int64_t v0[R];
    bool v0_valid[R];
    const int64_t base = ti * tile + threadIdx.x;
    // Load phase: R independent loads of each stream in flight per thread.
#pragma unroll
    for (int j = 0; j < R; ++j) {
      const int64_t row = base + static_cast<int64_t>(j) * blockDim.x;
      const bool in = row < c.rows;
      if constexpr (kCountSum) {
        key[j] = in ? c.keys[row] : K{};
        knull[j] = false;
        v0[j] = in ? static_cast<const int32_t*>(c.columns[0].data)[row] : 0;
        v0_valid[j] = in;
      } else {
        key[j] = in ? c.keys[row] : K{};
        knull[j] = in && c.key_null(row);
        v0[j] = (in && v0_present) ? c.value(0, row) : 0;
        v0_valid[j] = in && v0_present && c.valid(0, row);
      }
    }
#pragma unroll
    for (int j = 0; j < R; ++j) {
      const int64_t row = base + static_cast<int64_t>(j) * blockDim.x;
      const bool in = row < c.rows;
      int64_t s = -2;  // -2: no row, -1: send to the global table
      if (in) {
        if (knull[j]) {
          s = rbase + p.slots;
        } else if constexpr (kDense) {
          const uint64_t off = static_cast<uint64_t>(static_cast<int64_t>(key[j])) - static_cast<uint64_t>(p.dense_min);
          s = off < p.slots ? static_cast<int64_t>(rbase + off) : -1;  // out of the stated range: global
        } else if (key[j] == KeyTraits<K>::empty) {
          s = rbase + p.slots + 1;
        } else {
          const uint32_t limit = p.flush_on_fill ? p.slots * p.replicas : p.insert_limit;
          const int64_t local = p.bucketed ? shared_find_or_insert_bucketed(skeys + rbase, occupied, p, limit, key[j])
                                           : shared_find_or_insert(skeys + rbase, occupied, p.slots, limit, key[j],
                                                                   p.hash);
          s = local >= 0 ? rbase + local : -1;
        }
      }
      if constexpr (kCountSum) {
        if (s >= 0) {
          atomicAdd(t.u32(lay, 0) + s, 1u);
          shared_add_sum(t.i32(lay, 1), t.hi(lay, 1), static_cast<uint32_t>(s), v0[j]);
        }
      } else if (p.warp_preaggregate) {
        shared_add_rows_warp(t, lay, ls, c, s, row, v0[j], v0_valid[j]);
      } else if (s >= 0) {
        shared_add_row(t, lay, ls, c, static_cast<uint32_t>(s), row, v0[j], v0_valid[j], p.split_flush_rows > 0);
      }
      if (s == -1) {
        // The count+sum shape's lanes without the generic lane loop (as the
        // dictionary kernel's), which would cost the kernel registers.
        if constexpr (kCountSum) table.add_count_sum(spill, key[j], false, 1, static_cast<ull>(v0[j]));
        else table.add_row(c, ls, spill, row, key[j], false, v0[j]);
      }
      __syncwarp();  // regroup after divergent probe loops
    }
  }
  __syncthreads();
  shared_flush<K, kDense>(t, lay, ls, p, table, spill);
}

// GLOBAL variant: every row probes the global table (grid-stride over tiles).
template <class K, int R>
__global__ void global_aggregate_kernel(const __grid_constant__ ChunkRef<K> c, const __grid_constant__ LaneSet ls, GlobalTableRef<K> table, SpillRef spill) {
  const int64_t tile = static_cast<int64_t>(blockDim.x) * R;
  const bool v0_present = ls.count > 0 && c.columns[0].data != nullptr;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * tile + threadIdx.x; base - threadIdx.x < c.rows;
       base += static_cast<int64_t>(gridDim.x) * tile) {
    K key[R];
    bool knull[R];
    int64_t v0[R];
#pragma unroll
    for (int j = 0; j < R; ++j) {
      const int64_t row = base + static_cast<int64_t>(j) * blockDim.x;
      const bool in = row < c.rows;
      key[j] = in ? c.keys[row] : K{};
      knull[j] = in && c.key_null(row);
      v0[j] = (in && v0_present) ? c.value(0, row) : 0;
    }
#pragma unroll
    for (int j = 0; j < R; ++j) {
      const int64_t row = base + static_cast<int64_t>(j) * blockDim.x;
      if (row < c.rows) table.add_row(c, ls, spill, row, key[j], knull[j], v0[j]);
      __syncwarp();
    }
  }
}

// SORT variant, second step: over key-sorted rows each thread aggregates a
// contiguous run of `run` rows locally and merges one partial per key change.
template <class K>
__global__ void sorted_run_kernel(const __grid_constant__ ChunkRef<K> c, const __grid_constant__ LaneSet ls, GlobalTableRef<K> table, SpillRef spill, int run) {
  const int64_t first = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * run;
  if (first >= c.rows) return;
  const int64_t last = min(first + run, c.rows);
  ull acc[kMaxLanes];
  bool have = false;
  K cur{};
  bool cur_null = false;
  for (int64_t row = first; row < last; ++row) {
    const bool kn = c.key_null(row);
    const K k = c.keys[row];
    if (!have || kn != cur_null || (!kn && k != cur)) {
      if (have) table.add_partial(ls, spill, cur, cur_null, acc);
      for (int l = 0; l < ls.count; ++l) acc[l] = lane_identity(ls.lane[l].kind);
      cur = k;
      cur_null = kn;
      have = true;
    }
    for (int l = 0; l < ls.count; ++l) {
      const LaneRef lr = ls.lane[l];
      bool valid = true;
      int64_t v = 0;
      if (lr.column >= 0) {
        valid = c.valid(lr.column, row);
        v = valid ? c.value(lr.column, row) : 0;
      }
      ull x;
      if (lane_row(lr, c, row, valid, v, x)) acc[l] = combine_local(lr.kind, acc[l], x);
    }
  }
  if (have) table.add_partial(ls, spill, cur, cur_null, acc);
}

}  // namespace tally::gpu::kernels
