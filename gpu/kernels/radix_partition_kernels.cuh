#pragma once
// One-pass radix partition for the PARTITIONED variant: moves (key, value)
// pairs so that each partition (the digit of key bits [begin, begin + bits),
// the digit CUB sorts on, partition_digit) is a contiguous run of rows, which
// is all partition_aggregate_kernel needs. CUB's radix sort spends one pass
// per 8 bits (two at 9-16 partition bits); this does one pass for up to
// kRadixMaxBits bits and does not order rows within a partition.
//
// Pass 1 (radix_histogram_kernel): block b counts the digits of tiles b,
// b + grid, ... in shared memory and writes counts[digit * grid + b].
// An exclusive scan of that digit-major array gives each (digit, block) its
// first output row, so partitions come out in digit order.
// Pass 2 (radix_scatter_kernel): the same blocks take the same tiles; each
// tile is ranked by shared atomics, staged in shared memory grouped by digit,
// then written out by consecutive threads so that a digit's rows of one tile
// land in consecutive addresses (fewer, fuller sectors than one scattered
// store per row). A bucket's run in one tile rarely fills whole 32-byte
// sectors, so each (block, bucket) keeps a partly written sector open in L2
// until a later tile completes it; the launcher bounds grid x buckets so those
// open sectors fit in L2 (run 12:08 on the H100: 264 blocks x 2048 buckets,
// about 35 MB of open sectors, took 15 ms more than CUB's two passes).
#include <cub/block/block_scan.cuh>

#include <cstdint>

#include "gpu/kernels/partition_kernels.cuh"

namespace tally::gpu::kernels {

inline constexpr int kRadixMaxBits = 11;
inline constexpr uint32_t kRadixBuckets = 1u << kRadixMaxBits;
inline constexpr int kRadixThreads = 1024;
inline constexpr int kRadixRowsPerThread = 8;
inline constexpr int64_t kRadixTile = static_cast<int64_t>(kRadixThreads) * kRadixRowsPerThread;

// Dynamic shared memory of the scatter kernel: the staged keys and values of
// one tile.
template <class K, class V>
constexpr size_t radix_staging_bytes() {
  return static_cast<size_t>(kRadixTile) * (sizeof(K) + sizeof(V));
}

template <class K>
__global__ void __launch_bounds__(kRadixThreads)
    radix_histogram_kernel(const K* keys, int64_t n, int begin, uint32_t parts, uint32_t* counts) {
  __shared__ uint32_t hist[kRadixBuckets];
  for (uint32_t d = threadIdx.x; d < parts; d += blockDim.x) hist[d] = 0;
  __syncthreads();
  const uint32_t mask = parts - 1;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kRadixTile;
  for (int64_t t0 = blockIdx.x * kRadixTile; t0 < n; t0 += stride) {
#pragma unroll
    for (int j = 0; j < kRadixRowsPerThread; ++j) {
      const int64_t row = t0 + static_cast<int64_t>(j) * kRadixThreads + threadIdx.x;
      if (row < n) atomicAdd(&hist[partition_digit(keys[row], begin, mask)], 1u);
    }
  }
  __syncthreads();
  for (uint32_t d = threadIdx.x; d < parts; d += blockDim.x)
    counts[static_cast<size_t>(d) * gridDim.x + blockIdx.x] = hist[d];
}

// offsets: the exclusive scan of the histogram kernel's counts (same grid).
// Requires n < 2^32 (32-bit positions) and parts <= kRadixBuckets.
template <class K, class V>
__global__ void __launch_bounds__(kRadixThreads)
    radix_scatter_kernel(const K* keys, const V* vals, int64_t n, int begin, uint32_t parts,
                         const uint32_t* offsets, K* out_keys, V* out_vals) {
  constexpr int kPer = static_cast<int>(kRadixBuckets) / kRadixThreads;  // buckets owned per thread
  using Scan = cub::BlockScan<uint32_t, kRadixThreads>;
  __shared__ typename Scan::TempStorage scan_storage;
  __shared__ uint32_t next[kRadixBuckets];   // output row of the bucket's next row from this block
  __shared__ uint32_t start[kRadixBuckets];  // rows of the tile per bucket, then the bucket's first staged row
  extern __shared__ __align__(16) unsigned char staging[];
  K* skeys = reinterpret_cast<K*>(staging);
  V* svals = reinterpret_cast<V*>(staging + static_cast<size_t>(kRadixTile) * sizeof(K));

  const uint32_t mask = parts - 1;
  // Thread t owns buckets t*kPer .. t*kPer+kPer-1 for the scan and the
  // per-tile bookkeeping (disjoint, so no races between owners).
  const uint32_t own = threadIdx.x * kPer;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const uint32_t d = own + i;
    if (d < parts) {
      next[d] = offsets[static_cast<size_t>(d) * gridDim.x + blockIdx.x];
      start[d] = 0;
    }
  }
  __syncthreads();

  const int64_t stride = static_cast<int64_t>(gridDim.x) * kRadixTile;
  // The tile's keys and values live in registers from one iteration to the
  // next: the next tile's loads are issued once the current tile is staged,
  // so they are in flight while the staged rows are written out (a block's
  // phases are separated by barriers; without this the loads wait for them).
  K k[kRadixRowsPerThread];
  V v[kRadixRowsPerThread];
  auto load_tile = [&](int64_t from) {
#pragma unroll
    for (int j = 0; j < kRadixRowsPerThread; ++j) {
      const int64_t row = from + static_cast<int64_t>(j) * kRadixThreads + threadIdx.x;
      if (row < n) {
        k[j] = keys[row];
        v[j] = vals[row];
      }
    }
  };
  load_tile(blockIdx.x * kRadixTile);
  for (int64_t t0 = blockIdx.x * kRadixTile; t0 < n; t0 += stride) {
    uint32_t rank[kRadixRowsPerThread];
#pragma unroll
    for (int j = 0; j < kRadixRowsPerThread; ++j) {
      const int64_t row = t0 + static_cast<int64_t>(j) * kRadixThreads + threadIdx.x;
      if (row < n) rank[j] = atomicAdd(&start[partition_digit(k[j], begin, mask)], 1u);
    }
    __syncthreads();
    // Exclusive scan of the tile's bucket counts: start[d] = first staged row.
    uint32_t c[kPer];
    uint32_t total = 0;
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      c[i] = own + i < parts ? start[own + i] : 0;
      total += c[i];
    }
    uint32_t prefix = 0;
    Scan(scan_storage).ExclusiveSum(total, prefix);
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      if (own + i < parts) start[own + i] = prefix;
      prefix += c[i];
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kRadixRowsPerThread; ++j) {
      const int64_t row = t0 + static_cast<int64_t>(j) * kRadixThreads + threadIdx.x;
      if (row < n) {
        const uint32_t s = start[partition_digit(k[j], begin, mask)] + rank[j];
        skeys[s] = k[j];
        svals[s] = v[j];
      }
    }
    load_tile(t0 + stride);
    __syncthreads();
    const uint32_t tile_rows = static_cast<uint32_t>(n - t0 < kRadixTile ? n - t0 : kRadixTile);
    for (uint32_t i = threadIdx.x; i < tile_rows; i += kRadixThreads) {
      const K key = skeys[i];
      const uint32_t d = partition_digit(key, begin, mask);
      const uint32_t pos = next[d] + (i - start[d]);
      out_keys[pos] = key;
      out_vals[pos] = svals[i];
    }
    __syncthreads();
    // Advance this block's output positions; reset the counts for the next tile.
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      if (own + i < parts) {
        next[own + i] += c[i];
        start[own + i] = 0;
      }
    }
    __syncthreads();
  }
}

}  // namespace tally::gpu::kernels
