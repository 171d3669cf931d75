#pragma once
// The radix sort the sort and partitioned variants start with: CUB sorts a
// piece by the key bits that differ within its key range, and the rows
// follow through the sort's payload (the value itself where there is one
// NOT NULL value column and no NULL key, else a permutation and a gather).
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <type_traits>
#include <utility>

#include "gpu/aggregator/kernels/maintenance_kernels.cuh"
#include "gpu/aggregator/launch_context.cuh"
#include "gpu/aggregator/launch_limits.cuh"
#include "gpu/cuda_check.cuh"

namespace tally::gpu::aggregator {

// Radix bits [begin, end) to sort on. CUB flips the sign bit of signed keys,
// so the bits that differ within [min, max] are computed on flipped values.
// partition_bits = 0: every differing bit (a full sort of the range).
template <class K>
std::pair<int, int> sort_bits(const KeyRange* range, int partition_bits) {
  constexpr int kBits = 8 * sizeof(K);
  int end = kBits;
  if (range && range->max >= range->min) {
    using U = std::make_unsigned_t<K>;
    const U sign = U{1} << (kBits - 1);
    const U lo = static_cast<U>(static_cast<K>(range->min)) ^ sign;
    const U hi = static_cast<U>(static_cast<K>(range->max)) ^ sign;
    end = std::max(1, kBits - std::countl_zero(static_cast<U>(lo ^ hi)));
  }
  if (partition_bits <= 0) return {0, end};
  end = std::max(end, std::min(partition_bits, kBits));
  return {end - std::min(partition_bits, end), end};
}

// Sorts a piece by key bits [begin, end) into `scratch` and returns a view of
// the sorted rows.
template <class K>
kernels::ChunkRef<K> sort_piece(const LaunchContext<K>& ctx, LaunchScratch& scratch,
                                const kernels::ChunkRef<K>& ref, int begin, int end) {
  const cudaStream_t stream = ctx.stream;
  const uint64_t n = static_cast<uint64_t>(ref.rows);
  kernels::ChunkRef<K> out = ref;
  if (n == 0) return out;
  const bool payload_value =
      ctx.spec.columns.size() == 1 && !ref.key_validity && !ref.columns[0].validity;
  const bool wide_payload = payload_value && ref.columns[0].wide;
  scratch.sort_keys.ensure(n * sizeof(K), stream);
  const size_t pw = wide_payload ? 8 : 4;
  scratch.sort_payload_in.ensure(n * pw, stream);
  scratch.sort_payload_out.ensure(n * pw, stream);
  const int grid = fill_grid(ctx.device);
  const void* payload_in = nullptr;
  if (payload_value) {
    payload_in = ref.columns[0].data;
  } else {
    kernels::iota_kernel<uint32_t>
        <<<grid, 256, 0, stream>>>(scratch.sort_payload_in.get<uint32_t>(), n);
    TALLY_CUDA_CHECK_LAUNCH("iota_kernel");
    payload_in = scratch.sort_payload_in.get();
  }
  size_t temp = 0;
  if (wide_payload) {
    TALLY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        nullptr, temp, ref.keys, scratch.sort_keys.get<K>(),
        static_cast<const uint64_t*>(payload_in), scratch.sort_payload_out.get<uint64_t>(), n,
        begin, end, stream));
    scratch.sort_temp.ensure(temp, stream);
    TALLY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        scratch.sort_temp.get(), temp, ref.keys, scratch.sort_keys.get<K>(),
        static_cast<const uint64_t*>(payload_in), scratch.sort_payload_out.get<uint64_t>(), n,
        begin, end, stream));
  } else {
    TALLY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        nullptr, temp, ref.keys, scratch.sort_keys.get<K>(),
        static_cast<const uint32_t*>(payload_in), scratch.sort_payload_out.get<uint32_t>(), n,
        begin, end, stream));
    scratch.sort_temp.ensure(temp, stream);
    TALLY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        scratch.sort_temp.get(), temp, ref.keys, scratch.sort_keys.get<K>(),
        static_cast<const uint32_t*>(payload_in), scratch.sort_payload_out.get<uint32_t>(), n,
        begin, end, stream));
  }
  out.keys = scratch.sort_keys.get<K>();
  if (payload_value) {
    out.columns[0].data = scratch.sort_payload_out.get();
    return out;
  }
  // Gather NULL flags and value columns through the permutation.
  const uint32_t* perm = scratch.sort_payload_out.get<uint32_t>();
  size_t gather_bytes = ref.key_validity ? n : 0;
  for (size_t c = 0; c < ctx.spec.columns.size(); ++c)
    gather_bytes += n * (ref.columns[c].wide ? 8 : 4) + (ref.columns[c].validity ? n : 0) + 16;
  scratch.sort_gather.ensure(gather_bytes + 16, stream);
  char* dst = scratch.sort_gather.get<char>();
  auto place = [&](size_t bytes) {
    char* p = dst;
    dst += (bytes + 15) / 16 * 16;
    return p;
  };
  if (ref.key_validity) {
    uint8_t* kv = reinterpret_cast<uint8_t*>(place(n));
    kernels::gather_kernel<uint8_t><<<grid, 256, 0, stream>>>(perm, n, ref.key_validity, kv);
    TALLY_CUDA_CHECK_LAUNCH("gather_kernel(key validity)");
    out.key_validity = kv;
  }
  for (size_t c = 0; c < ctx.spec.columns.size(); ++c) {
    if (ref.columns[c].wide) {
      int64_t* d = reinterpret_cast<int64_t*>(place(n * 8));
      kernels::gather_kernel<int64_t>
          <<<grid, 256, 0, stream>>>(perm, n, static_cast<const int64_t*>(ref.columns[c].data), d);
      out.columns[c].data = d;
    } else {
      int32_t* d = reinterpret_cast<int32_t*>(place(n * 4));
      kernels::gather_kernel<int32_t>
          <<<grid, 256, 0, stream>>>(perm, n, static_cast<const int32_t*>(ref.columns[c].data), d);
      out.columns[c].data = d;
    }
    TALLY_CUDA_CHECK_LAUNCH("gather_kernel(values)");
    if (ref.columns[c].validity) {
      uint8_t* v = reinterpret_cast<uint8_t*>(place(n));
      kernels::gather_kernel<uint8_t>
          <<<grid, 256, 0, stream>>>(perm, n, ref.columns[c].validity, v);
      TALLY_CUDA_CHECK_LAUNCH("gather_kernel(validity)");
      out.columns[c].validity = v;
    }
  }
  return out;
}

}  // namespace tally::gpu::aggregator
