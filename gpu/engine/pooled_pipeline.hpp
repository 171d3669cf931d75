#pragma once
// A chunk pipeline as the engine pools it between queries, with the
// aggregator its last query used.
#include <memory>
#include <optional>
#include <string>

#include "gpu/group_by.hpp"
#include "gpu/pipeline/chunk_pipeline.hpp"
#include "gpu/pipeline/row_selector.hpp"

namespace tally::gpu {

// A pipeline and the aggregator its last query used, reused together (the
// aggregator launches on the pipeline's stream): a repeated query finds its
// global table, spill buffer, pinned counters and observation events made,
// and pays a reset() instead of allocations and event creation.
struct SpareAggregator {
  std::string key;  // aggregator_key() of what it was made for
  std::unique_ptr<GroupByAggregator> aggregator;
};
struct PooledPipeline {
  std::unique_ptr<ChunkPipeline> pipeline;
  std::optional<SpareAggregator> spare;  // the last finished query's
  // A scan's row selector on the pipeline's stream (scan_selection.hpp),
  // made by the first selection that takes the pipeline.
  std::unique_ptr<RowSelector> selector;
};

// What an aggregator was made for: reusable for a query with the same key.
std::string aggregator_key(const GroupBySpec& g, const TableOptions& o);

}  // namespace tally::gpu
