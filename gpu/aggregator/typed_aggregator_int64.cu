// TypedAggregator for key width int64 (int8/timestamp): one key width per
// file, so the two build in parallel.
#include "gpu/aggregator/typed_aggregator.cuh"

namespace tally::gpu {
std::unique_ptr<GroupByAggregator::Impl> make_int64_aggregator(const DeviceInfo& device,
                                                               GroupBySpec spec,
                                                               TableOptions options,
                                                               StreamHandle stream) {
  return std::make_unique<TypedAggregator<int64_t>>(device, std::move(spec), options, stream);
}
}  // namespace tally::gpu
