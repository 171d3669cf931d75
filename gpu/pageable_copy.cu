// Staged copies between the device and pageable host memory (pageable_copy.cuh).
#include "gpu/pageable_copy.cuh"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "gpu/cuda_check.cuh"
#include "gpu/pinned_pool.cuh"

namespace tally::gpu {
namespace {

constexpr size_t kPieceBytes = size_t{16} << 20;
constexpr size_t kMaxWorkers = 8;
// Below this the driver's own staging is as fast as setting up workers.
constexpr size_t kStagedMinBytes = size_t{64} << 20;

struct Piece {
  const HostCopy* copy;
  size_t offset, bytes;
};

// The copies, device to host or host to device (`to_device`), after the work
// enqueued on `stream` so far; returns when every byte is in place.
void staged_copies(const std::vector<HostCopy>& copies, cudaStream_t stream, bool to_device) {
  const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  size_t total = 0;
  for (const HostCopy& c : copies) total += c.bytes;
  if (total < kStagedMinBytes) {
    for (const HostCopy& c : copies)
      if (c.bytes > 0) TALLY_CUDA_CHECK(cudaMemcpyAsync(c.to, c.from, c.bytes, kind, stream));
    TALLY_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  std::vector<Piece> pieces;
  for (const HostCopy& c : copies)
    for (size_t at = 0; at < c.bytes; at += kPieceBytes) pieces.push_back(Piece{&c, at, std::min(kPieceBytes, c.bytes - at)});
  cudaEvent_t ready = nullptr;
  TALLY_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  TALLY_CUDA_CHECK(cudaEventRecord(ready, stream));
  int device = 0;
  TALLY_CUDA_CHECK(cudaGetDevice(&device));
  std::atomic<size_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  // Each worker's two pinned buffers take turns: one piece in flight on its
  // stream while the host moves the other's bytes (out of it, to the host;
  // into it, to the device).
  auto work = [&] {
    cudaStream_t own = nullptr;
    cudaEvent_t done[2] = {nullptr, nullptr};
    try {
      TALLY_CUDA_CHECK(cudaSetDevice(device));
      TALLY_CUDA_CHECK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
      for (cudaEvent_t& e : done) TALLY_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      TALLY_CUDA_CHECK(cudaStreamWaitEvent(own, ready, 0));
      PinnedBuffer staging[2];
      for (PinnedBuffer& b : staging) b.ensure(kPieceBytes);
      const Piece* previous = nullptr;
      bool used[2] = {false, false};
      for (int slot = 0;; slot ^= 1) {
        const size_t i = next.fetch_add(1);
        const Piece* piece = i < pieces.size() ? &pieces[i] : nullptr;
        if (piece && to_device) {
          if (used[slot]) TALLY_CUDA_CHECK(cudaEventSynchronize(done[slot]));  // its last piece has left it
          std::memcpy(staging[slot].get(), static_cast<const char*>(piece->copy->from) + piece->offset, piece->bytes);
          TALLY_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(piece->copy->to) + piece->offset, staging[slot].get(),
                                           piece->bytes, kind, own));
          TALLY_CUDA_CHECK(cudaEventRecord(done[slot], own));
          used[slot] = true;
        } else if (piece) {
          TALLY_CUDA_CHECK(cudaMemcpyAsync(staging[slot].get(), static_cast<const char*>(piece->copy->from) + piece->offset,
                                           piece->bytes, kind, own));
          TALLY_CUDA_CHECK(cudaEventRecord(done[slot], own));
        }
        if (previous && !to_device) {
          TALLY_CUDA_CHECK(cudaEventSynchronize(done[slot ^ 1]));
          std::memcpy(static_cast<char*>(previous->copy->to) + previous->offset, staging[slot ^ 1].get(), previous->bytes);
        }
        if (!piece) break;
        previous = piece;
      }
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
    if (own) {
      (void)cudaStreamSynchronize(own);
      (void)cudaStreamDestroy(own);
    }
    for (cudaEvent_t e : done)
      if (e) (void)cudaEventDestroy(e);
  };
  const size_t workers = std::min(kMaxWorkers, pieces.size());
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  (void)cudaEventDestroy(ready);
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

void copy_to_pageable(const std::vector<HostCopy>& copies, cudaStream_t stream) { staged_copies(copies, stream, false); }

void copy_from_pageable(const std::vector<HostCopy>& copies, cudaStream_t stream) { staged_copies(copies, stream, true); }

}  // namespace tally::gpu
