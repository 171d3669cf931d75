// prepare_for_queries (start_up.hpp).
#include "gpu/engine/start_up.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <type_traits>
#include <vector>

#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/group_by.hpp"
#include "gpu/pinned_pool.cuh"
#include "gpu/rules/variant_rules.hpp"

namespace tally::gpu {

namespace {
// Pinned blocks made at start, graded so that PinnedBuffer::ensure (which
// takes the smallest block that fits) finds one for each buffer of several
// aggregators alive at once, as in a cold query's race (an aggregator holds
// two: its observation staging, 256 B, and its result staging): small ones
// for staging and small results, then results of up to ~2^17 groups (key,
// two 8-byte lanes and a NULL flag per group, plus the table's slots), then
// up to ~2^20. 16 blocks, 145 MB; kPinnedPoolKeep (pinned_pool.cuh) is 24.
constexpr size_t kPinnedTinyBytes = size_t{64} << 10;
constexpr int kPinnedTinyBlocks = 8;
constexpr size_t kPinnedSmallBytes = size_t{4} << 20;
constexpr int kPinnedSmallBlocks = 4;
constexpr size_t kPinnedLargeBytes = size_t{32} << 20;
constexpr int kPinnedLargeBlocks = 4;
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
  std::vector<PinnedBuffer> blocks(kPinnedTinyBlocks + kPinnedSmallBlocks + kPinnedLargeBlocks);
  try {
    size_t i = 0;
    for (int k = 0; k < kPinnedLargeBlocks; ++k) blocks[i++].ensure(kPinnedLargeBytes);
    for (int k = 0; k < kPinnedSmallBlocks; ++k) blocks[i++].ensure(kPinnedSmallBytes);
    for (int k = 0; k < kPinnedTinyBlocks; ++k) blocks[i++].ensure(kPinnedTinyBytes);
  } catch (const std::exception&) {
    // No pinned memory to spare: queries allocate their own.
  }
}

FirstUseSnapshot first_use_snapshot(int device) {
  FirstUseSnapshot s;
  const FirstUseCounts& c = first_use_counts();
  s.pinned_allocations = c.pinned_allocations.load(std::memory_order_relaxed);
  s.pinned_bytes = c.pinned_bytes.load(std::memory_order_relaxed);
  s.kernel_first_lookups = c.kernel_first_lookups.load(std::memory_order_relaxed);
  cudaMemPool_t pool = nullptr;
  uint64_t reserved = 0;  // the attribute is a cuuint64_t (64-bit)
  if (device >= 0 && cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess &&
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess)
    s.pool_reserved_bytes = reserved;
  else
    (void)cudaGetLastError();
  return s;
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

// A synthetic chunk of `spec`'s columns on the device: keys i mod groups,
// values small and of both signs, every 7th value NULL in a nullable column
// (so its validity paths run). Copied and synchronized before it returns.
struct SyntheticChunk {
  std::vector<DeviceBuffer> buffers;
  ChunkPointers pointers;
};
SyntheticChunk upload_synthetic_chunk(const GroupBySpec& spec, int64_t rows, uint64_t groups, cudaStream_t s) {
  SyntheticChunk chunk;
  chunk.buffers.reserve(2 + 2 * spec.columns.size());
  const auto upload = [&](const void* host, size_t bytes) {
    chunk.buffers.emplace_back(bytes, s);
    TALLY_CUDA_CHECK(cudaMemcpyAsync(chunk.buffers.back().get<char>(), host, bytes, cudaMemcpyHostToDevice, s));
    return static_cast<const void*>(chunk.buffers.back().get<char>());
  };
  ChunkPointers& p = chunk.pointers;
  p.rows = rows;
  const size_t n = static_cast<size_t>(rows);
  std::vector<int32_t> k32, v32;
  std::vector<int64_t> k64, v64;
  std::vector<uint8_t> valid;
  if (spec.key_type == KeyType::int32) {
    k32 = synthetic<int32_t>(rows, groups, true);
    p.key.data = upload(k32.data(), n * 4);
  } else {
    k64 = synthetic<int64_t>(rows, groups, true);
    p.key.data = upload(k64.data(), n * 8);
  }
  for (const auto& c : spec.columns) {
    const void* data = nullptr;
    // Float columns rehearse on integer bit patterns: the kernels' work is
    // the same, and the result is thrown away.
    if (value_bytes(c.type) == 4) {
      if (v32.empty()) v32 = synthetic<int32_t>(rows, 0, false);
      data = upload(v32.data(), n * 4);
    } else {
      if (v64.empty()) v64 = synthetic<int64_t>(rows, 0, false);
      data = upload(v64.data(), n * 8);
    }
    const uint8_t* validity = nullptr;
    if (c.may_have_nulls) {
      if (valid.empty()) {
        valid.resize(n);
        for (size_t i = 0; i < n; ++i) valid[i] = i % 7 != 0;
      }
      validity = static_cast<const uint8_t*>(upload(valid.data(), n));
    }
    p.values.push_back(ColumnPointer{data, validity});
  }
  p.key_range = KeyRange{0, static_cast<int64_t>(groups) - 1};
  TALLY_CUDA_CHECK(cudaStreamSynchronize(s));  // the host vectors go when this returns
  return chunk;
}

// A query's first launch (table empty), a later one (merge) and the result.
void rehearse_on(GroupByAggregator& aggregator, const ChunkPointers& p, Variant variant, const VariantConfig& config) {
  (void)aggregator.consume(p, variant, config);
  (void)aggregator.consume(p, variant, config);
  (void)aggregator.finish();
}
}  // namespace

bool rehearse_aggregation(const DeviceInfo& device, const GroupBySpec& spec, Variant variant, const VariantConfig& config,
                          const TableOptions& options, int64_t rows, uint64_t groups) {
  if (rows <= 0 || groups == 0) return false;
  cudaStream_t s = nullptr;
  try {
    TALLY_CUDA_CHECK(cudaSetDevice(device.ordinal));
    TALLY_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    {
      SyntheticChunk chunk = upload_synthetic_chunk(spec, rows, groups, s);
      {
        GroupByAggregator aggregator(device, spec, options, s);
        rehearse_on(aggregator, chunk.pointers, variant, config);
      }
      TALLY_CUDA_CHECK(cudaStreamSynchronize(s));
    }  // the columns are freed on the stream before it goes
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

namespace {
// Aggregators kept alive at once per shape while warming, so the pinned pool
// ends with blocks for a race's (three variants, two buffers each) and the
// pooled aggregator of an earlier query.
constexpr size_t kWarmAlive = 4;
// Keys of the warm-up chunks: a table of 2^12 groups fits every variant
// (dense included) and still merges across launches.
constexpr uint64_t kWarmGroups = uint64_t{1} << 12;
constexpr int kWarmRowsPerThread[] = {1, 2, 4, 8};  // launch templates (aggregator/*_launcher.cuh)
// 25: the partitioned/shared kernels' unbatched flush at large tiles; 83: batched.
constexpr int kWarmFillFactors[] = {25, 83};

// The two aggregate sets: count(*) + sum(int4 NOT NULL), whose kernels have
// their lanes fixed at compile time, and count(*), count(v), sum(v), min(v),
// max(v) over a nullable int8 (the generic lanes, validity read).
GroupBySpec warm_spec(KeyType key, bool generic) {
  GroupBySpec g;
  g.key_type = key;
  g.key_may_have_nulls = false;
  if (!generic) {
    g.columns.push_back({ValueType::int32, false});
    g.aggregates = {{AggOp::count_star, -1}, {AggOp::sum, 0}};
  } else {
    g.columns.push_back({ValueType::int64, true});
    g.aggregates = {{AggOp::count_star, -1}, {AggOp::count, 0}, {AggOp::sum, 0}, {AggOp::min, 0}, {AggOp::max, 0}};
  }
  return g;
}
}  // namespace

LaunchPathWarmUp warm_launch_paths(const DeviceInfo& device, double budget_ms) {
  LaunchPathWarmUp result;
  {
    // Once per process and device: what it prepares stays (kernels, the
    // occupancy cache, the pinned pool); another engine's start finds it done.
    static std::mutex mutex;
    static std::set<int> warmed;
    std::lock_guard lock(mutex);
    if (!warmed.insert(device.ordinal).second) {
      result.already_warmed = true;
      return result;
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  const FirstUseSnapshot before = first_use_snapshot(device.ordinal);
  cudaStream_t s = nullptr;
  if (cudaSetDevice(device.ordinal) != cudaSuccess || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
    (void)cudaGetLastError();
    result.failed = 1;
    return result;
  }
  for (const KeyType key : {KeyType::int32, KeyType::int64}) {
    for (const bool generic : {false, true}) {
      if (result.out_of_time) break;
      const GroupBySpec spec = warm_spec(key, generic);
      std::vector<std::unique_ptr<GroupByAggregator>> alive;
      try {
        SyntheticChunk chunk = upload_synthetic_chunk(spec, kWarmRows, kWarmGroups, s);
        ChunkFacts facts;
        facts.rows = static_cast<uint64_t>(kWarmRows);
        facts.estimated_groups = kWarmGroups;
        facts.key_range = KeyRange{0, static_cast<int64_t>(kWarmGroups) - 1};
        for (const Variant v : kAllVariants) {
          if (!can_use(v, spec, device, facts)) continue;
          for (const int rpt : kWarmRowsPerThread) {
            for (const int ff : kWarmFillFactors) {
              if (elapsed_ms() > budget_ms) {
                result.out_of_time = true;
                break;
              }
              VariantConfig config = default_launch_config(v, spec, device, facts);
              config.launch.rows_per_thread = rpt;
              config.launch.fill_factor_percent = ff;
              TableOptions options = default_table_options(v, spec, device, facts);
              options.own_partitioned_output = false;  // as a query of several chunks
              try {
                auto aggregator = std::make_unique<GroupByAggregator>(device, spec, options, s);
                rehearse_on(*aggregator, chunk.pointers, v, config);
                ++result.aggregations;
                if (alive.size() < kWarmAlive) alive.push_back(std::move(aggregator));
              } catch (const std::exception&) {
                ++result.failed;
                (void)cudaGetLastError();
              }
            }
          }
        }
        TALLY_CUDA_CHECK(cudaStreamSynchronize(s));
        alive.clear();  // their pinned blocks go back to the pool
        TALLY_CUDA_CHECK(cudaStreamSynchronize(s));
      } catch (const std::exception&) {
        ++result.failed;
        (void)cudaStreamSynchronize(s);
        alive.clear();
        (void)cudaGetLastError();
      }
    }
  }
  (void)cudaStreamSynchronize(s);
  (void)cudaStreamDestroy(s);
  (void)cudaGetLastError();
  const FirstUseSnapshot after = first_use_snapshot(device.ordinal);
  result.pinned_allocations = after.pinned_allocations - before.pinned_allocations;
  result.kernel_first_lookups = after.kernel_first_lookups - before.kernel_first_lookups;
  result.ms = elapsed_ms();
  return result;
}

}  // namespace tally::gpu
