#include "gpu/group_by.hpp"

#include <cuda_runtime.h>

#include <utility>

#include "gpu/aggregator/chunk_ref.cuh"
#include "gpu/aggregator/group_by_impl.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"

namespace tally::gpu {

namespace {
void require_usable() {
  if (!gpu_usable()) throw Error(SqlState::internal_error, "GPU: device unusable after an earlier error: " + gpu_unusable_reason());
}
}  // namespace

GroupByAggregator::GroupByAggregator(const DeviceInfo& device, GroupBySpec spec, TableOptions options,
                                     StreamHandle stream) {
  require_usable();
  impl_ = spec.key_type == KeyType::int32 ? make_int32_aggregator(device, std::move(spec), options, stream)
                                          : make_int64_aggregator(device, std::move(spec), options, stream);
}

GroupByAggregator::~GroupByAggregator() = default;

LaunchReport GroupByAggregator::consume(const ChunkPointers& chunk, Variant variant, const VariantConfig& config) {
  require_usable();
  return impl_->consume(chunk, variant, config);
}

LaunchReport GroupByAggregator::consume_host(const ChunkPointers& host, Variant variant, const VariantConfig& config) {
  require_usable();
  const GroupBySpec& s = impl_->spec();
  const auto stream = reinterpret_cast<cudaStream_t>(impl_->stream());
  const size_t n = static_cast<size_t>(std::max<int64_t>(host.rows, 0));
  auto padded = [](size_t b) { return (b + 255) / 256 * 256; };
  const size_t key_width = s.key_type == KeyType::int32 ? 4 : 8;
  size_t total = padded(n * key_width) + (host.key.validity ? padded(n) : 0);
  // The device path's check first: the staging below is sized by the spec's
  // columns, which a chunk of more columns would overrun.
  aggregator::validate_chunk(s, host);
  auto width = [&](size_t c) { return static_cast<size_t>(value_bytes(s.columns[c].type)); };
  for (size_t c = 0; c < host.values.size(); ++c)
    total += padded(n * width(c)) + (host.values[c].validity ? padded(n) : 0);
  DeviceBuffer staging(total + 256, stream);
  char* dst = staging.get<char>();
  auto copy = [&](const void* src, size_t bytes) -> const void* {
    if (!src || bytes == 0) return src ? dst : nullptr;
    TALLY_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
    char* at = dst;
    dst += padded(bytes);
    return at;
  };
  ChunkPointers d;
  d.rows = host.rows;
  d.key_range = host.key_range;
  d.key.data = copy(host.key.data, n * key_width);
  d.key.validity = static_cast<const uint8_t*>(copy(host.key.validity, n));
  for (size_t c = 0; c < host.values.size(); ++c) {
    ColumnPointer cp;
    cp.data = copy(host.values[c].data, n * width(c));
    cp.validity = static_cast<const uint8_t*>(copy(host.values[c].validity, n));
    d.values.push_back(cp);
  }
  LaunchReport r = impl_->consume(d, variant, config);
  impl_->settle(r);  // growth shows in this chunk's report, as before
  TALLY_CUDA_CHECK(cudaStreamSynchronize(stream));  // staging is freed after this call
  return r;
}

KeyRange GroupByAggregator::measure_key_range(const ChunkPointers& chunk) { return impl_->measure_key_range(chunk); }
GroupByResult GroupByAggregator::finish() {
  require_usable();
  return impl_->finish();
}
void GroupByAggregator::begin_finish() {
  require_usable();
  impl_->begin_finish();
}
void GroupByAggregator::prepare_result() { impl_->prepare_result(); }
void GroupByAggregator::keep_groups_where(std::vector<GroupTest> tests) { impl_->keep_groups_where(std::move(tests)); }
uint64_t GroupByAggregator::group_count() { return impl_->group_count(); }
void GroupByAggregator::reset() { impl_->reset(); }
void GroupByAggregator::finish_device() { impl_->finish_device(); }
uint64_t GroupByAggregator::table_capacity() const { return impl_->capacity(); }
const GroupBySpec& GroupByAggregator::spec() const { return impl_->spec(); }
void GroupByAggregator::synchronize() {
  TALLY_CUDA_CHECK(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(impl_->stream())));
}

}  // namespace tally::gpu
