// gpu/start_up.hpp's host side, which runs everywhere: once the GPU engine's
// allocator thresholds are set, a query-sized set of result arrays built
// again after the previous set was freed reuses its pages (no minor faults),
// where glibc's dynamic thresholds hand out fresh ones each time.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/first_use_counts.hpp"
#include "gpu/start_up.hpp"

namespace tally::gpu::test {
namespace {

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Arrays as a 2^16-group result: keys, two 8-byte lanes, NULL flags, a
// 128-bit sum (~3 MB), written through and dropped; returns the faults.
long build_and_drop(size_t groups) {
  const long before = minor_faults();
  {
    std::vector<int64_t> keys(groups, 1), counts(groups, 2), sums(groups, 3);
    std::vector<uint8_t> nulls(groups, 0);
    std::vector<__int128> wide(groups, 4);
    volatile int64_t sink = keys[groups - 1] + counts[groups / 2] + sums[0] + nulls[1] + static_cast<int64_t>(wide[7]);
    (void)sink;
  }
  return minor_faults() - before;
}

TEST(StartUp, RetainedHostMemoryIsReusedWithoutPageFaults) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "the thresholds are glibc's";
#endif
  retain_freed_host_memory();
  const size_t groups = size_t{1} << 16;
  (void)build_and_drop(groups);  // the first set faults its pages in
  (void)build_and_drop(groups);
  // ~780 pages per set; a few may still fault (the test's own allocations).
  EXPECT_LT(build_and_drop(groups), 40);
}

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
