#include "gpu/gpu_aggregate_engine.hpp"

#include <chrono>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "gpu/gpu_health.hpp"
#include "gpu/group_by.hpp"
#include "gpu/variant_rules.hpp"

namespace tally::gpu {
namespace {

using executor::AggregationSpec;
using executor::ColumnWidth;
using executor::PartialOp;

bool integer_width(ColumnWidth w) { return w == ColumnWidth::int32 || w == ColumnWidth::int64; }

// The GroupBySpec for an engine spec, or nullopt when the GPU engine cannot run it.
std::optional<GroupBySpec> translate(const AggregationSpec& s) {
  if (!integer_width(s.key_width)) return std::nullopt;
  GroupBySpec g;
  g.key_type = s.key_width == ColumnWidth::int32 ? KeyType::int32 : KeyType::int64;
  for (ColumnWidth w : s.value_widths) {
    if (!integer_width(w)) return std::nullopt;
    g.columns.push_back({w == ColumnWidth::int32 ? ValueType::int32 : ValueType::int64, true});
  }
  for (const executor::PartialAggregate& a : s.aggregates) {
    AggregateSpec as;
    as.column = a.input;
    switch (a.op) {
      case PartialOp::count_rows: as.op = AggOp::count_star; as.column = -1; break;
      case PartialOp::count_valid: as.op = AggOp::count; break;
      case PartialOp::sum_int: as.op = AggOp::sum; break;
      case PartialOp::min_int: as.op = AggOp::min; break;
      case PartialOp::max_int: as.op = AggOp::max; break;
      default: return std::nullopt;
    }
    if (as.op != AggOp::count_star && (as.column < 0 || static_cast<size_t>(as.column) >= g.columns.size()))
      return std::nullopt;
    g.aggregates.push_back(as);
  }
  if (g.columns.size() > static_cast<size_t>(kMaxColumns)) return std::nullopt;
  try {
    (void)plan_lanes(g);
  } catch (const Error&) {
    return std::nullopt;
  }
  return g;
}

class GpuRun final : public executor::AggregationRun {
 public:
  GpuRun(const DeviceInfo& device, const AggregationSpec& spec, GroupBySpec gspec)
      : device_(device), spec_(spec), gspec_(std::move(gspec)) {
    if (!spec_.forced_variant.empty()) {
      forced_ = parse_variant(spec_.forced_variant);
      if (!forced_)
        throw Error(SqlState::invalid_parameter_value, "GPU: unknown aggregation variant \"" + spec_.forced_variant + "\"");
    }
  }

  void sink(const executor::ChunkInput& chunk) override {
    const auto t0 = std::chrono::steady_clock::now();
    for (const uint8_t* f : chunk.filters)
      if (f) throw Error(SqlState::feature_not_supported, "GPU: aggregate FILTER is not supported by the GPU engine yet");
    ChunkFacts facts;
    facts.rows = chunk.rows;
    facts.estimated_groups = spec_.estimated_groups ? spec_.estimated_groups : std::max<uint64_t>(chunk.rows / 4, 1);
    if (spec_.key_range_known) facts.key_range = KeyRange{spec_.key_min, spec_.key_max};
    const Variant v = forced_ ? *forced_ : choose_variant(gspec_, device_, facts);
    if (!aggregator_) {
      aggregator_ = std::make_unique<GroupByAggregator>(device_, gspec_, default_table_options(v, gspec_, device_, facts));
    }
    ChunkPointers p;
    p.rows = static_cast<int64_t>(chunk.rows);
    p.key.data = chunk.keys.data;
    p.key.validity = chunk.keys.validity;
    for (const executor::ColumnView& c : chunk.values) p.values.push_back(ColumnPointer{c.data, c.validity});
    if (facts.key_range) p.key_range = facts.key_range;
    const LaunchReport r = aggregator_->consume_host(p, v, default_launch_config(v, gspec_, device_, facts));
    report_.variant = std::string(variant_name(r.variant));
    report_.configuration = describe(r.used);
    report_.rows += chunk.rows;
    report_.sink_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  executor::AggregationResult finalize() override {
    const auto t0 = std::chrono::steady_clock::now();
    executor::AggregationResult out;
    out.states.resize(spec_.aggregates.size());
    if (!aggregator_) return out;  // no chunk: no group
    const GroupByResult r = aggregator_->finish();
    const size_t n = r.groups();
    out.keys = r.keys;
    out.key_valid.resize(n);
    for (size_t g = 0; g < n; ++g) out.key_valid[g] = r.key_is_null[g] ? 0 : 1;
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      executor::PartialStates& st = out.states[a];
      const AggregateValues& v = r.aggregates[a];
      st.count.assign(v.nonnull.begin(), v.nonnull.end());
      switch (spec_.aggregates[a].op) {
        case PartialOp::sum_int: st.sum_int.assign(v.value.begin(), v.value.end()); break;
        case PartialOp::min_int:
        case PartialOp::max_int:
          st.extreme_int.resize(n);
          for (size_t g = 0; g < n; ++g) st.extreme_int[g] = static_cast<int64_t>(v.value[g]);
          break;
        default: break;
      }
    }
    report_.groups = n;
    report_.finalize_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return out;
  }

  executor::AggregationReport report() const override { return report_; }

 private:
  DeviceInfo device_;
  AggregationSpec spec_;
  GroupBySpec gspec_;
  std::optional<Variant> forced_;
  std::unique_ptr<GroupByAggregator> aggregator_;
  executor::AggregationReport report_{"gpu", "", "", 0, 0, 1, 0, 0};
};

class GpuAggregationEngine final : public executor::AggregateEngine {
 public:
  explicit GpuAggregationEngine(DeviceInfo device) : device_(std::move(device)) {}
  std::string name() const override { return "gpu"; }
  bool can_run(const AggregationSpec& spec) const override { return gpu_usable() && translate(spec).has_value(); }
  std::unique_ptr<executor::AggregationRun> start(const AggregationSpec& spec) override {
    std::optional<GroupBySpec> g = translate(spec);
    if (!g) throw Error(SqlState::feature_not_supported, "GPU: this aggregation is not supported by the GPU engine");
    return std::make_unique<GpuRun>(device_, spec, std::move(*g));
  }

 private:
  DeviceInfo device_;
};

}  // namespace

std::unique_ptr<executor::AggregateEngine> make_gpu_engine(int ordinal) {
  if (!built_with_cuda() || !gpu_usable()) return nullptr;
  const int n = device_count();
  if (n == 0) return nullptr;
  const int d = ordinal < 0 ? 0 : ordinal;
  if (d >= n) return nullptr;
  return std::make_unique<GpuAggregationEngine>(query_device(d));
}

}  // namespace tally::gpu
