#pragma once
// The rows a WHERE keeps, gathered into contiguous device columns before a
// chunk's aggregation (GpuRun, after DeviceProgramEvaluator): the kernels
// then see only rows that make groups, as the CPU engine's program run
// hands its inner run only the kept rows. One compactor serves one query's
// launches, one after another on its stream; its buffers are reused.
// Host-only header: builds without CUDA (gpu_stub.cpp throws).
#include <cstdint>
#include <memory>

#include "gpu/group_by.hpp"

namespace tally::gpu {

class RowCompactor {
 public:
  RowCompactor();
  ~RowCompactor();
  RowCompactor(const RowCompactor&) = delete;
  RowCompactor& operator=(const RowCompactor&) = delete;

  // Lists on `stream` the rows in [0, rows) whose mask byte is 1 and waits
  // for the count, which it returns: the launches that follow need it.
  int64_t select(const uint8_t* mask, int64_t rows, StreamHandle stream);
  // Enqueues the gather of the selected rows of `column` (width_bytes 4 or
  // 8 per value; its validity too, if any) into the compactor's buffer
  // `slot`, valid until the next select() or gather() into that slot.
  ColumnPointer gather(size_t slot, ColumnPointer column, uint32_t width_bytes, StreamHandle stream);
  // The row numbers the last select() listed (device memory, ascending),
  // valid until the next select().
  const int32_t* selected_rows() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tally::gpu
