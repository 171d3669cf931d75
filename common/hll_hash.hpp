#pragma once
// The one hash of HyperLogLog sketches and sampled keys. Storage builds a
// sketch per chunk column when it writes a chunk (storage/column_stats.cpp)
// and the estimator merges those sketches and hashes its sample with it
// (executor/estimate/hll_sketch.hpp): both must hash identically, or merged
// sketches of one column count every value twice.
#include <cstdint>

#include "common/murmur_mix.hpp"

namespace tally {

// Version byte of the serialized sketch (byte 0; see hll_sketch.hpp for the layout).
inline constexpr uint8_t kHllFormatVersion = 1;

// MurmurHash3's finalizer: distinct 64-bit inputs never collide and the
// bits are uniform.
constexpr uint64_t hll_hash(uint64_t bits) { return murmur_fmix64(bits); }

}  // namespace tally
