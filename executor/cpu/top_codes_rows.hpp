#pragma once
// A top-n per partition's rows on the host without a sort: the ordered
// aggregates' collector (common/ordered_rows.hpp) for slots whose picks
// all have a top-codes shape (common/ordered_pick.hpp: nth of the k first
// ranks from one end). Each key keeps its row count and its k best codes,
// as the GPU's top-codes table does, so a row costs a probe and a
// comparison instead of being kept and sorted with every other.
//
// The keys' entries live in partitions owned by one worker at a time: each
// chunk's rows are first split by partition on every thread (key and code
// side by side), then each partition's rows are applied by the worker that
// took it. No entry is shared between threads and none is kept twice, so
// the memory is one entry per key, whatever the number of threads, and the
// end needs no merge.
#include <memory>
#include <optional>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "common/ordered_rows.hpp"

namespace tally::executor::cpu {

// The collector for `shapes` (one per slot, in slot order), or nullptr
// when a slot has none. `threads` as the run's.
std::unique_ptr<OrderedRowsCollector> make_top_codes_rows(const AggregationSpec& spec,
                                                          const std::vector<std::optional<TopCodesShape>>& shapes,
                                                          int threads);

}  // namespace tally::executor::cpu
