#include "executor/cpu/group_index.hpp"

#include <algorithm>
#include <utility>

#include "executor/cpu/parallel.hpp"

namespace tally::executor::cpu {

GroupIndex::GroupIndex(const AggregationResult& r, int threads) {
  const size_t n = r.keys.size();
  auto valid = [&](size_t g) { return g >= r.key_valid.size() || r.key_valid[g] != 0; };
  if (n < kParallelGroups) threads = 1;
  std::vector<std::pair<int64_t, int64_t>> ranges(static_cast<size_t>(std::max(threads, 1)), {INT64_MAX, INT64_MIN});
  parallel_for(threads, n, [&](int t, size_t b, size_t e) {
    auto& [lo, hi] = ranges[static_cast<size_t>(t)];
    for (size_t g = b; g < e; ++g) {
      if (!valid(g)) continue;
      lo = std::min(lo, r.keys[g]);
      hi = std::max(hi, r.keys[g]);
    }
  });
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto& [l, h] : ranges) {
    lo = std::min(lo, l);
    hi = std::max(hi, h);
  }
  const uint64_t span = hi >= lo ? static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) : 0;
  if (hi >= lo && span < kDenseSpanPerGroup * n + 1024) {
    base_ = lo;
    resize_prefaulted(dense_, span + 1);
    parallel_for(threads, span + 1, [&](int, size_t b, size_t e) {
      std::fill(dense_.begin() + static_cast<std::ptrdiff_t>(b), dense_.begin() + static_cast<std::ptrdiff_t>(e),
                KeyTable::kNotFound);
    });
    // Keys are distinct: every slot has one writer.
    parallel_for(threads, n, [&](int, size_t b, size_t e) {
      for (size_t g = b; g < e; ++g) {
        if (valid(g)) dense_[static_cast<uint64_t>(r.keys[g]) - static_cast<uint64_t>(lo)] = static_cast<uint32_t>(g);
        else null_group_ = static_cast<uint32_t>(g);
      }
    });
    return;
  }
  table_ = KeyTable(n);
  for (size_t g = 0; g < n; ++g) {
    if (valid(g)) table_.find_or_insert(r.keys[g]);
    else null_group_ = table_.add_unindexed(r.keys[g]);
  }
}

}  // namespace tally::executor::cpu
