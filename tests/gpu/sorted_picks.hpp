#pragma once
// The reference of the percentile selection's tests: every (key, code) row
// sorted by key and code, and the picks read from the sorted runs on the
// host (common/ordered_rows.hpp's pick_from_segments), keys ascending.
#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "common/ordered_rows.hpp"

namespace tally::gpu::testing {

inline KeyedPicks sorted_picks(const std::vector<uint64_t>& keys, const std::vector<uint64_t>& codes,
                               const std::vector<OrderedPick>& picks) {
  std::map<uint64_t, std::vector<uint64_t>> by_key;
  for (size_t r = 0; r < keys.size(); ++r) by_key[keys[r]].push_back(codes[r]);
  KeyedSegments segments;
  for (auto& [key, c] : by_key) {
    std::sort(c.begin(), c.end());
    segments.keys.push_back(static_cast<int64_t>(key));
    segments.counts.push_back(c.size());
    segments.codes.insert(segments.codes.end(), c.begin(), c.end());
  }
  return pick_from_segments(segments, picks);
}

}  // namespace tally::gpu::testing
