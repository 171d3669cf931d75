#pragma once
// Host side of the extraction: the GroupByResult from the extracted groups
// the aggregator copied into pinned memory, and the early allocation of its
// arrays while the GPU still works (GroupByAggregator::prepare_result).
// Host-only: no CUDA types.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "common/group_test.hpp"
#include "common/host_device.hpp"

#include "gpu/group_by_spec.hpp"
#include "gpu/lane_plan.hpp"

namespace tally::gpu::aggregator {

// Extracted groups in pinned memory: `table_groups` groups of the global
// table at [0, table_groups) and `direct_groups` groups of the partitioned
// variant's compact output at [direct_at, direct_at + direct_groups) of each
// region (keys, and each lane at lanes + lane * stride); NULL flags for the
// table groups.
struct ExtractedGroups {
  const char* keys = nullptr;
  const uint64_t* lanes = nullptr;
  const uint8_t* nulls = nullptr;
  uint64_t stride = 0;
  uint64_t table_groups = 0;
  uint64_t direct_at = 0;
  uint64_t direct_groups = 0;
};

// A group test as the lanes it reads: the count, and the value (64-bit, or
// an exact sum's low word with value_hi_lane its high word; -1: none). The
// device's sift (kernels/sift_kernel.cuh) and keep_passing_groups read
// them alike.
struct LaneTest {
  int count_lane = 0;
  int value_lane = -1;
  int value_hi_lane = -1;
  ScaledGroupTest test;
};

// Whether the group at `at` passes t; lane l's values are at lanes + l * stride.
TALLY_HD bool lane_test_passes(const LaneTest& t, const uint64_t* lanes, uint64_t stride, uint64_t at) {
  const auto count = static_cast<int64_t>(lanes[static_cast<uint64_t>(t.count_lane) * stride + at]);
  if (t.value_lane < 0) return t.test.passes(count);
  if (count == 0) return false;  // the value is NULL: the comparison is not true
  const uint64_t low = lanes[static_cast<uint64_t>(t.value_lane) * stride + at];
  if (t.value_hi_lane < 0) return t.test.passes(static_cast<int64_t>(low));
  const auto high = static_cast<int64_t>(lanes[static_cast<uint64_t>(t.value_hi_lane) * stride + at]);
  return t.test.passes(static_cast<__int128>(low) + static_cast<__int128>(high) * (static_cast<__int128>(1) << 32));
}

// `tests` as lane tests of `plan`; a test of a lane the plan lacks, or of an
// aggregate other than count, sum, min or max, is left out (it passes).
std::vector<LaneTest> lane_tests(const GroupBySpec& spec, const LanePlan& plan, const std::vector<GroupTest>& tests);

// The groups of `groups` that every test passes, moved to the front of the
// table region in order (the direct region then empty), in place: the
// memory must be the caller's to write (the extractor's pinned staging).
// `dropped` counts those left out. Where the tests keep more than half the
// groups (or more than the table region holds), or test no lane this plan
// has, `groups` is returned as it is (the executor's filter then drops
// what it rejects).
ExtractedGroups keep_passing_groups(const GroupBySpec& spec, const LanePlan& plan, const std::vector<GroupTest>& tests,
                                    const ExtractedGroups& groups, uint64_t& dropped);

// The double an fmin/fmax lane holds (views.cuh's ordered_float, inverted).
double float_from_ordered(uint64_t bits);

// The compact result form (GroupBySpec::compact_result; empty otherwise):
// per aggregate, the aggregate whose `nonnull` holds its count
// (GroupByResult::count_source). Aggregates whose count lane counts every
// row of a group share the first one's; moments keep their own (their
// partial states take it as n).
std::vector<int> count_sources(const GroupBySpec& spec, const LanePlan& plan);
// Whether aggregate a's sums come back as int64 (AggregateValues::value64):
// the compact form, a sum or avg held by one 64-bit lane.
bool int64_sums(const GroupBySpec& spec, const LanePlan& plan, size_t a);

// The sources of an array that holds their words unchanged (ArrayJob,
// PlacedArray): the keys, the NULL flags, or a lane (0, 1, ...); kConverted:
// an array computed from its lanes.
constexpr int kKeysSource = -1;
constexpr int kNullFlagsSource = -2;
constexpr int kConverted = -3;

// A result array sized for the groups, whose elements are its source's
// words in group order (the table region's, then the direct region's; the
// direct region's NULL flags stay zero): bytes the extractor copies there
// from the device, 8 a group (1 for the NULL flags).
struct PlacedArray {
  int source = kConverted;
  unsigned char* data = nullptr;
};

// Where every array of `result` takes its source's words unchanged (keys,
// NULL flags, counts, integer extremes, int64 sums of the compact form,
// float sums and moments): sets `result` up as build_result does (ops,
// count sources), sizes each array for `groups` zeroed elements, and
// returns them, so that a large result's copy back lands in its arrays with
// no pass over staging. nullopt, `result` to be built, where some array
// is computed from its lanes (wide sums, float extremes).
std::optional<std::vector<PlacedArray>> place_result(const GroupBySpec& spec, const LanePlan& plan,
                                                     GroupByResult& result, uint64_t groups);

// Builds the result column at a time: one tight loop per aggregate and lane,
// into `spare`'s arrays (prepare_result_arrays) when they are large enough.
// Marks each region with the thread's page faults in it (EXPLAIN ANALYZE's
// end path).
GroupByResult build_result(const GroupBySpec& spec, const LanePlan& plan, GroupByResult spare,
                           const ExtractedGroups& groups);

// Grows `spare`'s arrays towards `groups` entries a step at a time while
// `gpu_busy()` says the GPU is still working: the zero fill is the pages'
// first touch, so build_result() then writes into pages already mapped.
// Returns whether the GPU was still busy at the end.
bool prepare_result_arrays(GroupByResult& spare, const GroupBySpec& spec, const LanePlan& plan, uint64_t groups,
                           const std::function<bool()>& gpu_busy);

}  // namespace tally::gpu::aggregator
