#include "gpu/gpu_aggregate_engine.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <thread>
#include <deque>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/engine_counters.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "gpu/chunk_pipeline.hpp"
#include "gpu/first_use_counts.hpp"
#include "gpu/gpu_health.hpp"
#include "gpu/group_by.hpp"
#include "gpu/host_steps.hpp"
#include "gpu/start_up.hpp"
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
// Rows one joined launch (several adjacent resident chunks, see
// ChunkPipeline::joinable) covers at most: 4 chunks of 2^24 rows, ~180 us of
// kernel at small G on the H100, several times the host's cost of staging
// them (~20 us per chunk), so the next launch is enqueued long before the GPU
// runs out of work, while a 2^28-row query needs 5 launches instead of 16.
constexpr int64_t kJoinedLaunchRows = int64_t{1} << 26;
// How long a query thread spins for the engine's mutex before it sleeps
// (GpuAggregationEngine::query_lock): longer than the writer thread's
// bookkeeping under it, short against a query.
constexpr std::chrono::microseconds kQueryLockSpin{100};

bool integer_width(ColumnWidth w) { return w == ColumnWidth::int32 || w == ColumnWidth::int64; }
uint32_t width_bytes(ColumnWidth w) { return w == ColumnWidth::int32 || w == ColumnWidth::float32 ? 4 : 8; }

// The GroupBySpec for an engine spec, or nullopt when the GPU engine cannot run it.
std::optional<GroupBySpec> translate(ColumnWidth key_width, const std::vector<ColumnWidth>& value_widths,
                                     const std::vector<executor::PartialAggregate>& aggregates,
                                     const std::vector<uint8_t>& not_null) {
  if (!integer_width(key_width)) return std::nullopt;
  GroupBySpec g;
  g.key_type = key_width == ColumnWidth::int32 ? KeyType::int32 : KeyType::int64;
  for (size_t i = 0; i < value_widths.size(); ++i) {
    const ColumnWidth w = value_widths[i];
    if (!integer_width(w)) return std::nullopt;
    const bool may_have_nulls = !(i < not_null.size() && not_null[i]);
    g.columns.push_back({w == ColumnWidth::int32 ? ValueType::int32 : ValueType::int64, may_have_nulls});
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

std::optional<GroupBySpec> translate(const AggregationSpec& s) {
  std::optional<GroupBySpec> g = translate(s.key_width, s.value_widths, s.aggregates, s.value_not_null);
  // The planner's word on NULL keys (chunk statistics; unknown stays unknown):
  // variant_rules.cpp keeps a nullable-key count+sum off the count+sum kernel.
  if (g) g->key_may_have_nulls = s.key_has_nulls;
  return g;
}

class GpuAggregationEngine;

// Puts the calling thread (the engine's writer) under SCHED_IDLE: woken by a
// query thread it was placed on that thread's CPU and ran its bookkeeping
// there first (the query's end path lost 30-60 us right after the wake-up
// on the H100 host); at idle priority it never preempts a query and runs on
// an idle core. Best effort: left as it is where the policy is refused.
void background_priority() {
#ifdef SCHED_IDLE
  sched_param p{};
  p.sched_priority = 0;
  (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &p);
#endif
}

// A pipeline and the aggregator its last query used, reused together (the
// aggregator launches on the pipeline's stream): a repeated query finds its
// global table, spill buffer, pinned counters and observation events made,
// and pays a reset() instead of allocations and event creation.
struct SpareAggregator {
  std::string key;  // aggregator_key() of what it was made for
  std::unique_ptr<GroupByAggregator> aggregator;
};
struct PooledPipeline {
  std::unique_ptr<ChunkPipeline> pipeline;
  std::optional<SpareAggregator> spare;  // the last finished query's
};

// What an aggregator was made for: reusable for a query with the same key.
std::string aggregator_key(const GroupBySpec& g, const TableOptions& o) {
  std::string k = std::to_string(static_cast<int>(g.key_type)) + "|";
  for (const auto& c : g.columns) k += std::to_string(static_cast<int>(c.type)) + (c.may_have_nulls ? "n," : ",");
  k += "|";
  for (const auto& a : g.aggregates) k += std::to_string(static_cast<int>(a.op)) + ":" + std::to_string(a.column) + ",";
  k += "|" + std::to_string(o.estimated_groups) + "|" + std::to_string(o.max_fill) + "|" +
       std::to_string(static_cast<int>(o.hash)) + "|" + std::to_string(o.key_range_hint.min) + "," +
       std::to_string(o.key_range_hint.max) + "|" + std::to_string(o.max_rows_per_launch) +
       (o.own_partitioned_output ? "|own" : "|merge");
  return k;
}

class GpuRun final : public executor::AggregationRun {
 public:
  GpuRun(GpuAggregationEngine& engine, const AggregationSpec& spec, PooledPipeline pooled);
  ~GpuRun() override;

  void sink(const executor::ChunkInput& chunk) override {
    const auto t0 = std::chrono::steady_clock::now();
    // Marks on the way to the first kernels (EXPLAIN ANALYZE "GPU: start path").
    HostTimelineScope timeline(first_enqueue_us_ < 0 ? &start_path_ : nullptr);
    host_mark(last_sink_end_ ? "next sink" : "sink");
    // Time spent outside sink between chunks: the executor's scan.
    if (last_sink_end_) scan_gap_us_ += std::chrono::duration<double, std::micro>(t0 - *last_sink_end_).count();
    else first_sink_us_ = std::chrono::duration<double, std::micro>(t0 - created_).count();
    struct MarkEnd {
      std::optional<std::chrono::steady_clock::time_point>& at;
      ~MarkEnd() { at = std::chrono::steady_clock::now(); }
    } mark_end{last_sink_end_};
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
      gspec_ = translate(chunk.keys.width, widths, spec_.aggregates, spec_.value_not_null);
      if (!gspec_) throw Error(SqlState::feature_not_supported, "GPU: this aggregation is not supported by the GPU engine");
      key_width_ = chunk.keys.width;
      host_mark("translated");
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
    for (size_t i = 0; i < chunk.values.size(); ++i) {
      add(chunk.values[i]);
      if (columns.back().validity && !gspec_->columns[i].may_have_nulls) {
        // Declared NOT NULL by the statistics: a bitmap here must be all
        // valid (evaluated inputs carry one); the kernels then ignore it.
        const uint8_t* bits = columns.back().validity;
        if (!std::all_of(bits, bits + chunk.rows, [](uint8_t b) { return b != 0; }))
          throw Error(SqlState::internal_error, "GPU: a NULL in an input the statistics say has none");
        columns.back().validity = nullptr;
      }
    }
    // Stage this chunk (its copies start now), then aggregate the previous
    // one while they run.
    const auto t_stage = std::chrono::steady_clock::now();
    StagedChunk staged = pipeline_->stage(static_cast<int64_t>(chunk.rows), columns);
    host_.stage_us += since_us(t_stage);
    host_mark("staged");
    std::optional<Decided> next;
    try {
      // DaMoN'19's search is sequential: a race or search proposal first
      // sees the times of the earlier ones (the host would otherwise choose
      // ~9 chunks ahead of any time it knows: 8 launches in flight, ~30 us to
      // enqueue a ~300 us chunk on the H100, bench/tuner/RESULTS.md).
      if (tuner_ && tuner_->awaits_reports()) await_reports();
      next = decide(std::move(staged));
      // Resident chunks that continue the pending ones in device memory and
      // run the same exploited configuration join them (one launch); the
      // first launch of a query goes alone so that the GPU starts at once.
      // A chunk that continues a measurement launch of several chunks
      // (TunedChoice::span, the tuner's unit) joins it.
      const bool same_run = pending_ && pending_->variant == next->variant && pending_->config_text == next->config_text &&
                            pending_->chunk.rows + next->chunk.rows <= kJoinedLaunchRows &&
                            ChunkPipeline::joinable(pending_->chunk, next->chunk);
      const bool continues = same_run && next->choice.continues && pending_->chunks < pending_->choice.span;
      if (continues || (same_run && launches_ > 0 && pending_->exploit && next->exploit)) {
        ChunkPipeline::join(pending_->chunk, std::move(next->chunk));
        ++pending_->chunks;
        next.reset();
        if (continues && pending_->chunks == pending_->choice.span) run_pending(true);  // a whole measurement: at once
      } else if (pending_) {
        run_pending(true);
      }
      // A chunk that opens a measurement launch waits for the chunks it spans.
      if (next && next->choice.span > 1) {
        pending_ = std::move(next);
        next.reset();
      }
      if (next && launches_ == 0 && next->variant != Variant::partitioned_hash) {
        // The query's first chunk runs as soon as it is staged, not after
        // the executor has scanned and the engine staged and decided the
        // second, which would leave the GPU idle meanwhile. Only the
        // partitioned variant waits: whether more chunks follow decides
        // whether a lone chunk may own its output (run_pending).
        pending_ = std::move(next);
        next.reset();
        run_pending(true);
      }
      if (next && !next->exploit && aggregator_) {
        // A measurement chunk is never joined: launched at once, its time
        // comes back a chunk earlier and the GPU does not idle after a wait.
        pending_ = std::move(next);
        next.reset();
        run_pending(true);
      }
    } catch (...) {
      if (next) pipeline_->release(next->chunk);
      throw;
    }
    if (next) pending_ = std::move(next);
    report_.rows += chunk.rows;
    report_.sink_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  executor::AggregationResult finalize() override;
  executor::AggregationReport report() const override { return report_; }

 private:
  // A staged chunk (or several joined ones) with the variant and
  // configuration chosen for it.
  struct Decided {
    StagedChunk chunk;
    Variant variant = Variant::global_hash;
    VariantConfig config;
    std::string config_text;  // describe(config): joined chunks run the same
    TunedChoice choice;
    // The best known configuration with nothing under measurement (or no
    // tuner): may be joined with the neighbouring chunks' launch.
    bool exploit = false;
    int chunks = 1;
  };
  // Chooses the variant and configuration of a staged chunk (the tuner's
  // next(), created with the first chunk).
  Decided decide(StagedChunk&& chunk);
  ChunkFacts facts_for(int64_t rows) const;
  // Enqueues the pending chunk(s); `more_follow`: another chunk is staged already.
  void run_pending(bool more_follow);
  // One launch of `chunk` (a chunk or joined chunks) with `choice`, timed
  // for the tuner unless `joined`.
  void launch(StagedChunk& chunk, const TunedChoice& choice, Variant v, const VariantConfig& config, bool joined,
              int screen_part = 0, int chunks = 1);
  // A race screen (TunedChoice::screen_share): a launch per raced variant's
  // slice, the reference's slice and its rest over the staged chunk, see
  // ChunkTuner::report_screen. False when the chunk is too small to slice
  // (then it runs whole, as an ordinary race chunk).
  bool run_screen(Decided& d);
  // Feeds the timings of finished chunks to the report and the tuner
  // (wait = true: all chunks enqueued so far).
  void collect_timings(bool wait);
  void absorb_timings(const std::vector<ChunkTiming>& done);
  // Launches the pending chunk and waits, oldest chunk first, until the
  // tuner has the reports its next proposal needs.
  void await_reports();
  // EXPLAIN ANALYZE lines of a timeline's marks.
  static std::string path_line(const char* title, const HostTimeline& t);
  std::string start_path_line() const;

  GpuAggregationEngine& engine_;
  const DeviceInfo& device_;
  AggregationSpec spec_;
  std::optional<GroupBySpec> gspec_;
  ColumnWidth key_width_ = ColumnWidth::int64;
  std::optional<Variant> forced_;
  std::optional<LaunchConfig> forced_launch_;
  std::unique_ptr<ChunkPipeline> pipeline_;
  std::optional<Decided> pending_;
  long launches_ = 0;        // run_pending calls
  long feedback_waits_ = 0;  // await_reports calls
  double feedback_wait_us_ = 0;
  FirstUseSnapshot first_use_at_start_;   // process-wide first-use counts when this query began
  long joined_chunks_ = 0;   // chunks that ran in a launch with others
  double joined_ms_ = 0;     // device time of the joined launches
  int64_t joined_rows_ = 0;
  std::unique_ptr<GroupByAggregator> aggregator_;
  std::string aggregator_key_;
  // The pooled pipeline's aggregator (the previous query's), taken when this
  // query's key matches; this query's own goes back with the pipeline once
  // it finished.
  std::optional<SpareAggregator> spare_;
  bool finished_ = false;
  bool aggregator_reused_ = false;
  // The tuner, when the spec has a tuning store, tuning is enabled and no
  // configuration is forced; created with the first chunk (the GroupBySpec
  // is known then).
  std::optional<ChunkTuner> tuner_;
  bool tuner_decided_ = false;
  std::string tuning_key_;  // device|signature|bucket of the tuner's records
  // Chunks enqueued whose device time has not been read yet: the tuner
  // learns each chunk's time a chunk or two late rather than stall the GPU.
  struct Pending {
    uint64_t ticket = 0;
    TunedChoice choice;
    int64_t rows = 0;
    bool joined = false;  // not the tuner's unit (ChunkTuner::measure_chunks): not a DaMoN measurement
    // A race screen's launches (run_screen): 1 the raced slice, 2 + i the
    // slice of TunedChoice::also_screened[i], kScreenReferencePart the
    // reference's slice, kScreenRestPart its rest; 0 an ordinary launch.
    int screen_part = 0;
    int chunks = 1;  // chunks the launch covered
  };
  static constexpr int kScreenReferencePart = (1 << 20) - 1;
  static constexpr int kScreenRestPart = 1 << 20;
  ScreenTimes screen_times_;  // the screen whose launches are coming back
  long screens_ = 0;
  std::deque<Pending> timing_;
  // Host time per step, summed over the query's chunks (EXPLAIN ANALYZE):
  // where the host spends its time when it, not the GPU, sets the pace.
  struct HostTimes {
    double stage_us = 0, tuner_setup_us = 0, aggregator_setup_us = 0, tuner_us = 0, enqueue_us = 0, timings_us = 0;
  } host_;
  // The enqueue's CUDA calls and waits (host_steps.hpp), summed over chunks.
  HostSteps steps_;
  // Query timeline on the host: when the run was created, when the first
  // chunk arrived and when the first chunk's kernels were enqueued (us after
  // creation), and the executor's time between chunks.
  std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();
  // Named points from creation to the first kernels (host_steps.hpp).
  HostTimeline start_path_{created_};
  std::optional<std::chrono::steady_clock::time_point> last_sink_end_;
  double first_sink_us_ = 0, first_enqueue_us_ = -1, scan_gap_us_ = 0;
  static double since_us(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
  }
  executor::AggregationReport report_{"gpu", "", "", 0, 0, 1, 0, 0, 0, 0, {}};
};

class GpuAggregationEngine final : public GpuEngine {
 public:
  GpuAggregationEngine(DeviceInfo device, uint64_t cache_bytes, config::TuningConfig tuning)
      : device_(std::move(device)), cache_(device_.ordinal, cache_bytes), tuning_(tuning),
        fingerprint_(device_fingerprint(device_)) {}
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
  PooledPipeline acquire_pipeline() {
    {
      const auto lock = query_lock();
      if (!idle_.empty()) {
        PooledPipeline p = std::move(idle_.back());
        idle_.pop_back();
        return p;
      }
    }
    PooledPipeline p;
    p.pipeline = std::make_unique<ChunkPipeline>(device_.ordinal, &cache_);
    return p;
  }
  // The latest records this process measured for a key (device, signature,
  // bucket), ahead of the store: the next query needs neither the SQLite
  // read nor to wait for the write, which a background thread does. A
  // finished query's tuner is handed over as it is (finish_tuning): its
  // records (JSON) are made by the writer thread, or here by the next query
  // on the same key if it comes first, never on a query's own critical path.
  std::optional<std::vector<executor::TuningRecord>> recent_records(const std::string& key) {
    const auto lock = query_lock();
    for (auto it = finished_.begin(); it != finished_.end();) {
      if (it->key != key) {
        ++it;
        continue;
      }
      absorb(*it);
      it = finished_.erase(it);
    }
    const auto it = recent_.find(key);
    if (it == recent_.end()) return std::nullopt;
    return it->second;
  }
  // The records for a tuning key: this process's latest, else the store's.
  // The first look-up of a store reads all of this device's records from it
  // at once, so later queries (a restarted server's first query on a key
  // included) find theirs in memory, with no SQLite read on their path.
  std::vector<executor::TuningRecord> records_for(const std::string& key, executor::TuningStore* store,
                                                  const std::string& signature, int bucket, int64_t chunk_rows) {
    if (auto r = recent_records(key)) return std::move(*r);
    if (!store) return {};
    preload(store, chunk_rows);
    if (auto r = recent_records(key)) return std::move(*r);
    {
      // A store that listed all its records at preload (TuningStore::lists,
      // an empty store included: a tallyd started on an empty tuning cache)
      // holds none for this key (the process's own come through recent_):
      // no SQLite read on a cold query's path (0.11 ms of a cold Q's start
      // path on the H100 host, bench/tuner/data/h100_live_tuning_20261123_0236.txt).
      const auto lock = query_lock();
      if (listed_.count(store)) return {};
    }
    // A store that cannot list: read the key, and remember the answer, empty
    // or not, so the next query does not ask again.
    std::vector<executor::TuningRecord> loaded = load_tuning_records(store, fingerprint_, signature, bucket);
    const auto lock = query_lock();
    recent_.emplace(key, loaded);
    return loaded;
  }

  // Hands a finished query's tuner to the writer thread, which makes and
  // persists its records.
  void finish_tuning(std::string key, executor::TuningStore* store, ChunkTuner tuner) {
    const auto lock = query_lock();
    finished_.push_back(FinishedTuner{std::move(key), store, std::move(tuner)});
    wake_writer();
  }
  // With the query lock held: starts the writer thread on first use (at
  // idle priority: it must never take a core from a query) and wakes it.
  void wake_writer() {
    if (!writer_.joinable()) writer_ = std::thread([this] {
      name_this_thread("tally-tunewrite");
      background_priority();
      write_loop();
    });
    wake_.notify_one();
  }
  ~GpuAggregationEngine() override {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    if (writer_.joinable()) writer_.join();  // every record is persisted before the engine goes
    if (preparser_.joinable()) preparser_.join();
    if (rehearser_.joinable()) rehearser_.join();
  }

  // Reads the store's records of this device into recent_, once per store,
  // and prepares their shapes off the query path (rehearse()); chunk_rows:
  // the rows of the calling query's chunks (the table options' launch size).
  void preload(executor::TuningStore* store, int64_t chunk_rows) {
    {
      std::lock_guard lock(mutex_);
      if (!preloaded_.insert(store).second) return;
    }
    std::vector<executor::TuningRecord> all;
    try {
      all = store->all();
    } catch (const std::exception&) {
      return;  // unreadable: queries load their own keys (load_tuning_records)
    }
    // A store that says it lists (TuningStore::lists) is complete even when
    // empty; one that does not but returned records is taken as complete,
    // as before lists() existed.
    const bool listed = store->lists() || !all.empty();
    std::erase_if(all, [&](const auto& r) { return r.device != fingerprint_; });  // never another GPU's entry
    std::lock_guard lock(mutex_);
    if (listed) listed_.insert(store);
    // Off the query's path: the first query on each key (after a restart,
    // typically another signature came first) then finds its search states
    // parsed (tuner_bridge.hpp).
    if (!preparser_.joinable())
      preparser_ = std::thread([records = all] {
        name_this_thread("tally-preparse");
        preparse_search_states(records);
      });
    if (!rehearser_.joinable() && chunk_rows > 0 && !all.empty())
      rehearser_ = std::thread([this, records = all, chunk_rows] {
        name_this_thread("tally-rehearse");
        rehearse(records, chunk_rows);
      });
    for (auto& r : all) {
      const std::string key = fingerprint_ + "|" + r.signature + "|" + std::to_string(r.bucket);
      std::vector<executor::TuningRecord>& known = recent_[key];
      // This process's own, newer measurements stay.
      if (std::none_of(known.begin(), known.end(), [&](const auto& k) { return k.variant == r.variant; }))
        known.push_back(std::move(r));
    }
  }

  // Creates a pipeline (streams, events; the CUDA context with them) for the
  // pool at start-up, so the first query does not, and the memory the first
  // queries would otherwise map (start_up.hpp).
  void warm() {
    release_pipeline(acquire_pipeline());
    prepare_for_queries(device_);
    const LaunchPathWarmUp w = warm_launch_paths(device_);
    if (w.already_warmed) return;
    // One line either way; a warm-up cut short (time, memory) leaves the rest
    // to the first queries, as before it existed.
    log::info("gpu_launch_paths_warmed",
              {{"aggregations", w.aggregations}, {"failed", w.failed}, {"out_of_time", w.out_of_time},
               {"ms", w.ms}, {"pinned_allocations", w.pinned_allocations}, {"kernels", w.kernel_first_lookups}});
  }

  const std::string& fingerprint() const { return fingerprint_; }

  // mutex_ as a query thread takes it: spinning a while before sleeping,
  // since what holds it is short (a look-up, a queue push, the writer's
  // bookkeeping) and a thread that sleeps on the futex came back tens of
  // microseconds later on the H100 host (session 8: 30-60 us of the end
  // path between the tuner's explain line and its hand-over).
  std::unique_lock<std::mutex> query_lock() {
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (lock.owns_lock()) return lock;
    const auto until = std::chrono::steady_clock::now() + kQueryLockSpin;
    while (std::chrono::steady_clock::now() < until)
      if (lock.try_lock()) return lock;
    lock.lock();
    return lock;
  }

  void release_pipeline(PooledPipeline p) {
    if (!p.pipeline) return;
    p.pipeline->reset_stats();
    const auto lock = query_lock();
    idle_.push_back(std::move(p));
  }

 private:
  DeviceInfo device_;
  ColumnCache cache_;
  config::TuningConfig tuning_;
  std::string fingerprint_;  // device_fingerprint(device_), the tuning cache's device key
  std::mutex mutex_;
  std::set<executor::TuningStore*> preloaded_;
  std::set<executor::TuningStore*> listed_;  // preloaded and listed complete: a key it lacks is absent
  std::vector<PooledPipeline> idle_;
  std::map<std::string, std::vector<executor::TuningRecord>> recent_;
  std::deque<std::pair<executor::TuningStore*, executor::TuningRecord>> writes_;
  struct FinishedTuner {
    std::string key;
    executor::TuningStore* store;
    ChunkTuner tuner;
  };
  std::deque<FinishedTuner> finished_;  // tuners whose records are not made yet
  // Makes a finished tuner's records: kept in recent_ and queued for the
  // store. Called with mutex_ held.
  void absorb(FinishedTuner& f) {
    std::vector<executor::TuningRecord>& known = recent_[f.key];
    for (auto& r : f.tuner.records()) {
      auto it = std::find_if(known.begin(), known.end(), [&](const auto& k) { return k.variant == r.variant; });
      if (it != known.end()) *it = r;
      else known.push_back(r);
      writes_.emplace_back(f.store, std::move(r));
    }
  }
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread writer_;
  std::thread preparser_;  // preload()'s parse of the loaded search states
  std::thread rehearser_;  // preload()'s rehearsal of the cached shapes

  // What the first query of each cached shape would build first in this
  // process, done before it comes (start_up.hpp rehearse_aggregation): per
  // signature and bucket of this device, its fastest cached variant at its
  // best configuration, with NOT NULL and with nullable value columns (the
  // signature does not say which the query has). Bounded in work and memory:
  // at most kMaxRehearsals aggregations of kRehearsalRows rows, buckets up to
  // kMaxRehearsalBucket.
  static constexpr int kMaxRehearsals = 8;
  static constexpr int64_t kRehearsalRows = int64_t{1} << 22;  // 16-32 MB per column, ~1 ms of copies
  static constexpr int kMaxRehearsalBucket = 24;                // a table of 2^24 groups, as a query's
  void rehearse(const std::vector<executor::TuningRecord>& records, int64_t chunk_rows) {
    std::map<std::string, const executor::TuningRecord*> fastest;  // by signature and bucket
    for (const auto& r : records) {
      if (!(r.seconds_per_row > 0) || r.bucket < 0 || r.bucket > kMaxRehearsalBucket) continue;
      const executor::TuningRecord*& f = fastest[r.signature + "|" + std::to_string(r.bucket)];
      if (!f || r.seconds_per_row < f->seconds_per_row) f = &r;
    }
    int done = 0;
    for (const auto& [key, r] : fastest) {
      const auto shape = parse_tuning_signature(r->signature);
      const auto variant = parse_variant(r->variant);
      const auto launch = parse_launch_config(r->best_config);
      if (!shape || !variant || !launch) continue;
      for (const bool not_null : {true, false}) {
        {
          std::lock_guard lock(mutex_);
          if (stop_ || done >= kMaxRehearsals) return;
        }
        const auto spec = translate(shape->key_width, shape->value_widths, shape->aggregates,
                                    std::vector<uint8_t>(shape->value_widths.size(), not_null ? 1 : 0));
        if (!spec) break;
        const uint64_t groups = uint64_t{1} << r->bucket;
        ChunkFacts facts;
        facts.rows = static_cast<uint64_t>(chunk_rows);
        facts.estimated_groups = groups;
        facts.key_range = KeyRange{0, static_cast<int64_t>(groups) - 1};
        if (!can_use(*variant, *spec, device_, facts)) break;
        VariantConfig config = default_launch_config(*variant, *spec, device_, facts);
        config.launch = *launch;
        TableOptions options = default_table_options(*variant, *spec, device_, facts);
        options.own_partitioned_output = false;  // as a query of several chunks
        (void)rehearse_aggregation(device_, *spec, *variant, config, options, std::min(chunk_rows, kRehearsalRows), groups);
        ++done;
      }
    }
  }

  void write_loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || !writes_.empty() || !finished_.empty(); });
      if (!finished_.empty()) {
        FinishedTuner f = std::move(finished_.front());
        finished_.pop_front();
        absorb(f);
        continue;
      }
      if (writes_.empty()) return;  // stop_ and drained
      auto [store, record] = std::move(writes_.front());
      writes_.pop_front();
      lock.unlock();
      try {
        store->store(record);  // counts tuning_cache_writes
      } catch (const std::exception&) {
        // A cache that cannot be written costs future queries their tuning,
        // never this (finished) query its result.
      }
      lock.lock();
    }
  }
};

GpuRun::GpuRun(GpuAggregationEngine& engine, const AggregationSpec& spec, PooledPipeline pooled)
    : engine_(engine), device_(engine.device()), spec_(spec), pipeline_(std::move(pooled.pipeline)),
      spare_(std::move(pooled.spare)) {
  first_use_at_start_ = first_use_snapshot(device_.ordinal);
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
  if (pending_) pipeline_->release(pending_->chunk);
  pending_.reset();
  try {
    (void)pipeline_->completed(true);  // an abandoned query's chunks: their leases go when the kernels are done
  } catch (const std::exception&) {
    // Destructor: a device error was (or will be) reported by the query itself.
  }
  PooledPipeline back;
  back.pipeline = std::move(pipeline_);
  // Only after a finished query: an abandoned or failed one may have left
  // work or overflow unsettled.
  if (finished_ && aggregator_) back.spare = SpareAggregator{std::move(aggregator_key_), std::move(aggregator_)};
  aggregator_.reset();  // before the pipeline it launched on is reused
  engine_.release_pipeline(std::move(back));
}

ChunkFacts GpuRun::facts_for(int64_t rows) const {
  ChunkFacts facts;
  facts.rows = static_cast<uint64_t>(rows);
  facts.estimated_groups = spec_.estimated_groups ? spec_.estimated_groups : std::max<uint64_t>(facts.rows / 4, 1);
  if (spec_.key_range_known) facts.key_range = KeyRange{spec_.key_min, spec_.key_max};
  return facts;
}

GpuRun::Decided GpuRun::decide(StagedChunk&& chunk) {
  Decided d;
  d.chunk = std::move(chunk);
  const ChunkFacts facts = facts_for(d.chunk.rows);
  if (!tuner_decided_) {
    tuner_decided_ = true;
    if (spec_.tuning_store && engine_.tuning().enabled && !forced_launch_) {
      const auto t_setup = std::chrono::steady_clock::now();
      const std::string signature = spec_.operator_signature.empty() ? tuning_signature(spec_) : spec_.operator_signature;
      const int bucket = cardinality_bucket(static_cast<double>(facts.estimated_groups));
      tuning_key_ = engine_.fingerprint() + "|" + signature + "|" + std::to_string(bucket);
      host_mark("tuning key");
      ChunkTunerInput in;
      in.device = device_;
      in.spec = *gspec_;
      in.facts = facts;
      in.signature = signature;
      in.tuning = engine_.tuning();
      in.forced_variant = spec_.forced_variant;
      in.race_slice = kRaceSlice;
      in.measure_chunks = kMeasureChunks;
      in.records = engine_.records_for(tuning_key_, spec_.tuning_store, in.signature, bucket, d.chunk.rows);
      host_mark("records");
      tuner_.emplace(in);
      host_mark("tuner made");
      host_.tuner_setup_us += since_us(t_setup);
    }
  }
  if (tuner_) {
    const auto t_next = std::chrono::steady_clock::now();
    d.choice = tuner_->next();
    d.exploit = tuner_->exploiting();
    host_.tuner_us += since_us(t_next);
    host_mark("tuner next");
    d.variant = d.choice.variant;
    d.config = d.choice.config;
  } else {
    d.variant = forced_ ? *forced_ : choose_variant(*gspec_, device_, facts);
    d.config = default_launch_config(d.variant, *gspec_, device_, facts);
    if (forced_launch_) d.config.launch = *forced_launch_;
    d.exploit = true;  // nothing is measured
  }
  d.config_text = describe(d.config);
  host_mark("decided");
  return d;
}

void GpuRun::run_pending(bool more_follow) {
  Decided d = std::move(*pending_);
  pending_.reset();
  StagedChunk& chunk = d.chunk;
  const ChunkFacts facts = facts_for(chunk.rows);
  if (!aggregator_) {
    const auto t_setup = std::chrono::steady_clock::now();
    TableOptions options = default_table_options(d.variant, *gspec_, device_, facts);
    options.own_partitioned_output = !more_follow;
    aggregator_key_ = aggregator_key(*gspec_, options);
    if (spare_ && spare_->key == aggregator_key_) {
      aggregator_ = std::move(spare_->aggregator);
      aggregator_->reset();  // enqueued on the pipeline's stream, ahead of this query's kernels
      aggregator_reused_ = true;
    } else {
      spare_.reset();  // its device memory goes before this query's table is allocated
      aggregator_ = std::make_unique<GroupByAggregator>(device_, *gspec_, options, pipeline_->compute_stream());
    }
    spare_.reset();
    host_.aggregator_setup_us += since_us(t_setup);
    host_mark(aggregator_reused_ ? "aggregator reset" : "aggregator made");
  }
  report_.chunks += static_cast<uint64_t>(d.chunks);
  if (d.chunks > 1) joined_chunks_ += d.chunks;
  if (d.choice.screen_share > 0 && d.chunks == 1 && run_screen(d)) return;
  // Only a launch of as many chunks as the tuner measures per launch is a
  // measurement in its unit; a measurement launch cut short goes to
  // ChunkTuner::report_partial.
  const bool unit = tuner_ && d.chunks == tuner_->measure_chunks() && d.chunks >= d.choice.span;
  launch(chunk, d.choice, d.variant, d.config, !unit, 0, d.chunks);
}

bool GpuRun::run_screen(Decided& d) {
  StagedChunk& chunk = d.chunk;
  const int64_t align = ChunkPipeline::kSliceRowAlign;
  const auto rows_of = [&](double share) {
    return static_cast<int64_t>(static_cast<double>(chunk.rows) * share) / align * align;
  };
  // The raced slices in order (the proposal's, then also_screened's), the
  // reference's slice as large as the largest, then the reference's rest:
  // its slice and rest give its kernel per row and fixed part on a slice's
  // scale (ChunkTuner::report_screen, ScreenTimes).
  std::vector<int64_t> slices{rows_of(d.choice.screen_share)};
  for (const auto& a : d.choice.also_screened) slices.push_back(rows_of(a.share));
  const int64_t reference = *std::max_element(slices.begin(), slices.end());
  int64_t sliced = 0;
  for (int64_t s : slices) {
    if (s < align) return false;
    sliced += s;
  }
  if (chunk.rows - sliced - reference <= reference) return false;
  screen_times_ = ScreenTimes{};
  screen_times_.slice_rows = slices[0];
  screen_times_.reference_rows = reference;
  screen_times_.rest_rows = chunk.rows - sliced - reference;
  for (size_t i = 1; i < slices.size(); ++i) screen_times_.also.push_back({0, slices[i]});
  ++screens_;
  // The slices run first (no leases, the chunk's copy waits); the rest runs
  // last on the chunk itself, whose launch holds the leases and the slot.
  int64_t offset = 0;
  try {
    for (size_t i = 0; i <= slices.size(); ++i) {
      const bool ref = i == slices.size();
      StagedChunk part = ChunkPipeline::slice_view(chunk, offset, ref ? reference : slices[i]);
      if (i > 0) part.waits.clear();  // same stream, after the first slice's waits
      if (ref) launch(part, d.choice, d.choice.reference_variant, d.choice.reference_config, false, kScreenReferencePart);
      else if (i == 0) launch(part, d.choice, d.variant, d.config, false, 1);
      else
        launch(part, d.choice, d.choice.also_screened[i - 1].variant, d.choice.also_screened[i - 1].config, false,
               static_cast<int>(i) + 1);
      offset += ref ? reference : slices[i];
    }
  } catch (...) {
    pipeline_->release(chunk);  // its staging slot and leases: a failed slice never reaches the rest's run()
    throw;
  }
  ChunkPipeline::drop_front(chunk, offset);
  chunk.waits.clear();
  launch(chunk, d.choice, d.choice.reference_variant, d.choice.reference_config, false, kScreenRestPart);
  return true;
}

void GpuRun::launch(StagedChunk& chunk, const TunedChoice& choice, Variant v, const VariantConfig& config, bool joined,
                    int screen_part, int chunks) {
  const ChunkFacts facts = facts_for(chunk.rows);
  ChunkPointers p;
  p.rows = chunk.rows;
  p.key = chunk.columns[0];
  p.values.assign(chunk.columns.begin() + 1, chunk.columns.end());
  if (facts.key_range) p.key_range = facts.key_range;
  LaunchReport r;
  const auto t_enqueue = std::chrono::steady_clock::now();
  uint64_t ticket = 0;
  {
    HostStepsScope scope(&steps_);
    ticket = pipeline_->run(chunk, [&] { r = aggregator_->consume(p, v, config); });
  }
  host_.enqueue_us += since_us(t_enqueue);
  if (first_enqueue_us_ < 0) {
    first_enqueue_us_ = since_us(created_);
    host_mark("first kernels enqueued");
  }
  timing_.push_back(Pending{ticket, choice, chunk.rows, joined, screen_part, chunks});
  ++launches_;
  const auto t_timings = std::chrono::steady_clock::now();
  collect_timings(false);
  host_.timings_us += since_us(t_timings);
  report_.variant = std::string(variant_name(r.variant));
  report_.configuration = describe(r.used);
  for (const std::string& a : r.adjustments)
    if (std::find(report_.details.begin(), report_.details.end(), "GPU launch adjusted: " + a) == report_.details.end())
      report_.details.push_back("GPU launch adjusted: " + a);
}

void GpuRun::await_reports() {
  const auto t0 = std::chrono::steady_clock::now();
  if (pending_) run_pending(true);
  while (!timing_.empty() && tuner_->awaits_reports()) {
    const std::vector<ChunkTiming> done = pipeline_->completed_through(timing_.front().ticket);
    if (done.empty()) timing_.pop_front();  // its time is gone: never wait for it again
    absorb_timings(done);
  }
  ++feedback_waits_;
  feedback_wait_us_ += since_us(t0);
}

void GpuRun::collect_timings(bool wait) { absorb_timings(pipeline_->completed(wait)); }

void GpuRun::absorb_timings(const std::vector<ChunkTiming>& done_runs) {
  for (const ChunkTiming& t : done_runs) {
    while (!timing_.empty() && timing_.front().ticket < t.ticket) timing_.pop_front();
    if (timing_.empty() || timing_.front().ticket != t.ticket) continue;
    const Pending done = timing_.front();
    timing_.pop_front();
    report_.device_ms += t.ms;
    if (done.screen_part > 0) {
      // A screen's launches come back in order; the verdict needs all (a
      // slice whose time is missing gets no verdict: whole launches).
      const size_t also = static_cast<size_t>(done.screen_part) - 2;
      if (done.screen_part == 1) screen_times_.raced_ms = t.ms;
      else if (done.screen_part == kScreenReferencePart) screen_times_.reference_ms = t.ms;
      else if (done.screen_part != kScreenRestPart && also < screen_times_.also.size()) screen_times_.also[also].ms = t.ms;
      else if (done.screen_part == kScreenRestPart) {
        screen_times_.rest_ms = t.ms;
        if (tuner_) tuner_->report_screen(done.choice, screen_times_);
      }
    } else {
      if (done.chunks > 1) {
        joined_ms_ += t.ms;
        joined_rows_ += done.rows;
      }
      // A launch pays one fixed part whatever its chunks, so its time per
      // row is lower the more chunks it joins (~10-25% at 2^16 groups on the
      // H100): only launches of the tuner's own size are reported; others
      // would make a configuration look better or worse than the ones the
      // search compares it with. They are shown, not reported.
      const double per_row = done.rows > 0 ? t.ms / 1e3 / static_cast<double>(done.rows) : 0;
      if (tuner_ && done.chunks < done.choice.span) tuner_->report_partial(done.choice, per_row);
      // In the unit now (it may have become 1), or a screen run on a whole
      // chunk (too small to slice), which ends the screen either way.
      else if (tuner_ && done.rows > 0 && (done.chunks == tuner_->measure_chunks() || done.choice.screen_share > 0))
        tuner_->report(done.choice, per_row);  // counts tuner_measurements
    }
  }
}

executor::AggregationResult GpuRun::finalize() {
  const auto t0 = std::chrono::steady_clock::now();
  // Marks from here to the result (EXPLAIN ANALYZE "GPU: end path").
  HostTimeline end_path(t0);
  HostTimelineScope timeline(&end_path);
  if (pending_) {
    run_pending(false);
    host_mark("last launch");
  }
  // The extraction and its copy back run behind the last chunk while the
  // host waits for its timing and writes the report below.
  if (aggregator_) aggregator_->begin_finish();
  // The lines that need no device time are written while the GPU finishes
  // (formatting and the first-use snapshot).
  executor::AggregationResult out;
  out.states.resize(spec_.aggregates.size());
  const double per = report_.chunks ? 1.0 / static_cast<double>(report_.chunks) : 0.0;
  char line[512];
  std::snprintf(line, sizeof line,
                "GPU: host per chunk: stage %.1f us, tuner %.1f us, enqueue %.1f us, timings %.1f us; per query: "
                "tuner set-up %.1f us, aggregator set-up %.1f us%s",
                host_.stage_us * per, host_.tuner_us * per, host_.enqueue_us * per, host_.timings_us * per,
                host_.tuner_setup_us, host_.aggregator_setup_us, aggregator_reused_ ? " (reused)" : "");
  std::string host_line = line;
  std::snprintf(line, sizeof line,
                "GPU: enqueue per chunk: in-flight wait %.1f us, stream waits %.1f us, events %.1f us, make room %.1f us, "
                "launch %.1f us, observe %.1f us, settle %.1f us",
                steps_[HostStep::in_flight_wait] * per, steps_[HostStep::stream_waits] * per, steps_[HostStep::events] * per,
                steps_[HostStep::make_room] * per, steps_[HostStep::launch] * per, steps_[HostStep::observe] * per,
                steps_[HostStep::settle] * per);
  std::string enqueue_line = line;
  std::string first_use = first_use_line(first_use_at_start_, first_use_snapshot(device_.ordinal));
  std::string start_path = start_path_line();
  host_mark("host lines");
  // The result's arrays are mapped while the GPU still runs: their page
  // faults then overlap the device's work instead of following it.
  if (aggregator_) aggregator_->prepare_result();
  const uint64_t blocked_before = blocked_waits();
  collect_timings(true);
  host_mark("chunks done", static_cast<long>(blocked_waits() - blocked_before), "blocked waits");
  const auto t_wait = std::chrono::steady_clock::now();
  const PipelineStats& ps = pipeline_->stats();
  std::snprintf(line, sizeof line,
                "GPU: device time %.3f ms over %llu chunks, column cache %llu hits / %llu misses, %.1f MB copied to the device",
                report_.device_ms, static_cast<unsigned long long>(report_.chunks), static_cast<unsigned long long>(ps.hits),
                static_cast<unsigned long long>(ps.misses), static_cast<double>(ps.copied_bytes) / 1e6);
  report_.details.push_back(line);
  report_.details.push_back(std::move(host_line));
  report_.details.push_back(std::move(enqueue_line));
  std::snprintf(line, sizeof line,
                "GPU: timeline: first chunk %.1f us after start, first kernels enqueued at %.1f us, scan between chunks "
                "%.1f us; device span %.3f ms, busy %.3f ms, idle between chunks %.3f ms",
                first_sink_us_, first_enqueue_us_, scan_gap_us_, ps.span_ms, report_.device_ms,
                std::max(0.0, ps.span_ms - report_.device_ms));
  report_.details.push_back(line);
  std::snprintf(line, sizeof line,
                "GPU: launches: %ld for %llu chunks (%ld chunks joined into launches over adjacent resident columns, "
                "%.4f ns/row there); %ld waits for the tuner's measurements, %.1f us; %ld race screens",
                launches_, static_cast<unsigned long long>(report_.chunks), joined_chunks_,
                joined_rows_ ? joined_ms_ * 1e6 / static_cast<double>(joined_rows_) : 0.0, feedback_waits_, feedback_wait_us_,
                screens_);
  report_.details.push_back(line);
  report_.details.push_back(std::move(first_use));
  report_.details.push_back(std::move(start_path));
  host_mark("lines");
  if (tuner_) {
    report_.details.push_back(tuner_->explain());
    host_mark("tuner explained");
    engine_.finish_tuning(tuning_key_, spec_.tuning_store, std::move(*tuner_));
    tuner_.reset();
    host_mark("tuner handed over");
  }
  if (!aggregator_) return out;  // no chunk: no group
  const auto t1 = std::chrono::steady_clock::now();
  GroupByResult r = aggregator_->finish();
  finished_ = true;
  const auto t2 = std::chrono::steady_clock::now();
  const size_t n = r.groups();
  // Moved, not copied: at 2^16 groups and more the result is megabytes.
  out.keys = std::move(r.keys);
  out.key_valid.resize(n);
  {
    // Through restrict pointers: byte vectors alias everything, and the
    // loop over vector elements reloaded both each step (65,536 groups).
    const uint8_t* __restrict is_null = r.key_is_null.data();
    uint8_t* __restrict valid = out.key_valid.data();
    for (size_t g = 0; g < n; ++g) valid[g] = static_cast<uint8_t>(is_null[g] == 0);
  }
  // Every array is one the aggregator built for this partial state: moved.
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    executor::PartialStates& st = out.states[a];
    AggregateValues& v = r.aggregates[a];
    st.count = std::move(v.nonnull);
    switch (spec_.aggregates[a].op) {
      case PartialOp::sum_int: st.sum_int = std::move(v.value); break;
      case PartialOp::min_int:
      case PartialOp::max_int: st.extreme_int = std::move(v.extreme); break;
      default: break;
    }
  }
  report_.groups = n;
  host_mark("partial states");
  const auto t3 = std::chrono::steady_clock::now();
  const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::snprintf(line, sizeof line,
                "GPU: finalize %.3f ms: last chunk and wait %.3f ms, tuning cache %.3f ms, extracting %zu groups %.3f ms, "
                "to partial states %.3f ms",
                ms(t0, t3), ms(t0, t_wait), ms(t_wait, t1), n, ms(t1, t2), ms(t2, t3));
  report_.details.push_back(line);
  report_.details.push_back(path_line("GPU: end path (us after finalize began)", end_path));
  report_.finalize_ms = ms(t0, t3);
  return out;
}

std::string GpuRun::path_line(const char* title, const HostTimeline& t) {
  std::string out = title;
  out += ':';
  char item[128];
  for (int i = 0; i < t.size(); ++i) {
    if (t[i].count >= 0)
      std::snprintf(item, sizeof item, "%s %s %.1f (%ld%s%s)", i ? "," : "", t[i].label, t[i].us, t[i].count,
                    t[i].unit[0] ? " " : "", t[i].unit);
    else
      std::snprintf(item, sizeof item, "%s %s %.1f", i ? "," : "", t[i].label, t[i].us);
    out += item;
  }
  return out;
}

std::string GpuRun::start_path_line() const { return path_line("GPU: start path (us after start)", start_path_); }

}  // namespace

std::unique_ptr<GpuEngine> make_gpu_engine(int ordinal, const GpuEngineOptions& options) {
  if (!built_with_cuda() || !gpu_usable()) return nullptr;
  // Every kernel is loaded when the context is created (the server's start),
  // not at its first launch as CUDA's default lazy loading does, so no query
  // (the first after a restart above all) pays a module load. Takes effect
  // when this is the process's first CUDA call (tallyd: Database::open); a
  // value set in the environment wins.
  (void)setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  const int n = device_count();
  if (n == 0) return nullptr;
  const int d = ordinal < 0 ? 0 : ordinal;
  if (d >= n) return nullptr;
  DeviceInfo info = query_device(d);
  const uint64_t free_bytes = info.free_memory ? info.free_memory : info.total_memory;
  const uint64_t budget = options.memory_budget ? options.memory_budget
                                                : static_cast<uint64_t>(static_cast<double>(free_bytes) * kDefaultBudgetShare);
  const uint64_t cache = options.column_cache_bytes ? std::min(options.column_cache_bytes, budget) : budget / 2;
  auto engine = std::make_unique<GpuAggregationEngine>(std::move(info), cache, options.tuning);
  engine->warm();
  return engine;
}

}  // namespace tally::gpu
