// The device side of KeyPacker (key_packing.hpp): one thread per row reads
// each key column once and writes the row's code; the parts travel by value
// in the kernel's argument, so no copy precedes the launch.
#include "gpu/pipeline/key_packing.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"

namespace tally::gpu {

namespace {

struct PackParts {
  int count = 0;
  int64_t min[kMaxDeviceKeyParts];
  uint64_t mask[kMaxDeviceKeyParts];  // the value bits
  uint32_t offset[kMaxDeviceKeyParts];
  uint8_t wide[kMaxDeviceKeyParts];  // int64 values (else int32)
  const void* data[kMaxDeviceKeyParts];
  const uint8_t* valid[kMaxDeviceKeyParts];  // nullptr: no NULL in this column, or not nullable
};

// A grid-stride loop: the grid is sized to fill the device, not the rows.
__global__ void pack_keys_kernel(const __grid_constant__ PackParts parts, int64_t rows, int64_t* out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += stride) {
    uint64_t code = 0;
    for (int i = 0; i < parts.count; ++i) {
      const int64_t v = parts.wide[i] ? static_cast<const int64_t*>(parts.data[i])[r]
                                      : static_cast<int64_t>(static_cast<const int32_t*>(parts.data[i])[r]);
      // Masked: a NULL row's stored value is arbitrary.
      uint64_t field = (static_cast<uint64_t>(v) - static_cast<uint64_t>(parts.min[i])) & parts.mask[i];
      if (parts.valid[i] != nullptr && parts.valid[i][r] == 0) field = parts.mask[i];  // NULL: all ones
      code |= field << parts.offset[i];
    }
    out[r] = static_cast<int64_t>(code);
  }
}

constexpr int kPackThreads = 256;
// Blocks per launch at most: enough resident threads for a memory-bound
// loop on any device this engine runs on; more only adds scheduling.
constexpr int64_t kPackMaxBlocks = 8192;

}  // namespace

struct KeyPacker::Impl {
  DeviceBuffer codes;
};

KeyPacker::KeyPacker() : impl_(std::make_unique<Impl>()) {}
KeyPacker::~KeyPacker() = default;

const int64_t* KeyPacker::pack(const std::vector<tally::KeyPart>& parts, const ColumnPointer* columns,
                               const uint32_t* widths, int64_t rows, StreamHandle stream) {
  if (parts.empty() || parts.size() > kMaxDeviceKeyParts)
    throw Error(SqlState::internal_error, "GPU: a packed key of " + std::to_string(parts.size()) + " columns");
  impl_->codes.ensure(static_cast<size_t>(std::max<int64_t>(rows, 1)) * sizeof(int64_t), stream);
  PackParts p;
  p.count = static_cast<int>(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    p.min[i] = parts[i].min;
    p.mask[i] = parts[i].mask();
    p.offset[i] = parts[i].offset;
    p.wide[i] = widths[i] == 8 ? 1 : 0;
    p.data[i] = columns[i].data;
    p.valid[i] = parts[i].nullable ? columns[i].validity : nullptr;
  }
  int64_t* out = impl_->codes.get<int64_t>();
  if (rows > 0) {
    const int64_t blocks = std::min<int64_t>((rows + kPackThreads - 1) / kPackThreads, kPackMaxBlocks);
    pack_keys_kernel<<<static_cast<unsigned>(blocks), kPackThreads, 0, stream>>>(p, rows, out);
    TALLY_CUDA_CHECK_LAUNCH("pack_keys_kernel");
  }
  return out;
}

}  // namespace tally::gpu
