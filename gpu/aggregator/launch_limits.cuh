#pragma once
// Checks a requested launch configuration against the device and a kernel
// (block size, registers, occupancy, dynamic shared memory) and says in the
// LaunchReport what it clamped. Kernel attributes and occupancy are cached per
// (device, kernel, ...): the runtime answers each query in microseconds, and
// a query of many chunks would ask the same questions for every chunk on the
// host's critical path. They never change for a loaded kernel.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "common/error.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/rules/device_info.hpp"
#include "gpu/first_use_counts.hpp"
#include "gpu/simple_format.hpp"
#include "gpu/rules/variant_config.hpp"

namespace tally::gpu::aggregator {

// Fill kernels: blocks per SM for memory-bound grid-stride loops.
constexpr int kFillBlocksPerSm = 8;

inline int fill_grid(const DeviceInfo& device) {
  return std::max(1, device.sm_count * kFillBlocksPerSm);
}

struct OccupancyCache {
  std::mutex mutex;
  std::map<std::pair<int, const void*>, cudaFuncAttributes> attributes;
  std::map<std::tuple<int, const void*, int, size_t>, int> blocks;
};
inline OccupancyCache& occupancy_cache() {
  static OccupancyCache* cache = new OccupancyCache;  // never destroyed: used until exit
  return *cache;
}
inline cudaFuncAttributes cached_attributes(int device, const void* kernel) {
  OccupancyCache& c = occupancy_cache();
  {
    std::lock_guard lock(c.mutex);
    const auto it = c.attributes.find({device, kernel});
    if (it != c.attributes.end()) return it->second;
  }
  cudaFuncAttributes attr{};
  TALLY_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  first_use_counts().kernel_first_lookups.fetch_add(
      1, std::memory_order_relaxed);  // this kernel's first use here
  std::lock_guard lock(c.mutex);
  c.attributes[{device, kernel}] = attr;
  return attr;
}
inline int cached_occupancy(int device, const void* kernel, int threads, size_t smem) {
  OccupancyCache& c = occupancy_cache();
  const auto key = std::make_tuple(device, kernel, threads, smem);
  {
    std::lock_guard lock(c.mutex);
    const auto it = c.blocks.find(key);
    if (it != c.blocks.end()) return it->second;
  }
  int blocks = 0;
  TALLY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, smem));
  std::lock_guard lock(c.mutex);
  c.blocks[key] = blocks;
  return blocks;
}

// cudaFuncSetAttribute(MaxDynamicSharedMemorySize) per (device, kernel):
// the largest size set so far. The attribute is an upper bound a launch may
// use, so a launch needing no more than what is set calls nothing (the
// runtime call takes microseconds); it only ever grows, so a concurrent
// launch of the same kernel with a larger size can never be lowered under
// another's feet (unconditional calls could).
struct SharedLimitCache {
  std::mutex mutex;
  std::map<std::pair<int, const void*>, size_t> bytes;
};
inline SharedLimitCache& shared_limit_cache() {
  static SharedLimitCache* cache = new SharedLimitCache;  // never destroyed: used until exit
  return *cache;
}
// Makes `kernel` launchable with `bytes` of dynamic shared memory; returns
// whether the runtime had to be called (false: an earlier call covers it).
inline bool ensure_dynamic_shared(int device, const void* kernel, size_t bytes) {
  SharedLimitCache& c = shared_limit_cache();
  std::lock_guard lock(c.mutex);  // held across the call: the recorded size is the set one
  size_t& set = c.bytes[{device, kernel}];
  if (set >= bytes && set > 0) return false;
  TALLY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)));
  set = std::max(set, bytes);
  return true;
}

// The requested configuration within the device's limits and the values the
// kernels support.
inline VariantConfig checked_config(const DeviceInfo& device, const VariantConfig& in,
                                    LaunchReport& report) {
  VariantConfig c = in;
  const int tpb =
      std::clamp((c.launch.threads_per_block + 31) / 32 * 32, 32, device.max_threads_per_block);
  if (tpb != c.launch.threads_per_block)
    report.adjustments.push_back(
        simple_format("threads_per_block {} -> {}", c.launch.threads_per_block, tpb));
  c.launch.threads_per_block = tpb;
  int rpt = c.launch.rows_per_thread >= 8   ? 8
            : c.launch.rows_per_thread >= 4 ? 4
            : c.launch.rows_per_thread >= 2 ? 2
                                            : 1;
  if (rpt != c.launch.rows_per_thread)
    report.adjustments.push_back(simple_format("rows_per_thread {} -> {} (supported: 1, 2, 4, 8)",
                                               c.launch.rows_per_thread, rpt));
  c.launch.rows_per_thread = rpt;
  const int bps = std::clamp(c.launch.blocks_per_sm, 1, std::max(1, device.max_blocks_per_sm));
  if (bps != c.launch.blocks_per_sm)
    report.adjustments.push_back(
        simple_format("blocks_per_sm {} -> {}", c.launch.blocks_per_sm, bps));
  c.launch.blocks_per_sm = bps;
  const int fill = std::clamp(c.launch.fill_factor_percent, 10, 95);
  if (fill != c.launch.fill_factor_percent)
    report.adjustments.push_back(
        simple_format("fill_factor_percent {} -> {}", c.launch.fill_factor_percent, fill));
  c.launch.fill_factor_percent = fill;
  return c;
}

// Lowers threads_per_block to what `kernel` can launch with (its register
// use limits the block size; the generic-lane kernels need more registers).
template <class Kernel>
void clamp_threads(const DeviceInfo& device, Kernel kernel, VariantConfig& c,
                   LaunchReport& report) {
  const cudaFuncAttributes attr =
      cached_attributes(device.ordinal, reinterpret_cast<const void*>(kernel));
  const int limit = attr.maxThreadsPerBlock / 32 * 32;
  if (limit >= 32 && c.launch.threads_per_block > limit) {
    report.adjustments.push_back(
        simple_format("threads_per_block {} -> {} (kernel uses {} registers per thread)",
                      c.launch.threads_per_block, limit, attr.numRegs));
    c.launch.threads_per_block = limit;
  }
}

// Clamps blocks_per_sm to what the occupancy calculator allows for `kernel`;
// returns the grid for `work_items` (at most one block per item).
template <class Kernel>
int occupancy_grid(const DeviceInfo& device, Kernel kernel, VariantConfig& c, size_t smem,
                   int64_t work_items, LaunchReport& report) {
  const int max_blocks = cached_occupancy(device.ordinal, reinterpret_cast<const void*>(kernel),
                                          c.launch.threads_per_block, smem);
  if (max_blocks < 1)
    throw Error(
        SqlState::internal_error,
        simple_format("GPU: kernel cannot launch with {} threads and {} bytes of shared memory",
                      c.launch.threads_per_block, smem));
  if (c.launch.blocks_per_sm > max_blocks) {
    report.adjustments.push_back(
        simple_format("blocks_per_sm {} -> {} (occupancy limit at {} B shared memory)",
                      c.launch.blocks_per_sm, max_blocks, smem));
    c.launch.blocks_per_sm = max_blocks;
  }
  const int64_t grid =
      std::min<int64_t>(static_cast<int64_t>(device.sm_count) * c.launch.blocks_per_sm,
                        std::max<int64_t>(work_items, 1));
  return static_cast<int>(grid);
}

}  // namespace tally::gpu::aggregator
