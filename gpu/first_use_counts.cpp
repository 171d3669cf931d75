// first_use_line (first_use_counts.hpp).
#include "gpu/first_use_counts.hpp"

#include <cstdio>

namespace tally::gpu {

std::string first_use_line(const FirstUseSnapshot& before, const FirstUseSnapshot& after) {
  // Differences of process-wide counters; a pool that shrank (released
  // memory) grew by nothing.
  const auto delta = [](uint64_t a, uint64_t b) { return b > a ? b - a : uint64_t{0}; };
  constexpr double kMiB = 1024.0 * 1024.0;
  char line[256];
  std::snprintf(line, sizeof line,
                "GPU: first use in this process during the query: %llu pinned allocations (%.1f MB, cudaHostAlloc), "
                "%llu kernels first launched, device memory pool grew %.1f MB",
                static_cast<unsigned long long>(delta(before.pinned_allocations, after.pinned_allocations)),
                static_cast<double>(delta(before.pinned_bytes, after.pinned_bytes)) / kMiB,
                static_cast<unsigned long long>(delta(before.kernel_first_lookups, after.kernel_first_lookups)),
                static_cast<double>(delta(before.pool_reserved_bytes, after.pool_reserved_bytes)) / kMiB);
  return line;
}

}  // namespace tally::gpu
