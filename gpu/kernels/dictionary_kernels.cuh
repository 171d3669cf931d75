#pragma once
// SHARED-MEMORY HASH variant with a key dictionary, for sparse keys whose
// groups fit in shared memory. The probe of the plain shared hash (CAS insert,
// linear probing, a warp waiting for its longest probe) kept it at 19-22% of
// the read bandwidth on the H100 at G = 2^8-2^12, where the direct-indexed
// dense variant reaches ~80%. Here the keys get dense ids once per launch:
//
//   1. dictionary_build_kernel (one block) deduplicates a strided sample of
//      the chunk's keys and places each distinct key in one of two 16-byte
//      buckets (two-choice hashing, the emptier bucket), giving it an id.
//   2. dictionary_aggregate_kernel copies that read-only image into every
//      block's shared memory; a row's hot path is two 16-byte loads, compares
//      and selects (no loop, no CAS, no divergence), then the id indexes
//      per-lane replicated accumulator arrays exactly like the dense variant.
//
// A key missing from the dictionary (not in the sample, more groups than
// estimated, or both buckets full) takes the miss path: a small block-private
// linear-probing table after the dictionary's ids, then the global table. So
// the result is exact whatever the sample saw; only the speed depends on it.
#include <cstdint>

#include "gpu/kernels/aggregate_kernels.cuh"
#include "gpu/kernels/shared_table.cuh"
#include "gpu/kernels/views.cuh"

namespace tally::gpu::kernels {

// The dictionary in device memory, as the build kernel leaves it.
template <class K>
struct DictionaryRef {
  K* bucket_keys = nullptr;        // buckets * kBucketKeys<K>, KeyTraits<K>::empty where free
  uint16_t* bucket_ids = nullptr;  // the id of each bucket entry (where its key is set)
  K* keys_by_id = nullptr;         // ids entries: the key of each id handed out
  uint32_t* id_count = nullptr;    // ids reserved (may exceed `ids`: the rest were not placed)
  uint32_t buckets = 0;            // a multiple of 4, so both arrays copy in 16-byte words
  uint32_t ids = 0;                // id capacity (<= 65535)
};

// Where the aggregation kernel keeps what the accumulators do not hold.
struct DictionaryParams {
  uint32_t bucket_keys_offset = 0;  // byte offsets into dynamic shared memory, 16-aligned
  uint32_t bucket_ids_offset = 0;
  uint32_t extra_slots = 0;         // miss-path table (keys at SharedLayout::keys_offset)
  uint32_t extra_limit = 0;         // its occupancy limit
};

// 32 mixed bits of a key (murmur finalizer), and its two candidate buckets:
// the high bits of the hash pick the first, the low bits (rotated up) the
// second, so the two choices are independent for a good mixer.
template <class K>
__device__ __forceinline__ void dictionary_buckets(K key, uint32_t buckets, uint32_t& b1, uint32_t& b2) {
  const uint32_t h = static_cast<uint32_t>(hash_key(key, HashKind::murmur));
  b1 = __umulhi(h, buckets);
  b2 = __umulhi(__funnelshift_l(h, h, 16), buckets);
}

// One 16-byte bucket from shared memory (read-only once the block has copied
// the image: a plain vector load the compiler may schedule freely).
template <class K>
__device__ __forceinline__ void dictionary_bucket(const K* bucket, K (&out)[kBucketKeys<K>]) {
  if constexpr (sizeof(K) == 4) {
    const int4 v = *reinterpret_cast<const int4*>(bucket);
    out[0] = v.x;
    out[1] = v.y;
    out[2] = v.z;
    out[3] = v.w;
  } else {
    const longlong2 v = *reinterpret_cast<const longlong2*>(bucket);
    out[0] = static_cast<K>(v.x);
    out[1] = static_cast<K>(v.y);
  }
}

// The id of `key`, or -1 when the dictionary does not hold it. `key` must not
// be the empty marker (free entries hold it).
template <class K>
__device__ __forceinline__ int dictionary_find(const K* bucket_keys, const uint16_t* bucket_ids, uint32_t buckets,
                                               K key) {
  constexpr uint32_t W = kBucketKeys<K>;
  uint32_t b1, b2;
  dictionary_buckets(key, buckets, b1, b2);
  K x[W], y[W];
  dictionary_bucket(bucket_keys + b1 * W, x);
  dictionary_bucket(bucket_keys + b2 * W, y);
  int entry = -1;
#pragma unroll
  for (uint32_t q = 0; q < W; ++q) entry = x[q] == key ? static_cast<int>(b1 * W + q) : entry;
#pragma unroll
  for (uint32_t q = 0; q < W; ++q) entry = y[q] == key ? static_cast<int>(b2 * W + q) : entry;
  return entry >= 0 ? static_cast<int>(bucket_ids[entry]) : -1;
}

// Places a key known to be absent (each distinct key is placed by exactly one
// thread) in the emptier of its two buckets; false when both are full or the
// ids are used up. The id is reserved first: the sample set's occupancy limit
// is checked before its CAS, so concurrent inserts can overshoot it.
template <class K>
__device__ bool dictionary_place(K* bucket_keys, uint16_t* bucket_ids, uint32_t buckets, uint32_t ids,
                                 uint32_t* id_count, K* keys_by_id, K key) {
  constexpr uint32_t W = kBucketKeys<K>;
  const uint32_t id = atomicAdd(id_count, 1u);
  if (id >= ids) return false;
  uint32_t b1, b2;
  dictionary_buckets(key, buckets, b1, b2);
  for (;;) {
    int free1 = 0, free2 = 0, first1 = -1, first2 = -1;
    for (uint32_t q = 0; q < W; ++q) {
      if (load_volatile(bucket_keys + b1 * W + q) == KeyTraits<K>::empty) {
        ++free1;
        if (first1 < 0) first1 = static_cast<int>(q);
      }
      if (load_volatile(bucket_keys + b2 * W + q) == KeyTraits<K>::empty) {
        ++free2;
        if (first2 < 0) first2 = static_cast<int>(q);
      }
    }
    if (free1 == 0 && free2 == 0) return false;
    const uint32_t e = free1 >= free2 ? b1 * W + static_cast<uint32_t>(first1) : b2 * W + static_cast<uint32_t>(first2);
    if (atomic_cas(bucket_keys + e, KeyTraits<K>::empty, key) == KeyTraits<K>::empty) {
      bucket_ids[e] = static_cast<uint16_t>(id);
      keys_by_id[id] = key;
      return true;
    }
    // Another key took the entry first: look again.
  }
}

// One block: the distinct keys of `samples` rows spread evenly over the chunk
// (at most d.ids of them) into a two-choice bucket table, written to `d`.
// Dynamic shared memory: set_slots keys (a multiple of 4), then the bucket
// keys and ids, then two counters.
template <class K>
__global__ void dictionary_build_kernel(ChunkRef<K> c, int64_t samples, uint32_t set_slots, DictionaryRef<K> d) {
  constexpr uint32_t W = kBucketKeys<K>;
  extern __shared__ __align__(16) unsigned char smem[];
  K* set = reinterpret_cast<K*>(smem);
  K* bucket_keys = set + set_slots;
  uint16_t* bucket_ids = reinterpret_cast<uint16_t*>(bucket_keys + d.buckets * W);
  uint32_t* counters = reinterpret_cast<uint32_t*>(bucket_ids + d.buckets * W);  // set occupancy, ids
  for (uint32_t s = threadIdx.x; s < set_slots; s += blockDim.x) set[s] = KeyTraits<K>::empty;
  for (uint32_t s = threadIdx.x; s < d.buckets * W; s += blockDim.x) {
    bucket_keys[s] = KeyTraits<K>::empty;
    bucket_ids[s] = 0;
  }
  if (threadIdx.x == 0) counters[0] = counters[1] = 0;
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
        (void)shared_find_or_insert(set, counters, set_slots, d.ids, key[j], HashKind::murmur);
  }
  __syncthreads();
  for (uint32_t s = threadIdx.x; s < set_slots; s += blockDim.x) {
    const K key = set[s];
    if (key != KeyTraits<K>::empty)
      (void)dictionary_place(bucket_keys, bucket_ids, d.buckets, d.ids, counters + 1, d.keys_by_id, key);
  }
  __syncthreads();
  const uint32_t words = d.buckets * W * sizeof(K) / 16;
  for (uint32_t i = threadIdx.x; i < words; i += blockDim.x)
    reinterpret_cast<int4*>(d.bucket_keys)[i] = reinterpret_cast<const int4*>(bucket_keys)[i];
  const uint32_t id_words = d.buckets * W * 2 / 16;
  for (uint32_t i = threadIdx.x; i < id_words; i += blockDim.x)
    reinterpret_cast<int4*>(d.bucket_ids)[i] = reinterpret_cast<const int4*>(bucket_ids)[i];
  if (threadIdx.x == 0) *d.id_count = counters[1];
}

// Merges every non-empty accumulator slot into the global table. A replica's
// region holds the dictionary's ids, then the miss-path slots, then the NULL
// key and the empty-marker key.
template <class K>
__device__ void dictionary_flush(const SharedTable& t, const SharedLayout& lay, const LaneSet& ls,
                                 const SharedParams& p, const DictionaryRef<K>& d, const K* extra_keys,
                                 const GlobalTableRef<K>& table, const SpillRef& spill) {
  const uint32_t region = p.slots + 2;
  for (uint32_t s = threadIdx.x; s < t.total_slots; s += blockDim.x) {
    if (t.u32(lay, 0)[s] == 0) continue;  // lane 0 counts rows: empty slot
    ull vals[kMaxLanes];
    for (int l = 0; l < ls.count; ++l) vals[l] = shared_lane_value(t, lay, ls.lane[l], l, s);
    const uint32_t local = s % region;
    K key = KeyTraits<K>::empty;  // local slot slots + 1 holds the empty-marker key
    if (local < d.ids) key = d.keys_by_id[local];
    else if (local < p.slots) key = extra_keys[local - d.ids];
    table.add_partial(ls, spill, key, local == p.slots, vals);
  }
}

// The aggregation pass. p.slots = d.ids + dp.extra_slots accumulator slots
// per replica; p.replicas per-lane copies of the accumulators (one copy of the
// dictionary and of the miss-path keys). Blocks take contiguous tile ranges.
template <class K, int R, bool kCountSum>
__global__ void dictionary_aggregate_kernel(ChunkRef<K> c, LaneSet ls, SharedLayout lay, SharedParams p,
                                            DictionaryParams dp, DictionaryRef<K> d, GlobalTableRef<K> table,
                                            SpillRef spill) {
  constexpr uint32_t W = kBucketKeys<K>;
  extern __shared__ __align__(16) unsigned char smem[];
  const SharedTable t{smem, (p.slots + 2) * p.replicas};
  const uint32_t rbase = (threadIdx.x & (p.replicas - 1)) * (p.slots + 2);
  K* extra_keys = reinterpret_cast<K*>(smem + lay.keys_offset);
  uint32_t* occupied = reinterpret_cast<uint32_t*>(smem + lay.counter_offset);
  K* bucket_keys = reinterpret_cast<K*>(smem + dp.bucket_keys_offset);
  uint16_t* bucket_ids = reinterpret_cast<uint16_t*>(smem + dp.bucket_ids_offset);
  shared_init<K>(t, lay, ls, false);
  for (uint32_t s = threadIdx.x; s < dp.extra_slots; s += blockDim.x) extra_keys[s] = KeyTraits<K>::empty;
  if (threadIdx.x == 0) *occupied = 0;
  const uint32_t key_words = d.buckets * W * sizeof(K) / 16;
  for (uint32_t i = threadIdx.x; i < key_words; i += blockDim.x)
    reinterpret_cast<int4*>(bucket_keys)[i] = reinterpret_cast<const int4*>(d.bucket_keys)[i];
  const uint32_t id_words = d.buckets * W * 2 / 16;
  for (uint32_t i = threadIdx.x; i < id_words; i += blockDim.x)
    reinterpret_cast<int4*>(bucket_ids)[i] = reinterpret_cast<const int4*>(d.bucket_ids)[i];
  __syncthreads();

  const int64_t tile = static_cast<int64_t>(blockDim.x) * R;
  const int64_t tiles = (c.rows + tile - 1) / tile;
  const int64_t t_begin = tiles * blockIdx.x / gridDim.x;
  const int64_t t_end = tiles * (blockIdx.x + 1) / gridDim.x;
  const bool v0_present = ls.count > 0 && c.columns[0].data != nullptr;

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
#pragma unroll
    for (int j = 0; j < R; ++j) {
      const int64_t row = base + static_cast<int64_t>(j) * blockDim.x;
      int64_t s = -2;  // -2: no row, -1: send to the global table
      if (row < c.rows) {
        if (knull[j]) {
          s = rbase + p.slots;
        } else if (key[j] == KeyTraits<K>::empty) {
          s = rbase + p.slots + 1;
        } else {
          const int id = dictionary_find(bucket_keys, bucket_ids, d.buckets, key[j]);
          if (id >= 0) {
            s = rbase + static_cast<uint32_t>(id);
          } else {
            const int64_t local = shared_find_or_insert(extra_keys, occupied, dp.extra_slots, dp.extra_limit, key[j],
                                                        HashKind::murmur);
            s = local >= 0 ? rbase + d.ids + local : -1;
          }
        }
      }
      if constexpr (kCountSum) {
        if (s >= 0) {
          atomicAdd(t.u32(lay, 0) + s, 1u);
          shared_add_sum(t.i32(lay, 1), t.hi(lay, 1), static_cast<uint32_t>(s), v0[j]);
        }
      } else if (s >= 0) {
        shared_add_row(t, lay, ls, c, static_cast<uint32_t>(s), row, v0[j], v0_valid[j]);
      }
      if (s == -1) table.add_row(c, ls, spill, row, key[j], false, v0[j]);
      __syncwarp();  // regroup after a miss path's divergent probe
    }
  }
  __syncthreads();
  dictionary_flush<K>(t, lay, ls, p, d, extra_keys, table, spill);
}

}  // namespace tally::gpu::kernels
