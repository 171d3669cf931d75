#include "gpu/pipeline/row_compaction.hpp"

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <vector>

#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"

namespace tally::gpu {
namespace {

template <class T>
__global__ void gather_kernel(const T* in, const uint8_t* in_valid, const int32_t* rows, int64_t n, T* out,
                              uint8_t* out_valid) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    const int32_t r = rows[k];
    out[k] = in[r];
    if (in_valid) out_valid[k] = in_valid[r];
  }
}

}  // namespace

struct RowCompactor::Impl {
  DeviceBuffer rows, count, scratch;
  struct Slot {
    DeviceBuffer data, validity;
  };
  std::vector<Slot> slots;
  int32_t* host_count = nullptr;  // pinned: the count's copy is a real async copy
  int64_t selected = 0;
  ~Impl() {
    if (host_count) (void)cudaFreeHost(host_count);
  }
};

RowCompactor::RowCompactor() : impl_(std::make_unique<Impl>()) {}
RowCompactor::~RowCompactor() = default;

int64_t RowCompactor::select(const uint8_t* mask, int64_t rows, StreamHandle stream) {
  Impl& m = *impl_;
  m.selected = 0;
  if (rows <= 0) return 0;
  // One launch covers at most a few chunks (GpuRun's joined launches), far
  // below 2^31 rows: the row numbers are int32.
  if (rows > INT32_MAX) throw Error(SqlState::program_limit_exceeded, "GPU: a launch of more than 2^31 rows");
  if (!m.host_count) TALLY_CUDA_CHECK(cudaMallocHost(&m.host_count, sizeof(int32_t)));
  m.rows.ensure(static_cast<size_t>(rows) * sizeof(int32_t), stream);
  m.count.ensure(sizeof(int32_t), stream);
  const thrust::counting_iterator<int32_t> row_numbers(0);
  size_t scratch_bytes = 0;
  TALLY_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, scratch_bytes, row_numbers, mask, m.rows.get<int32_t>(),
                                              m.count.get<int32_t>(), static_cast<int>(rows), stream));
  m.scratch.ensure(std::max<size_t>(scratch_bytes, 1), stream);
  TALLY_CUDA_CHECK(cub::DeviceSelect::Flagged(m.scratch.get(), scratch_bytes, row_numbers, mask, m.rows.get<int32_t>(),
                                              m.count.get<int32_t>(), static_cast<int>(rows), stream));
  TALLY_CUDA_CHECK(cudaMemcpyAsync(m.host_count, m.count.get(), sizeof(int32_t), cudaMemcpyDeviceToHost, stream));
  TALLY_CUDA_CHECK(cudaStreamSynchronize(stream));
  m.selected = *m.host_count;
  return m.selected;
}

const int32_t* RowCompactor::selected_rows() const { return impl_->rows.get<int32_t>(); }

ColumnPointer RowCompactor::gather(size_t slot, ColumnPointer column, uint32_t width_bytes, StreamHandle stream) {
  Impl& m = *impl_;
  if (m.slots.size() <= slot) m.slots.resize(slot + 1);
  Impl::Slot& s = m.slots[slot];
  const size_t n = static_cast<size_t>(m.selected);
  s.data.ensure(std::max<size_t>(n * width_bytes, 1), stream);
  ColumnPointer out{s.data.get(), nullptr};
  if (column.validity) {
    s.validity.ensure(std::max<size_t>(n, 1), stream);
    out.validity = s.validity.get<uint8_t>();
  }
  if (n == 0) return out;
  const int threads = 256;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((m.selected + threads - 1) / threads, 4096));
  uint8_t* out_valid = const_cast<uint8_t*>(out.validity);
  if (width_bytes == 4) {
    gather_kernel<<<blocks, threads, 0, stream>>>(static_cast<const uint32_t*>(column.data), column.validity,
                                                  m.rows.get<int32_t>(), m.selected, s.data.get<uint32_t>(), out_valid);
  } else {
    gather_kernel<<<blocks, threads, 0, stream>>>(static_cast<const uint64_t*>(column.data), column.validity,
                                                  m.rows.get<int32_t>(), m.selected, s.data.get<uint64_t>(), out_valid);
  }
  TALLY_CUDA_CHECK_LAUNCH("gather_kernel");
  return out;
}

}  // namespace tally::gpu
