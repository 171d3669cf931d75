// TypedAggregator for key width int32 (int2/int4/date/dictionary codes):
// one key width per file, so the two build in parallel.
#include "gpu/aggregator/typed_aggregator.cuh"

namespace tally::gpu {
std::unique_ptr<GroupByAggregator::Impl> make_int32_aggregator(const DeviceInfo& device,
                                                               GroupBySpec spec,
                                                               TableOptions options,
                                                               StreamHandle stream) {
  return std::make_unique<TypedAggregator<int32_t>>(device, std::move(spec), options, stream);
}
}  // namespace tally::gpu
