#pragma once
// The GPU's OrderedRowsCollector (common/ordered_rows.hpp): ordered-set
// aggregates and count(DISTINCT) over columns resident in the device column
// cache keep each row's (group key, order code) in device buffers that grow
// with the chunks, and are sorted by (key, code) on the device at the end,
// so the host neither reads those columns nor touches a row. Columns that are
// not resident arrive with data and are copied up (no worse than the host's
// collection, which the wrapper would otherwise do).
// Host header: builds without nvcc (gpu_stub.cpp answers nullptr there).
#include <memory>

#include "common/ordered_rows.hpp"
#include "gpu/engine/gpu_engine.hpp"

namespace tally::gpu {

// The collector for `spec`'s ordered aggregates on `engine`'s device, or
// nullptr when this build or device cannot take them (the caller then
// collects on the host). `rows`: the most rows the input may hold (CUB's
// run-length encoding counts in int).
std::unique_ptr<tally::OrderedRowsCollector> make_device_ordered_rows(GpuEngine& engine, const tally::AggregationSpec& spec,
                                                                      uint64_t rows);

}  // namespace tally::gpu
