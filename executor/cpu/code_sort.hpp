#pragma once
// Sorting order codes (common/ordered_code.hpp) on the host: a group's
// values for an ordered-set aggregate, in place.
#include <cstddef>
#include <cstdint>

namespace tally::executor::cpu {

// Below this many values a group is sorted by one thread (sort_codes); a
// larger one (a global median) is sorted in parts by every thread and
// merged (sort_codes_parallel).
inline constexpr size_t kParallelSortValues = size_t{1} << 17;

// Sorts codes[0, n) ascending: LSD radix passes of 8 bits, skipping bytes
// that are the same in every code; std::sort below a few hundred codes.
void sort_codes(uint64_t* codes, size_t n);

// Sorts codes[0, n) with `threads` threads: parts radix sorted in
// parallel, then merged pairwise.
void sort_codes_parallel(uint64_t* codes, size_t n, int threads);

}  // namespace tally::executor::cpu
