// copy_host_ranges (gpu/pipeline/host_copies.hpp): every byte of every range
// in place whatever the sizes (empty, below the parallel threshold, pieces
// that do not divide the range), and concurrent callers sharing the threads.
#include "gpu/pipeline/host_copies.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

namespace tally::gpu {
namespace {

std::vector<uint8_t> pattern(size_t bytes, uint32_t seed) {
  std::vector<uint8_t> v(bytes);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(x >> 24);
  }
  return v;
}

TEST(HostCopies, EveryRangeArrivesWhole) {
  const size_t sizes[] = {0, 1, 4096, (size_t{1} << 20) - 3, (size_t{4} << 20) + 12345, size_t{9} << 20};
  std::vector<std::vector<uint8_t>> from, to;
  std::vector<HostRange> ranges;
  for (size_t i = 0; i < std::size(sizes); ++i) {
    from.push_back(pattern(sizes[i], static_cast<uint32_t>(i)));
    to.emplace_back(sizes[i], 0);
  }
  for (size_t i = 0; i < from.size(); ++i) ranges.push_back({to[i].data(), from[i].data(), sizes[i]});
  copy_host_ranges(ranges);
  for (size_t i = 0; i < from.size(); ++i) EXPECT_EQ(to[i], from[i]) << "range of " << sizes[i] << " bytes";
}

TEST(HostCopies, ConcurrentCallersEachGetTheirBytes) {
  constexpr int kCallers = 6;
  constexpr size_t kBytes = (size_t{3} << 20) + 777;
  std::vector<std::vector<uint8_t>> from, to;
  for (int c = 0; c < kCallers; ++c) {
    from.push_back(pattern(kBytes, static_cast<uint32_t>(100 + c)));
    to.emplace_back(kBytes, 0);
  }
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 20; ++round) {
        const HostRange r{to[c].data(), from[c].data(), kBytes};
        copy_host_ranges({&r, 1});
      }
    });
  }
  for (auto& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(to[c], from[c]) << "caller " << c;
}

}  // namespace
}  // namespace tally::gpu
