// gpu/start_up.hpp's host side, which runs everywhere: the first-use line of
// EXPLAIN ANALYZE and the counters it reads. (The host heap policy that keeps
// a query's result arrays for the next one is common/heap_retention.hpp's,
// tested by tests/executor/heap_retention_test.cpp.)
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/first_use_counts.hpp"
#include "gpu/engine/start_up.hpp"

namespace tally::gpu::test {
namespace {

// EXPLAIN ANALYZE's first-use line reports differences of process-wide
// counters: what happened between the two snapshots, and no growth when the
// pool shrank.
TEST(FirstUseLine, ReportsTheDifferencesBetweenSnapshots) {
  FirstUseSnapshot before, after;
  before.pinned_allocations = 3;
  before.pinned_bytes = uint64_t{4} << 20;
  before.kernel_first_lookups = 10;
  before.pool_reserved_bytes = uint64_t{64} << 20;
  after = before;
  EXPECT_NE(first_use_line(before, after).find("0 pinned allocations (0.0 MB"), std::string::npos)
      << first_use_line(before, after);
  after.pinned_allocations = 5;
  after.pinned_bytes = before.pinned_bytes + (uint64_t{32} << 20) + (uint64_t{4} << 20);
  after.kernel_first_lookups = 17;
  after.pool_reserved_bytes = before.pool_reserved_bytes + (uint64_t{3} << 19);
  const std::string line = first_use_line(before, after);
  EXPECT_NE(line.find("2 pinned allocations (36.0 MB"), std::string::npos) << line;
  EXPECT_NE(line.find("7 kernels first launched"), std::string::npos) << line;
  EXPECT_NE(line.find("pool grew 1.5 MB"), std::string::npos) << line;
  after.pool_reserved_bytes = 0;  // released
  EXPECT_NE(first_use_line(before, after).find("pool grew 0.0 MB"), std::string::npos);
}

// The counters the line reads are the ones the pinned pool and the kernel
// attribute cache bump (first_use_counts()); the CPU-only build's snapshot
// reads them too.
TEST(FirstUseLine, SnapshotReadsTheProcessCounters) {
  const FirstUseSnapshot a = first_use_snapshot(-1);
  first_use_counts().pinned_allocations.fetch_add(2);
  first_use_counts().pinned_bytes.fetch_add(8192);
  first_use_counts().kernel_first_lookups.fetch_add(1);
  const FirstUseSnapshot b = first_use_snapshot(-1);
  EXPECT_EQ(b.pinned_allocations - a.pinned_allocations, 2u);
  EXPECT_EQ(b.pinned_bytes - a.pinned_bytes, 8192u);
  EXPECT_EQ(b.kernel_first_lookups - a.kernel_first_lookups, 1u);
  EXPECT_EQ(b.pool_reserved_bytes, 0u);  // no device named
}

}  // namespace
}  // namespace tally::gpu::test
