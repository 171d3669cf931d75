#pragma once
// SHARED-MEMORY HASH variant with a key dictionary, for sparse keys whose
// groups fit in shared memory. The probe of the plain shared hash (CAS insert,
// linear probing, a warp waiting for its longest probe) keeps it at about a
// fifth of the read bandwidth at G = 2^8-2^12, where the direct-indexed dense
// variant reaches ~80%. Here the keys are placed once per launch:
//
//   1. dictionary_sample_kernel (many blocks) deduplicates a strided sample
//      of the chunk's keys into a small set in device memory, then
//      dictionary_build_kernel (one block) places them in a cuckoo table (two
//      candidate slots per key; parallel insertion by atomic exchange, evicted
//      keys move to their other slot, as in Alcantara et al., "Real-time
//      parallel hashing on the GPU", 2009).
//   2. dictionary_aggregate_kernel (any lanes) and dictionary_count_sum_kernel
//      (count + int4 sum) copy that read-only table into every block's shared
//      memory; a row's hot path is two multiply-shift hashes, two 4-byte
//      loads, two compares and a select (no loop, no CAS, no divergence),
//      then the slot indexes per-lane replicated accumulator arrays like the
//      dense variant.
//
// A key missing from the table (not in the sample, more groups than
// estimated, or homeless after the eviction limit) takes the miss path: a
// small block-private linear-probing table after the cuckoo slots, then the
// global table. So the result is exact whatever the sample saw; only the
// speed depends on it.
#include <cstdint>

#include "gpu/aggregator/kernels/aggregate_kernels.cuh"
#include "gpu/aggregator/kernels/shared_table.cuh"
#include "gpu/aggregator/kernels/views.cuh"

namespace tally::gpu::kernels {

// The multipliers of the two slot hashes, chosen by the build kernel (the
// aggregation kernel reads them once per block), and what the build saw.
struct DictionaryHash {
  ull m1 = 0;  // odd; int32 keys use the low 32 bits
  ull m2 = 0;
  uint32_t homeless = 0;  // sampled keys left out of the table (they take the miss path)
  uint32_t distinct = 0;  // distinct keys in the sample (counted by dictionary_sample_kernel)
};

// The dictionary in device memory, as the build kernel leaves it.
template <class K>
struct DictionaryRef {
  K* keys = nullptr;              // slots keys; free slots hold fillers that no lookup matches
  DictionaryHash* hash = nullptr;  // the multipliers
  uint32_t slots = 0;             // a multiple of 4 (the table copies in 16-byte words)
  K* set = nullptr;               // the sample's distinct keys, set_slots slots, empty-filled before sampling
  uint32_t set_slots = 0;         // a multiple of 4
};

// Where the aggregation kernel keeps what the accumulators do not hold.
struct DictionaryParams {
  uint32_t keys_offset = 0;  // byte offset of the cuckoo keys in dynamic shared memory, 16-aligned
  uint32_t extra_slots = 0;  // miss-path table (keys at SharedLayout::keys_offset)
  uint32_t extra_limit = 0;  // its occupancy limit
};

// Multiply-shift slot hash: the high 32 bits of key * m (odd m) scaled to
// `slots` by a multiply-high, two instructions for int4 keys. It replaced a
// murmur finalizer (about 8 more instructions per candidate) in a lookup that
// is issue-bound. Multiply-shift is weak for key sets built from the same
// multiplier (a lighter fixed Fibonacci mixer once left most of the
// benchmark's sparse keys homeless, as they are multiples of that constant),
// so the build kernel picks m1 and m2 for each table and retries with others
// while sampled keys stay homeless: a weak draw costs speed, never answers.
template <class K>
__device__ __forceinline__ uint32_t dictionary_slot(K key, ull m, uint32_t slots) {
  uint32_t h;
  if constexpr (sizeof(K) == 4) {
    h = static_cast<uint32_t>(key) * static_cast<uint32_t>(m);
  } else {
    h = static_cast<uint32_t>(__umul64hi(static_cast<ull>(key), m) ^ (static_cast<ull>(key) * m >> 32));
  }
  return __umulhi(h, slots);
}

// The slot of `key` whose table entry holds it, else the second candidate
// with `hit` false. Free slots hold fillers that never equal a key hashing
// there (dictionary_fill_free), so the empty marker needs no test here: the
// only checks are the compares. With kSecondOnMiss the second candidate is
// read only by the lanes whose first missed (insertion tries the first slot
// first, so most keys sit there): random slots conflict on shared-memory
// banks, and fewer active lanes cost fewer wavefronts (slightly faster than
// reading both at sparse G = 2^2-2^10). Plain loads: the table is read-only
// once the block has copied it.
template <class K, bool kSecondOnMiss = true>
__device__ __forceinline__ uint32_t dictionary_find(const K* keys, uint32_t slots, ull m1, ull m2, K key, bool& hit) {
  const uint32_t p1 = dictionary_slot(key, m1, slots);
  if constexpr (kSecondOnMiss) {
    hit = keys[p1] == key;
    if (hit) return p1;
    const uint32_t p2 = dictionary_slot(key, m2, slots);
    hit = keys[p2] == key;
    return p2;
  } else {
    const uint32_t p2 = dictionary_slot(key, m2, slots);
    const K k1 = keys[p1];
    const K k2 = keys[p2];
    hit = k1 == key || k2 == key;
    return k1 == key ? p1 : p2;
  }
}

// How the count+sum kernel probes (see dictionary_find).
inline constexpr bool kDictionarySecondOnMiss = true;

// Cuckoo insertion of a key known to be absent (each distinct key is carried
// by exactly one thread at a time): exchange it into its first slot; an
// evicted key moves to its other slot, up to kMaxEvictions times. Returns
// false when a key is left homeless (it then stays out of the table and takes
// the miss path).
template <class K>
__device__ bool dictionary_place(K* keys, uint32_t slots, ull m1, ull m2, K key) {
  constexpr int kMaxEvictions = 64;
  uint32_t pos = dictionary_slot(key, m1, slots);
  K cur = key;
  for (int i = 0; i < kMaxEvictions; ++i) {
    K old;
    if constexpr (sizeof(K) == 4) {
      old = static_cast<K>(atomicExch(reinterpret_cast<int*>(keys + pos), static_cast<int>(cur)));
    } else {
      old = static_cast<K>(atomicExch(reinterpret_cast<ull*>(keys + pos), static_cast<ull>(cur)));
    }
    if (old == KeyTraits<K>::empty) return true;
    cur = old;
    const uint32_t p1 = dictionary_slot(cur, m1, slots);
    const uint32_t p2 = dictionary_slot(cur, m2, slots);
    pos = pos == p1 ? p2 : p1;
  }
  return false;
}

// Replaces every free slot's empty marker by a filler value that does not
// hash to that slot with either multiplier: a lookup of any key reads only
// its own two candidate slots, so it can never match a filler. (The empty
// marker itself, if a key, then misses like any key the table lacks.)
template <class K>
__device__ void dictionary_fill_free(K* keys, uint32_t slots, ull m1, ull m2) {
  for (uint32_t s = threadIdx.x; s < slots; s += blockDim.x) {
    if (keys[s] != KeyTraits<K>::empty) continue;
    K f = KeyTraits<K>::empty;
    while (dictionary_slot(f, m1, slots) == s || dictionary_slot(f, m2, slots) == s) f = static_cast<K>(f + 1);
    keys[s] = f;
  }
}

// Multiplier pairs tried per table: one attempt leaves no key homeless with
// high probability at kDictionaryLoad; the rest cover unlucky key sets.
inline constexpr int kDictionaryAttempts = 8;

__device__ __forceinline__ ull dictionary_multiplier(uint32_t attempt, uint32_t which) {
  // splitmix64 of a fixed seed: deterministic, so a run can be reproduced.
  ull x = 0x243F6A8885A308D3ull + (2ull * attempt + which + 1) * 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return (x ^ (x >> 31)) | 1ull;
}

// Many blocks: the distinct keys of `samples` rows spread evenly over the
// chunk (at most `ids` of them, counted in d.hash->distinct, which starts at 0)
// into the device-memory set d.set (linear probing, CAS). One random load per
// thread: the sample's latency is spread over the whole GPU (inside the
// one-block build kernel it would take about a quarter of the whole
// aggregation at sparse G = 2^8-2^12).
template <class K>
__global__ void dictionary_sample_kernel(ChunkRef<K> c, int64_t samples, uint32_t ids, DictionaryRef<K> d) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < samples; i += stride) {
    const int64_t row = i * c.rows / samples;
    if (c.key_null(row)) continue;
    const K key = c.keys[row];
    if (key == KeyTraits<K>::empty) continue;  // the empty-marker key has its own special slot
    (void)shared_find_or_insert(d.set, &d.hash->distinct, d.set_slots, ids, key, HashKind::murmur);
  }
}

// One block: the sampled keys (d.set) into the cuckoo table `d`, with the
// first multiplier pair (of kDictionaryAttempts) that leaves no key homeless,
// else the pair that leaves fewest. Dynamic shared memory: d.set_slots keys,
// then d.slots keys, then counters.
template <class K>
__global__ void dictionary_build_kernel(DictionaryRef<K> d) {
  extern __shared__ __align__(16) unsigned char smem[];
  const uint32_t set_slots = d.set_slots;
  K* set = reinterpret_cast<K*>(smem);
  K* keys = set + set_slots;
  uint32_t* homeless = reinterpret_cast<uint32_t*>(keys + d.slots) + 1;
  const uint32_t set_words = set_slots * static_cast<uint32_t>(sizeof(K)) / 16;
  for (uint32_t i = threadIdx.x; i < set_words; i += blockDim.x)
    reinterpret_cast<int4*>(set)[i] = reinterpret_cast<const int4*>(d.set)[i];
  uint32_t best = 0, best_homeless = UINT32_MAX;
  for (uint32_t attempt = 0; attempt <= kDictionaryAttempts; ++attempt) {
    // The extra round re-places the best pair when the last was not it.
    if (attempt == kDictionaryAttempts && best == kDictionaryAttempts - 1) break;
    const uint32_t a = attempt == kDictionaryAttempts ? best : attempt;
    const ull m1 = dictionary_multiplier(a, 0), m2 = dictionary_multiplier(a, 1);
    __syncthreads();
    for (uint32_t s = threadIdx.x; s < d.slots; s += blockDim.x) keys[s] = KeyTraits<K>::empty;
    if (threadIdx.x == 0) *homeless = 0;
    __syncthreads();
    for (uint32_t s = threadIdx.x; s < set_slots; s += blockDim.x) {
      const K key = set[s];
      if (key != KeyTraits<K>::empty && !dictionary_place(keys, d.slots, m1, m2, key)) atomicAdd(homeless, 1u);
    }
    __syncthreads();
    const uint32_t h = *homeless;  // the same in every thread
    if (h < best_homeless) {
      best_homeless = h;
      best = a;
    }
    if (h == 0 || attempt == kDictionaryAttempts) break;
  }
  const ull m1 = dictionary_multiplier(best, 0), m2 = dictionary_multiplier(best, 1);
  __syncthreads();
  dictionary_fill_free(keys, d.slots, m1, m2);
  __syncthreads();
  if (threadIdx.x == 0) {
    d.hash->m1 = m1;
    d.hash->m2 = m2;
    d.hash->homeless = best_homeless;
  }
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

// Replica-local accumulator index meaning "no room in shared memory: the
// global table".
inline constexpr uint32_t kDictionaryGlobal = UINT32_MAX;

// The miss path of a key the cuckoo table lacks, as a replica-local
// accumulator index: the empty-marker key's own slot (p_slots + 1), else the
// block-private linear-probing table after the cuckoo slots, else
// kDictionaryGlobal.
template <class K>
__device__ __forceinline__ uint32_t dictionary_miss_slot(K key, K* extra_keys, uint32_t* occupied,
                                                         const DictionaryParams& dp, uint32_t dict_slots,
                                                         uint32_t p_slots) {
  if (key == KeyTraits<K>::empty) return p_slots + 1;
  const int64_t local =
      shared_find_or_insert(extra_keys, occupied, dp.extra_slots, dp.extra_limit, key, HashKind::murmur);
  return local >= 0 ? dict_slots + static_cast<uint32_t>(local) : kDictionaryGlobal;
}

// Block prologue of both aggregation kernels: zeroed accumulators, an empty
// miss-path table, the cuckoo keys copied in, the multipliers read.
template <class K>
__device__ __forceinline__ void dictionary_block_setup(const SharedTable& t, const SharedLayout& lay, const LaneSet& ls,
                                                       const DictionaryParams& dp, const DictionaryRef<K>& d,
                                                       K* extra_keys, uint32_t* occupied, K* keys, ull& m1, ull& m2) {
  shared_init<K>(t, lay, ls, false);
  for (uint32_t s = threadIdx.x; s < dp.extra_slots; s += blockDim.x) extra_keys[s] = KeyTraits<K>::empty;
  if (threadIdx.x == 0) *occupied = 0;
  const uint32_t key_words = d.slots * static_cast<uint32_t>(sizeof(K)) / 16;
  for (uint32_t i = threadIdx.x; i < key_words; i += blockDim.x)
    reinterpret_cast<int4*>(keys)[i] = reinterpret_cast<const int4*>(d.keys)[i];
  m1 = d.hash->m1;
  m2 = d.hash->m2;
  __syncthreads();
}

// The aggregation pass, any lanes. p.slots = d.slots + dp.extra_slots
// accumulator slots per replica; p.replicas per-lane copies of the
// accumulators (one copy of the cuckoo keys and of the miss-path keys).
// Blocks take contiguous tile ranges. Slots are 32-bit with two sentinels, so
// the row loop has no 64-bit index arithmetic.
template <class K, int R>
__global__ void dictionary_aggregate_kernel(const __grid_constant__ ChunkRef<K> c, const __grid_constant__ LaneSet ls, const __grid_constant__ SharedLayout lay, SharedParams p,
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
  ull m1, m2;
  dictionary_block_setup(t, lay, ls, dp, d, extra_keys, occupied, keys, m1, m2);

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
      knull[j] = in && c.key_null(row);
      v0[j] = (in && v0_present) ? c.value(0, row) : 0;
      v0_valid[j] = in && v0_present && c.valid(0, row);
    }
    // One row at a time: looking up all R rows' slots first and doing their
    // atomics after is 2-3x slower (fewer issue slots busy, more
    // instructions).
#pragma unroll
    for (int j = 0; j < R; ++j) {
      const int64_t row = base + static_cast<int64_t>(j) * blockDim.x;
      uint32_t s = kNoRow;
      if (row < c.rows) {
        if (knull[j]) {
          s = null_slot;
        } else {
          bool hit;
          const uint32_t slot = dictionary_find(keys, d.slots, m1, m2, key[j], hit);
          if (hit) {
            s = rbase + slot;
          } else {
            const uint32_t l = dictionary_miss_slot(key[j], extra_keys, occupied, dp, d.slots, p.slots);
            s = l == kDictionaryGlobal ? kGlobal : rbase + l;
          }
        }
      }
      if (s < kNoRow) {
        shared_add_row(t, lay, ls, c, s, row, v0[j], v0_valid[j]);
      } else if (s == kGlobal) {
        table.add_row(c, ls, spill, row, key[j], false, v0[j]);
      }
      __syncwarp();  // regroup after a miss path's divergent probe
    }
  }
  __syncthreads();
  dictionary_flush<K>(t, lay, ls, p, keys, d.slots, extra_keys, table, spill);
}

// count(*) and a 32-bit sum into one accumulator slot: the sum as a signed
// low word plus a count of 2^32 wraps (shared_add_sum's encoding), the wrap
// detected from the signs alone (int4 values never carry otherwise).
__device__ __forceinline__ void dictionary_add_count_sum(uint32_t* count, int32_t* lo, int32_t* hi, uint32_t s,
                                                         int32_t v) {
  atomicAdd(count + s, 1u);
  const int32_t old = atomicAdd(lo + s, v);
  const int32_t now = static_cast<int32_t>(static_cast<uint32_t>(old) + static_cast<uint32_t>(v));
  if (((now ^ old) & (now ^ v)) < 0) atomicAdd(hi + s, v < 0 ? -1 : 1);
}

// A count + sum row into the global table (or the spill), for keys that found
// no room in shared memory. Lean on purpose: the generic add_row inlined into
// the count+sum kernel takes it from 32 to 64-80 registers (sm_90), halving
// the threads an SM holds, for a path almost no row takes.
template <class K>
__device__ __forceinline__ void dictionary_add_global_count_sum(const GlobalTableRef<K>& table, const SpillRef& spill,
                                                                K key, int32_t v) {
  table.add_count_sum(spill, key, false, 1, static_cast<ull>(static_cast<int64_t>(v)));
}

// The aggregation pass for the common shape count(*) + sum(int4 NOT NULL)
// with no NULL keys (lanes 0 and 1). The per-row work is what the issue-bound
// loop can least avoid: two loads, two multiply-shift hashes, two shared
// loads, two compares, two shared atomics and a sign test. Whole tiles run
// without bounds checks and with the miss path moved after the tile (taken
// only when some lane of the warp missed); with kVec each thread reads 4
// consecutive keys and values as one 16-byte load each (int4 keys, R a
// multiple of 4, both columns 16-byte aligned: the launcher checks).
template <class K, int R, bool kVec>
__global__ void dictionary_count_sum_kernel(const __grid_constant__ ChunkRef<K> c, const __grid_constant__ LaneSet ls, const __grid_constant__ SharedLayout lay, SharedParams p,
                                            DictionaryParams dp, DictionaryRef<K> d, GlobalTableRef<K> table,
                                            SpillRef spill) {
  static_assert(!kVec || (sizeof(K) == 4 && R % 4 == 0), "vector loads: int4 keys, 4 rows per load");
  extern __shared__ __align__(16) unsigned char smem[];
  const SharedTable t{smem, (p.slots + 2) * p.replicas};
  const uint32_t rbase = (threadIdx.x & (p.replicas - 1)) * (p.slots + 2);
  K* extra_keys = reinterpret_cast<K*>(smem + lay.keys_offset);
  uint32_t* occupied = reinterpret_cast<uint32_t*>(smem + lay.counter_offset);
  K* keys = reinterpret_cast<K*>(smem + dp.keys_offset);
  ull m1, m2;
  dictionary_block_setup(t, lay, ls, dp, d, extra_keys, occupied, keys, m1, m2);
  uint32_t* count = t.u32(lay, 0) + rbase;
  int32_t* lo = t.i32(lay, 1) + rbase;
  int32_t* hi = t.hi(lay, 1) + rbase;
  const int32_t* values = static_cast<const int32_t*>(c.columns[0].data);
  const uint32_t slots = d.slots;

  // A missed row: the miss path's slot, else the global table.
  const auto miss = [&](K key, int32_t v) {
    const uint32_t l = dictionary_miss_slot(key, extra_keys, occupied, dp, slots, p.slots);
    if (l != kDictionaryGlobal) dictionary_add_count_sum(count, lo, hi, l, v);
    else dictionary_add_global_count_sum(table, spill, key, v);
  };

  const int64_t tile = static_cast<int64_t>(blockDim.x) * R;
  const int64_t tiles = (c.rows + tile - 1) / tile;
  const int64_t t_begin = tiles * blockIdx.x / gridDim.x;
  const int64_t t_end = tiles * (blockIdx.x + 1) / gridDim.x;
  for (int64_t ti = t_begin; ti < t_end; ++ti) {
    const int64_t row0 = ti * tile;
    K key[R];
    int32_t v[R];
    if (row0 + tile <= c.rows) {  // block-uniform
      // Row of register j: vector layout (4 consecutive rows per load) or
      // strided layout (blockDim apart).
      const auto row_of = [&](int j) -> int64_t {
        if constexpr (kVec) return row0 + 4 * (threadIdx.x + static_cast<int64_t>(j / 4) * blockDim.x) + j % 4;
        else return row0 + threadIdx.x + static_cast<int64_t>(j) * blockDim.x;
      };
      if constexpr (kVec) {
#pragma unroll
        for (int q = 0; q < R / 4; ++q) {
          const int64_t r = row_of(4 * q);
          const int4 kk = *reinterpret_cast<const int4*>(c.keys + r);
          const int4 vv = *reinterpret_cast<const int4*>(values + r);
          key[4 * q] = kk.x, key[4 * q + 1] = kk.y, key[4 * q + 2] = kk.z, key[4 * q + 3] = kk.w;
          v[4 * q] = vv.x, v[4 * q + 1] = vv.y, v[4 * q + 2] = vv.z, v[4 * q + 3] = vv.w;
        }
      } else {
#pragma unroll
        for (int j = 0; j < R; ++j) {
          key[j] = c.keys[row_of(j)];
          v[j] = values[row_of(j)];
        }
      }
      // The low word's wrap is only noted here and carried after the tile:
      // a branch on the atomic's result would hold every row's lookup
      // behind the previous row's atomic (its return latency).
      uint32_t missed = 0, wrapped = 0;
#pragma unroll
      for (int j = 0; j < R; ++j) {
        bool hit;
        const uint32_t s = dictionary_find<K, kDictionarySecondOnMiss>(keys, slots, m1, m2, key[j], hit);
        if (hit) {
          atomicAdd(count + s, 1u);
          const int32_t old = atomicAdd(lo + s, v[j]);
          const int32_t now = static_cast<int32_t>(static_cast<uint32_t>(old) + static_cast<uint32_t>(v[j]));
          wrapped |= static_cast<uint32_t>(((now ^ old) & (now ^ v[j])) < 0) << j;
        } else {
          missed |= 1u << j;
        }
      }
      if (wrapped != 0) {  // rare: 2^32 wraps of a slot's low word
#pragma unroll
        for (int j = 0; j < R; ++j) {
          if (wrapped >> j & 1u) {
            bool hit;
            const uint32_t s = dictionary_find<K, kDictionarySecondOnMiss>(keys, slots, m1, m2, key[j], hit);
            atomicAdd(hi + s, v[j] < 0 ? -1 : 1);
          }
        }
      }
      if (__any_sync(0xffffffffu, missed != 0)) {
#pragma unroll
        for (int j = 0; j < R; ++j) {
          if (missed >> j & 1u) miss(key[j], v[j]);
          __syncwarp();  // regroup after the miss path's divergent probe
        }
      }
    } else {  // the chunk's last, partial tile
#pragma unroll
      for (int j = 0; j < R; ++j) {
        const int64_t row = row0 + threadIdx.x + static_cast<int64_t>(j) * blockDim.x;
        if (row < c.rows) {
          const K k = c.keys[row];
          const int32_t x = values[row];
          bool hit;
          const uint32_t s = dictionary_find(keys, slots, m1, m2, k, hit);
          if (hit) dictionary_add_count_sum(count, lo, hi, s, x);
          else miss(k, x);
        }
        __syncwarp();
      }
    }
  }
  __syncthreads();
  dictionary_flush<K>(t, lay, ls, p, keys, d.slots, extra_keys, table, spill);
}

}  // namespace tally::gpu::kernels
