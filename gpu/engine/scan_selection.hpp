#pragma once
// A scan's row selection on one device (common/scan_selection.hpp): each
// piece's columns come from the device column cache, or are copied there
// from the host's chunk and kept (the next query finds them resident); the
// comparisons and key tests run on a pooled pipeline's stream, and the
// passing rows' numbers come back.
#include <atomic>
#include <memory>
#include <mutex>

#include "common/scan_selection.hpp"
#include "gpu/pipeline/row_selector.hpp"

namespace tally::gpu {

class GpuAggregationEngine;

class GpuScanSelection final : public tally::ScanSelectionRun {
 public:
  GpuScanSelection(GpuAggregationEngine& engine, tally::ScanSelectionSpec spec);
  ~GpuScanSelection() override;
  bool select(const tally::SelectionPiece& piece, std::vector<uint32_t>& out) override;
  std::vector<std::string> report() const override;

 private:
  GpuAggregationEngine& engine_;
  tally::ScanSelectionSpec spec_;
  // The key tests' bitmaps, copied to the device once for every piece.
  std::unique_ptr<DeviceBitmaps> bitmaps_;
  std::vector<DeviceKeyTest> tests_;
  // After a device error every piece goes back to the host: the scan's
  // answer never depends on the device having worked.
  std::atomic<bool> failed_{false};
  std::atomic<uint64_t> pieces_{0}, rows_{0}, passed_{0}, copied_bytes_{0}, host_pieces_{0};
  std::atomic<uint64_t> device_us_{0};
  // Names this selection to the pooled selectors that hold its lookup columns.
  uint64_t id_ = 0;
};

}  // namespace tally::gpu
