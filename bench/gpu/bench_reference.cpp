#include "bench/gpu/bench_reference.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include "bench/gpu/bench_data.hpp"

namespace tally::bench {

// Below this many groups each thread keeps private arrays; above, threads
// share the arrays with relaxed atomic adds (little contention there).
constexpr uint64_t kPrivateArrayGroups = 1u << 16;

Reference compute_reference(uint64_t rows, uint64_t groups, uint64_t key_seed, uint64_t value_seed, unsigned threads) {
  Reference ref;
  ref.count.assign(groups, 0);
  ref.sum.assign(groups, 0);
  threads = std::max(1u, threads);
  std::vector<std::thread> pool;
  const bool private_arrays = groups <= kPrivateArrayGroups;
  std::vector<std::vector<int64_t>> counts(private_arrays ? threads : 0), sums(private_arrays ? threads : 0);
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const uint64_t b = rows * t / threads, e = rows * (t + 1) / threads;
      if (private_arrays) {
        std::vector<int64_t>& c = counts[t];
        std::vector<int64_t>& s = sums[t];
        c.assign(groups, 0);
        s.assign(groups, 0);
        for (uint64_t r = b; r < e; ++r) {
          const uint32_t g = group_of(r, key_seed, groups);
          ++c[g];
          s[g] += value_of(r, value_seed);
        }
      } else {
        for (uint64_t r = b; r < e; ++r) {
          const uint32_t g = group_of(r, key_seed, groups);
          std::atomic_ref<int64_t>(ref.count[g]).fetch_add(1, std::memory_order_relaxed);
          std::atomic_ref<int64_t>(ref.sum[g]).fetch_add(value_of(r, value_seed), std::memory_order_relaxed);
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  if (private_arrays)
    for (unsigned t = 0; t < threads; ++t)
      for (uint64_t g = 0; g < groups; ++g) {
        ref.count[g] += counts[t][g];
        ref.sum[g] += sums[t][g];
      }
  for (uint64_t g = 0; g < groups; ++g) ref.present += ref.count[g] > 0;
  return ref;
}

}  // namespace tally::bench
