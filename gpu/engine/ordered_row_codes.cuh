#pragma once
// What the ordered-set collector's kernels read of a chunk, and the two
// codes they make of each row: its key as the sort sees it and its value's
// order code (common/ordered_code.hpp's encoding, the same bits on the
// device). Shared by the row collection (device_ordered_rows.cu) and the
// top-codes table (top_codes_table.cu).
#include <cstdint>

#include "common/ordered_rows.hpp"

namespace tally::gpu {

inline constexpr uint64_t kSignBit = uint64_t{1} << 63;

enum OrderedValueKind : int { kInt32, kInt64, kFloat32, kFloat64 };

// The key as the sort sees it: unsigned, so that a sort over its low
// `key_bits` bits groups equal keys. Packed codes are non-negative already;
// a key the planner says fits int32 is biased by 2^31 (32 bits); any other
// gets its sign bit flipped (64 bits). The host undoes it (key_of_sort_key).
enum OrderedKeyKind : int { kPacked, kKeyInt32, kKeyInt64 };
inline constexpr int64_t kInt32Bias = int64_t{1} << 31;

inline int64_t key_of_sort_key(uint64_t k, int key_kind) {
  return key_kind == kKeyInt32   ? static_cast<int64_t>(k) - kInt32Bias
         : key_kind == kKeyInt64 ? static_cast<int64_t>(k ^ kSignBit)
                                 : static_cast<int64_t>(k);
}

// The sort key of `key` (key_of_sort_key's inverse); the mapping keeps the
// keys' order, so a range of keys is a range of sort keys.
inline uint64_t sort_key_of(int64_t key, int key_kind) {
  return key_kind == kKeyInt32   ? static_cast<uint64_t>(key + kInt32Bias)
         : key_kind == kKeyInt64 ? static_cast<uint64_t>(key) ^ kSignBit
                                 : static_cast<uint64_t>(key);
}

struct CollectArgs {
  const void* keys = nullptr;  // nullptr: a global aggregate's, every key 0
  const uint8_t* key_valid = nullptr;  // nullptr: no NULL key in this chunk
  int key_kind = kPacked;
  int key_wide = 1;  // the chunk's keys are int64 (else int32)
  const void* values = nullptr;
  const uint8_t* value_valid = nullptr;
  const uint8_t* filter = nullptr;
  int value_kind = kInt64;
  uint64_t* out_keys = nullptr;
  uint64_t* out_codes = nullptr;
  unsigned long long* count = nullptr;
  uint64_t* null_codes = nullptr;
  unsigned long long* null_count = nullptr;
  // A top-codes table counting every row (top_codes_table.cuh): the keys of
  // rows without a value that found no slot.
  uint64_t* out_bare_keys = nullptr;
  unsigned long long* bare_count = nullptr;
};

// The picks one slot's aggregates read (common/ordered_pick.hpp), at most
// kMaxPicks, as a kernel parameter.
struct PickArgs {
  tally::OrderedPick picks[kMaxPicks];
  int count = 0;
  int per = 0;  // positions kept per key
};

#if defined(__CUDACC__)
__device__ inline uint64_t order_code(const CollectArgs& a, int64_t r) {
  double f;
  switch (a.value_kind) {
    case kInt32: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<const int32_t*>(a.values)[r])) ^ kSignBit;
    case kInt64: return static_cast<uint64_t>(static_cast<const int64_t*>(a.values)[r]) ^ kSignBit;
    case kFloat32: f = static_cast<double>(static_cast<const float*>(a.values)[r]); break;
    default: f = static_cast<const double*>(a.values)[r]; break;
  }
  uint64_t bits = static_cast<uint64_t>(__double_as_longlong(f));
  if (isnan(f)) bits = 0x7ff8000000000000ULL;  // one NaN, sign bit clear (std::numeric_limits<double>::quiet_NaN())
  return (bits & kSignBit) != 0 ? ~bits : bits | kSignBit;
}

__device__ inline uint64_t sort_key(const CollectArgs& a, int64_t r) {
  if (a.keys == nullptr) return 0;
  const int64_t k = a.key_wide ? static_cast<const int64_t*>(a.keys)[r] : static_cast<const int32_t*>(a.keys)[r];
  switch (a.key_kind) {
    case kKeyInt32: return static_cast<uint64_t>(k + kInt32Bias);
    case kKeyInt64: return static_cast<uint64_t>(k) ^ kSignBit;
    default: return static_cast<uint64_t>(k);
  }
}

// Whether row r is one the collector keeps: its value is not NULL and it
// passes the aggregate's FILTER.
__device__ inline bool row_kept(const CollectArgs& a, int64_t r) {
  return (a.value_valid == nullptr || a.value_valid[r] != 0) && (a.filter == nullptr || a.filter[r] != 0);
}
#endif

}  // namespace tally::gpu
