// Percentiles' picks by selection (ordered_select.cuh): the codes' range, a
// histogram per key over value buckets, each pick's bucket and rank inside
// it, the rows of those buckets gathered per key, sorted per key, read.
#include "gpu/engine/ordered_select.cuh"

#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstring>
#include <vector>

#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/ordered_buckets.hpp"

namespace tally::gpu {
namespace {

constexpr int kThreads = 256;
// Counters of every key's histogram together: 16 MB, held in L2 while a
// pass adds to them.
constexpr uint64_t kHistogramCounters = uint64_t{1} << 22;
// Histograms that fit one block's shared memory are added there first (a
// global aggregate's one key would otherwise send every row's atomic to a
// few words).
constexpr uint64_t kSharedCounters = 8192;

__device__ inline uint64_t warp_min(uint64_t v) {
  for (int o = 16; o > 0; o /= 2) v = min(v, static_cast<uint64_t>(__shfl_xor_sync(0xffffffffu, v, o)));
  return v;
}
__device__ inline uint64_t warp_max(uint64_t v) {
  for (int o = 16; o > 0; o /= 2) v = max(v, static_cast<uint64_t>(__shfl_xor_sync(0xffffffffu, v, o)));
  return v;
}

// range[0], range[1]: the least and greatest code from `low` to `high`;
// range[2], range[3]: of every code (the minima start at ULLONG_MAX, the
// maxima at 0).
__global__ void range_kernel(const uint64_t* codes, int64_t n, uint64_t low, uint64_t high, unsigned long long* range) {
  uint64_t lo = ULLONG_MAX, hi = 0, least = ULLONG_MAX, most = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint64_t c = codes[i];
    least = min(least, c);
    most = max(most, c);
    if (c >= low && c <= high) {
      lo = min(lo, c);
      hi = max(hi, c);
    }
  }
  lo = warp_min(lo);
  hi = warp_max(hi);
  least = warp_min(least);
  most = warp_max(most);
  if ((threadIdx.x & 31) == 0) {
    if (lo != ULLONG_MAX) atomicMin(&range[0], static_cast<unsigned long long>(lo));
    if (hi != 0) atomicMax(&range[1], static_cast<unsigned long long>(hi));
    atomicMin(&range[2], static_cast<unsigned long long>(least));
    atomicMax(&range[3], static_cast<unsigned long long>(most));
  }
}

// Each key's histogram: hist[key * buckets + bucket]. A key at or beyond
// `keys` sets *bad (the caller sorts instead).
__global__ void histogram_kernel(const uint64_t* keys, const uint64_t* codes, int64_t n, const Buckets b, uint64_t key_count,
                                 bool shared, unsigned* hist, unsigned* bad) {
  extern __shared__ unsigned local[];
  const uint64_t counters = key_count * static_cast<uint64_t>(b.count);
  if (shared) {
    for (uint64_t i = threadIdx.x; i < counters; i += blockDim.x) local[i] = 0;
    __syncthreads();
  }
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint64_t k = keys[i];
    if (k >= key_count) {
      *bad = 1;
      continue;
    }
    const uint64_t at = k * static_cast<uint64_t>(b.count) + static_cast<uint64_t>(bucket_of(codes[i], b));
    atomicAdd(shared ? &local[at] : &hist[at], 1u);
  }
  if (shared) {
    __syncthreads();
    for (uint64_t i = threadIdx.x; i < counters; i += blockDim.x)
      if (local[i] != 0) atomicAdd(&hist[i], local[i]);
  }
}

// Per key: its rows, its picks' positions, each position's bucket and its
// index among the key's gathered rows (the rows of the key's target
// buckets, in order), and how many rows it gathers.
struct Targets {
  uint64_t* counts;  // per key
  unsigned* nonempty;  // per key: 1 where it has rows
  unsigned* gathered;  // per key: rows of its target buckets
  int* bucket;  // per key and target
  uint64_t* rank;  // per key and target: among the gathered rows
  uint64_t* position;  // per key and target: in the key's order
};

__global__ void locate_kernel(const unsigned* hist, uint64_t key_count, int buckets, const __grid_constant__ PickArgs p, Targets t) {
  for (uint64_t k = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < key_count; k += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const unsigned* h = hist + k * static_cast<uint64_t>(buckets);
    uint64_t n = 0;
    for (int b = 0; b < buckets; ++b) n += h[b];
    t.counts[k] = n;
    t.nonempty[k] = n > 0;
    t.gathered[k] = 0;
    if (n == 0) continue;
    const uint64_t at = k * static_cast<uint64_t>(p.per);
    t.gathered[k] = static_cast<unsigned>(locate_targets(h, buckets, n, p, t.bucket + at, t.rank + at, t.position + at));
  }
}

// Every row of a target bucket, appended to its key's stretch of `out`.
__global__ void gather_kernel(const uint64_t* keys, const uint64_t* codes, int64_t n, const Buckets b, const int* bucket, int per,
                              const unsigned* starts, unsigned* cursors, uint64_t* out) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint64_t k = keys[i];
    const uint64_t c = codes[i];
    const int own = bucket_of(c, b);
    const int* targets = bucket + k * static_cast<uint64_t>(per);
    bool hit = false;
    for (int j = 0; j < per; ++j) hit |= targets[j] == own;
    if (hit) out[starts[k] + atomicAdd(&cursors[k], 1u)] = c;
  }
}

// Per key with rows, in key order (run = its index among them): the key,
// its count, and each target's code out of its sorted gathered rows.
__global__ void read_kernel(uint64_t key_count, int per, Targets t, const unsigned* runs, const unsigned* starts, const uint64_t* sorted,
                            uint64_t* out_keys, uint64_t* out_counts, uint64_t* out_codes, uint64_t* out_positions) {
  for (uint64_t k = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < key_count; k += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    if (!t.nonempty[k]) continue;
    const uint64_t r = runs[k];
    out_keys[r] = k;
    out_counts[r] = t.counts[k];
    for (int j = 0; j < per; ++j) {
      const uint64_t at = k * static_cast<uint64_t>(per) + static_cast<uint64_t>(j);
      out_codes[r * per + j] = sorted[starts[k] + t.rank[at]];
      out_positions[r * per + j] = t.position[at];
    }
  }
}

unsigned grid_for(uint64_t items) {
  return static_cast<unsigned>(std::clamp<uint64_t>((items + kThreads - 1) / kThreads, 1, 8192));
}

template <class Run>
void with_temp(Run run, cudaStream_t stream) {
  size_t bytes = 0;
  TALLY_CUDA_CHECK(run(nullptr, bytes));
  DeviceBuffer temp(std::max<size_t>(bytes, 1), stream);
  TALLY_CUDA_CHECK(run(temp.get(), bytes));
}

// The picks through the buckets `b`, or nullopt where they leave too many
// rows to gather (or a key is beyond key_count).
std::optional<tally::KeyedPicks> pick_by_buckets(const uint64_t* keys, const uint64_t* codes, uint64_t n, uint64_t key_count, const Buckets& b,
                                                 const PickArgs& picks, cudaStream_t stream) {
  const auto rows = static_cast<int64_t>(n);
  // Each key's histogram.
  const uint64_t counters = key_count * static_cast<uint64_t>(b.count);
  DeviceBuffer hist(counters * sizeof(unsigned), stream), bad(sizeof(unsigned), stream);
  TALLY_CUDA_CHECK(cudaMemsetAsync(hist.get(), 0, hist.bytes(), stream));
  TALLY_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0, bad.bytes(), stream));
  const bool shared = counters <= kSharedCounters;
  histogram_kernel<<<grid_for(n), kThreads, shared ? counters * sizeof(unsigned) : 0, stream>>>(
      keys, codes, rows, b, key_count, shared, hist.get<unsigned>(), bad.get<unsigned>());
  TALLY_CUDA_CHECK_LAUNCH("histogram_kernel");
  // Each pick's bucket; the gathered rows' stretches and the keys' runs.
  const auto per = static_cast<uint64_t>(picks.per);
  DeviceBuffer counts(key_count * sizeof(uint64_t), stream), nonempty((key_count + 1) * sizeof(unsigned), stream),
      gathered((key_count + 1) * sizeof(unsigned), stream), bucket(key_count * per * sizeof(int), stream),
      rank(key_count * per * sizeof(uint64_t), stream), position(key_count * per * sizeof(uint64_t), stream);
  TALLY_CUDA_CHECK(cudaMemsetAsync(nonempty.get<unsigned>() + key_count, 0, sizeof(unsigned), stream));
  TALLY_CUDA_CHECK(cudaMemsetAsync(gathered.get<unsigned>() + key_count, 0, sizeof(unsigned), stream));
  // A key's targets it does not have (no rows) match no bucket.
  TALLY_CUDA_CHECK(cudaMemsetAsync(bucket.get(), 0xff, bucket.bytes(), stream));
  const Targets t{counts.get<uint64_t>(), nonempty.get<unsigned>(), gathered.get<unsigned>(), bucket.get<int>(), rank.get<uint64_t>(),
                  position.get<uint64_t>()};
  locate_kernel<<<grid_for(key_count), kThreads, 0, stream>>>(hist.get<const unsigned>(), key_count, b.count, picks, t);
  TALLY_CUDA_CHECK_LAUNCH("locate_kernel");
  DeviceBuffer starts((key_count + 1) * sizeof(unsigned), stream), runs((key_count + 1) * sizeof(unsigned), stream);
  const int scanned = static_cast<int>(key_count + 1);
  with_temp([&](void* temp, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(temp, bytes, gathered.get<const unsigned>(), starts.get<unsigned>(), scanned, stream);
  }, stream);
  with_temp([&](void* temp, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(temp, bytes, nonempty.get<const unsigned>(), runs.get<unsigned>(), scanned, stream);
  }, stream);
  unsigned totals[3] = {0, 0, 0};  // gathered rows, keys with rows, a key out of range
  TALLY_CUDA_CHECK(cudaMemcpyAsync(&totals[0], starts.get<unsigned>() + key_count, sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
  TALLY_CUDA_CHECK(cudaMemcpyAsync(&totals[1], runs.get<unsigned>() + key_count, sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
  TALLY_CUDA_CHECK(cudaMemcpyAsync(&totals[2], bad.get(), sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
  TALLY_CUDA_CHECK(cudaStreamSynchronize(stream));
  // Gathering more than a quarter of the rows would cost about what the sort does.
  if (totals[2] != 0 || totals[0] > n / 4 + 4096) return std::nullopt;

  // The target buckets' rows, per key, sorted per key.
  const uint64_t total = totals[0];
  DeviceBuffer cursors(key_count * sizeof(unsigned), stream), gathered_codes(std::max<uint64_t>(total, 1) * sizeof(uint64_t), stream),
      sorted(std::max<uint64_t>(total, 1) * sizeof(uint64_t), stream);
  TALLY_CUDA_CHECK(cudaMemsetAsync(cursors.get(), 0, cursors.bytes(), stream));
  gather_kernel<<<grid_for(n), kThreads, 0, stream>>>(keys, codes, rows, b, bucket.get<const int>(), picks.per, starts.get<const unsigned>(),
                                                      cursors.get<unsigned>(), gathered_codes.get<uint64_t>());
  TALLY_CUDA_CHECK_LAUNCH("gather_kernel");
  if (total > 0) {
    with_temp([&](void* temp, size_t& bytes) {
      return cub::DeviceSegmentedSort::SortKeys(temp, bytes, gathered_codes.get<const uint64_t>(), sorted.get<uint64_t>(),
                                                static_cast<int>(total), static_cast<int>(key_count), starts.get<const unsigned>(),
                                                starts.get<const unsigned>() + 1, stream);
    }, stream);
  }

  // Each key's picks, in key order, copied back.
  const uint64_t run_count = totals[1];
  DeviceBuffer out_keys(std::max<uint64_t>(run_count, 1) * sizeof(uint64_t), stream),
      out_counts(std::max<uint64_t>(run_count, 1) * sizeof(uint64_t), stream),
      out_codes(std::max<uint64_t>(run_count * per, 1) * sizeof(uint64_t), stream),
      out_positions(std::max<uint64_t>(run_count * per, 1) * sizeof(uint64_t), stream);
  read_kernel<<<grid_for(key_count), kThreads, 0, stream>>>(key_count, picks.per, t, runs.get<const unsigned>(), starts.get<const unsigned>(),
                                                            sorted.get<const uint64_t>(), out_keys.get<uint64_t>(), out_counts.get<uint64_t>(),
                                                            out_codes.get<uint64_t>(), out_positions.get<uint64_t>());
  TALLY_CUDA_CHECK_LAUNCH("read_kernel");
  tally::KeyedPicks out;
  out.per_key = picks.per;
  std::vector<uint64_t> sort_keys(run_count);
  out.counts.resize(run_count);
  out.codes.resize(run_count * per);
  out.positions.resize(run_count * per);
  if (run_count > 0) {
    TALLY_CUDA_CHECK(cudaMemcpyAsync(sort_keys.data(), out_keys.get(), run_count * sizeof(uint64_t), cudaMemcpyDeviceToHost, stream));
    TALLY_CUDA_CHECK(cudaMemcpyAsync(out.counts.data(), out_counts.get(), run_count * sizeof(uint64_t), cudaMemcpyDeviceToHost, stream));
    TALLY_CUDA_CHECK(cudaMemcpyAsync(out.codes.data(), out_codes.get(), run_count * per * sizeof(uint64_t), cudaMemcpyDeviceToHost, stream));
    TALLY_CUDA_CHECK(cudaMemcpyAsync(out.positions.data(), out_positions.get(), run_count * per * sizeof(uint64_t), cudaMemcpyDeviceToHost,
                                     stream));
  }
  TALLY_CUDA_CHECK(cudaStreamSynchronize(stream));
  out.keys.resize(run_count);
  for (uint64_t r = 0; r < run_count; ++r) out.keys[r] = key_of_sort_key(sort_keys[r], kPacked);
  return out;
}


}  // namespace

std::optional<tally::KeyedPicks> select_picks(const uint64_t* keys, const uint64_t* codes, uint64_t n, int key_bits, bool float_codes,
                                              const PickArgs& picks, cudaStream_t stream) {
  if (key_bits < 0 || key_bits > kSelectMaxKeyBits || n == 0 || n > static_cast<uint64_t>(INT_MAX) || picks.per <= 0 ||
      picks.per > kMaxTargets)
    return std::nullopt;
  const uint64_t key_count = uint64_t{1} << key_bits;
  const int buckets = static_cast<int>(std::clamp<uint64_t>(kHistogramCounters / key_count, 64, 4096));

  // The codes' range: the finite values' (all of them for integers), and every code's.
  DeviceBuffer range(4 * sizeof(unsigned long long), stream);
  const unsigned long long start[4] = {ULLONG_MAX, 0, ULLONG_MAX, 0};
  TALLY_CUDA_CHECK(cudaMemcpyAsync(range.get(), start, sizeof start, cudaMemcpyHostToDevice, stream));
  const uint64_t low = float_codes ? float_code_of(-DBL_MAX) : 0;
  const uint64_t high = float_codes ? float_code_of(DBL_MAX) : ULLONG_MAX;
  range_kernel<<<grid_for(n), kThreads, 0, stream>>>(codes, static_cast<int64_t>(n), low, high, range.get<unsigned long long>());
  TALLY_CUDA_CHECK_LAUNCH("range_kernel");
  unsigned long long found[4];
  TALLY_CUDA_CHECK(cudaMemcpyAsync(found, range.get(), sizeof found, cudaMemcpyDeviceToHost, stream));
  TALLY_CUDA_CHECK(cudaStreamSynchronize(stream));

  if (!float_codes) return pick_by_buckets(keys, codes, n, key_count, code_buckets(buckets, found[0], found[1]), picks, stream);
  // Floats: buckets linear in the finite values first (uniform and normal
  // data), then in the codes (values whose magnitudes differ by orders),
  // the infinities and NaN in the end buckets.
  const bool finite = found[0] <= found[1];
  if (finite)
    if (const std::optional<Buckets> by_value = value_buckets(buckets, found[0], found[1]))
      if (auto out = pick_by_buckets(keys, codes, n, key_count, *by_value, picks, stream)) return out;
  return pick_by_buckets(keys, codes, n, key_count, code_buckets(buckets, finite ? found[0] : found[2], finite ? found[1] : found[3]), picks,
                         stream);
}

}  // namespace tally::gpu
