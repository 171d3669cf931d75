#pragma once
// Block-private accumulators in shared memory, used by the dense and the
// shared-hash variants. Lanes are 32-bit words: a sum keeps its low word with
// carry detection plus a signed high adjustment (carries minus negatives), so
// it is exact without 64-bit shared atomics (a CAS loop on sm_90).
#include <cstdint>
#include <limits>

#include "gpu/kernels/views.cuh"

namespace tally::gpu::kernels {

// Byte offsets of each lane's arrays inside the dynamic shared memory; a
// sum lane has its low words at offset and high words at offset + 4 * slots.
struct SharedLayout {
  uint32_t offset[kMaxLanes];
  uint32_t keys_offset = 0;      // hash variant: K keys[slots]
  uint32_t counter_offset = 0;   // hash variant: uint32 occupancy
  uint32_t total_bytes = 0;
};

struct SharedParams {
  int64_t dense_min = 0;       // dense: key of slot 0
  uint32_t slots = 0;          // dense range / hash capacity (+2 special slots follow)
  uint32_t insert_limit = 0;   // hash: occupancy above which inserts fail (row goes global)
  uint32_t flush_threshold = 0;  // hash + flush_on_fill: flush when occupancy exceeds this
  bool flush_on_fill = false;
  bool warp_preaggregate = false;
  HashKind hash = HashKind::murmur;
};

struct SharedTable {
  unsigned char* base;
  uint32_t total_slots;  // slots + 2

  __device__ __forceinline__ uint32_t* u32(const SharedLayout& lay, int l) const {
    return reinterpret_cast<uint32_t*>(base + lay.offset[l]);
  }
  __device__ __forceinline__ int32_t* hi(const SharedLayout& lay, int l) const {
    return reinterpret_cast<int32_t*>(base + lay.offset[l] + 4u * total_slots);
  }
  __device__ __forceinline__ long long* i64(const SharedLayout& lay, int l) const {
    return reinterpret_cast<long long*>(base + lay.offset[l]);
  }
  __device__ __forceinline__ int32_t* i32(const SharedLayout& lay, int l) const {
    return reinterpret_cast<int32_t*>(base + lay.offset[l]);
  }
};

__device__ __forceinline__ bool is_sum(LaneKind k) {
  return k == LaneKind::sum32 || k == LaneKind::sum_lo || k == LaneKind::sum_hi;
}

// The 32-bit quantity a sum lane adds for value v, and whether it is negative.
__device__ __forceinline__ uint32_t sum_word(LaneKind k, int64_t v, bool& negative) {
  if (k == LaneKind::sum_lo) {
    negative = false;
    return static_cast<uint32_t>(v);
  }
  const int32_t w = k == LaneKind::sum_hi ? static_cast<int32_t>(v >> 32) : static_cast<int32_t>(v);
  negative = w < 0;
  return static_cast<uint32_t>(w);
}

// Adds partial = sum of 32-bit words (< 2^37) and `negatives` negative words.
__device__ __forceinline__ void shared_add_sum(uint32_t* lo, int32_t* hi, uint32_t s, ull partial, int negatives) {
  const uint32_t add = static_cast<uint32_t>(partial);
  const uint32_t old = atomicAdd(lo + s, add);
  const int carry = (old + add < old) ? 1 : 0;
  const int adj = static_cast<int>(partial >> 32) + carry - negatives;
  if (adj != 0) atomicAdd(hi + s, adj);
}

// Warp reductions: redux.sync on sm_80+, shuffles before.
__device__ __forceinline__ uint32_t warp_sum(uint32_t x) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(0xffffffffu, x);
#else
  for (int d = 16; d > 0; d >>= 1) x += __shfl_xor_sync(0xffffffffu, x, d);
  return x;
#endif
}
__device__ __forceinline__ int32_t warp_min(int32_t x) {
#if __CUDA_ARCH__ >= 800
  return __reduce_min_sync(0xffffffffu, x);
#else
  for (int d = 16; d > 0; d >>= 1) x = min(x, __shfl_xor_sync(0xffffffffu, x, d));
  return x;
#endif
}
__device__ __forceinline__ int32_t warp_max(int32_t x) {
#if __CUDA_ARCH__ >= 800
  return __reduce_max_sync(0xffffffffu, x);
#else
  for (int d = 16; d > 0; d >>= 1) x = max(x, __shfl_xor_sync(0xffffffffu, x, d));
  return x;
#endif
}

template <class K>
__device__ void shared_init(const SharedTable& t, const SharedLayout& lay, const LaneSet& ls, bool with_keys) {
  for (int l = 0; l < ls.count; ++l) {
    const LaneRef lr = ls.lane[l];
    for (uint32_t s = threadIdx.x; s < t.total_slots; s += blockDim.x) {
      if (lr.kind == LaneKind::min || lr.kind == LaneKind::max) {
        const bool mn = lr.kind == LaneKind::min;
        if (lr.wide)
          t.i64(lay, l)[s] = mn ? std::numeric_limits<long long>::max() : std::numeric_limits<long long>::min();
        else
          t.i32(lay, l)[s] = mn ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int32_t>::min();
      } else {
        t.u32(lay, l)[s] = 0;
        if (is_sum(lr.kind)) t.hi(lay, l)[s] = 0;
      }
    }
  }
  if (with_keys) {
    K* keys = reinterpret_cast<K*>(t.base + lay.keys_offset);
    for (uint32_t s = threadIdx.x; s < t.total_slots; s += blockDim.x) keys[s] = KeyTraits<K>::empty;
    if (threadIdx.x == 0) *reinterpret_cast<uint32_t*>(t.base + lay.counter_offset) = 0;
  }
}

// One row into shared slot s.
template <class K>
__device__ __forceinline__ void shared_add_row(const SharedTable& t, const SharedLayout& lay, const LaneSet& ls,
                                               const ChunkRef<K>& c, uint32_t s, int64_t row, int64_t v0,
                                               bool v0_valid) {
  for (int l = 0; l < ls.count; ++l) {
    const LaneRef lr = ls.lane[l];
    if (lr.kind == LaneKind::count_rows) {
      atomicAdd(t.u32(lay, l) + s, 1u);
      continue;
    }
    bool valid = v0_valid;
    int64_t v = v0;
    if (lr.column != 0) {
      valid = c.valid(lr.column, row);
      v = valid ? c.value(lr.column, row) : 0;
    }
    if (!valid) continue;
    switch (lr.kind) {
      case LaneKind::count_valid: atomicAdd(t.u32(lay, l) + s, 1u); break;
      case LaneKind::min:
        if (lr.wide) atomicMin(t.i64(lay, l) + s, static_cast<long long>(v));
        else atomicMin(t.i32(lay, l) + s, static_cast<int32_t>(v));
        break;
      case LaneKind::max:
        if (lr.wide) atomicMax(t.i64(lay, l) + s, static_cast<long long>(v));
        else atomicMax(t.i32(lay, l) + s, static_cast<int32_t>(v));
        break;
      default: {
        bool neg;
        const uint32_t w = sum_word(lr.kind, v, neg);
        shared_add_sum(t.u32(lay, l), t.hi(lay, l), s, w, neg ? 1 : 0);
      }
    }
  }
}

// Warp-cooperative version for high contention: lanes of the warp whose rows
// share a slot are reduced with warp intrinsics and one lane does the atomics.
// Every lane of the warp must call it (s < 0: nothing to add).
template <class K>
__device__ void shared_add_rows_warp(const SharedTable& t, const SharedLayout& lay, const LaneSet& ls,
                                     const ChunkRef<K>& c, int64_t s, int64_t row, int64_t v0, bool v0_valid) {
  constexpr unsigned kFull = 0xffffffffu;
  const int me = static_cast<int>(threadIdx.x & 31);
  unsigned pending = __ballot_sync(kFull, s >= 0);
  while (pending) {
    const int leader = __ffs(pending) - 1;
    const int64_t gs = __shfl_sync(kFull, s, leader);
    const bool mine = s == gs;
    const unsigned group = __ballot_sync(kFull, mine);
    pending &= ~group;
    const uint32_t slot = static_cast<uint32_t>(gs);
    for (int l = 0; l < ls.count; ++l) {
      const LaneRef lr = ls.lane[l];
      if (lr.kind == LaneKind::count_rows) {
        if (me == leader) atomicAdd(t.u32(lay, l) + slot, static_cast<uint32_t>(__popc(group)));
        continue;
      }
      bool valid = v0_valid;
      int64_t v = v0;
      if (lr.column != 0) {
        valid = mine && c.valid(lr.column, row);
        v = valid ? c.value(lr.column, row) : 0;
      }
      valid = valid && mine;
      if (lr.kind == LaneKind::count_valid) {
        const unsigned b = __ballot_sync(kFull, valid);
        if (me == leader && b) atomicAdd(t.u32(lay, l) + slot, static_cast<uint32_t>(__popc(b)));
      } else if (lr.kind == LaneKind::min || lr.kind == LaneKind::max) {
        const bool mn = lr.kind == LaneKind::min;
        if (lr.wide) {  // no 64-bit warp reduction: per-lane atomics
          if (valid) {
            if (mn) atomicMin(t.i64(lay, l) + slot, static_cast<long long>(v));
            else atomicMax(t.i64(lay, l) + slot, static_cast<long long>(v));
          }
        } else {
          const int32_t x = static_cast<int32_t>(v);
          const unsigned any = __ballot_sync(kFull, valid);
          if (mn) {
            const int32_t r = warp_min(valid ? x : std::numeric_limits<int32_t>::max());
            if (me == leader && any) atomicMin(t.i32(lay, l) + slot, r);
          } else {
            const int32_t r = warp_max(valid ? x : std::numeric_limits<int32_t>::min());
            if (me == leader && any) atomicMax(t.i32(lay, l) + slot, r);
          }
        }
      } else {
        bool neg = false;
        const uint32_t w = valid ? sum_word(lr.kind, v, neg) : 0u;
        const uint32_t lo16 = warp_sum(w & 0xffffu);
        const uint32_t hi16 = warp_sum(w >> 16);
        const unsigned negs = __ballot_sync(kFull, valid && neg);
        if (me == leader) {
          const ull partial = static_cast<ull>(lo16) + (static_cast<ull>(hi16) << 16);
          if (partial != 0 || negs != 0) shared_add_sum(t.u32(lay, l), t.hi(lay, l), slot, partial, __popc(negs));
        }
      }
    }
  }
}

// The 64-bit partial of lane l at slot s (global encoding).
__device__ __forceinline__ ull shared_lane_value(const SharedTable& t, const SharedLayout& lay, const LaneRef& lr,
                                                 int l, uint32_t s) {
  switch (lr.kind) {
    case LaneKind::count_rows:
    case LaneKind::count_valid: return t.u32(lay, l)[s];
    case LaneKind::min:
    case LaneKind::max:
      return lr.wide ? static_cast<ull>(t.i64(lay, l)[s]) : static_cast<ull>(static_cast<int64_t>(t.i32(lay, l)[s]));
    default: {
      // low word + 2^32 * signed high adjustment, modulo 2^64
      const ull lo = t.u32(lay, l)[s];
      const ull hi = static_cast<ull>(static_cast<int64_t>(t.hi(lay, l)[s]));
      return lo + (hi << 32);
    }
  }
}

}  // namespace tally::gpu::kernels
