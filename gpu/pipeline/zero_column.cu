#include "gpu/pipeline/zero_column.hpp"

#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"

namespace tally::gpu {

struct ZeroColumn::Impl {
  DeviceBuffer zeros;
};

ZeroColumn::ZeroColumn() : impl_(std::make_unique<Impl>()) {}
ZeroColumn::~ZeroColumn() = default;

const void* ZeroColumn::get(int64_t rows, uint32_t width_bytes, StreamHandle stream) {
  const size_t bytes = static_cast<size_t>(rows > 0 ? rows : 1) * width_bytes;
  DeviceBuffer& z = impl_->zeros;
  if (bytes > z.bytes()) {
    z.ensure(bytes, stream);
    TALLY_CUDA_CHECK(cudaMemsetAsync(z.get(), 0, z.bytes(), stream));
  }
  return z.get();
}

}  // namespace tally::gpu
