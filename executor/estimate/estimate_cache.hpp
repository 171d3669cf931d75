#pragma once
// Group-count estimates of one table snapshot, kept for the next statement
// over the same snapshot: an estimate reads every chunk's key column at a
// stride and merges every chunk's sketch (milliseconds at 100M rows), and
// the answer depends on nothing else. Keyed by the snapshot's version
// (TableSnapshot::version(): the same version shows the same chunks) and the
// key columns; an entry whose version is gone (a later INSERT, COPY, DROP
// made a new one) is never found again and is dropped when the cache is full.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tally::executor::estimate {

struct CachedEstimate {
  uint64_t groups = 0;
  std::string source;  // source_name() of the estimate
};

// The estimate of the groups of `columns` (table column numbers, in the
// key's order) over `version`, when one was kept.
std::optional<CachedEstimate> cached_estimate(const std::shared_ptr<const void>& version, const std::vector<int>& columns);
void keep_estimate(const std::shared_ptr<const void>& version, std::vector<int> columns, CachedEstimate estimate);

// At most this many estimates are kept.
constexpr size_t kMaxCachedEstimates = 128;

}  // namespace tally::executor::estimate
