#pragma once
// The interface between GroupByAggregator and its key-type-specific
// implementations (one per key width, each instantiated in its own .cu file).
// Host-only.
#include <memory>

#include "gpu/group_by.hpp"

namespace tally::gpu {

struct GroupByAggregator::Impl {
  virtual ~Impl() = default;
  // Enqueues the chunk's kernels; overflow is observed asynchronously and
  // settled (table grown, spill merged) at the latest by settle(), finish(),
  // finish_device() and group_count().
  virtual LaunchReport consume(const ChunkPointers& chunk, Variant variant,
                               const VariantConfig& config) = 0;
  // Synchronizes and settles every overflow still unobserved; growths are
  // added to `report`.
  virtual void settle(LaunchReport& report) = 0;
  virtual KeyRange measure_key_range(const ChunkPointers& chunk) = 0;
  virtual GroupByResult finish() = 0;
  // Enqueues finish()'s device work early where no host decision is needed
  // (GroupByAggregator::begin_finish).
  virtual void begin_finish() = 0;
  // Maps the result's arrays early (GroupByAggregator::prepare_result).
  virtual void prepare_result() = 0;
  // GroupByAggregator::keep_groups_where.
  virtual void keep_groups_where(std::vector<GroupTest> tests) = 0;
  virtual void finish_device() = 0;
  virtual uint64_t group_count() = 0;
  virtual void reset() = 0;
  virtual uint64_t capacity() const = 0;
  virtual const GroupBySpec& spec() const = 0;
  virtual StreamHandle stream() const = 0;
};

std::unique_ptr<GroupByAggregator::Impl> make_int32_aggregator(const DeviceInfo& device,
                                                               GroupBySpec spec,
                                                               TableOptions options,
                                                               StreamHandle stream);
std::unique_ptr<GroupByAggregator::Impl> make_int64_aggregator(const DeviceInfo& device,
                                                               GroupBySpec spec,
                                                               TableOptions options,
                                                               StreamHandle stream);

}  // namespace tally::gpu
