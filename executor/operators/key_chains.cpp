// KeyChains::build_parallel: see key_chains.hpp.
#include "executor/operators/key_chains.hpp"

#include <algorithm>

#include "executor/cancel_point.hpp"
#include "executor/cpu/parallel.hpp"

namespace tally::executor {

namespace {
// Below this many rows one thread links them faster than the split costs.
constexpr size_t kParallelBuildRows = size_t{1} << 18;
constexpr unsigned kRangeBits = 8;  // 256 bucket ranges
}  // namespace

void KeyChains::build_parallel(const std::vector<Vector>& keys, size_t rows, const std::vector<uint64_t>& hashes,
                               int threads) {
  size_t buckets = 16;
  while (buckets < rows * 2) buckets <<= 1;
  const unsigned bucket_bits = static_cast<unsigned>(__builtin_ctzll(buckets));
  if (threads <= 1 || rows < kParallelBuildRows || bucket_bits <= kRangeBits) {
    build(keys, rows, &hashes);
    return;
  }
  mask = buckets - 1;
  constexpr size_t kRanges = size_t{1} << kRangeBits;
  const unsigned shift = bucket_bits - kRangeBits;
  head.assign(buckets, kNullRow);
  next.assign(rows, kNullRow);
  // Per part of the rows (contiguous, in order), its rows per bucket range;
  // a NULL key's row goes in no range (it equals nothing).
  const size_t parts = static_cast<size_t>(threads);
  std::vector<std::vector<size_t>> counts(parts, std::vector<size_t>(kRanges, 0));
  cpu::parallel_for(threads, rows, [&](int part, size_t begin, size_t end) {
    std::vector<size_t>& mine = counts[static_cast<size_t>(part)];
    for (size_t r = begin; r < end; ++r) {
      if (!has_null_key(keys, r)) ++mine[(hashes[r] & mask) >> shift];
    }
  });
  // Where each part's rows of each range go: ranges in order, within a
  // range the parts in order, so every range lists its rows ascending.
  std::vector<size_t> range_begin(kRanges + 1, 0);
  std::vector<std::vector<size_t>> at(parts, std::vector<size_t>(kRanges, 0));
  size_t offset = 0;
  for (size_t g = 0; g < kRanges; ++g) {
    range_begin[g] = offset;
    for (size_t p = 0; p < parts; ++p) {
      at[p][g] = offset;
      offset += counts[p][g];
    }
  }
  range_begin[kRanges] = offset;
  std::vector<uint32_t> by_range(offset);
  cpu::parallel_for(threads, rows, [&](int part, size_t begin, size_t end) {
    std::vector<size_t>& to = at[static_cast<size_t>(part)];
    for (size_t r = begin; r < end; ++r) {
      if (!has_null_key(keys, r)) by_range[to[(hashes[r] & mask) >> shift]++] = static_cast<uint32_t>(r);
    }
  });
  check_cancel_point();
  // Each range's buckets belong to it alone: linked with no other thread.
  cpu::parallel_for(threads, kRanges, [&](int, size_t first, size_t last) {
    for (size_t g = first; g < last; ++g) {
      for (size_t i = range_begin[g]; i < range_begin[g + 1]; ++i) {
        const uint32_t r = by_range[i];
        const uint64_t b = hashes[r] & mask;
        next[r] = head[b];
        head[b] = r;
      }
    }
  });
}

}  // namespace tally::executor
