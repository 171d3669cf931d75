#pragma once
// SHARED-MEMORY HASH variant with a key dictionary, for sparse keys whose
// groups fit in shared memory. The probe of the plain shared hash (CAS insert,
// linear probing, a warp waiting for its longest probe) kept it at 19-22% of
// the read bandwidth on the H100 at G = 2^8-2^12, where the direct-indexed
// dense variant reaches ~80%. Here the keys are placed once per launch:
//
//   1. dictionary_build_kernel (one block) deduplicates a strided sample of
//      the chunk's keys and places them in a cuckoo table (two candidate
//      slots per key; parallel insertion by atomic exchange, evicted keys move
//      to their other slot, as in Alcantara et al., "Real-time parallel
//      hashing on the GPU", 2009).
//   2. dictionary_aggregate_kernel copies that read-only table into every
//      block's shared memory; a row's hot path is two 4-byte loads, two
//      compares and a select (no loop, no CAS, no divergence), then the slot
//      indexes per-lane replicated accumulator arrays like the dense variant.
//
// A key missing from the table (not in the sample, more groups than
// estimated, or homeless after the eviction limit) takes the miss path: a
// small block-private linear-probing table after the cuckoo slots, then the
// global table. So the result is exact whatever the sample saw; only the
// speed depends on it.
#include <cstdint>

#include "gpu/kernels/aggregate_kernels.cuh"
#include "gpu/kernels/shared_table.cuh"
#include "gpu/kernels/views.cuh"

namespace tally::gpu::kernels {

// The dictionary in device memory, as the build kernel leaves it.
template <class K>
struct DictionaryRef {
  K* keys = nullptr;   // slots keys, KeyTraits<K>::empty where free
  uint32_t slots = 0;  // a multiple of 4 (the table copies in 16-byte words)
};

// Where the aggregation kernel keeps what the accumulators do not hold.
struct DictionaryParams {
  uint32_t keys_offset = 0;  // byte offset of the cuckoo keys in dynamic shared memory, 16-aligned
  uint32_t extra_slots = 0;  // miss-path table (keys at SharedLayout::keys_offset)
  uint32_t extra_limit = 0;  // its occupancy limit
};

// The two candidate slots of a key from 32 mixed bits (murmur finalizer):
// the high bits pick the first, the low bits (rotated up) the second. (A
// lighter mixer, a Fibonacci multiply with the high half folded in, measured
// 2-3x slower on the H100: the benchmark's sparse keys are themselves
// multiples of that constant, so their slots collided and most keys were
// left homeless. A weak mixer costs speed on some key sets, never answers.)
template <class K>
__device__ __forceinline__ void dictionary_slots(K key, uint32_t slots, uint32_t& p1, uint32_t& p2) {
  const uint32_t h = static_cast<uint32_t>(hash_key(key, HashKind::murmur));
  p1 = __umulhi(h, slots);
  p2 = __umulhi(__funnelshift_l(h, h, 16), slots);
}

// The slot of `key`, or UINT32_MAX when the table does not hold it. `key`
// must not be the empty marker (free slots hold it). Plain loads: the table
// is read-only once the block has copied it.
template <class K>
__device__ __forceinline__ uint32_t dictionary_find(const K* keys, uint32_t slots, K key) {
  uint32_t p1, p2;
  dictionary_slots(key, slots, p1, p2);
  const K k1 = keys[p1];
  const K k2 = keys[p2];
  return k1 == key ? p1 : (k2 == key ? p2 : UINT32_MAX);
}

// Cuckoo insertion of a key known to be absent (each distinct key is carried
// by exactly one thread at a time): exchange it into its first slot; an
// evicted key moves to its other slot, up to kMaxEvictions times. The key
// left homeless then (rarely any, at the table's load) stays out of the
// table and takes the miss path.
template <class K>
__device__ void dictionary_place(K* keys, uint32_t slots, K key) {
  constexpr int kMaxEvictions = 64;
  uint32_t p1, p2;
  dictionary_slots(key, slots, p1, p2);
  uint32_t pos = p1;
  K cur = key;
  for (int i = 0; i < kMaxEvictions; ++i) {
    K old;
    if constexpr (sizeof(K) == 4) {
      old = static_cast<K>(atomicExch(reinterpret_cast<int*>(keys + pos), static_cast<int>(cur)));
    } else {
      old = static_cast<K>(atomicExch(reinterpret_cast<ull*>(keys + pos), static_cast<ull>(cur)));
    }
    if (old == KeyTraits<K>::empty) return;
    cur = old;
    dictionary_slots(cur, slots, p1, p2);
    pos = pos == p1 ? p2 : p1;
  }
}

// One block: the distinct keys of `samples` rows spread evenly over the chunk
// (at most `ids` of them) into the cuckoo table `d`. Dynamic shared memory:
// set_slots keys (a multiple of 4) for the sample's distinct keys, then
// d.slots keys, then a counter.
template <class K>
__global__ void dictionary_build_kernel(ChunkRef<K> c, int64_t samples, uint32_t set_slots, uint32_t ids,
                                        DictionaryRef<K> d) {
  extern __shared__ __align__(16) unsigned char smem[];
  K* set = reinterpret_cast<K*>(smem);
  K* keys = set + set_slots;
  uint32_t* occupied = reinterpret_cast<uint32_t*>(keys + d.slots);
  for (uint32_t s = threadIdx.x; s < set_slots; s += blockDim.x) set[s] = KeyTraits<K>::empty;
  for (uint32_t s = threadIdx.x; s < d.slots; s += blockDim.x) keys[s] = KeyTraits<K>::empty;
  if (threadIdx.x == 0) *occupied = 0;
  __syncthreads();
  // kSampleBatch strided loads in flight per thread before the inserts (one
  // block: the loads' latency, not bandwidth, bounds this kernel).
  constexpr int kSampleBatch = 8;
  for (int64_t first = threadIdx.x; first < samples; first += static_cast<int64_t>(blockDim.x) * kSampleBatch) {
    K key[kSampleBatch];
    bool use[kSampleBatch];
#pragma unroll
    for (int j = 0; j < kSampleBatch; ++j) {
      const int64_t i = first + static_cast<int64_t>(j) * blockDim.x;
      const int64_t row = i * c.rows / samples;
      use[j] = i < samples && !c.key_null(row);
      key[j] = i < samples ? c.keys[row] : KeyTraits<K>::empty;
    }
#pragma unroll
    for (int j = 0; j < kSampleBatch; ++j)
      if (use[j] && key[j] != KeyTraits<K>::empty)  // the empty-marker key has its own special slot
        (void)shared_find_or_insert(set, occupied, set_slots, ids, key[j], HashKind::murmur);
  }
  __syncthreads();
  for (uint32_t s = threadIdx.x; s < set_slots; s += blockDim.x) {
    const K key = set[s];
    if (key != KeyTraits<K>::empty) dictionary_place(keys, d.slots, key);
  }
  __syncthreads();
  const uint32_t words = d.slots * static_cast<uint32_t>(sizeof(K)) / 16;
  for (uint32_t i = threadIdx.x; i < words; i += blockDim.x)
    reinterpret_cast<int4*>(d.keys)[i] = reinterpret_cast<const int4*>(keys)[i];
}

// Merges every non-empty accumulator slot into the global table. A replica's
// region holds the cuckoo slots, then the miss-path slots, then the NULL key
// and the empty-marker key.
template <class K>
__device__ void dictionary_flush(const SharedTable& t, const SharedLayout& lay, const LaneSet& ls,
                                 const SharedParams& p, const K* keys, uint32_t dict_slots, const K* extra_keys,
                                 const GlobalTableRef<K>& table, const SpillRef& spill) {
  const uint32_t region = p.slots + 2;
  for (uint32_t s = threadIdx.x; s < t.total_slots; s += blockDim.x) {
    if (t.u32(lay, 0)[s] == 0) continue;  // lane 0 counts rows: empty slot
    ull vals[kMaxLanes];
    for (int l = 0; l < ls.count; ++l) vals[l] = shared_lane_value(t, lay, ls.lane[l], l, s);
    const uint32_t local = s % region;
    K key = KeyTraits<K>::empty;  // local slot slots + 1 holds the empty-marker key
    if (local < dict_slots) key = keys[local];
    else if (local < p.slots) key = extra_keys[local - dict_slots];
    table.add_partial(ls, spill, key, local == p.slots, vals);
  }
}

// The aggregation pass. p.slots = d.slots + dp.extra_slots accumulator slots
// per replica; p.replicas per-lane copies of the accumulators (one copy of the
// cuckoo keys and of the miss-path keys). Blocks take contiguous tile ranges.
// Slots are 32-bit with two sentinels, so the row loop has no 64-bit index
// arithmetic.
template <class K, int R, bool kCountSum>
__global__ void dictionary_aggregate_kernel(ChunkRef<K> c, LaneSet ls, SharedLayout lay, SharedParams p,
                                            DictionaryParams dp, DictionaryRef<K> d, GlobalTableRef<K> table,
                                            SpillRef spill) {
  constexpr uint32_t kGlobal = UINT32_MAX;       // no room: the global table
  constexpr uint32_t kNoRow = UINT32_MAX - 1;    // past the chunk's end
  extern __shared__ __align__(16) unsigned char smem[];
  const SharedTable t{smem, (p.slots + 2) * p.replicas};
  const uint32_t rbase = (threadIdx.x & (p.replicas - 1)) * (p.slots + 2);
  K* extra_keys = reinterpret_cast<K*>(smem + lay.keys_offset);
  uint32_t* occupied = reinterpret_cast<uint32_t*>(smem + lay.counter_offset);
  K* keys = reinterpret_cast<K*>(smem + dp.keys_offset);
  shared_init<K>(t, lay, ls, false);
  for (uint32_t s = threadIdx.x; s < dp.extra_slots; s += blockDim.x) extra_keys[s] = KeyTraits<K>::empty;
  if (threadIdx.x == 0) *occupied = 0;
  const uint32_t key_words = d.slots * static_cast<uint32_t>(sizeof(K)) / 16;
  for (uint32_t i = threadIdx.x; i < key_words; i += blockDim.x)
    reinterpret_cast<int4*>(keys)[i] = reinterpret_cast<const int4*>(d.keys)[i];
  __syncthreads();

  const int64_t tile = static_cast<int64_t>(blockDim.x) * R;
  const int64_t tiles = (c.rows + tile - 1) / tile;
  const int64_t t_begin = tiles * blockIdx.x / gridDim.x;
  const int64_t t_end = tiles * (blockIdx.x + 1) / gridDim.x;
  const bool v0_present = ls.count > 0 && c.columns[0].data != nullptr;
  const uint32_t null_slot = rbase + p.slots;

  for (int64_t ti = t_begin; ti < t_end; ++ti) {
    K key[R];
    bool knull[R];
    int64_t v0[R];
    bool v0_valid[R];
    const int64_t base = ti * tile + threadIdx.x;
#pragma unroll
    for (int j = 0; j < R; ++j) {
      const int64_t row = base + static_cast<int64_t>(j) * blockDim.x;
      const bool in = row < c.rows;
      key[j] = in ? c.keys[row] : K{};
      if constexpr (kCountSum) {
        knull[j] = false;
        v0[j] = in ? static_cast<const int32_t*>(c.columns[0].data)[row] : 0;
        v0_valid[j] = in;
      } else {
        knull[j] = in && c.key_null(row);
        v0[j] = (in && v0_present) ? c.value(0, row) : 0;
        v0_valid[j] = in && v0_present && c.valid(0, row);
      }
    }
    // One row at a time. (Looking up all R rows' slots first and doing their
    // atomics after measured 2-3x slower on the H100: 41% issue slots busy
    // instead of 66%, more instructions.)
#pragma unroll
    for (int j = 0; j < R; ++j) {
      const int64_t row = base + static_cast<int64_t>(j) * blockDim.x;
      uint32_t s = kNoRow;
      if (row < c.rows) {
        if (knull[j]) {
          s = null_slot;
        } else if (key[j] == KeyTraits<K>::empty) {
          s = null_slot + 1;
        } else {
          const uint32_t slot = dictionary_find(keys, d.slots, key[j]);
          if (slot != UINT32_MAX) {
            s = rbase + slot;
          } else {
            const int64_t local = shared_find_or_insert(extra_keys, occupied, dp.extra_slots, dp.extra_limit, key[j],
                                                        HashKind::murmur);
            s = local >= 0 ? rbase + d.slots + static_cast<uint32_t>(local) : kGlobal;
          }
        }
      }
      if (s < kNoRow) {
        if constexpr (kCountSum) {
          atomicAdd(t.u32(lay, 0) + s, 1u);
          shared_add_sum(t.i32(lay, 1), t.hi(lay, 1), s, v0[j]);
        } else {
          shared_add_row(t, lay, ls, c, s, row, v0[j], v0_valid[j]);
        }
      } else if (s == kGlobal) {
        table.add_row(c, ls, spill, row, key[j], false, v0[j]);
      }
      __syncwarp();  // regroup after a miss path's divergent probe
    }
  }
  __syncthreads();
  dictionary_flush<K>(t, lay, ls, p, keys, d.slots, extra_keys, table, spill);
}

}  // namespace tally::gpu::kernels
