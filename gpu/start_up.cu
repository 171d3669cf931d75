// prepare_for_queries (start_up.hpp).
#include "gpu/start_up.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <type_traits>
#include <vector>

#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/group_by.hpp"
#include "gpu/pinned_pool.cuh"

namespace tally::gpu {

namespace {
// Pinned blocks made at start: two for results of up to ~2^17 groups (key,
// two 8-byte lanes and a NULL flag per group, plus the table's slots) and
// two for up to ~2^20; PinnedBuffer::ensure takes the smallest that fits.
constexpr size_t kPinnedSmallBytes = size_t{4} << 20;
constexpr size_t kPinnedLargeBytes = size_t{32} << 20;
// Never take more than this share of the free memory for the pool at start:
// the column cache's budget was computed from the same free memory.
constexpr double kMaxPoolShareOfFree = 0.25;
}  // namespace

void prepare_for_queries(const DeviceInfo& device) {
  static std::mutex mutex;
  static std::set<int> prepared;
  std::lock_guard lock(mutex);
  if (!prepared.insert(device.ordinal).second) return;
  if (cudaSetDevice(device.ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  configure_memory_pool(device.ordinal);
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  const uint64_t want = std::min<uint64_t>(device.total_memory / kScratchMemoryDivisor,
                                           static_cast<uint64_t>(static_cast<double>(free_bytes) * kMaxPoolShareOfFree));
  cudaStream_t s = nullptr;
  if (want > 0 && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess) {
    // Allocated and freed on one stream: the pool keeps the physical memory
    // (release threshold raised) and later allocations of any size carve it.
    void* p = nullptr;
    if (cudaMallocAsync(&p, want, s) == cudaSuccess) (void)cudaFreeAsync(p, s);
    (void)cudaStreamSynchronize(s);
    (void)cudaStreamDestroy(s);
  }
  (void)cudaGetLastError();
  // Blocks go back to the process-wide pool when the buffers go.
  std::vector<PinnedBuffer> blocks(4);
  try {
    blocks[0].ensure(kPinnedSmallBytes);
    blocks[1].ensure(kPinnedSmallBytes);
    blocks[2].ensure(kPinnedLargeBytes);
    blocks[3].ensure(kPinnedLargeBytes);
  } catch (const std::exception&) {
    // No pinned memory to spare: queries allocate their own, as before.
  }
}

namespace {
// Synthetic column values of one type: keys i mod groups, values small and
// of both signs (they are aggregated, never read back).
template <typename T>
std::vector<T> synthetic(int64_t rows, uint64_t modulus, bool key) {
  std::vector<T> v(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) {
    const auto u = static_cast<uint64_t>(i);
    v[static_cast<size_t>(i)] = key ? static_cast<T>(u % modulus) : static_cast<T>(static_cast<int64_t>(u % 2001) - 1000);
  }
  return v;
}
}  // namespace

bool rehearse_aggregation(const DeviceInfo& device, const GroupBySpec& spec, Variant variant, const VariantConfig& config,
                          const TableOptions& options, int64_t rows, uint64_t groups) {
  if (rows <= 0 || groups == 0) return false;
  cudaStream_t s = nullptr;
  try {
    TALLY_CUDA_CHECK(cudaSetDevice(device.ordinal));
    TALLY_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<DeviceBuffer> columns;
    const auto upload = [&](const void* host, size_t bytes) {
      columns.emplace_back(bytes, s);
      TALLY_CUDA_CHECK(cudaMemcpyAsync(columns.back().get<char>(), host, bytes, cudaMemcpyHostToDevice, s));
      return static_cast<const void*>(columns.back().get<char>());
    };
    ChunkPointers p;
    p.rows = rows;
    const size_t n = static_cast<size_t>(rows);
    std::vector<int32_t> k32, v32;
    std::vector<int64_t> k64, v64;
    if (spec.key_type == KeyType::int32) {
      k32 = synthetic<int32_t>(rows, groups, true);
      p.key.data = upload(k32.data(), n * 4);
    } else {
      k64 = synthetic<int64_t>(rows, groups, true);
      p.key.data = upload(k64.data(), n * 8);
    }
    for (const auto& c : spec.columns) {
      if (c.type == ValueType::int32) {
        if (v32.empty()) v32 = synthetic<int32_t>(rows, 0, false);
        p.values.push_back(ColumnPointer{upload(v32.data(), n * 4), nullptr});
      } else {
        if (v64.empty()) v64 = synthetic<int64_t>(rows, 0, false);
        p.values.push_back(ColumnPointer{upload(v64.data(), n * 8), nullptr});
      }
    }
    p.key_range = KeyRange{0, static_cast<int64_t>(groups) - 1};
    {
      GroupByAggregator aggregator(device, spec, options, s);
      // Twice: a query's first launch (table empty) and a later one (merge).
      (void)aggregator.consume(p, variant, config);
      (void)aggregator.consume(p, variant, config);
      (void)aggregator.finish();
    }
    TALLY_CUDA_CHECK(cudaStreamSynchronize(s));
    columns.clear();  // freed on the stream before it goes
    TALLY_CUDA_CHECK(cudaStreamSynchronize(s));
    TALLY_CUDA_CHECK(cudaStreamDestroy(s));
    return true;
  } catch (const std::exception&) {
    if (s) {
      (void)cudaStreamSynchronize(s);
      (void)cudaStreamDestroy(s);
    }
    (void)cudaGetLastError();
    return false;
  }
}

}  // namespace tally::gpu
