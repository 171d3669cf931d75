#pragma once
// The GPU implementation of the planner/engine seam (executor/aggregate_engine.hpp):
// a GpuAggregationEngine runs a query's aggregation with GroupByAggregator,
// choosing the variant per chunk by the rules in variant_rules.hpp (or the
// spec's forced_variant). Host-only: builds without CUDA, where
// make_gpu_engine() returns nullptr.
//
// Not yet: the device column cache (chunks are copied from host memory for
// every query), FILTER masks (sink throws 0A000), float inputs and moments
// (can_run() says false, so the planner uses the CPU engine).
#include <memory>

#include "executor/aggregate_engine.hpp"
#include "gpu/device_info.hpp"

namespace tally::gpu {

// The engine for device `ordinal` (-1 = first device); nullptr when this build
// has no CUDA, no device exists, or the GPU was marked unusable.
std::unique_ptr<executor::AggregateEngine> make_gpu_engine(int ordinal = -1);

}  // namespace tally::gpu
