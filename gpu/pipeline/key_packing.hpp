#pragma once
// Packs the key columns of a staged chunk into the int64 codes the
// aggregator takes (common/aggregate_engine.hpp: KeyPart), on the device and
// on the chunk's compute stream, ahead of its aggregation: the key columns
// stay resident per column in the device column cache, and a query over
// resident columns does no per-row host work for a key of several columns.
// Host-only header: builds without CUDA (gpu_stub.cpp throws).
#include <cstdint>
#include <memory>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "gpu/group_by.hpp"

namespace tally::gpu {

// Key parts one launch packs at most (the parts travel as one kernel
// argument); the planner packs no more (executor's kMaxPackedKeyParts).
constexpr size_t kMaxDeviceKeyParts = 16;

class KeyPacker {
 public:
  KeyPacker();
  ~KeyPacker();
  KeyPacker(const KeyPacker&) = delete;
  KeyPacker& operator=(const KeyPacker&) = delete;

  // Enqueues on `stream` the packing of `rows` rows of the device columns
  // columns[0, parts.size()) (widths[i]: 4 or 8 bytes per value) and returns
  // the device array of codes. One array serves every call: a call's
  // kernel runs after the work enqueued before it on the same stream (the
  // previous chunk's aggregation), so the array must only be read on that
  // stream, before the next call.
  const int64_t* pack(const std::vector<tally::KeyPart>& parts, const ColumnPointer* columns, const uint32_t* widths,
                      int64_t rows, StreamHandle stream);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tally::gpu
