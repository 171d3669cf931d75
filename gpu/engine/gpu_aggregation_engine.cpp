#include "common/column_program_run.hpp"
#include "gpu/engine/gpu_aggregation_engine.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "common/error.hpp"
#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "gpu/engine/gpu_run.hpp"
#include "gpu/engine/scan_selection.hpp"
#include "gpu/engine/spec_translation.hpp"
#include "gpu/engine/start_up.hpp"
#include "gpu/gpu_health.hpp"
#include "gpu/pipeline/column_programs.hpp"
#include "gpu/pipeline/program_compiler.hpp"
#include "gpu/rules/variant_rules.hpp"
#include "gpu/tuner/search_state_memo.hpp"
#include "gpu/tuner/tuning_signature.hpp"

namespace tally::gpu {

bool GpuEngine::note_left_elsewhere(uint64_t table) {
  std::lock_guard lock(left_mutex_);
  if (left_elsewhere_.count(table)) return true;
  if (left_elsewhere_.size() >= kMaxLeftTables) left_elsewhere_.clear();
  left_elsewhere_.insert(table);
  return false;
}
namespace {

// Without a configured budget the engine may use this share of the free
// device memory at start-up; the rest is left to other processes and the driver.
constexpr double kDefaultBudgetShare = 0.8;
// How long a query thread spins for the engine's mutex before it sleeps
// (GpuAggregationEngine::query_lock): longer than the writer thread's
// bookkeeping under it, short against a query.
constexpr std::chrono::microseconds kQueryLockSpin{100};

// The records for this device/signature/bucket (empty when store is nullptr).
std::vector<tally::TuningRecord> load_tuning_records(tally::TuningStore* store, const std::string& device,
                                                        const std::string& signature, int bucket) {
  if (!store) return {};
  try {
    return store->load(device, signature, bucket);
  } catch (const std::exception&) {
    // An unreadable cache must not fail the query: it runs from the rules.
    return {};
  }
}

}  // namespace

bool GpuAggregationEngine::can_run(const tally::AggregationSpec& spec) const {
  return gpu_usable() && translate(spec).has_value();
}

std::unique_ptr<tally::AggregationRun> GpuAggregationEngine::start(const tally::AggregationSpec& spec) {
  if (!translate(spec)) throw Error(SqlState::feature_not_supported, "GPU: this aggregation is not supported by the GPU engine");
  // WHERE and input programs: the run evaluates them on the device, over
  // the chunks' columns there; programs past one launch's limits are
  // evaluated on the host before the chunks reach the device.
  if (has_programs(spec) && !programs_fit_device(spec)) {
    return make_program_run(spec, [this](const tally::AggregationSpec& inner) { return start(inner); });
  }
  return std::make_unique<GpuRun>(*this, spec, acquire_pipeline());
}

std::unique_ptr<tally::ScanSelectionRun> GpuAggregationEngine::start_selection(const tally::ScanSelectionSpec& spec) {
  try {
    return std::make_unique<GpuScanSelection>(*this, spec);
  } catch (const Error& e) {
    log::warning("gpu_selection_failed", {{"error", e.what()}});
    return nullptr;  // the scan filters on the host
  }
}

PooledPipeline GpuAggregationEngine::acquire_pipeline(PipelineUse use) {
  {
    const auto lock = query_lock();
    std::vector<PooledPipeline>& idle = use == PipelineUse::selection ? idle_selections_ : idle_;
    if (!idle.empty()) {
      PooledPipeline p = std::move(idle.back());
      idle.pop_back();
      return p;
    }
  }
  PooledPipeline p;
  p.pipeline = std::make_unique<ChunkPipeline>(device_.ordinal, &cache_);
  return p;
}

std::optional<std::vector<tally::TuningRecord>> GpuAggregationEngine::recent_records(const std::string& key) {
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

std::vector<tally::TuningRecord> GpuAggregationEngine::records_for(const std::string& key, tally::TuningStore* store,
                                                                      const std::string& signature, int bucket, int64_t chunk_rows) {
  if (auto r = recent_records(key)) return std::move(*r);
  if (!store) return {};
  preload_tuning(store, chunk_rows);
  if (auto r = recent_records(key)) return std::move(*r);
  {
    // A store that listed all its records at preload (TuningStore::lists,
    // an empty store included: a tallyd started on an empty tuning cache)
    // holds none for this key (the process's own come through recent_):
    // no SQLite read on a cold query's path.
    const auto lock = query_lock();
    if (listed_.count(store)) return {};
  }
  // A store that cannot list: read the key, and remember the answer, empty
  // or not, so the next query does not ask again.
  std::vector<tally::TuningRecord> loaded = load_tuning_records(store, fingerprint_, signature, bucket);
  const auto lock = query_lock();
  recent_.emplace(key, loaded);
  return loaded;
}

void GpuAggregationEngine::finish_tuning(std::string key, tally::TuningStore* store, ChunkTuner tuner) {
  const auto lock = query_lock();
  finished_.push_back(FinishedTuner{std::move(key), store, std::move(tuner)});
  wake_writer();
}

void GpuAggregationEngine::wake_writer() {
  if (!writer_.joinable()) writer_ = std::thread([this] {
    name_this_thread("tally-tunewrite");
    background_priority();
    write_loop();
  });
  wake_.notify_one();
}

GpuAggregationEngine::~GpuAggregationEngine() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  if (writer_.joinable()) writer_.join();  // every record is persisted before the engine goes
  if (preparser_.joinable()) preparser_.join();
  if (rehearser_.joinable()) rehearser_.join();
  finish_program_compiles();  // none left running into the process's exit
}

void GpuAggregationEngine::preload_tuning(tally::TuningStore* store, int64_t chunk_rows) {
  {
    std::lock_guard lock(mutex_);
    if (!preloaded_.insert(store).second) return;
  }
  std::vector<tally::TuningRecord> all;
  try {
    all = store->all();
  } catch (const std::exception&) {
    return;  // unreadable: queries load their own keys (load_tuning_records)
  }
  // A store that says it lists (TuningStore::lists) is complete even when
  // empty; one that does not but returned records is taken as complete.
  const bool listed = store->lists() || !all.empty();
  std::erase_if(all, [&](const auto& r) { return r.device != fingerprint_; });  // never another GPU's entry
  std::lock_guard lock(mutex_);
  if (listed) listed_.insert(store);
  // Off the query's path: the first query on each key (after a restart,
  // typically another signature came first) then finds its search states
  // parsed (gpu/tuner/search_state_memo.hpp).
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
    std::vector<tally::TuningRecord>& known = recent_[key];
    // This process's own, newer measurements stay.
    if (std::none_of(known.begin(), known.end(), [&](const auto& k) { return k.variant == r.variant; }))
      known.push_back(std::move(r));
  }
}

void GpuAggregationEngine::warm() {
  release_pipeline(acquire_pipeline());
  prepare_for_queries(device_);
  warm_program_compiler(device_.compute_major * 10 + device_.compute_minor);
  log::info("gpu_program_compiler", {{"state", program_compiler_state()}});
  const LaunchPathWarmUp w = warm_launch_paths(device_);
  if (w.already_warmed) return;
  // One line either way; a warm-up cut short (time, memory) leaves the rest
  // to the first queries.
  log::info("gpu_launch_paths_warmed",
            {{"aggregations", w.aggregations}, {"failed", w.failed}, {"out_of_time", w.out_of_time},
             {"ms", w.ms}, {"pinned_allocations", w.pinned_allocations}, {"kernels", w.kernel_first_lookups}});
}

std::unique_lock<std::mutex> GpuAggregationEngine::query_lock() {
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (lock.owns_lock()) return lock;
  const auto until = std::chrono::steady_clock::now() + kQueryLockSpin;
  while (std::chrono::steady_clock::now() < until)
    if (lock.try_lock()) return lock;
  lock.lock();
  return lock;
}

void GpuAggregationEngine::release_pipeline(PooledPipeline p, PipelineUse use) {
  if (!p.pipeline) return;
  p.pipeline->reset_stats();
  const auto lock = query_lock();
  (use == PipelineUse::selection ? idle_selections_ : idle_).push_back(std::move(p));
}

void GpuAggregationEngine::absorb(FinishedTuner& f) {
  std::vector<tally::TuningRecord>& known = recent_[f.key];
  for (auto& r : f.tuner.records()) {
    auto it = std::find_if(known.begin(), known.end(), [&](const auto& k) { return k.variant == r.variant; });
    if (it != known.end()) *it = r;
    else known.push_back(r);
    writes_.emplace_back(f.store, std::move(r));
  }
}

void GpuAggregationEngine::rehearse(const std::vector<tally::TuningRecord>& records, int64_t chunk_rows) {
  std::map<std::string, const tally::TuningRecord*> fastest;  // by signature and bucket
  for (const auto& r : records) {
    if (!(r.seconds_per_row > 0) || r.bucket < 0 || r.bucket > kMaxRehearsalBucket) continue;
    const tally::TuningRecord*& f = fastest[r.signature + "|" + std::to_string(r.bucket)];
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

void GpuAggregationEngine::write_loop() {
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

// Puts the calling thread (the engine's writer) under SCHED_IDLE: woken by a
// query thread, it would otherwise be placed on that thread's CPU and run
// its bookkeeping there first; at idle priority it never preempts a query
// and runs on an idle core. Left as it is where the policy is refused.
void GpuAggregationEngine::background_priority() {
#ifdef SCHED_IDLE
  sched_param p{};
  p.sched_priority = 0;
  (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &p);
#endif
}

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
