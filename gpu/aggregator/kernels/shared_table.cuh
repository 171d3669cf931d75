#pragma once
// Block-private accumulators in shared memory, used by the dense and the
// shared-hash variants. Lanes are 32-bit words: a sum keeps a signed low word
// plus a signed count of 2^32 overflows, so it is exact without 64-bit shared
// atomics (a CAS loop on sm_90); a small dense table's sums are split
// instead (its low 16 bits and the rest, flushed before either overflows),
// so that no thread waits on an atomic's result.
#include <cstdint>
#include <limits>

#include "gpu/aggregator/kernels/views.cuh"

namespace tally::gpu::kernels {

// Byte offsets of each lane's arrays inside the dynamic shared memory; a
// sum lane has its low words at offset and high words at offset + 4 * slots.
struct SharedLayout {
  uint32_t offset[kMaxLanes];
  uint32_t keys_offset = 0;      // hash variant: K keys[slots]
  uint32_t counter_offset = 0;   // hash variant: uint32 occupancy
  // Partitioned count+sum kernel: uint16 slot indices claimed since the last
  // flush (the slots it visits and resets), list_capacity entries.
  uint32_t list_offset = 0;
  uint32_t list_capacity = 0;
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
  uint32_t replicas = 1;       // power of two <= 32: per-lane copies of the table
  // Hash variants, non-murmur hashes: UINT64_MAX / probe area + 1, so that
  // key mod area is two multiplications (Lemire's fastmod) instead of a
  // 64-bit division (about a hundred instructions per row).
  uint64_t area_magic = 0;
  // Hash variants: probe one 16-byte bucket per load (p.slots aligned with
  // aligned_hash_slots) instead of one key.
  bool bucketed = false;
  // Dense variant, rows one at a time: 0, or the rows after which a block
  // flushes its table. Its sum lanes then keep their low 16 bits (unsigned)
  // and the rest (signed) apart, added by atomics whose result no thread
  // waits for (shared_add_sum_split); under kSplitSumRows rows a slot neither
  // word overflows.
  uint32_t split_flush_rows = 0;
};

// Rows a block takes between flushes of split sums: a part (sum_part) is in
// [-2^31, 2^32), so a slot's low word stays below 65535 * 32768 < 2^32 and
// its rest (|part >> 16| <= 65535) within 65535 * 32768 < 2^31.
inline constexpr uint32_t kSplitSumRows = 32768;

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
  return k == LaneKind::sum32 || k == LaneKind::sum_lo || k == LaneKind::sum_hi || k == LaneKind::sq_lo ||
         k == LaneKind::sq_hi;
}

// The 64-bit quantity a sum lane adds for value v (sum_lo: the unsigned low
// word of an int64 value; sum_hi: its signed high word; sq_lo, sq_hi: the
// same of an int32 value's square).
__device__ __forceinline__ int64_t sum_part(LaneKind k, int64_t v) {
  if (k == LaneKind::sum_lo) return static_cast<int64_t>(static_cast<uint32_t>(v));
  if (k == LaneKind::sum_hi) return v >> 32;
  if (k == LaneKind::sq_lo) return static_cast<int64_t>(static_cast<uint32_t>(static_cast<uint64_t>(v * v)));
  if (k == LaneKind::sq_hi) return (v * v) >> 32;
  return v;
}

// Adds one row to a float lane in shared memory (doubles by native shared
// atomics; fmin/fmax as ordered int64).
template <class K>
__device__ __forceinline__ void shared_add_float(const SharedTable& t, const SharedLayout& lay, const LaneRef& lr, int l,
                                                 uint32_t s, const ChunkRef<K>& c, int64_t row, bool valid, int64_t v) {
  ull x;
  if (!float_lane_row(lr, c, row, valid, v, x)) return;
  switch (lr.kind) {
    case LaneKind::fmin: atomicMin(t.i64(lay, l) + s, static_cast<long long>(x)); break;
    case LaneKind::fmax: atomicMax(t.i64(lay, l) + s, static_cast<long long>(x)); break;
    case LaneKind::pair_count: atomicAdd(t.u32(lay, l) + s, 1u); break;
    default: atomicAdd(reinterpret_cast<double*>(t.i64(lay, l) + s), __longlong_as_double(static_cast<long long>(x)));
  }
}

// Adds a 64-bit partial to a sum lane kept as a signed 32-bit low word plus a
// signed count of 2^32 units: the low word takes the partial's low 32 bits
// (as signed), the rest and any signed overflow of the low word go to `hi`.
// For int4 values the high word is touched only when the running low word
// overflows, so a row costs one shared atomic.
__device__ __forceinline__ void shared_add_sum(int32_t* lo, int32_t* hi, uint32_t s, int64_t partial) {
  const int32_t add = static_cast<int32_t>(static_cast<uint32_t>(partial));
  int64_t carry = (partial - add) >> 32;  // exact: partial - add is a multiple of 2^32
  const int32_t old = atomicAdd(lo + s, add);
  const int32_t now = static_cast<int32_t>(static_cast<uint32_t>(old) + static_cast<uint32_t>(add));
  if (add > 0 && now < old) carry += 1;
  else if (add < 0 && now > old) carry -= 1;
  if (carry != 0) atomicAdd(hi + s, static_cast<int32_t>(carry));
}

// Adds a partial to a split sum lane (SharedParams::split_flush_rows): its
// low 16 bits to the unsigned low word, the rest to `hi`. Neither atomic's
// result is read, so the thread goes on at once (a returning atomic, as
// shared_add_sum's, holds the warp until the shared memory answers).
__device__ __forceinline__ void shared_add_sum_split(int32_t* lo, int32_t* hi, uint32_t s, int64_t partial) {
  atomicAdd(reinterpret_cast<uint32_t*>(lo) + s, static_cast<uint32_t>(partial) & 0xffffu);
  const auto rest = static_cast<int32_t>(partial >> 16);
  if (rest != 0) atomicAdd(hi + s, rest);
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
      } else if (is_float_lane(lr.kind) && lr.kind != LaneKind::pair_count) {
        t.i64(lay, l)[s] = static_cast<long long>(lane_identity(lr.kind));
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

// One row into shared slot s (`split`: the sum lanes are split,
// SharedParams::split_flush_rows).
template <class K>
__device__ __forceinline__ void shared_add_row(const SharedTable& t, const SharedLayout& lay, const LaneSet& ls,
                                               const ChunkRef<K>& c, uint32_t s, int64_t row, int64_t v0,
                                               bool v0_valid, bool split = false) {
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
    if (is_float_lane(lr.kind)) {
      shared_add_float(t, lay, lr, l, s, c, row, valid, v);
      continue;
    }
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
      default:
        if (split) shared_add_sum_split(t.i32(lay, l), t.hi(lay, l), s, sum_part(lr.kind, v));
        else shared_add_sum(t.i32(lay, l), t.hi(lay, l), s, sum_part(lr.kind, v));
    }
  }
}

// A float lane's rows of one slot reduced across the warp (every lane of the
// warp calls it; `valid` only for the rows of the leader's slot), then one
// shared atomic by the leader: few groups would otherwise serialize the warp
// on one address.
template <class K>
__device__ __forceinline__ void shared_add_float_warp(const SharedTable& t, const SharedLayout& lay, const LaneRef& lr,
                                                      int l, uint32_t slot, const ChunkRef<K>& c, int64_t row,
                                                      bool valid, int64_t v, int leader) {
  constexpr unsigned kFull = 0xffffffffu;
  ull x = 0;
  const bool has = valid && float_lane_row(lr, c, row, valid, v, x);
  const unsigned any = __ballot_sync(kFull, has);
  if (any == 0) return;
  const bool lead = static_cast<int>(threadIdx.x & 31) == leader;
  if (lr.kind == LaneKind::pair_count) {
    if (lead) atomicAdd(t.u32(lay, l) + slot, static_cast<uint32_t>(__popc(any)));
  } else if (lr.kind == LaneKind::fmin || lr.kind == LaneKind::fmax) {
    const bool mn = lr.kind == LaneKind::fmin;
    long long m = has ? static_cast<long long>(x) : static_cast<long long>(lane_identity(lr.kind));
    for (int d = 16; d > 0; d >>= 1) {
      const long long o = __shfl_xor_sync(kFull, m, d);
      m = mn ? (o < m ? o : m) : (o > m ? o : m);
    }
    if (lead) {
      if (mn) atomicMin(t.i64(lay, l) + slot, m);
      else atomicMax(t.i64(lay, l) + slot, m);
    }
  } else {
    double d = has ? __longlong_as_double(static_cast<long long>(x)) : 0.0;
    for (int s = 16; s > 0; s >>= 1) d += __shfl_xor_sync(kFull, d, s);
    if (lead) atomicAdd(reinterpret_cast<double*>(t.i64(lay, l) + slot), d);
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
      if (is_float_lane(lr.kind)) {
        shared_add_float_warp(t, lay, lr, l, slot, c, row, valid, v, leader);
        continue;
      }
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
        // A part is in [-2^31, 2^32): its low 16 bits and its signed rest
        // (|rest| < 2^17) sum over 32 lanes without overflowing 32 bits.
        const int64_t part = valid ? sum_part(lr.kind, v) : 0;
        const uint32_t lo16 = warp_sum(static_cast<uint32_t>(part) & 0xffffu);
        const int32_t rest = static_cast<int32_t>(warp_sum(static_cast<uint32_t>(static_cast<int32_t>(part >> 16))));
        if (me == leader) {
          const int64_t partial = static_cast<int64_t>(lo16) + static_cast<int64_t>(rest) * 65536;
          if (partial != 0) shared_add_sum(t.i32(lay, l), t.hi(lay, l), slot, partial);
        }
      }
    }
  }
}

// The 64-bit partial of lane l at slot s (global encoding; `split`: sum
// lanes as shared_add_sum_split keeps them).
__device__ __forceinline__ ull shared_lane_value(const SharedTable& t, const SharedLayout& lay, const LaneRef& lr,
                                                 int l, uint32_t s, bool split = false) {
  switch (lr.kind) {
    case LaneKind::count_rows:
    case LaneKind::count_valid:
    case LaneKind::pair_count: return t.u32(lay, l)[s];
    case LaneKind::fmin:
    case LaneKind::fmax:
    case LaneKind::fsum:
    case LaneKind::fsq:
    case LaneKind::fprod: return static_cast<ull>(t.i64(lay, l)[s]);
    case LaneKind::min:
    case LaneKind::max:
      return lr.wide ? static_cast<ull>(t.i64(lay, l)[s]) : static_cast<ull>(static_cast<int64_t>(t.i32(lay, l)[s]));
    default: {
      const ull hi = static_cast<ull>(static_cast<int64_t>(t.hi(lay, l)[s]));
      // split: unsigned low 16-bit sums + 2^16 * the signed rest
      if (split) return static_cast<ull>(t.u32(lay, l)[s]) + (hi << 16);
      // signed low word + 2^32 * signed high count, modulo 2^64
      const ull lo = static_cast<ull>(static_cast<int64_t>(t.i32(lay, l)[s]));
      return lo + (hi << 32);
    }
  }
}

}  // namespace tally::gpu::kernels
