#pragma once
// Every GPU of the host as one engine (Config::gpu_devices): one
// GpuAggregationEngine per device, each with its own column cache, memory
// budget and tuning records (keyed by its device's fingerprint). A query's
// chunks are spread over the devices by storage chunk id, so that a chunk is
// cached on, and aggregated by, the same device in every query; each device
// aggregates its chunks with the variant and configuration its own tuning
// chose, concurrently (a run's launches are asynchronous), and the devices'
// partial states are merged on the host's threads (common/spread_run.hpp).
// Aggregations whose states do not merge (ordered-set aggregates,
// count(DISTINCT), key tuples) run on the first device alone.
// Host-only: gpu_stub.cpp's use_device() throws where there is no CUDA, and
// make_multi_device_engine() then returns nullptr before any run exists.
#include <memory>
#include <vector>

#include "gpu/engine/gpu_engine.hpp"

namespace tally::gpu {

class MultiDeviceEngine final : public GpuEngine {
 public:
  // `devices`: two or more engines, each of its own device; `host_tasks`:
  // the threads that finalize their runs and merge their partial states
  // (GpuEngineOptions).
  MultiDeviceEngine(std::vector<std::unique_ptr<GpuEngine>> devices, tally::ParallelTasks host_tasks)
      : devices_(std::move(devices)), host_tasks_(std::move(host_tasks)) {}
  std::string name() const override { return "gpu"; }
  const DeviceInfo& device() const override { return devices_.front()->device(); }
  ColumnCache& column_cache() override { return devices_.front()->column_cache(); }
  GpuEngine& primary() override { return *devices_.front(); }
  void preload_tuning(tally::TuningStore* store, int64_t chunk_rows) override {
    for (const auto& d : devices_) d->preload_tuning(store, chunk_rows);
  }
  // A chunk is cached on one device (chunk id modulo the devices): any.
  bool keeps(const tally::ColumnIdentity& column) const override {
    for (const auto& d : devices_) {
      if (d->keeps(column)) return true;
    }
    return false;
  }
  bool can_run(const tally::AggregationSpec& spec) const override;
  std::unique_ptr<tally::AggregationRun> start(const tally::AggregationSpec& spec) override;
  // On the first device, which then keeps copies of the selected columns.
  std::unique_ptr<tally::ScanSelectionRun> start_selection(const tally::ScanSelectionSpec& spec) override {
    return devices_.front()->start_selection(spec);
  }
  // On the device that caches the chunk in queries.
  uint64_t keep(const tally::KeptChunk& chunk) override {
    return devices_[chunk.chunk % devices_.size()]->keep(chunk);
  }

 private:
  std::vector<std::unique_ptr<GpuEngine>> devices_;
  tally::ParallelTasks host_tasks_;
};

// One engine over the devices `ordinals` names (empty: every device): the
// device's own engine when only one of them starts, nullptr when none does
// (no CUDA, no device). A device that fails to start is left out with a
// logged warning: the others serve.
std::unique_ptr<GpuEngine> make_multi_device_engine(const std::vector<int>& ordinals, const GpuEngineOptions& options);

}  // namespace tally::gpu
