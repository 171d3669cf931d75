// KeyChains::build_parallel: see key_chains.hpp.
#include "executor/operators/key_chains.hpp"

#include <algorithm>
#include <memory>

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

bool integer_like(const Vector& k) {
  const Physical p = physical_of(k.type.id);
  return p == Physical::integer || p == Physical::boolean;
}
}  // namespace

void KeyChains::keep_chained(const std::vector<Vector>& keys, const std::vector<Vector>& probe,
                             std::vector<uint32_t>& keep, size_t from) const {
  const IntegerKeys ints(keys, probe);
  size_t n = from;
  for (size_t i = from; i < keep.size(); ++i) {
    const uint32_t r = keep[i];
    if (has_null_key(probe, r)) continue;  // equals nothing (a bitmap tested only some of its columns)
    for (uint32_t b = first(key_hash(probe, r)); b != kNullRow; b = next[b]) {
      if (ints.usable() ? ints.equal(r, b) : keys_equal(probe, r, keys, b)) {
        keep[n++] = r;
        break;
      }
    }
  }
  chain_check.count(keep.size() - from, n - from);
  keep.resize(n);
}

void KeyChains::select_rows(const std::vector<Vector>& keys, const std::vector<Vector>& probe, size_t rows,
                            std::vector<uint32_t>& keep, bool look_up) const {
  if (head.empty() || rows == 0) return;
  const size_t from = keep.size();
  if (!bits.empty() && probe.size() == 1 && integer_like(probe[0])) {
    matching_rows_by_bits(probe[0], rows, keep);
    if (bits_shift > 0 && look_up) keep_chained(keys, probe, keep, from);
    return;
  }
  if (matching_rows_by_column_bits(probe, rows, keep)) {
    if (look_up) keep_chained(keys, probe, keep, from);
    return;
  }
  if (!look_up) {
    keep.resize(from + rows);
    for (size_t r = 0; r < rows; ++r) keep[from + r] = static_cast<uint32_t>(r);
    return;
  }
  constexpr size_t kAhead = 32;
  // Not cleared first: key_hashes writes every row's.
  const auto hashes = std::make_unique_for_overwrite<uint64_t[]>(rows);
  key_hashes(probe, 0, rows, hashes.get());
  const IntegerKeys ints(keys, probe);
  const bool int_key = ints.usable();
  for (size_t r = 0; r < rows; ++r) {
    if (r + kAhead < rows) prefetch_bucket(hashes[r + kAhead]);
    if (r + kAhead / 2 < rows) {
      const uint32_t near = first(hashes[r + kAhead / 2]);
      if (near != kNullRow) {
        prefetch_row(near);
        if (int_key) ints.prefetch(near);
      }
    }
    if (has_null_key(probe, r)) continue;
    for (uint32_t b = head[hashes[r] & mask]; b != kNullRow; b = next[b]) {
      if (int_key ? ints.equal(r, b) : keys_equal(probe, r, keys, b)) {
        keep.push_back(static_cast<uint32_t>(r));
        break;
      }
    }
  }
  chain_check.count(rows, keep.size() - from);
}

namespace {

// The smallest and largest non-NULL value of an integer-like key column
// (hi < lo: only NULLs), on `threads` threads.
std::pair<int64_t, int64_t> key_range(const Vector& k, size_t rows, int threads) {
  const int64_t* v = k.int_data();
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
  return {*std::min_element(los.begin(), los.end()), *std::max_element(his.begin(), his.end())};
}

// Whether a bitmap of a bit per value of `span` + 1 values is exact and small enough for `rows` rows.
bool exact_span(uint64_t span, size_t rows) {
  return span < kMaxSpan && (span < kSmallSpan || span / kBitsPerRow < rows);
}

// Sets in `words` the bit of each non-NULL value's (value - lo) >> shift.
void set_bits(const Vector& k, size_t rows, int threads, int64_t lo, uint32_t shift, uint64_t* words) {
  const int64_t* v = k.int_data();
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

}  // namespace

bool KeyChains::exact_bits(const std::vector<Vector>& keys, size_t rows, uint64_t max_span, int threads, int64_t& min,
                           uint64_t& span, std::vector<uint64_t>& words) {
  if (keys.size() != 1 || !integer_like(keys[0]) || rows == 0) return false;
  if (rows < kParallelBuildRows) threads = 1;
  const auto [lo, hi] = key_range(keys[0], rows, threads);
  if (hi < lo) return false;
  const uint64_t last = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (last >= max_span) return false;
  min = lo;
  span = last + 1;
  words.assign(span / 64 + 2, 0);  // the last word stays zero, as `bits`
  set_bits(keys[0], rows, threads, lo, 0, words.data());
  return true;
}

void KeyChains::build_bits(const std::vector<Vector>& keys, size_t rows, int threads) {
  bits.clear();
  bits_span = 0;
  bits_shift = 0;
  column_bits.clear();
  if (keys.empty() || rows == 0) return;
  if (rows < kParallelBuildRows) threads = 1;
  if (keys.size() > 1) {
    for (size_t c = 0; c < keys.size(); ++c) {
      if (!integer_like(keys[c])) continue;
      const auto [lo, hi] = key_range(keys[c], rows, threads);
      if (hi < lo) continue;
      const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
      if (!exact_span(span, rows)) continue;
      ColumnBits b;
      b.column = c;
      b.min = lo;
      b.span = span + 1;
      b.words.assign(b.span / 64 + 2, 0);
      set_bits(keys[c], rows, threads, lo, 0, b.words.data());
      uint64_t set = 0;
      for (const uint64_t w : b.words) set += static_cast<uint64_t>(__builtin_popcountll(w));
      if (set * 2 <= b.span) column_bits.push_back(std::move(b));  // a fuller one rules out too few rows
    }
    return;
  }
  const Vector& k = keys[0];
  if (!integer_like(k)) return;
  const auto [lo, hi] = key_range(k, rows, threads);
  if (hi < lo) return;  // only NULL keys: the chains answer (nothing matches)
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);  // + 1 values
  if (!exact_span(span, rows)) {
    if (rows > kBucketedRows) return;
    while ((span >> bits_shift) >= kBucketBits) ++bits_shift;
  }
  bits_span = (span >> bits_shift) + 1;
  bits.assign(bits_span / 64 + 2, 0);  // the last word stays zero: out-of-span probes read it
  bits_min = lo;
  set_bits(k, rows, threads, lo, bits_shift, bits.data());
}

bool KeyChains::matching_rows_by_column_bits(const std::vector<Vector>& probe, size_t rows,
                                             std::vector<uint32_t>& keep) const {
  if (column_bits.empty()) return false;
  for (const ColumnBits& c : column_bits) {
    if (c.column >= probe.size() || !integer_like(probe[c.column])) return false;
  }
  const size_t from = keep.size();
  keep.resize(from + rows);
  uint32_t* out = keep.data();
  size_t n = from;
  for (size_t i = 0; i < column_bits.size(); ++i) {
    const ColumnBits& c = column_bits[i];
    const Vector& column = probe[c.column];
    const int64_t* v = column.int_data();
    const uint8_t* null = column.nulls.empty() ? nullptr : column.nulls.data();
    const uint64_t* words = c.words.data();
    const auto test = [&](size_t r) {
      uint64_t at = static_cast<uint64_t>(v[r]) - static_cast<uint64_t>(c.min);
      at = at < c.span ? at : c.span;  // past the span: the zero word's bit
      uint64_t in = (words[at >> 6] >> (at & 63)) & 1;
      if (null) in &= static_cast<uint64_t>(null[r] == 0);
      return in;
    };
    if (i == 0) {
      for (size_t r = 0; r < rows; ++r) {
        out[n] = static_cast<uint32_t>(r);
        n += test(r);
      }
    } else {  // narrows the rows the first kept
      const size_t end = n;
      n = from;
      for (size_t j = from; j < end; ++j) {
        const uint32_t r = out[j];
        out[n] = r;
        n += test(r);
      }
    }
  }
  keep.resize(n);
  return true;
}

void KeyChains::build_hashed(const std::vector<Vector>& keys, size_t rows, int threads) {
  // Every row's hash is written by its part: not cleared first.
  const auto hashes = std::make_unique_for_overwrite<uint64_t[]>(rows);
  cpu::parallel_for(threads, rows, [&](int, size_t b, size_t e) { key_hashes(keys, b, e, hashes.get() + b); });
  check_cancel_point();
  build_parallel(keys, rows, hashes.get(), threads);
}

void KeyChains::build_parallel(const std::vector<Vector>& keys, size_t rows, const uint64_t* hashes,
                               int threads) {
  size_t buckets = 16;
  while (buckets < rows * 2) buckets <<= 1;
  const unsigned bucket_bits = static_cast<unsigned>(__builtin_ctzll(buckets));
  if (threads <= 1 || rows < kParallelBuildRows || bucket_bits <= kRangeBits) {
    build(keys, rows, hashes);
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
