#pragma once
// FrequencyProfile: the "frequency of frequencies" of a sample of key hashes,
// f[i] = number of distinct keys seen exactly i times. Every sampling
// estimator of the number of distinct values is a function of it.
// FrequencyCounter builds it incrementally (the sampler adds rounds of rows),
// counting in the same probe how often each key was seen at a run start.
#include <cstdint>
#include <span>
#include <vector>

namespace tally::executor::estimate {

struct FrequencyProfile {
  uint64_t sample_rows = 0;     // n
  uint64_t distinct = 0;        // d = sum_i f[i]
  std::vector<uint64_t> f;      // f[0] is unused (0); f.size() = max frequency + 1

  uint64_t singletons() const { return f.size() > 1 ? f[1] : 0; }
  uint64_t doubletons() const { return f.size() > 2 ? f[2] : 0; }
};

class FrequencyCounter {
 public:
  // One sampled row. run_start: its key differs from the previous row's (or
  // that is unknown and counted as a start, which keeps every estimate valid).
  void add(uint64_t hash, bool run_start = true);

  uint64_t rows() const { return rows_; }
  uint64_t run_starts() const { return run_starts_; }
  uint64_t distinct() const { return used_ + (zero_count_ != 0 ? 1 : 0); }
  // Profile of all sampled rows.
  FrequencyProfile profile() const;
  // Profile of the sampled rows that start a run.
  FrequencyProfile run_start_profile() const;

 private:
  struct Slot {
    uint64_t key = 0;  // 0 = empty; hash 0 is counted in zero_count_
    uint32_t count = 0;
    uint32_t start_count = 0;
  };
  void grow();
  FrequencyProfile build(bool starts_only) const;

  std::vector<Slot> slots_;
  uint64_t used_ = 0;
  uint64_t rows_ = 0;
  uint64_t run_starts_ = 0;
  uint32_t zero_count_ = 0;
  uint32_t zero_start_count_ = 0;
};

// Profile of a list of hashes. Hashes must be well mixed 64-bit values (e.g.
// hll_hash of the key bits, or the executor's combined multi-column key hash).
FrequencyProfile profile_from_hashes(std::span<const uint64_t> hashes);

}  // namespace tally::executor::estimate
