#pragma once
// Multi-threaded CPU reference for the benchmark: per group index, the row
// count and the exact sum of values, regenerated from the generator.
#include <cstdint>
#include <vector>

namespace tally::bench {

struct Reference {
  std::vector<int64_t> count;  // per group index
  std::vector<int64_t> sum;
  uint64_t present = 0;        // groups with count > 0
};

Reference compute_reference(uint64_t rows, uint64_t groups, uint64_t key_seed, uint64_t value_seed, unsigned threads);

}  // namespace tally::bench
