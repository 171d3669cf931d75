#pragma once
// The GPU's part of ordered-set aggregates and count(DISTINCT)
// (PartialOp::ordered_values, count_distinct): the host has put every row's
// order code (common/ordered_code.hpp) into its group's segment
// [offsets[g], offsets[g + 1]); the device sorts every segment at once
// (CUB's segmented sort), so a query's hash-table aggregates run on the GPU
// and its ordered ones by device sort, joined by group on the host.
// Host header: builds without nvcc (gpu_stub.cpp answers false there).
#include <cstddef>
#include <cstdint>

namespace tally::gpu {

// Segments below this many codes in all are sorted on the host: the copies
// to and from the device cost more than the sort.
constexpr size_t kDeviceSegmentSortMinCodes = size_t{1} << 20;

// Sorts codes[offsets[g], offsets[g + 1]) ascending for every g < segments,
// in place, on the current device. False (codes untouched) when no usable
// device exists or the input is beyond what one CUB call takes (2^31
// codes); the caller then sorts on the host. A CUDA error throws XX000
// (cuda_check.cuh).
bool sort_segments_on_device(uint64_t* codes, size_t n, const uint64_t* offsets, size_t segments);

}  // namespace tally::gpu
