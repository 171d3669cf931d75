#include "executor/estimate/estimate_cache.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

namespace tally::executor::estimate {
namespace {

struct Entry {
  std::weak_ptr<const void> version;
  const void* identity = nullptr;  // version.get() while it lives
  std::vector<int> columns;
  CachedEstimate estimate;
};

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}

std::vector<Entry>& entries() {
  static std::vector<Entry> e;
  return e;
}

}  // namespace

std::optional<CachedEstimate> cached_estimate(const std::shared_ptr<const void>& version, const std::vector<int>& columns) {
  if (!version) return std::nullopt;
  std::lock_guard<std::mutex> lock(cache_mutex());
  for (const Entry& e : entries()) {
    // The identity alone could be a new version at a freed one's address:
    // the weak pointer must still lead to this very version.
    if (e.identity == version.get() && e.columns == columns && e.version.lock() == version) return e.estimate;
  }
  return std::nullopt;
}

void keep_estimate(const std::shared_ptr<const void>& version, std::vector<int> columns, CachedEstimate estimate) {
  if (!version) return;
  std::lock_guard<std::mutex> lock(cache_mutex());
  std::vector<Entry>& all = entries();
  std::erase_if(all, [](const Entry& e) { return e.version.expired(); });
  if (all.size() >= kMaxCachedEstimates) all.erase(all.begin());  // the oldest
  all.push_back(Entry{version, version.get(), std::move(columns), std::move(estimate)});
}

}  // namespace tally::executor::estimate
