// TupleKeyTable::size_values: host arrays only, so it builds without CUDA
// too (the engine's finalize calls it wherever it compiles).
#include <thread>
#include <vector>

#include "common/prefault.hpp"
#include "gpu/pipeline/tuple_keys.hpp"

namespace tally::gpu {

void TupleKeyTable::size_values(size_t columns, size_t n, uint32_t narrow_mask,
                                std::vector<std::vector<int64_t>>& values,
                                std::vector<std::vector<int32_t>>& values32) {
  values.resize(columns);
  values32.resize(columns);
  // At 1e8 groups the arrays are gigabytes: their fresh pages faulted in on
  // every core, then each array zeroed on a thread of its own. An array of
  // more entries is cut (its first n are zeros too).
  std::vector<std::vector<int64_t>*> wide;
  std::vector<std::vector<int32_t>*> narrow;
  for (size_t c = 0; c < columns; ++c) {
    if (((narrow_mask >> c) & 1u) != 0) {
      values[c] = {};
      narrow.push_back(&values32[c]);
    } else {
      values32[c] = {};
      wide.push_back(&values[c]);
    }
  }
  reserve_faulted_in(wide, n);
  reserve_faulted_in(narrow, n);
  std::vector<std::thread> threads;
  for (auto* v : wide) threads.emplace_back([v, n] { v->resize(n); });
  for (auto* v : narrow) threads.emplace_back([v, n] { v->resize(n); });
  for (std::thread& t : threads) t.join();
}

}  // namespace tally::gpu
