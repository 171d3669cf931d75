#pragma once
// HAVING's group tests on the device: the extracted groups (the table's,
// then the partitioned variant's compact output) that pass every test are
// compacted into output arrays, so that a HAVING keeping a few of millions
// of groups copies back those few (TPC-H Q18's subquery: 632 of 15M).
#include <cstdint>

#include "gpu/aggregator/kernels/views.cuh"
#include "gpu/aggregator/result_builder.hpp"
#include "gpu/warp_append.cuh"

namespace tally::gpu::kernels {

constexpr int kMaxSiftTests = 8;

struct SiftTests {
  int count = 0;
  aggregator::LaneTest test[kMaxSiftTests];
};

// Groups [0, n) of one region: keys, NULL flags (null: none is NULL), and
// lane l at lanes + l * stride.
struct SiftRegion {
  const int64_t* keys = nullptr;
  const uint8_t* nulls = nullptr;
  const ull* lanes = nullptr;
  uint64_t stride = 0;
  uint64_t n = 0;
};

// Appends the passing groups of `table` then `direct` to the output arrays
// (lane l at out_lanes + l * out_stride), counting them in *out_count; the
// order of the groups is free.
// Static: each aggregator instantiation (.cu) has its own copy.
static __global__ void sift_kernel(const __grid_constant__ SiftTests tests, SiftRegion table, SiftRegion direct, int lanes,
                            int64_t* out_keys, uint8_t* out_null, ull* out_lanes, uint64_t out_stride, ull* out_count) {
  const unsigned lane = threadIdx.x & 31u;
  const uint64_t total = table.n + direct.n;
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i0 = static_cast<uint64_t>(blockIdx.x) * blockDim.x + (threadIdx.x & ~31u); i0 < total; i0 += step) {
    const uint64_t i = i0 + lane;
    const bool in_table = i < table.n;
    const SiftRegion& r = in_table ? table : direct;
    const uint64_t at = in_table ? i : i - table.n;
    bool pass = i < total;
    for (int t = 0; t < tests.count && pass; ++t) pass = aggregator::lane_test_passes(tests.test[t], reinterpret_cast<const uint64_t*>(r.lanes), r.stride, at);
    const ull o = warp_append(pass, out_count);
    if (!pass) continue;
    out_keys[o] = r.keys[at];
    out_null[o] = r.nulls != nullptr ? r.nulls[at] : 0;
    for (int l = 0; l < lanes; ++l) out_lanes[static_cast<uint64_t>(l) * out_stride + o] = r.lanes[static_cast<uint64_t>(l) * r.stride + at];
  }
}

}  // namespace tally::gpu::kernels
