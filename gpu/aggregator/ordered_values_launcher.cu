// Device segmented sort of order codes (gpu/ordered_values_sort.hpp).
#include <cub/device/device_segmented_sort.cuh>
#include <cuda_runtime.h>

#include <climits>

#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/gpu_health.hpp"
#include "gpu/ordered_values_sort.hpp"

namespace tally::gpu {

bool sort_segments_on_device(uint64_t* codes, size_t n, const uint64_t* offsets, size_t segments) {
  if (n == 0 || segments == 0) return true;
  if (!gpu_usable() || n > static_cast<size_t>(INT_MAX) || segments > static_cast<size_t>(INT_MAX)) return false;
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    (void)cudaGetLastError();
    return false;
  }
  cudaStream_t stream = nullptr;
  TALLY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } guard{stream};
  const size_t code_bytes = n * sizeof(uint64_t);
  const size_t offset_bytes = (segments + 1) * sizeof(uint64_t);
  DeviceBuffer in(code_bytes, stream), out(code_bytes, stream), offs(offset_bytes, stream);
  TALLY_CUDA_CHECK(cudaMemcpyAsync(in.get(), codes, code_bytes, cudaMemcpyHostToDevice, stream));
  TALLY_CUDA_CHECK(cudaMemcpyAsync(offs.get(), offsets, offset_bytes, cudaMemcpyHostToDevice, stream));
  const auto* begin = offs.get<const uint64_t>();
  size_t temp_bytes = 0;
  TALLY_CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(nullptr, temp_bytes, in.get<const uint64_t>(),
                                                       out.get<uint64_t>(), static_cast<int>(n),
                                                       static_cast<int>(segments), begin, begin + 1, stream));
  DeviceBuffer temp(temp_bytes == 0 ? 1 : temp_bytes, stream);
  TALLY_CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(temp.get(), temp_bytes, in.get<const uint64_t>(),
                                                       out.get<uint64_t>(), static_cast<int>(n),
                                                       static_cast<int>(segments), begin, begin + 1, stream));
  TALLY_CUDA_CHECK(cudaMemcpyAsync(codes, out.get(), code_bytes, cudaMemcpyDeviceToHost, stream));
  TALLY_CUDA_CHECK(cudaStreamSynchronize(stream));
  return true;
}

}  // namespace tally::gpu
