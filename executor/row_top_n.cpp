#include "executor/row_top_n.hpp"

#include <algorithm>

#include "executor/cancel_point.hpp"
#include "executor/cpu/parallel.hpp"

namespace tally::executor {

namespace {

// Below this many rows a sort of all of them is as quick.
constexpr size_t kTopNMinRows = 4096;
// The candidates' selection pays when k is at most this fraction of the rows.
constexpr size_t kTopNRowsPerKept = 8;

int compare_keys(const std::vector<SortColumn>& keys, uint32_t a, uint32_t b) {
  for (const auto& c : keys) {
    if (const int r = compare_sort_values(*c.values, a, *c.values, b, c.descending, c.nulls_first)) return r;
  }
  return 0;
}

}  // namespace

std::optional<std::vector<uint32_t>> top_n_candidates(size_t rows, const std::vector<SortColumn>& keys, size_t k,
                                                      int threads) {
  if (k == 0 || rows < kTopNMinRows || k > rows / kTopNRowsPerKept || keys.empty()) return std::nullopt;
  const auto less = [&keys](uint32_t a, uint32_t b) {
    tick_on_this_thread();
    const int r = compare_keys(keys, a, b);
    return r != 0 ? r < 0 : a < b;
  };
  // Each part's k first rows.
  const int parts = std::max(1, threads);
  std::vector<std::vector<uint32_t>> firsts(static_cast<size_t>(parts));
  cpu::parallel_for(parts, rows, [&](int part, size_t begin, size_t end) {
    std::vector<uint32_t>& mine = firsts[static_cast<size_t>(part)];
    mine.resize(end - begin);
    for (size_t r = begin; r < end; ++r) mine[r - begin] = static_cast<uint32_t>(r);
    const size_t kept = std::min(k, mine.size());
    std::partial_sort(mine.begin(), mine.begin() + static_cast<long>(kept), mine.end(), less);
    mine.resize(kept);
  });
  std::vector<uint32_t> candidates;
  for (const auto& mine : firsts) candidates.insert(candidates.end(), mine.begin(), mine.end());
  std::nth_element(candidates.begin(), candidates.begin() + static_cast<long>(k - 1), candidates.end(), less);
  const uint32_t bound = candidates[k - 1];
  // Every row not after the bound, ties of it included.
  std::vector<std::vector<uint32_t>> kept(static_cast<size_t>(parts));
  cpu::parallel_for(parts, rows, [&](int part, size_t begin, size_t end) {
    std::vector<uint32_t>& mine = kept[static_cast<size_t>(part)];
    for (size_t r = begin; r < end; ++r) {
      if (compare_keys(keys, static_cast<uint32_t>(r), bound) <= 0) mine.push_back(static_cast<uint32_t>(r));
    }
  });
  std::vector<uint32_t> out;
  for (const auto& mine : kept) out.insert(out.end(), mine.begin(), mine.end());
  if (out.size() > rows / kTopNRowsPerKept) return std::nullopt;  // ties everywhere: sort them all
  return out;
}

}  // namespace tally::executor
