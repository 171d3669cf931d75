#pragma once
// ORDER BY ... LIMIT k over many rows: the rows that can be among the first
// k, found without sorting every row. Each worker keeps the k first rows of
// its part of the rows (a partial sort); the k-th of those candidates
// bounds the answer, and one pass over all rows keeps every row that is not
// after it (ties included). Sorting those rows with sort_rows then gives the
// same first k rows, in the same order, as sorting all of them would:
// sort_rows orders rows as compare_sort_values does, breaking its ties.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "executor/row_sort.hpp"

namespace tally::executor {

// Offers `value` to `heap`, the k first values met so far by `less` with
// the last of them on top (std::push_heap's order): kept while there are
// fewer than k, or where it comes before that last one, which it replaces.
template <typename T, typename Less>
void keep_first(std::vector<T>& heap, size_t k, T value, Less less) {
  if (heap.size() < k) {
    heap.push_back(value);
    std::push_heap(heap.begin(), heap.end(), less);
  } else if (less(value, heap.front())) {
    std::pop_heap(heap.begin(), heap.end(), less);
    heap.back() = value;
    std::push_heap(heap.begin(), heap.end(), less);
  }
}

// The rows of [0, rows) that are not after the k-th row by `keys` (k >= 1),
// ascending; none when that would not be many fewer than `rows` (then
// sorting every row costs about the same).
std::optional<std::vector<uint32_t>> top_n_candidates(size_t rows, const std::vector<SortColumn>& keys, size_t k,
                                                      int threads);

}  // namespace tally::executor
