#pragma once
// A host vector copied into fresh device memory (at least one element's
// room, so an empty vector gives a valid pointer), for the device tests
// that feed kernels directly. The caller frees it with cudaFree.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace tally::gpu::testing {

template <class T>
T* to_device(const std::vector<T>& host) {
  T* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, std::max<size_t>(1, host.size()) * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return p;
}

}  // namespace tally::gpu::testing
