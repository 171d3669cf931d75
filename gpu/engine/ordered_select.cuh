#pragma once
// Percentiles' picks by selection instead of a sort. Where the keys are few
// enough to index directly (packed codes of at most kSelectMaxKeyBits bits,
// or a global aggregate's one key), the rows a percentile reads are found
// without ordering every row: a histogram of each key's codes over value
// buckets, the bucket (and the rank inside it) of every position a pick
// reads, then only the rows of those buckets gathered and sorted, key by
// key. The buckets are a monotone function of the order code (for floats
// linear in the value first, which spreads uniform and normal data, then
// linear in the code, which spreads values whose magnitudes differ by
// orders; integers linear in the value), so a bucket's rows sit
// between the buckets before and after it in the full order: a row's rank
// in its key is the rows of the key's lower buckets plus its rank within
// its bucket. Two passes over the kept (key, code) rows and a sort of a few
// rows per key, where the sort moved every row through ten radix passes.
//
// Values concentrated in a few buckets either way (every value equal) leave
// too many rows to gather: the caller sorts them.
#include <cuda_runtime.h>

#include <cstdint>
#include <optional>

#include "common/ordered_rows.hpp"
#include "gpu/engine/ordered_row_codes.cuh"

namespace tally::gpu {

// Keys above this many bits have more histograms than one pass keeps in L2.
inline constexpr int kSelectMaxKeyBits = 16;

// The picks `picks` of each key's codes, as the sort's picks give them:
// keys ascending (key_of_sort_key of a packed code), each key's row count,
// then per key `picks.per` codes and their positions in the key's order.
// `keys` and `codes` hold n device rows (keys below 2^key_bits, all 0 where
// key_bits is 0); `float_codes`: the codes are order codes of floats, else
// of integers. nullopt: these rows are the sort's (keys wider than the
// histograms allow, a key beyond key_bits, or values too concentrated to
// leave few rows to gather).
std::optional<tally::KeyedPicks> select_picks(const uint64_t* keys, const uint64_t* codes, uint64_t n, int key_bits,
                                              bool float_codes, const PickArgs& picks, cudaStream_t stream);

}  // namespace tally::gpu
