#pragma once
// A scan's row selection on the device (common/scan_selection.hpp): the
// filter program over a piece's device columns, each key test's bitmap
// ANDed into its mask, and the passing rows' numbers compacted and copied
// back. One selector serves one piece at a time on one stream; its device
// buffers are reused from piece to piece.
// Host-only header: builds without CUDA (gpu_stub.cpp throws).
#include <cstdint>
#include <memory>
#include <vector>

#include "common/column_program.hpp"
#include "common/column_width.hpp"
#include "gpu/group_by.hpp"
#include "gpu/pipeline/column_programs.hpp"

namespace tally::gpu {

// A key test whose bitmap is in device memory (DeviceBitmaps).
struct DeviceKeyTest {
  uint32_t column = 0;  // index into the piece's columns: int32 or int64
  const uint64_t* bits = nullptr;
  int64_t min = 0;
  uint64_t span = 0;
  uint32_t shift = 0;
};

// Key tests' bitmaps copied to the device once for every piece of a scan.
class DeviceBitmaps {
 public:
  DeviceBitmaps();
  ~DeviceBitmaps();
  DeviceBitmaps(const DeviceBitmaps&) = delete;
  DeviceBitmaps& operator=(const DeviceBitmaps&) = delete;
  // Copies `words` 64-bit words from host memory and waits for the copy;
  // returns the device copy, valid for this object's life.
  const uint64_t* add(const uint64_t* words, size_t count, StreamHandle stream);

  // The lookup columns the filters read (host arrays), copied to the device
  // where `owner` (one scan's selection) differs from the last caller's: a
  // pooled selector serves the pieces of many scans in turn.
  void use_lookups(uint64_t owner, const std::vector<tally::ProgramColumn>& lookups, StreamHandle stream);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

class RowSelector {
 public:
  RowSelector();
  ~RowSelector();
  RowSelector(const RowSelector&) = delete;
  RowSelector& operator=(const RowSelector&) = delete;

  // Rows [0, rows) of `columns` (device pointers, stored at `widths`) that
  // `filter` (may be empty) passes and every test's key is in its bitmap:
  // their numbers plus `offset` replace `out`. Waits for `stream`. False
  // where the filter raised an error flag on some row (`out` then holds
  // nothing): the host evaluates the piece, as PostgreSQL would.
  bool select(const tally::ColumnProgram& filter, const std::vector<ColumnPointer>& columns,
              const std::vector<tally::ColumnWidth>& widths, int64_t rows, const std::vector<DeviceKeyTest>& tests,
              uint32_t offset, StreamHandle stream, std::vector<uint32_t>& out,
              ProgramKernel kernel = ProgramKernel::interpret);

  // The lookup columns the filters read (host arrays), copied to the device
  // where `owner` (one scan's selection) differs from the last caller's: a
  // pooled selector serves the pieces of many scans in turn.
  void use_lookups(uint64_t owner, const std::vector<tally::ProgramColumn>& lookups, StreamHandle stream);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tally::gpu
