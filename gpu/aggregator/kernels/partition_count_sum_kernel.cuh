#pragma once
// PARTITIONED variant for the common shape count(*) + sum(int4 NOT NULL) with
// no NULL keys (lanes 0 and 1, fixed at compile time): the same work items,
// fill check and outputs as partition_aggregate_kernel, without its generic
// lane loop. The generic kernel, fed this shape, issues ~250 warp
// instructions per 32 rows and ~50 K per partition for table initialization
// and flush through the lane set it keeps in local memory; here a row is two
// loads, the bucketed probe, two shared atomics and a sign test, and the
// table's arrays are cleared with 16-byte stores (about a third fewer warp
// instructions, half the time at sparse 2^22).
// Flushes walk a list of the claimed slots and reset them, so the table is
// cleared once per block, not once per partition (CountSumTable).
// The hash is fixed at compile time as well (count_sum_home: no per-row test
// of p.hash), which makes dense 2^22-2^26 a few percent faster end to end.
#include <cstdint>

#include "gpu/aggregator/kernels/aggregate_kernels.cuh"
#include "gpu/aggregator/kernels/partition_kernels.cuh"
#include "gpu/aggregator/kernels/shared_table.cuh"
#include "gpu/aggregator/kernels/views.cuh"

namespace tally::gpu::kernels {

// One block's count+sum table: lane 0 (row counts), lane 1 (sum as a signed
// low word plus a signed count of 2^32 wraps, shared_add_sum's encoding) and
// the keys, each an array of `total` = slots + 2 entries (the last two: NULL
// key, empty-marker key). `total` is a multiple of the bucket width
// (aligned_hash_slots), so each array is cleared 16 bytes of keys at a time.
//
// `list` holds the index of every ordinary slot claimed since the last flush,
// in claim order (`*occupied` entries): the flushes walk it instead of every
// slot, and reset exactly the slots they read, so the table is cleared once
// per block. At sparse G = 2^26 a partition has ~2 048 groups in ~6 600 slots;
// visiting every slot at each flush and clearing the table at each partition
// cost ~10 K warp instructions per partition (32 768 partitions).
template <class K>
struct CountSumTable {
  uint32_t* count;
  int32_t* lo;
  int32_t* hi;
  K* keys;
  uint32_t* occupied;
  uint16_t* list;
  uint32_t list_capacity;
  uint32_t total;

  __device__ CountSumTable(unsigned char* smem, const SharedLayout& lay, uint32_t slots)
      : count(reinterpret_cast<uint32_t*>(smem + lay.offset[0])),
        lo(reinterpret_cast<int32_t*>(smem + lay.offset[1])),
        hi(reinterpret_cast<int32_t*>(smem + lay.offset[1]) + (slots + 2)),
        keys(reinterpret_cast<K*>(smem + lay.keys_offset)),
        occupied(reinterpret_cast<uint32_t*>(smem + lay.counter_offset)),
        list(reinterpret_cast<uint16_t*>(smem + lay.list_offset)),
        list_capacity(lay.list_capacity),
        total(slots + 2) {}

  // Every thread of the block calls it, once per block; the caller
  // synchronizes after.
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

  // Stores slot s at list position `at`. The launcher sizes the list for
  // every claim the fill check or the insert limit allows (list_capacity); a
  // claim past it would lose a group, so it is counted as lost (XX000)
  // rather than dropped silently.
  __device__ __forceinline__ void list_at(uint32_t at, uint32_t s, const DirectRef& out) const {
    if (at < list_capacity) list[at] = static_cast<uint16_t>(s);
    else atomicAdd(out.lost, 1ull);
  }

  // Records slot s, just claimed by this thread, at once: the position is
  // the occupancy counter's old value, so each claimed slot is listed once.
  __device__ __forceinline__ void record_claim(uint32_t s, const DirectRef& out) const {
    list_at(atomicAdd(occupied, 1u), s, out);
  }

  // Records the slots this thread claimed in a tile (bit j of `claims`: row
  // j's slot[j]) with one shared atomic per warp for the positions. Every
  // lane of the warp calls it, after the tile's rows.
  template <int R>
  __device__ __forceinline__ void record_claims(const uint32_t (&slot)[R], uint32_t claims,
                                                const DirectRef& out) const {
    if (__ballot_sync(0xffffffffu, claims != 0) == 0) return;  // warp-uniform
    const unsigned lane = threadIdx.x & 31u;
    // The warp's claims are counted first and each row's ballot is taken
    // again to place them: no array of ballots kept (registers are scarce).
    const uint32_t n = warp_sum(static_cast<uint32_t>(__popc(claims)));
    uint32_t at = 0;
    if (lane == 0) at = atomicAdd(occupied, n);
    at = __shfl_sync(0xffffffffu, at, 0);
#pragma unroll
    for (int j = 0; j < R; ++j) {
      const unsigned m = __ballot_sync(0xffffffffu, claims >> j & 1u);
      if (claims >> j & 1u) list_at(at + static_cast<uint32_t>(__popc(m & ((1u << lane) - 1u))), slot[j], out);
      at += static_cast<uint32_t>(__popc(m));
    }
  }

  __device__ __forceinline__ ull sum_at(uint32_t s) const {
    return static_cast<ull>(static_cast<int64_t>(lo[s])) + (static_cast<ull>(static_cast<int64_t>(hi[s])) << 32);
  }

  __device__ __forceinline__ void reset_slot(uint32_t s) const {
    keys[s] = KeyTraits<K>::empty;
    count[s] = 0;
    lo[s] = 0;
    hi[s] = 0;
  }

  // The two special slots (slots: NULL key, slots + 1: empty-marker key) are
  // never claimed, so never listed: threads 0 and 1 merge them into the
  // global table, as key NULL (this shape has none, but a partial there still
  // merges as the NULL group) or the empty-marker key, and reset them.
  __device__ __forceinline__ void flush_special(uint32_t slots, const GlobalTableRef<K>& table,
                                                const SpillRef& spill) const {
    if (threadIdx.x < 2) {
      const uint32_t s = slots + threadIdx.x;
      if (count[s] != 0) {
        table.add_count_sum(spill, KeyTraits<K>::empty, s == slots, count[s], sum_at(s));
        count[s] = 0;
        lo[s] = 0;
        hi[s] = 0;
      }
    }
  }

  // Merges the n listed slots and the special slots into the global table (or
  // the spill) and resets them. Every thread calls it with the same n; the
  // caller zeroes *occupied after a barrier.
  __device__ void flush_global(uint32_t n, uint32_t slots, const GlobalTableRef<K>& table,
                               const SpillRef& spill) const {
    for (uint32_t i = threadIdx.x; i < n && i < list_capacity; i += blockDim.x) {
      const uint32_t s = list[i];
      table.add_count_sum(spill, keys[s], false, count[s], sum_at(s));
      reset_slot(s);
    }
    flush_special(slots, table, spill);
  }

  // Writes the n listed groups to the compact output at positions base + list
  // index (one global atomic per block for the base), merges the special
  // slots into the global table, and resets them all, as flush_global.
  __device__ void flush_direct(uint32_t n, uint32_t slots, const GlobalTableRef<K>& table, const SpillRef& spill,
                               const DirectRef& out, ull* base) const {
    if (threadIdx.x == 0) *base = atomicAdd(out.count, static_cast<ull>(n));
    flush_special(slots, table, spill);
    __syncthreads();
    const ull b = *base;
    for (uint32_t i = threadIdx.x; i < n && i < list_capacity; i += blockDim.x) {
      const uint32_t s = list[i];
      const ull at = b + i;
      if (at < out.capacity) {
        out.keys[at] = static_cast<int64_t>(keys[s]);
        out.lanes[at] = count[s];
        out.lanes[out.capacity + at] = sum_at(s);
      } else {
        atomicAdd(out.lost, 1ull);
      }
      reset_slot(s);
    }
  }
};

// Home slot of a key in a probe area of `area` keys, the hash fixed at
// compile time (the generic probe tests p.hash per row); the same slots as
// shared_find_or_insert_bucketed. kIdentity: key mod area through fastmod
// (dense ranges land collision-free); else murmur's finalizer, multiply-shift.
// The finalizer stays before the multiply-shift: without it, keys that are
// themselves a multiplicative spread land on a lattice (more probes at some
// sizes than murmur), and random keys get no fewer probes.
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
// kFillChecked, when the table is full). *claimed: this thread claimed the
// slot, which the caller must list (record_claim or record_claims).
template <class K, bool kFillChecked, bool kIdentity>
__device__ __forceinline__ uint32_t count_sum_slot(const CountSumTable<K>& t, const SharedParams& p, K key,
                                                   bool* claimed) {
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
        if constexpr (!kFillChecked) {
          if (load_volatile(t.occupied) >= p.insert_limit) return kNoSharedRoom;
        }
        const K old = atomic_cas(t.keys + s, KeyTraits<K>::empty, key);
        if (old == KeyTraits<K>::empty) {
          *claimed = true;
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

// kFillChecked (the launcher sets it when p.flush_threshold > 0): the fill
// check at tile starts keeps the occupancy at most flush_threshold + one tile
// <= insert_limit, so inserts skip the limit check, and each warp lists its
// new keys once per tile (record_claims) instead of one shared atomic per
// insert on one address. Taking each claim's list position with a returning
// shared atomic in the probe instead is 1-7% slower at every sparse G;
// these per-tile appends are 3-10% faster (fewer warp instructions).
//
// The table is cleared once; each flush resets the slots it read (the list
// and the two special slots), so an item starts on an empty table.
//
// Launch bounds: the rules run two blocks of 1 024 threads per SM at up to 2
// rows per thread, which leaves 32 registers a thread; the per-tile appends
// took the murmur instantiation to 34 without the bound (one block per SM).
// Under it the identity instantiation spills 16 bytes (dense 2^26 about 3%
// slower), a smaller loss than one block per SM.
template <class K, int R, bool kFillChecked, bool kIdentity>
__global__ void __launch_bounds__(1024, R <= 2 ? 2 : 1) partition_count_sum_kernel(const __grid_constant__ ChunkRef<K> c, const __grid_constant__ SharedLayout lay, SharedParams p, const PartitionItem* work,
                                           const uint32_t* item_count, bool direct, GlobalTableRef<K> table, SpillRef spill,
                                           DirectRef out) {
  static_assert(R >= 1 && R <= 16, "row flags are 32 bits");
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int to_global;
  __shared__ int64_t item_begin, item_end;
  __shared__ ull out_base;
  const CountSumTable<K> t(smem, lay, p.slots);
  const int32_t* values = static_cast<const int32_t*>(c.columns[0].data);
  const int64_t tile = static_cast<int64_t>(blockDim.x) * R;

  // One row into the shared table, or into the global table when it found no
  // room there; returns the row's wrap bit (the low word's 2^32 wrap, carried
  // by the caller after the tile so no row waits on an atomic's result).
  // A claimed slot is listed at once (the limit check without kFillChecked
  // needs the live occupancy; the partial tile), or, when `defer`, by the
  // caller after the tile with the warp's other claims.
  const auto add = [&](K key, int32_t v, uint32_t& slot, bool& claimed, bool defer) -> bool {
    slot = count_sum_slot<K, kFillChecked, kIdentity>(t, p, key, &claimed);
    if (claimed && !defer) t.record_claim(slot, out);
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

  t.clear();
  const uint32_t items = *item_count;
  ItemCursor cursor(work, items);
  for (uint32_t item = blockIdx.x; item < items; item += gridDim.x) {
    if (threadIdx.x == 0) {
      const PartitionItem w = cursor.take(item);
      item_begin = w.begin;
      item_end = w.begin + w.rows;
      to_global = direct && w.whole ? 0 : 1;
    }
    __syncthreads();  // the item, the cleared table (first item) or the last flush's resets
    const int64_t begin = item_begin;
    const int64_t end = item_end;
    for (int64_t tile_begin = begin; tile_begin < end; tile_begin += tile) {
      // The table holds at most as many keys as rows went in: a check that
      // cannot find it full is skipped with its two barriers.
      if (p.flush_threshold > 0 && tile_begin - begin > p.flush_threshold) {
        __syncthreads();
        const uint32_t n = *t.occupied;
        __syncthreads();  // every thread has read the same value before any inserts again
        if (n > p.flush_threshold) {
          t.flush_global(n, p.slots, table, spill);
          if (threadIdx.x == 0) to_global = 1;
          __syncthreads();
          if (threadIdx.x == 0) *t.occupied = 0;
          __syncthreads();
        }
      }
      const int64_t first = tile_begin + threadIdx.x;
      uint32_t slot[R];
      // Bit j: row j's low word wrapped; bit R + j (kFillChecked): row j
      // claimed slot[j]. One register for both (two blocks of 1 024 threads
      // leave 32 registers a thread).
      uint32_t flags = 0;
      if (tile_begin + tile <= end) {  // block-uniform: a whole tile, no bounds checks
        K key[R];
        int32_t v[R];
#pragma unroll
        for (int j = 0; j < R; ++j) {
          key[j] = c.keys[first + j * static_cast<int64_t>(blockDim.x)];
          v[j] = values[first + j * static_cast<int64_t>(blockDim.x)];
        }
#pragma unroll
        for (int j = 0; j < R; ++j) {
          bool claimed = false;
          flags |= static_cast<uint32_t>(add(key[j], v[j], slot[j], claimed, kFillChecked)) << j;
          flags |= static_cast<uint32_t>(claimed) << (R + j);
          __syncwarp();  // regroup after divergent probe loops
        }
        if ((flags & ((1u << R) - 1u)) != 0) {  // rare: a slot's low word wrapped past 2^31
#pragma unroll
          for (int j = 0; j < R; ++j)
            if (flags >> j & 1u) atomicAdd(t.hi + slot[j], v[j] < 0 ? -1 : 1);
        }
      } else {  // the item's last, partial tile
#pragma unroll
        for (int j = 0; j < R; ++j) {
          const int64_t row = first + j * static_cast<int64_t>(blockDim.x);
          slot[j] = 0;
          if (row < end) {
            const int32_t x = values[row];
            bool claimed = false;
            if (add(c.keys[row], x, slot[j], claimed, kFillChecked)) atomicAdd(t.hi + slot[j], x < 0 ? -1 : 1);
            flags |= static_cast<uint32_t>(claimed) << (R + j);
          }
          __syncwarp();
        }
      }
      if constexpr (kFillChecked) t.template record_claims<R>(slot, flags >> R, out);  // every lane of the warp is here
    }
    __syncthreads();
    const uint32_t n = *t.occupied;
    if (to_global) t.flush_global(n, p.slots, table, spill);
    else t.flush_direct(n, p.slots, table, spill, out, &out_base);
    __syncthreads();  // every thread has read *occupied and the list
    if (threadIdx.x == 0) *t.occupied = 0;
  }
}

}  // namespace tally::gpu::kernels
