#pragma once
// The CPU aggregation engine: a multi-threaded, partitioned implementation of
// the aggregation-engine seam (common/aggregate_engine.hpp), one file per
// variant in this folder.
#include <memory>

#include "common/aggregate_engine.hpp"

namespace tally::executor {

std::unique_ptr<AggregateEngine> make_cpu_engine();

}  // namespace tally::executor
