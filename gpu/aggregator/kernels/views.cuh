#pragma once
// Non-owning, trivially copyable views that kernels receive by value
// (cuCollections' container vs `_ref`): a chunk, the lane set, the global
// table, the spill buffer and the partitioned variant's compact output. The
// container that owns the memory lives on the host side
// (gpu/aggregator/aggregation_table.cuh).
//
// Kernels take ChunkRef, LaneSet and SharedLayout as `const __grid_constant__`
// parameters: they index them by runtime lane and column numbers, and a
// plain by-value parameter indexed so is copied into every thread's local
// memory (a larger stack frame, more registers and so fewer resident warps,
// each lane look-up a local load); a grid constant is read in place from the
// constant bank.
#include <cstdint>
#include <limits>

#include "gpu/lane_plan.hpp"
#include "gpu/rules/variant_config.hpp"

namespace tally::gpu::kernels {

using ull = unsigned long long;

template <class K>
struct KeyTraits {
  // Marks an empty slot. A real key equal to it lives in a dedicated slot.
  static constexpr K empty = std::numeric_limits<K>::min();
};

struct ColumnRef {
  const void* data = nullptr;
  const uint8_t* validity = nullptr;
  bool wide = false;
};

template <class K>
struct ChunkRef {
  const K* keys = nullptr;
  const uint8_t* key_validity = nullptr;
  int64_t rows = 0;
  ColumnRef columns[kMaxColumns];

  __device__ __forceinline__ bool key_null(int64_t r) const { return key_validity && !key_validity[r]; }
  __device__ __forceinline__ bool valid(int c, int64_t r) const {
    return !columns[c].validity || columns[c].validity[r];
  }
  __device__ __forceinline__ int64_t value(int c, int64_t r) const {
    return columns[c].wide ? static_cast<const int64_t*>(columns[c].data)[r]
                           : static_cast<int64_t>(static_cast<const int32_t*>(columns[c].data)[r]);
  }
};

struct LaneRef {
  LaneKind kind = LaneKind::count_rows;
  int8_t column = -1;
  bool wide = false;
  // Float lanes only (gpu/lane_plan.hpp): the pair's second column and how
  // each column's bits read as a double.
  int8_t column2 = -1;
  bool real = false;
  bool wide2 = false;
  bool real2 = false;
};

struct LaneSet {
  int count = 0;
  LaneRef lane[kMaxLanes];
};

__host__ __device__ __forceinline__ ull lane_identity(LaneKind k) {
  if (k == LaneKind::min || k == LaneKind::fmin) return static_cast<ull>(std::numeric_limits<int64_t>::max());
  if (k == LaneKind::max || k == LaneKind::fmax) return static_cast<ull>(std::numeric_limits<int64_t>::min());
  return 0;  // also 0.0 of the double sums
}

// A column's 64-bit value (ChunkRef::value) as a double: a float64's bits, a
// float32's bits in the low word, or an integer converted.
__device__ __forceinline__ double as_double(int64_t v, bool real, bool wide) {
  if (!real) return static_cast<double>(v);
  return wide ? __longlong_as_double(v) : static_cast<double>(__int_as_float(static_cast<int>(v)));
}

// PostgreSQL's float order as int64 order, so that fmin/fmax lanes are int64
// min/max: every NaN one value above +Infinity, -0 equal to 0; negative
// doubles' magnitude bits flipped. Its own inverse (float_from_ordered on the host).
__device__ __forceinline__ int64_t ordered_float(double x) {
  if (x != x) return 0x7ff8000000000000LL;
  if (x == 0) x = 0.0;
  const int64_t b = __double_as_longlong(x);
  return b ^ ((b >> 63) & 0x7fffffffffffffffLL);
}

// One row's contribution to a float lane (lane_plan.hpp): `valid` and `v`
// are the row's value of lr.column; false when the row adds nothing (NULL,
// or a pair missing its second value).
template <class K>
__device__ __forceinline__ bool float_lane_row(const LaneRef& lr, const ChunkRef<K>& c, int64_t row, bool valid, int64_t v,
                                            ull& out) {
  if (!valid) return false;
  double y = 0;
  if (lr.column2 >= 0) {
    if (!c.valid(lr.column2, row)) return false;
    if (lr.kind == LaneKind::fprod) y = as_double(c.value(lr.column2, row), lr.real2, lr.wide2);
  }
  if (lr.kind == LaneKind::pair_count) {
    out = 1;
    return true;
  }
  const double x = as_double(v, lr.real, lr.wide);
  double r = x;
  switch (lr.kind) {
    case LaneKind::fmin:
    case LaneKind::fmax: out = static_cast<ull>(ordered_float(x)); return true;
    case LaneKind::fsq: r = x * x; break;
    case LaneKind::fprod: r = x * y; break;
    default: break;  // fsum
  }
  out = static_cast<ull>(__double_as_longlong(r));
  return true;
}

// One row's contribution to a lane in the global (64-bit) encoding; false when
// the row contributes nothing (NULL value).
__device__ __forceinline__ bool row_lane_value(const LaneRef& l, bool valid, int64_t v, ull& out) {
  if (l.kind == LaneKind::count_rows) {
    out = 1;
    return true;
  }
  if (!valid) return false;
  switch (l.kind) {
    case LaneKind::count_valid: out = 1; break;
    case LaneKind::sum32: out = static_cast<ull>(v); break;
    case LaneKind::sum_lo: out = static_cast<ull>(static_cast<uint32_t>(v)); break;
    case LaneKind::sum_hi: out = static_cast<ull>(v >> 32); break;
    // int32 inputs: v * v < 2^62, split like an int64 sum's words.
    case LaneKind::sq_lo: out = static_cast<ull>(static_cast<uint32_t>(static_cast<uint64_t>(v * v))); break;
    case LaneKind::sq_hi: out = static_cast<ull>((v * v) >> 32); break;
    default: out = static_cast<ull>(v); break;  // min, max
  }
  return true;
}

// Any lane's contribution of one row: the integer lanes from the value
// alone, the float lanes through float_lane_row.
template <class K>
__device__ __forceinline__ bool lane_row(const LaneRef& lr, const ChunkRef<K>& c, int64_t row, bool valid, int64_t v,
                                         ull& out) {
  if (is_float_lane(lr.kind)) return float_lane_row(lr, c, row, valid, v, out);
  return row_lane_value(lr, valid, v, out);
}

// The double-sum lanes: fsum, fsq, fprod.
__device__ __forceinline__ bool is_double_sum(LaneKind k) {
  return k == LaneKind::fsum || k == LaneKind::fsq || k == LaneKind::fprod;
}

__device__ __forceinline__ void combine_global(LaneKind k, ull* p, ull v) {
  if (k == LaneKind::min || k == LaneKind::fmin)
    atomicMin(reinterpret_cast<long long*>(p), static_cast<long long>(v));
  else if (k == LaneKind::max || k == LaneKind::fmax)
    atomicMax(reinterpret_cast<long long*>(p), static_cast<long long>(v));
  else if (is_double_sum(k))
    atomicAdd(reinterpret_cast<double*>(p), __longlong_as_double(static_cast<long long>(v)));
  else
    atomicAdd(p, v);
}

__device__ __forceinline__ ull combine_local(LaneKind k, ull a, ull b) {
  if (k == LaneKind::min || k == LaneKind::fmin) return static_cast<long long>(a) < static_cast<long long>(b) ? a : b;
  if (k == LaneKind::max || k == LaneKind::fmax) return static_cast<long long>(a) > static_cast<long long>(b) ? a : b;
  if (is_double_sum(k))
    return static_cast<ull>(__double_as_longlong(__longlong_as_double(static_cast<long long>(a)) +
                                                 __longlong_as_double(static_cast<long long>(b))));
  return a + b;
}

__device__ __forceinline__ uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

__device__ __forceinline__ uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

// 64-bit hash; identity keeps the key's bits so dense ranges map collision-free.
template <class K>
__device__ __forceinline__ uint64_t hash_key(K key, HashKind h) {
  if constexpr (sizeof(K) == 4) {
    const uint32_t u = static_cast<uint32_t>(key);
    return h == HashKind::murmur ? fmix32(u) : u;
  } else {
    const uint64_t u = static_cast<uint64_t>(key);
    return h == HashKind::murmur ? fmix64(u) : u;
  }
}

template <class K>
__device__ __forceinline__ K load_volatile(const K* p) {
  return *reinterpret_cast<const volatile K*>(p);
}

template <class K>
__device__ __forceinline__ K atomic_cas(K* p, K expected, K desired) {
  if constexpr (sizeof(K) == 4) {
    return static_cast<K>(atomicCAS(reinterpret_cast<int*>(p), static_cast<int>(expected), static_cast<int>(desired)));
  } else {
    return static_cast<K>(atomicCAS(reinterpret_cast<ull*>(p), static_cast<ull>(expected), static_cast<ull>(desired)));
  }
}

// Rows or partial groups that found no room in the global table. Bounded by
// the rows of one launch; merged after the table grows.
struct SpillRef {
  int64_t* keys = nullptr;
  ull* lanes = nullptr;  // lane l of entry i at lanes[l * capacity + i]
  uint64_t capacity = 0;
  ull* count = nullptr;

  __device__ __forceinline__ void push(int64_t key, const LaneSet& ls, const ull* values) const {
    const ull i = atomicAdd(count, 1ull);
    if (i >= capacity) return;  // host sees count > capacity and reports an internal error
    keys[i] = key;
    for (int l = 0; l < ls.count; ++l) lanes[static_cast<uint64_t>(l) * capacity + i] = values[l];
  }
};

// Compact output of the groups of partitions owned outright (same layout as
// SpillRef, so it merges into the global table with merge_spill_kernel).
struct DirectRef {
  int64_t* keys = nullptr;
  ull* lanes = nullptr;  // lane l of group i at lanes[l * capacity + i]
  uint64_t capacity = 0;
  ull* count = nullptr;
  ull* lost = nullptr;  // groups that found no room (a host-side sizing bug)
};

// The global table: open addressing with linear probing, capacity a power of
// two, keys claimed by CAS, 64-bit lanes updated by atomics. Slot `capacity`
// is the NULL-key group, slot `capacity + 1` the group of the key equal to the
// empty marker.
template <class K>
struct GlobalTableRef {
  K* keys = nullptr;
  ull* lanes = nullptr;  // lane l of slot s at lanes[l * stride + s]
  uint64_t capacity = 0;
  uint64_t stride = 0;   // capacity + 2
  ull* occupied = nullptr;
  uint64_t max_occupied = 0;
  HashKind hash = HashKind::murmur;
  uint64_t range_base = 0;  // HashKind::range: slot = ((key - base) >> shift) & mask
  int range_shift = 0;

  __device__ __forceinline__ uint64_t home(K key) const {
    if (hash == HashKind::range)
      return (static_cast<uint64_t>(static_cast<int64_t>(key)) - range_base) >> range_shift;
    return hash_key(key, hash);
  }

  __device__ __forceinline__ ull* lane(int l) const { return lanes + static_cast<uint64_t>(l) * stride; }
  __device__ __forceinline__ int64_t null_slot() const { return static_cast<int64_t>(capacity); }

  // Slot of `key`, claiming an empty one if needed; -1 when the occupancy
  // limit is reached (the caller spills).
  __device__ int64_t find_or_insert(K key) const {
    if (key == KeyTraits<K>::empty) return static_cast<int64_t>(capacity + 1);
    const uint64_t mask = capacity - 1;
    uint64_t h = home(key) & mask;
    for (uint64_t p = 0; p < capacity; ++p) {
      const K cur = load_volatile(keys + h);
      if (cur == key) return static_cast<int64_t>(h);
      if (cur == KeyTraits<K>::empty) {
        if (load_volatile(occupied) >= max_occupied) return -1;
        const K old = atomic_cas(keys + h, KeyTraits<K>::empty, key);
        if (old == KeyTraits<K>::empty) {
          atomicAdd(occupied, 1ull);
          return static_cast<int64_t>(h);
        }
        if (old == key) return static_cast<int64_t>(h);
      }
      h = (h + 1) & mask;
    }
    return -1;
  }

  // Adds one row to the table (or the spill buffer when the table is full).
  __device__ void add_row(const ChunkRef<K>& c, const LaneSet& ls, const SpillRef& spill, int64_t row, K key,
                          bool key_null, int64_t v0) const {
    const int64_t s = key_null ? null_slot() : find_or_insert(key);
    ull vals[kMaxLanes];
    for (int l = 0; l < ls.count; ++l) {
      const LaneRef lr = ls.lane[l];
      bool valid = true;
      int64_t v = 0;
      if (lr.column >= 0) {
        valid = c.valid(lr.column, row);
        v = lr.column == 0 ? v0 : (valid ? c.value(lr.column, row) : 0);
      }
      ull x;
      const bool has = lane_row(lr, c, row, valid, v, x);
      if (s >= 0) {
        if (has) combine_global(lr.kind, lane(l) + s, x);
      } else {
        vals[l] = has ? x : lane_identity(lr.kind);
      }
    }
    if (s < 0) spill.push(static_cast<int64_t>(key), ls, vals);
  }

  // count(*) + sum (lanes 0 and 1) of one row or one partial group, without
  // the generic lane loop: the count+sum kernels' rare no-room and flush
  // paths (the generic add_row inlined there takes the dictionary kernel from
  // 32 to 64-80 registers on sm_90).
  __device__ __forceinline__ void add_count_sum(const SpillRef& spill, K key, bool key_null, ull count, ull sum) const {
    const int64_t s = key_null ? null_slot() : find_or_insert(key);
    if (s >= 0) {
      atomicAdd(lane(0) + s, count);
      atomicAdd(lane(1) + s, sum);
      return;
    }
    const ull i = atomicAdd(spill.count, 1ull);
    if (i >= spill.capacity) return;  // host sees count > capacity and reports an internal error
    spill.keys[i] = static_cast<int64_t>(key);
    spill.lanes[i] = count;
    spill.lanes[spill.capacity + i] = sum;
  }

  // Merges a partial group; returns false (and spills) when the table is full.
  __device__ void add_partial(const LaneSet& ls, const SpillRef& spill, K key, bool key_null,
                              const ull* values) const {
    const int64_t s = key_null ? null_slot() : find_or_insert(key);
    if (s < 0) {
      spill.push(static_cast<int64_t>(key), ls, values);
      return;
    }
    for (int l = 0; l < ls.count; ++l)
      if (values[l] != lane_identity(ls.lane[l].kind)) combine_global(ls.lane[l].kind, lane(l) + s, values[l]);
  }
};

}  // namespace tally::gpu::kernels
