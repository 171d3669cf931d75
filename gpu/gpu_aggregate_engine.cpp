#include "gpu/gpu_aggregate_engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/engine_counters.hpp"
#include "common/error.hpp"
#include "gpu/chunk_pipeline.hpp"
#include "gpu/gpu_health.hpp"
#include "gpu/group_by.hpp"
#include "gpu/tuner/cardinality_bucket.hpp"
#include "gpu/tuner_bridge.hpp"
#include "gpu/variant_rules.hpp"

namespace tally::gpu {
namespace {

using executor::AggregationSpec;
using executor::ColumnWidth;
using executor::PartialOp;

// Without a configured budget the engine may use this share of the free
// device memory at start-up; the rest is left to other processes and the driver.
constexpr double kDefaultBudgetShare = 0.8;

bool integer_width(ColumnWidth w) { return w == ColumnWidth::int32 || w == ColumnWidth::int64; }
uint32_t width_bytes(ColumnWidth w) { return w == ColumnWidth::int32 || w == ColumnWidth::float32 ? 4 : 8; }

// The GroupBySpec for an engine spec, or nullopt when the GPU engine cannot run it.
std::optional<GroupBySpec> translate(ColumnWidth key_width, const std::vector<ColumnWidth>& value_widths,
                                     const std::vector<executor::PartialAggregate>& aggregates) {
  if (!integer_width(key_width)) return std::nullopt;
  GroupBySpec g;
  g.key_type = key_width == ColumnWidth::int32 ? KeyType::int32 : KeyType::int64;
  for (ColumnWidth w : value_widths) {
    if (!integer_width(w)) return std::nullopt;
    g.columns.push_back({w == ColumnWidth::int32 ? ValueType::int32 : ValueType::int64, true});
  }
  for (const executor::PartialAggregate& a : aggregates) {
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

std::optional<GroupBySpec> translate(const AggregationSpec& s) { return translate(s.key_width, s.value_widths, s.aggregates); }

class GpuAggregationEngine;

class GpuRun final : public executor::AggregationRun {
 public:
  GpuRun(GpuAggregationEngine& engine, const AggregationSpec& spec, std::unique_ptr<ChunkPipeline> pipeline);
  ~GpuRun() override;

  void sink(const executor::ChunkInput& chunk) override {
    const auto t0 = std::chrono::steady_clock::now();
    for (const uint8_t* f : chunk.filters)
      if (f) throw Error(SqlState::feature_not_supported, "GPU: aggregate FILTER is not supported by the GPU engine yet");
    if (chunk.values.size() != spec_.value_widths.size())
      throw Error(SqlState::internal_error, "GPU: chunk has " + std::to_string(chunk.values.size()) + " value columns, spec " +
                                                std::to_string(spec_.value_widths.size()));
    if (!gspec_) {
      // The planner's spec gives nominal widths; the chunks say what arrives
      // (raw stored int4 columns are 4 bytes wide, evaluated ones 8).
      std::vector<ColumnWidth> widths;
      for (const auto& v : chunk.values) widths.push_back(v.width);
      gspec_ = translate(chunk.keys.width, widths, spec_.aggregates);
      if (!gspec_) throw Error(SqlState::feature_not_supported, "GPU: this aggregation is not supported by the GPU engine");
      key_width_ = chunk.keys.width;
    } else if (chunk.keys.width != key_width_) {
      throw Error(SqlState::internal_error, "GPU: key width changed between chunks");
    }
    if (chunk.rows == 0) return;
    std::vector<HostColumn> columns;
    columns.reserve(1 + chunk.values.size());
    auto add = [&](const executor::ColumnView& v) {
      HostColumn c;
      c.data = v.data;
      c.validity = v.validity;
      c.width_bytes = width_bytes(v.width);
      c.cacheable = v.identity.known();
      c.key = ColumnKey{v.identity.table, v.identity.chunk, v.identity.column, static_cast<uint8_t>(c.width_bytes)};
      columns.push_back(c);
    };
    add(chunk.keys);
    for (const auto& v : chunk.values) add(v);
    // Stage this chunk (its copies start now), then aggregate the previous
    // one while they run.
    StagedChunk staged = pipeline_->stage(static_cast<int64_t>(chunk.rows), columns);
    if (pending_) {
      try {
        run_pending();
      } catch (...) {
        pipeline_->release(staged);
        throw;
      }
    }
    pending_ = std::move(staged);
    report_.rows += chunk.rows;
    report_.sink_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  executor::AggregationResult finalize() override;
  executor::AggregationReport report() const override { return report_; }

 private:
  void run_pending();

  GpuAggregationEngine& engine_;
  const DeviceInfo& device_;
  AggregationSpec spec_;
  std::optional<GroupBySpec> gspec_;
  ColumnWidth key_width_ = ColumnWidth::int64;
  std::optional<Variant> forced_;
  std::optional<LaunchConfig> forced_launch_;
  std::unique_ptr<ChunkPipeline> pipeline_;
  std::optional<StagedChunk> pending_;
  std::unique_ptr<GroupByAggregator> aggregator_;
  // The tuner, when the spec has a tuning store, tuning is enabled and no
  // configuration is forced; created with the first chunk (the GroupBySpec
  // is known then).
  std::optional<ChunkTuner> tuner_;
  bool tuner_decided_ = false;
  executor::AggregationReport report_{"gpu", "", "", 0, 0, 1, 0, 0, 0, 0, {}};
};

class GpuAggregationEngine final : public GpuEngine {
 public:
  GpuAggregationEngine(DeviceInfo device, uint64_t cache_bytes, config::TuningConfig tuning)
      : device_(std::move(device)), cache_(device_.ordinal, cache_bytes), tuning_(tuning) {}
  const config::TuningConfig& tuning() const { return tuning_; }
  std::string name() const override { return "gpu"; }
  const DeviceInfo& device() const override { return device_; }
  ColumnCache& column_cache() override { return cache_; }
  bool can_run(const AggregationSpec& spec) const override { return gpu_usable() && translate(spec).has_value(); }
  std::unique_ptr<executor::AggregationRun> start(const AggregationSpec& spec) override {
    if (!translate(spec)) throw Error(SqlState::feature_not_supported, "GPU: this aggregation is not supported by the GPU engine");
    return std::make_unique<GpuRun>(*this, spec, acquire_pipeline());
  }

  // Pipelines (streams, events, pinned buffers) are reused across queries:
  // creating pinned memory costs milliseconds.
  std::unique_ptr<ChunkPipeline> acquire_pipeline() {
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        auto p = std::move(idle_.back());
        idle_.pop_back();
        return p;
      }
    }
    return std::make_unique<ChunkPipeline>(device_.ordinal, &cache_);
  }
  void release_pipeline(std::unique_ptr<ChunkPipeline> p) {
    if (!p) return;
    p->reset_stats();
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(p));
  }

 private:
  DeviceInfo device_;
  ColumnCache cache_;
  config::TuningConfig tuning_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<ChunkPipeline>> idle_;
};

GpuRun::GpuRun(GpuAggregationEngine& engine, const AggregationSpec& spec, std::unique_ptr<ChunkPipeline> pipeline)
    : engine_(engine), device_(engine.device()), spec_(spec), pipeline_(std::move(pipeline)) {
  if (!spec_.forced_variant.empty()) {
    forced_ = parse_variant(spec_.forced_variant);
    if (!forced_)
      throw Error(SqlState::invalid_parameter_value, "GPU: unknown aggregation variant \"" + spec_.forced_variant + "\"");
  }
  if (!spec_.forced_configuration.empty()) {
    forced_launch_ = parse_launch_config(spec_.forced_configuration);
    if (!forced_launch_)
      throw Error(SqlState::invalid_parameter_value,
                  "GPU: invalid launch configuration \"" + spec_.forced_configuration + "\"")
          .with_hint("Expected the form tpb=256,bps=4,ff=50,rpt=1.");
  }
}

GpuRun::~GpuRun() {
  if (pending_) pipeline_->release(*pending_);
  pending_.reset();
  engine_.release_pipeline(std::move(pipeline_));
}

void GpuRun::run_pending() {
  StagedChunk chunk = std::move(*pending_);
  pending_.reset();
  ChunkFacts facts;
  facts.rows = static_cast<uint64_t>(chunk.rows);
  facts.estimated_groups = spec_.estimated_groups ? spec_.estimated_groups : std::max<uint64_t>(facts.rows / 4, 1);
  if (spec_.key_range_known) facts.key_range = KeyRange{spec_.key_min, spec_.key_max};
  if (!tuner_decided_) {
    tuner_decided_ = true;
    if (spec_.tuning_store && engine_.tuning().enabled && !forced_launch_) {
      ChunkTunerInput in;
      in.device = device_;
      in.spec = *gspec_;
      in.facts = facts;
      in.signature = spec_.operator_signature.empty() ? tuning_signature(spec_) : spec_.operator_signature;
      in.records = load_tuning_records(spec_.tuning_store, device_fingerprint(device_), in.signature,
                                       cardinality_bucket(static_cast<double>(facts.estimated_groups)));
      in.tuning = engine_.tuning();
      in.forced_variant = spec_.forced_variant;
      tuner_.emplace(in);
    }
  }
  Variant v;
  VariantConfig config;
  if (tuner_) {
    const TunedChoice choice = tuner_->next();
    v = choice.variant;
    config = choice.config;
  } else {
    v = forced_ ? *forced_ : choose_variant(*gspec_, device_, facts);
    config = default_launch_config(v, *gspec_, device_, facts);
    if (forced_launch_) config.launch = *forced_launch_;
  }
  if (!aggregator_) {
    aggregator_ = std::make_unique<GroupByAggregator>(device_, *gspec_, default_table_options(v, *gspec_, device_, facts),
                                                      pipeline_->compute_stream());
  }
  ChunkPointers p;
  p.rows = chunk.rows;
  p.key = chunk.columns[0];
  p.values.assign(chunk.columns.begin() + 1, chunk.columns.end());
  if (facts.key_range) p.key_range = facts.key_range;
  LaunchReport r;
  const double ms = pipeline_->run(chunk, [&] { r = aggregator_->consume(p, v, config); });
  report_.device_ms += ms;
  ++report_.chunks;
  if (tuner_ && chunk.rows > 0) {
    tuner_->report(r.used, ms / 1e3 / static_cast<double>(chunk.rows));  // counts tuner_measurements
  }
  report_.variant = std::string(variant_name(r.variant));
  report_.configuration = describe(r.used);
  for (const std::string& a : r.adjustments)
    if (std::find(report_.details.begin(), report_.details.end(), "GPU launch adjusted: " + a) == report_.details.end())
      report_.details.push_back("GPU launch adjusted: " + a);
}

executor::AggregationResult GpuRun::finalize() {
  const auto t0 = std::chrono::steady_clock::now();
  if (pending_) run_pending();
  executor::AggregationResult out;
  out.states.resize(spec_.aggregates.size());
  const PipelineStats& ps = pipeline_->stats();
  char line[200];
  std::snprintf(line, sizeof line,
                "GPU: device time %.3f ms over %llu chunks, column cache %llu hits / %llu misses, %.1f MB copied to the device",
                report_.device_ms, static_cast<unsigned long long>(report_.chunks), static_cast<unsigned long long>(ps.hits),
                static_cast<unsigned long long>(ps.misses), static_cast<double>(ps.copied_bytes) / 1e6);
  report_.details.push_back(line);
  if (tuner_) {
    report_.details.push_back(tuner_->explain());
    for (const executor::TuningRecord& rec : tuner_->records()) {
      spec_.tuning_store->store(rec);  // counts tuning_cache_writes
    }
  }
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

}  // namespace

std::unique_ptr<GpuEngine> make_gpu_engine(int ordinal, const GpuEngineOptions& options) {
  if (!built_with_cuda() || !gpu_usable()) return nullptr;
  const int n = device_count();
  if (n == 0) return nullptr;
  const int d = ordinal < 0 ? 0 : ordinal;
  if (d >= n) return nullptr;
  DeviceInfo info = query_device(d);
  const uint64_t free_bytes = info.free_memory ? info.free_memory : info.total_memory;
  const uint64_t budget = options.memory_budget ? options.memory_budget
                                                : static_cast<uint64_t>(static_cast<double>(free_bytes) * kDefaultBudgetShare);
  const uint64_t cache = options.column_cache_bytes ? std::min(options.column_cache_bytes, budget) : budget / 2;
  return std::make_unique<GpuAggregationEngine>(std::move(info), cache, options.tuning);
}

}  // namespace tally::gpu
