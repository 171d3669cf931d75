#pragma once
// A text column's dictionary entries kept on the device, for the text
// conditions its programs look verdicts up by (common/text_match.hpp): the
// bytes of tens of millions of entries cross the bus once, on the first
// query that matches them, and stay while their dictionary lives, as the
// column cache keeps a column's chunks. Later entries (the dictionary
// grew) make a new copy of all of them.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>

#include "common/text_match.hpp"

namespace tally::gpu {

struct DeviceTexts {
  DeviceTexts() = default;
  ~DeviceTexts();
  DeviceTexts(const DeviceTexts&) = delete;
  DeviceTexts& operator=(const DeviceTexts&) = delete;
  const uint64_t* offsets = nullptr;  // count + 1: entry c is bytes[offsets[c], offsets[c + 1])
  const char* bytes = nullptr;
  int32_t count = 0;
  uint64_t byte_count = 0;
};

// The first `count` entries of `entries` on the current device: a kept
// copy of at least as many, or one made now on `stream` (waited for). The
// caller holds the result while kernels read it.
std::shared_ptr<const DeviceTexts> device_texts(const TextEntries& entries, int32_t count, cudaStream_t stream);

// Enqueues the verdict of each of the first `count` entries (at most
// texts.count) against `pattern` into `verdicts` (int32, 1 = it matches).
void match_device_texts(const DeviceTexts& texts, int32_t count, const RunsPattern& pattern, int32_t* verdicts,
                        cudaStream_t stream);

}  // namespace tally::gpu
