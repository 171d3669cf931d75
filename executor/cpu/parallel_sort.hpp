#pragma once
// A comparison sort on the worker pool (parallel.hpp).
#include <algorithm>
#include <cstddef>
#include <vector>

#include "executor/cpu/parallel.hpp"

namespace tally::executor::cpu {

// Rows below which a sort stays on one thread: splitting it would cost
// more than it saves.
constexpr size_t kParallelSortRows = size_t{1} << 16;

// std::sort of [data, data + n) on `threads` workers: each sorts a run of
// its own, then the runs are merged pairwise, the merges of one round side
// by side. `less` is a strict total order (rows break every tie), so the
// result is the one std::sort gives. Each part sorts with its own copy of
// `less` (a comparator may tick a CancelTicker).
template <class T, class Less>
void sort_parallel(T* data, size_t n, const Less& less, int threads) {
  if (threads <= 1 || n < kParallelSortRows) {
    std::sort(data, data + n, less);
    return;
  }
  const size_t parts = static_cast<size_t>(threads);
  std::vector<size_t> bounds(parts + 1);
  for (size_t p = 0; p <= parts; ++p) bounds[p] = n * p / parts;
  parallel_for(threads, parts, [&](int, size_t begin, size_t end) {
    for (size_t p = begin; p < end; ++p) std::sort(data + bounds[p], data + bounds[p + 1], Less(less));
  });
  for (size_t width = 1; width < parts; width *= 2) {
    std::vector<size_t> starts;
    for (size_t p = 0; p + width < parts; p += 2 * width) starts.push_back(p);
    parallel_for(threads, starts.size(), [&](int, size_t begin, size_t end) {
      for (size_t m = begin; m < end; ++m) {
        const size_t p = starts[m];
        std::inplace_merge(data + bounds[p], data + bounds[p + width], data + bounds[std::min(p + 2 * width, parts)],
                           Less(less));
      }
    });
  }
}

}  // namespace tally::executor::cpu
