#pragma once
// PARTITIONED variant for the common shape count(*) + sum(int4 NOT NULL) with
// no NULL keys (lanes 0 and 1, fixed at compile time): the same work items,
// fill check and outputs as partition_aggregate_kernel, without its generic
// lane loop. The generic kernel, fed this shape, issued ~250 warp instructions
// per 32 rows (ncu, H100, sparse G = 2^22) and ~50 K per partition for table
// initialization and flush through the lane set it kept in local memory;
// here a row is two loads, the bucketed probe, two shared atomics and a sign
// test, and the table's arrays are cleared with 16-byte stores: 2.16 G -> 1.42
// G warp instructions and 4.19 -> 2.16 ms at sparse 2^22 (bench/RESULTS.md).
// The hash is fixed at compile time as well (count_sum_home: no per-row test
// of p.hash): dense 2^22-2^26 3-5% faster end to end (H100, session 6).
#include <cstdint>

#include "gpu/kernels/aggregate_kernels.cuh"
#include "gpu/kernels/partition_kernels.cuh"
#include "gpu/kernels/shared_table.cuh"
#include "gpu/kernels/views.cuh"

namespace tally::gpu::kernels {

// One block's count+sum table: lane 0 (row counts), lane 1 (sum as a signed
// low word plus a signed count of 2^32 wraps, shared_add_sum's encoding) and
// the keys, each an array of `total` = slots + 2 entries (the last two: NULL
// key, empty-marker key). `total` is a multiple of the bucket width
// (aligned_hash_slots), so each array is cleared 16 bytes of keys at a time.
template <class K>
struct CountSumTable {
  uint32_t* count;
  int32_t* lo;
  int32_t* hi;
  K* keys;
  uint32_t* occupied;
  uint32_t total;

  __device__ CountSumTable(unsigned char* smem, const SharedLayout& lay, uint32_t slots)
      : count(reinterpret_cast<uint32_t*>(smem + lay.offset[0])),
        lo(reinterpret_cast<int32_t*>(smem + lay.offset[1])),
        hi(reinterpret_cast<int32_t*>(smem + lay.offset[1]) + (slots + 2)),
        keys(reinterpret_cast<K*>(smem + lay.keys_offset)),
        occupied(reinterpret_cast<uint32_t*>(smem + lay.counter_offset)),
        total(slots + 2) {}

  // Every thread of the block calls it; the caller synchronizes after.
  __device__ void clear() const {
    constexpr uint32_t W = kBucketKeys<K>;
    using Words = std::conditional_t<W == 4, uint4, uint2>;  // W 32-bit accumulators
    using Keys = std::conditional_t<sizeof(K) == 4, int4, longlong2>;  // W keys (16 bytes)
    Keys empty_keys;
    if constexpr (sizeof(K) == 4) empty_keys = make_int4(KeyTraits<K>::empty, KeyTraits<K>::empty,
                                                         KeyTraits<K>::empty, KeyTraits<K>::empty);
    else empty_keys = make_longlong2(KeyTraits<K>::empty, KeyTraits<K>::empty);
    Words zero{};
    for (uint32_t b = threadIdx.x; b < total / W; b += blockDim.x) {
      reinterpret_cast<Keys*>(keys)[b] = empty_keys;
      reinterpret_cast<Words*>(count)[b] = zero;
      reinterpret_cast<Words*>(lo)[b] = zero;
      reinterpret_cast<Words*>(hi)[b] = zero;
    }
    if (threadIdx.x == 0) *occupied = 0;
  }

  __device__ __forceinline__ ull sum_at(uint32_t s) const {
    return static_cast<ull>(static_cast<int64_t>(lo[s])) + (static_cast<ull>(static_cast<int64_t>(hi[s])) << 32);
  }

  // Slot s's key for the global table: an ordinary slot's key, or the
  // empty-marker key of slot slots + 1 (slot `slots`, NULL keys, stays empty:
  // this shape has none, but a partial there still merges as the NULL group).
  __device__ __forceinline__ void merge_slot(uint32_t s, uint32_t slots, const GlobalTableRef<K>& table,
                                             const SpillRef& spill) const {
    const K key = s < slots ? keys[s] : KeyTraits<K>::empty;
    table.add_count_sum(spill, key, s == slots, count[s], sum_at(s));
  }

  // Merges every occupied slot into the global table (or the spill).
  __device__ void flush_global(uint32_t slots, const GlobalTableRef<K>& table, const SpillRef& spill) const {
    for (uint32_t s = threadIdx.x; s < total; s += blockDim.x)
      if (count[s] != 0) merge_slot(s, slots, table, spill);
  }

  // Writes the ordinary groups to the compact output (one global atomic per
  // block for the base, one shared atomic per warp for the position) and
  // merges the special slots into the global table, as partition_flush_direct.
  __device__ void flush_direct(uint32_t slots, const GlobalTableRef<K>& table, const SpillRef& spill,
                               const DirectRef& out, ull* base, uint32_t* cursor) const {
    if (threadIdx.x == 0) {
      *base = atomicAdd(out.count, static_cast<ull>(*occupied));
      *cursor = 0;
    }
    __syncthreads();
    const unsigned lane = threadIdx.x & 31u;
    for (uint32_t s0 = threadIdx.x & ~31u; s0 < total; s0 += blockDim.x) {
      const uint32_t s = s0 + lane;
      const bool has = s < total && count[s] != 0;
      if (has && s >= slots) merge_slot(s, slots, table, spill);
      const bool mine = has && s < slots;
      const unsigned m = __ballot_sync(0xffffffffu, mine);
      if (m == 0) continue;  // warp-uniform
      uint32_t wbase = 0;
      if (lane == 0) wbase = atomicAdd(cursor, static_cast<uint32_t>(__popc(m)));
      wbase = __shfl_sync(0xffffffffu, wbase, 0);
      if (mine) {
        const ull i = *base + wbase + static_cast<uint32_t>(__popc(m & ((1u << lane) - 1u)));
        if (i < out.capacity) {
          out.keys[i] = static_cast<int64_t>(keys[s]);
          out.lanes[i] = count[s];
          out.lanes[out.capacity + i] = sum_at(s);
        } else {
          atomicAdd(out.lost, 1ull);
        }
      }
    }
  }
};

// Home slot of a key in a probe area of `area` keys, the hash fixed at
// compile time (the generic probe tests p.hash per row); the same slots as
// shared_find_or_insert_bucketed. kIdentity: key mod area through fastmod
// (dense ranges land collision-free); else murmur's finalizer, multiply-shift.
// A bare multiply-shift (no finalizer) was measured and not kept: on the
// bench's keys (g * 0x9E3779B1, themselves a multiplicative spread) it placed
// groups on a lattice, 1.00 keys examined per row at sparse 2^26 against
// murmur's 1.22 (CPU model), sparse 2^26 7.98 -> 7.27 ms, but 1.38 against
// 1.15 at 2^18 (4.66 -> 4.78 ms, slower) and no fewer probes than murmur on
// random keys: its gain was the key generator's (bench/RESULTS.md).
template <class K, bool kIdentity>
__device__ __forceinline__ uint32_t count_sum_home(K key, const SharedParams& p, uint32_t area) {
  if constexpr (kIdentity) {
    return static_cast<uint32_t>(__umul64hi(p.area_magic * static_cast<uint32_t>(static_cast<uint64_t>(key)), area));
  } else {
    return __umulhi(static_cast<uint32_t>(hash_key(key, HashKind::murmur)), area);
  }
}

// Marks a row that found no room in the shared table.
inline constexpr uint32_t kNoSharedRoom = 0xffffffffu;

// Shared slot of a non-NULL key: its own slot for the empty-marker key, else
// linear probing over 16-byte buckets from its home slot, as
// shared_find_or_insert_bucketed (same probe order and insert protocol) with
// 32-bit slot arithmetic. kNoSharedRoom past the insert limit (or, with
// kBatchedCount, when the table is full); with kBatchedCount the occupancy is
// not touched, *claimed counts new keys instead.
template <class K, bool kBatchedCount, bool kIdentity>
__device__ __forceinline__ uint32_t count_sum_slot(const CountSumTable<K>& t, const SharedParams& p, K key,
                                                   uint32_t* claimed) {
  constexpr uint32_t W = kBucketKeys<K>;
  if (key == KeyTraits<K>::empty) return p.slots + 1;
  const uint32_t buckets = p.slots / W;
  const uint32_t i = count_sum_home<K, kIdentity>(key, p, buckets * W);
  uint32_t b = i / W;
  uint32_t first = i % W;
  for (uint32_t n = 0; n <= buckets; ++n) {
    K cur[W];
    load_bucket(t.keys + b * W, cur);
#pragma unroll
    for (uint32_t q = 0; q < W; ++q) {
      if (q < first) continue;
      const uint32_t s = b * W + q;
      if (cur[q] == key) return s;
      if (cur[q] == KeyTraits<K>::empty) {
        if constexpr (!kBatchedCount) {
          if (load_volatile(t.occupied) >= p.insert_limit) return kNoSharedRoom;
        }
        const K old = atomic_cas(t.keys + s, KeyTraits<K>::empty, key);
        if (old == KeyTraits<K>::empty) {
          if constexpr (kBatchedCount) ++*claimed;
          else atomicAdd(t.occupied, 1u);
          return s;
        }
        if (old == key) return s;
      }
    }
    first = 0;
    b = b + 1 == buckets ? 0 : b + 1;
  }
  return kNoSharedRoom;
}

// kBatchedCount (the launcher sets it when p.flush_threshold > 0): the fill
// check at tile starts keeps the occupancy at most flush_threshold + one tile
// <= insert_limit, so inserts skip the limit check, and each warp adds its
// new keys to the occupancy once per tile instead of one shared atomic per
// insert on one address (a quarter of the rows insert at sparse 2^26).
// Measured on the H100 (gker6, same run): within noise of the per-insert
// count (sparse 2^26 7.99 against 8.04 ms, 2^22 6.83 against 6.77 ms).
template <class K, int R, bool kBatchedCount, bool kIdentity>
__global__ void partition_count_sum_kernel(ChunkRef<K> c, SharedLayout lay, SharedParams p, const PartitionItem* work,
                                           const uint32_t* item_count, bool direct, GlobalTableRef<K> table, SpillRef spill,
                                           DirectRef out) {
  static_assert(R >= 1 && R <= 32, "row masks are 32 bits");
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int to_global;
  __shared__ int64_t item_begin, item_end;
  __shared__ ull out_base;
  __shared__ uint32_t out_cursor;
  const CountSumTable<K> t(smem, lay, p.slots);
  const int32_t* values = static_cast<const int32_t*>(c.columns[0].data);
  const int64_t tile = static_cast<int64_t>(blockDim.x) * R;

  // One row into the shared table, or into the global table when it found no
  // room there; returns the row's wrap bit (the low word's 2^32 wrap, carried
  // by the caller after the tile so no row waits on an atomic's result).
  uint32_t claimed = 0;  // kBatchedCount: keys this thread inserted in this tile
  const auto add = [&](K key, int32_t v, uint32_t& slot) -> bool {
    slot = count_sum_slot<K, kBatchedCount, kIdentity>(t, p, key, &claimed);
    if (slot == kNoSharedRoom) {
      table.add_count_sum(spill, key, false, 1, static_cast<ull>(static_cast<int64_t>(v)));
      to_global = 1;
      return false;
    }
    atomicAdd(t.count + slot, 1u);
    const int32_t old = atomicAdd(t.lo + slot, v);
    const int32_t now = static_cast<int32_t>(static_cast<uint32_t>(old) + static_cast<uint32_t>(v));
    return ((now ^ old) & (now ^ v)) < 0;
  };

  const uint32_t items = *item_count;
  ItemCursor cursor(work, items);
  for (uint32_t item = blockIdx.x; item < items; item += gridDim.x) {
    if (threadIdx.x == 0) {
      const PartitionItem w = cursor.take(item);
      item_begin = w.begin;
      item_end = w.begin + w.rows;
      to_global = direct && w.whole ? 0 : 1;
    }
    t.clear();
    __syncthreads();
    const int64_t begin = item_begin;
    const int64_t end = item_end;
    for (int64_t tile_begin = begin; tile_begin < end; tile_begin += tile) {
      // The table holds at most as many keys as rows went in: a check that
      // cannot find it full is skipped with its two barriers.
      if (p.flush_threshold > 0 && tile_begin - begin > p.flush_threshold) {
        __syncthreads();
        const bool full = *t.occupied > p.flush_threshold;
        __syncthreads();  // every thread has read the same value before any inserts again
        if (full) {
          t.flush_global(p.slots, table, spill);
          if (threadIdx.x == 0) to_global = 1;
          __syncthreads();
          t.clear();
          __syncthreads();
        }
      }
      const int64_t first = tile_begin + threadIdx.x;
      if (tile_begin + tile <= end) {  // block-uniform: a whole tile, no bounds checks
        K key[R];
        int32_t v[R];
#pragma unroll
        for (int j = 0; j < R; ++j) {
          key[j] = c.keys[first + j * static_cast<int64_t>(blockDim.x)];
          v[j] = values[first + j * static_cast<int64_t>(blockDim.x)];
        }
        uint32_t slot[R];
        uint32_t wrapped = 0;
#pragma unroll
        for (int j = 0; j < R; ++j) {
          wrapped |= static_cast<uint32_t>(add(key[j], v[j], slot[j])) << j;
          __syncwarp();  // regroup after divergent probe loops
        }
        if (wrapped != 0) {  // rare: a slot's low word wrapped past 2^31
#pragma unroll
          for (int j = 0; j < R; ++j)
            if (wrapped >> j & 1u) atomicAdd(t.hi + slot[j], v[j] < 0 ? -1 : 1);
        }
      } else {  // the item's last, partial tile
#pragma unroll
        for (int j = 0; j < R; ++j) {
          const int64_t row = first + j * static_cast<int64_t>(blockDim.x);
          if (row < end) {
            const int32_t x = values[row];
            uint32_t s;
            if (add(c.keys[row], x, s)) atomicAdd(t.hi + s, x < 0 ? -1 : 1);
          }
          __syncwarp();
        }
      }
      if constexpr (kBatchedCount) {  // every lane of the warp is here
        const uint32_t n = warp_sum(claimed);
        if ((threadIdx.x & 31u) == 0 && n != 0) atomicAdd(t.occupied, n);
        claimed = 0;
      }
    }
    __syncthreads();
    if (to_global) t.flush_global(p.slots, table, spill);
    else t.flush_direct(p.slots, table, spill, out, &out_base, &out_cursor);
    __syncthreads();  // the table is reused by the next item
  }
}

}  // namespace tally::gpu::kernels
