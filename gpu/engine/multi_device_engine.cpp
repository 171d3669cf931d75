#include "gpu/engine/multi_device_engine.hpp"

#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/partial_states_merge.hpp"
#include "common/spread_run.hpp"

namespace tally::gpu {

bool MultiDeviceEngine::can_run(const tally::AggregationSpec& spec) const {
  if (!tally::mergeable(spec)) return devices_.front()->can_run(spec);
  return std::all_of(devices_.begin(), devices_.end(), [&](const auto& d) { return d->can_run(spec); });
}

std::unique_ptr<tally::AggregationRun> MultiDeviceEngine::start(const tally::AggregationSpec& spec) {
  if (!tally::mergeable(spec)) {
    use_device(devices_.front()->device().ordinal);
    return devices_.front()->start(spec);
  }
  tally::AggregationSpec each = spec;
  each.compact_result = false;
  std::vector<int> ordinals;
  std::vector<std::string> names;
  std::vector<std::unique_ptr<tally::AggregationRun>> runs;
  for (const auto& d : devices_) {
    ordinals.push_back(d->device().ordinal);
    names.push_back("Device " + std::to_string(ordinals.back()));
    use_device(ordinals.back());
    runs.push_back(d->start(each));
  }
  return std::make_unique<tally::SpreadRun>(spec, std::move(runs), std::move(names),
                                            [ordinals](size_t i) { use_device(ordinals[i]); }, host_tasks_);
}

std::unique_ptr<GpuEngine> make_multi_device_engine(const std::vector<int>& ordinals, const GpuEngineOptions& options) {
  std::vector<int> wanted = ordinals;
  if (wanted.empty()) {
    for (int d = 0; d < device_count(); ++d) wanted.push_back(d);
  }
  std::vector<std::unique_ptr<GpuEngine>> engines;
  for (int ordinal : wanted) {
    try {
      if (auto e = make_gpu_engine(ordinal, options)) engines.push_back(std::move(e));
      else log::warning("gpu_device_unavailable", {{"device", ordinal}});
    } catch (const Error& e) {
      log::warning("gpu_device_failed", {{"device", ordinal}, {"error", e.what()}});
    }
  }
  if (engines.empty()) return nullptr;
  if (engines.size() == 1) return std::move(engines.front());
  return std::make_unique<MultiDeviceEngine>(std::move(engines), options.host_tasks);
}

}  // namespace tally::gpu
