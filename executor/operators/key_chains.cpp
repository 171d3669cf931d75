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
// A key's bitmap is made when its span is at most this many bits per row
// (8 bytes a row, as the chains' head and next arrays take) or at most
// 2 MiB whatever the rows (a few thousand parts keyed over millions of
// part numbers), and never past 2^31 bits (256 MiB).
constexpr uint64_t kBitsPerRow = 64;
constexpr uint64_t kSmallSpan = uint64_t{1} << 24;
constexpr uint64_t kMaxSpan = uint64_t{1} << 31;
// Past those spans, rows up to this many get a bitmap of 2^24 bits over
// buckets of the span (at most one bit in eight set): a probe row in an
// empty bucket is ruled out without a hash.
constexpr uint64_t kBucketBits = uint64_t{1} << 24;
constexpr size_t kBucketedRows = size_t{1} << 21;
}  // namespace

void KeyChains::keep_chained(const std::vector<Vector>& keys, const std::vector<Vector>& probe,
                             std::vector<uint32_t>& keep, size_t from) const {
  const IntegerKeys ints(keys, probe);
  size_t n = from;
  for (size_t i = from; i < keep.size(); ++i) {
    const uint32_t r = keep[i];
    for (uint32_t b = first(key_hash(probe, r)); b != kNullRow; b = next[b]) {
      if (ints.usable() ? ints.equal(r, b) : keys_equal(probe, r, keys, b)) {
        keep[n++] = r;
        break;
      }
    }
  }
  keep.resize(n);
}

void KeyChains::build_bits(const std::vector<Vector>& keys, size_t rows, int threads) {
  bits.clear();
  bits_span = 0;
  bits_shift = 0;
  if (keys.size() != 1 || rows == 0) return;
  const Vector& k = keys[0];
  const Physical p = physical_of(k.type.id);
  if (p != Physical::integer && p != Physical::boolean) return;
  const int64_t* v = k.int_data();
  if (rows < kParallelBuildRows) threads = 1;
  const auto parts = static_cast<size_t>(std::max(1, threads));
  std::vector<int64_t> los(parts, INT64_MAX), his(parts, INT64_MIN);
  cpu::parallel_for(threads, rows, [&](int part, size_t begin, size_t end) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t r = begin; r < end; ++r) {
      if (k.null_at(r)) continue;
      lo = std::min(lo, v[r]);
      hi = std::max(hi, v[r]);
    }
    los[static_cast<size_t>(part)] = lo;
    his[static_cast<size_t>(part)] = hi;
  });
  const int64_t lo = *std::min_element(los.begin(), los.end());
  const int64_t hi = *std::max_element(his.begin(), his.end());
  if (hi < lo) return;  // only NULL keys: the chains answer (nothing matches)
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);  // + 1 values
  const bool exact = span < kMaxSpan && (span < kSmallSpan || span / kBitsPerRow < rows);
  if (!exact) {
    if (rows > kBucketedRows) return;
    while ((span >> bits_shift) >= kBucketBits) ++bits_shift;
  }
  bits_span = (span >> bits_shift) + 1;
  bits.assign(bits_span / 64 + 2, 0);  // the last word stays zero: out-of-span probes read it
  bits_min = lo;
  uint64_t* words = bits.data();
  const uint32_t shift = bits_shift;
  // Threads set bits of shared words: each word is or-ed atomically.
  const bool shared = threads > 1;
  cpu::parallel_for(threads, rows, [&](int, size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      if (k.null_at(r)) continue;
      const uint64_t at = (static_cast<uint64_t>(v[r]) - static_cast<uint64_t>(lo)) >> shift;
      const uint64_t bit = uint64_t{1} << (at & 63);
      if (shared) __atomic_fetch_or(&words[at >> 6], bit, __ATOMIC_RELAXED);
      else words[at >> 6] |= bit;
    }
  });
}

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
  head.resize(buckets);
  next.resize(rows);
  cpu::parallel_for(threads, buckets, [&](int, size_t begin, size_t end) {
    std::fill(head.begin() + static_cast<long>(begin), head.begin() + static_cast<long>(end), kNullRow);
  });
  cpu::parallel_for(threads, rows, [&](int, size_t begin, size_t end) {
    std::fill(next.begin() + static_cast<long>(begin), next.begin() + static_cast<long>(end), kNullRow);
  });
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
  RowNumbers by_range(offset);  // every slot is written below
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
  build_bits(keys, rows, threads);
}

}  // namespace tally::executor
