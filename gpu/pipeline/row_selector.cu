#include "gpu/pipeline/row_selector.hpp"

#include <deque>

#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/pipeline/column_programs.hpp"
#include "gpu/pipeline/row_compaction.hpp"

namespace tally::gpu {
namespace {

// Clears the mask of each row whose key is NULL or has no bit set.
template <class T>
__global__ void key_bits_kernel(const T* keys, const uint8_t* valid, int64_t rows, const uint64_t* bits, int64_t min,
                                uint64_t span, uint32_t shift, uint8_t* mask) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += stride) {
    if (mask[r] == 0) continue;
    const uint64_t at = (static_cast<uint64_t>(static_cast<int64_t>(keys[r])) - static_cast<uint64_t>(min)) >> shift;
    const bool in = at < span && ((bits[at >> 6] >> (at & 63)) & 1) != 0 && (valid == nullptr || valid[r] != 0);
    if (!in) mask[r] = 0;
  }
}

}  // namespace

struct DeviceBitmaps::Impl {
  std::deque<DeviceBuffer> copies;
};

DeviceBitmaps::DeviceBitmaps() : impl_(std::make_unique<Impl>()) {}
DeviceBitmaps::~DeviceBitmaps() = default;

const uint64_t* DeviceBitmaps::add(const uint64_t* words, size_t count, StreamHandle stream) {
  impl_->copies.emplace_back(std::max<size_t>(count, 1) * sizeof(uint64_t), stream);
  DeviceBuffer& copy = impl_->copies.back();
  if (count > 0) {
    TALLY_CUDA_CHECK(cudaMemcpyAsync(copy.get(), words, count * sizeof(uint64_t), cudaMemcpyHostToDevice, stream));
  }
  TALLY_CUDA_CHECK(cudaStreamSynchronize(stream));
  return copy.get<uint64_t>();
}

struct RowSelector::Impl {
  DeviceProgramEvaluator evaluator;
  RowCompactor compactor;
  uint64_t lookups_owner = 0;
};

RowSelector::RowSelector() : impl_(std::make_unique<Impl>()) {}
RowSelector::~RowSelector() = default;

void RowSelector::use_lookups(uint64_t owner, const std::vector<tally::ProgramColumn>& lookups, StreamHandle stream) {
  Impl& m = *impl_;
  if (m.lookups_owner == owner) return;
  std::vector<tally::LookupColumn> columns;
  for (const tally::ProgramColumn& c : lookups) columns.push_back(tally::LookupColumn{c});
  m.evaluator.set_lookups(columns, stream);
  m.lookups_owner = owner;
}

bool RowSelector::select(const tally::ColumnProgram& filter, const std::vector<ColumnPointer>& columns,
                         const std::vector<tally::ColumnWidth>& widths, int64_t rows,
                         const std::vector<DeviceKeyTest>& tests, uint32_t offset, StreamHandle stream,
                         std::vector<uint32_t>& out, ProgramKernel kernel) {
  out.clear();
  if (rows <= 0) return true;
  Impl& m = *impl_;
  m.evaluator.evaluate(filter, {}, columns, widths, rows, stream, kernel);
  auto* mask = const_cast<uint8_t*>(m.evaluator.mask());
  const int threads = 256;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((rows + threads - 1) / threads, 4096));
  for (const DeviceKeyTest& t : tests) {
    const ColumnPointer& key = columns[t.column];
    if (widths[t.column] == tally::ColumnWidth::int32) {
      key_bits_kernel<<<blocks, threads, 0, stream>>>(static_cast<const int32_t*>(key.data), key.validity, rows, t.bits,
                                                      t.min, t.span, t.shift, mask);
    } else {
      key_bits_kernel<<<blocks, threads, 0, stream>>>(static_cast<const int64_t*>(key.data), key.validity, rows, t.bits,
                                                      t.min, t.span, t.shift, mask);
    }
    TALLY_CUDA_CHECK_LAUNCH("key_bits_kernel");
  }
  if (m.evaluator.errors(stream) != 0) return false;
  const int64_t selected = m.compactor.select(mask, rows, stream);
  out.resize(static_cast<size_t>(selected));
  if (selected > 0) {
    // int32 row numbers below 2^31 (RowCompactor) have uint32's bits.
    TALLY_CUDA_CHECK(cudaMemcpyAsync(out.data(), m.compactor.selected_rows(), out.size() * sizeof(uint32_t),
                                     cudaMemcpyDeviceToHost, stream));
    TALLY_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  if (offset != 0) {
    for (uint32_t& r : out) r += offset;
  }
  return true;
}

}  // namespace tally::gpu
