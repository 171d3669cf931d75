#include "executor/cpu/code_sort.hpp"

#include <algorithm>
#include <vector>

#include "executor/cancel_point.hpp"
#include "executor/cpu/parallel.hpp"

namespace tally::executor::cpu {

namespace {

// Runs of at least this many codes are radix sorted: fewer passes over
// memory than a comparison sort's log2(n) (std::sort wins below ~512).
constexpr size_t kRadixSortValues = 768;

// Merges the sorted runs codes[b, m) and codes[m, e) in place (through a
// copy of the first), looking at the statement's cancel token every 64K
// values: the last merge of a global DISTINCT's values is one task of
// millions of values.
void merge_runs(uint64_t* codes, size_t b, size_t m, size_t e) {
  const std::vector<uint64_t> first(codes + b, codes + m);
  size_t i = 0, j = m, k = b;
  CancelTicker ticker;
  while (i < first.size() && j < e) {
    ticker.tick();
    codes[k++] = first[i] <= codes[j] ? first[i++] : codes[j++];
  }
  std::copy(first.begin() + static_cast<long>(i), first.end(), codes + k);
}

}  // namespace

void sort_codes(uint64_t* codes, size_t n) {
  if (n < kRadixSortValues) {
    std::sort(codes, codes + n);
    return;
  }
  // A small scratch buffer kept per thread (groups of ~1,000 values would
  // otherwise pay an allocation each); a large one only for this call, so no
  // thread keeps a large group's worth of memory after the query.
  constexpr size_t kKeptScratch = size_t{1} << 16;
  thread_local std::vector<uint64_t> kept;
  std::vector<uint64_t> large;
  if (n <= kKeptScratch && kept.size() < kKeptScratch) kept.resize(kKeptScratch);
  if (n > kKeptScratch) large.resize(n);
  uint64_t* from = codes;
  uint64_t* to = n <= kKeptScratch ? kept.data() : large.data();
  // A pass over millions of codes takes tens of milliseconds: cancel and
  // statement_timeout are looked at every kCancelStride codes of each pass
  // (blocks, so that the inner loops stay free of it).
  auto in_blocks = [n](auto&& pass) {
    for (size_t begin = 0; begin < n; begin += kCancelStride) {
      check_cancel_point();
      pass(begin, std::min(n, begin + kCancelStride));
    }
  };
  size_t counts[8][256] = {};
  in_blocks([&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      for (int b = 0; b < 8; ++b) ++counts[b][(from[i] >> (8 * b)) & 0xFF];
    }
  });
  for (int b = 0; b < 8; ++b) {
    size_t* count = counts[b];
    if (std::any_of(count, count + 256, [n](size_t c) { return c == n; })) continue;  // one byte value: no move
    size_t at = 0;
    for (int d = 0; d < 256; ++d) {
      const size_t c = count[d];
      count[d] = at;
      at += c;
    }
    in_blocks([&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) to[count[(from[i] >> (8 * b)) & 0xFF]++] = from[i];
    });
    std::swap(from, to);
  }
  if (from != codes) std::copy(from, from + n, codes);
}

void sort_codes_parallel(uint64_t* codes, size_t n, int threads) {
  if (threads <= 1 || n < kParallelSortValues) {
    sort_codes(codes, n);
    return;
  }
  const size_t per = (n + static_cast<size_t>(threads) - 1) / static_cast<size_t>(threads);
  parallel_for(threads, n, [&](int, size_t b, size_t e) { sort_codes(codes + b, e - b); });
  for (size_t width = per; width < n; width *= 2) {
    const size_t pairs = (n + 2 * width - 1) / (2 * width);
    parallel_tasks(threads, pairs, [&](int, size_t p) {
      const size_t b = p * 2 * width, m = std::min(n, b + width), e = std::min(n, b + 2 * width);
      if (m < e) merge_runs(codes, b, m, e);
    });
  }
}

}  // namespace tally::executor::cpu
