#pragma once
// A test of key values a scan puts in front of converting the rest of a row:
// a hash join's held side, where a probe row whose key matches nothing is
// dropped before the scan converts (and every join above copies) the rest
// of it. The joins of a chain of probe sides hand their tests down to the
// scan at the chain's bottom (ExecContext::key_tests), so a star join's
// fact table is tested against every dimension's keys at once.
#include <functional>
#include <vector>

#include "executor/expression.hpp"

namespace tally::executor {

struct KeyChains;

struct KeyTest {
  // Bound against the query block's space like the scan's filters.
  const std::vector<ExprPtr>* keys = nullptr;
  // Called on worker threads: appends to `keep` the rows of `keys` that may
  // match, every one that does among them (the join checks each again).
  std::function<void(const std::vector<Vector>& keys, size_t rows, std::vector<uint32_t>& keep)> test;
  // Where `test` is the candidate_rows of held keys' chains, those chains: a
  // scan may test stored keys against their bitmap itself (stored_key_test.hpp).
  const KeyChains* chains = nullptr;
  // Where the chains' bitmap is bucketed: the held keys' exact bitmap, made
  // on demand (KeyChains::exact_bits), for a scan that selects its rows on
  // the GPU. Empty where the caller has none to make.
  std::function<bool(uint64_t max_span, int64_t& min, uint64_t& span, std::vector<uint64_t>& words)> exact_bits;
};

}  // namespace tally::executor
