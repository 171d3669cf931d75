// GpuRun's timing feedback and its end: the launches' device times to the
// tuner, the result's extraction and the EXPLAIN ANALYZE lines.
#include "gpu/engine/gpu_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <utility>

#include "common/column_program_run.hpp"
#include "common/process_faults.hpp"
#include "common/error.hpp"
#include "gpu/engine/gpu_aggregation_engine.hpp"
#include "gpu/engine/partial_states.hpp"
#include "gpu/engine/spec_translation.hpp"
#include "gpu/engine/start_up.hpp"
#include "gpu/tuner/cardinality_bucket.hpp"
#include "gpu/tuner/tuning_signature.hpp"

namespace tally::gpu {

using tally::PartialOp;

namespace {
// From this many estimated groups a key tuple's group values are sized
// ahead (GpuRun::finalize): below, their arrays are megabytes at most.
constexpr uint64_t kValuesSizedAheadGroups = uint64_t{1} << 20;
}  // namespace

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
      // row is lower the more chunks it joins: only launches of the tuner's own size are reported; others
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

tally::AggregationResult GpuRun::finalize() {
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
  tally::AggregationResult out;
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
  // A key tuple's group values (gigabytes at 1e8 groups) are sized for the
  // estimated groups and an eighth more (an estimate a little low would
  // have values_of size them again) while the device finishes and the
  // result comes back: values_of then writes into pages already faulted in.
  std::future<void> values_sized;
  if (spec_.key_tuple && tuples_ && spec_.estimated_groups >= kValuesSizedAheadGroups) {
    values_sized = std::async(std::launch::async, [this, &out] {
      TupleKeyTable::size_values(spec_.key_parts.size(), spec_.estimated_groups + spec_.estimated_groups / 8,
                                 narrow_key_parts(), out.key_codes, out.key_codes32);
    });
  }
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
  if (ps.copied_bytes > 0) {
    std::snprintf(line, sizeof line,
                  "GPU: staging: %.1f ms waiting for a slot, %.1f ms copying into it (%.1f GB/s), %.1f ms setting up the copies",
                  ps.slot_wait_us / 1e3, ps.host_copy_us / 1e3,
                  ps.host_copy_us > 0 ? static_cast<double>(ps.copied_bytes) / 1e3 / ps.host_copy_us : 0.0,
                  ps.copy_setup_us / 1e3);
    report_.details.push_back(line);
  }
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
  std::string launches = line;
  const char* separator = "; not joined: ";
  for (const auto& [reason, count] : unjoined_) {
    launches += separator + reason + " " + std::to_string(count);
    separator = ", ";
  }
  report_.details.push_back(launches);
  report_.details.push_back(std::move(first_use));
  report_.details.push_back(std::move(start_path));
  if (evaluator_) {
    std::snprintf(line, sizeof line, "GPU: WHERE and inputs evaluated on the device: %lld of %lld rows kept; programs ",
                  static_cast<long long>(kept_rows_), static_cast<long long>(program_rows_));
    report_.details.push_back(line + evaluator_->kernel_report());
    // A program's error (an overflow PostgreSQL reports): the statement
    // runs again on the exact host path, as for the CPU engine's programs.
    if (const uint32_t flags = evaluator_->errors(pipeline_->compute_stream())) throw tally::ProgramOverflow{flags};
  }
  host_mark("lines");
  if (tuner_) {
    report_.details.push_back(tuner_->explain());
    host_mark("tuner explained");
    engine_.finish_tuning(tuning_key_, spec_.tuning_store, std::move(*tuner_));
    tuner_.reset();
    host_mark("tuner handed over");
  }
  if (!aggregator_) {  // no chunk: no group
    if (values_sized.valid()) values_sized.get();  // before `out` is returned
    return out;
  }
  const auto t1 = std::chrono::steady_clock::now();
  aggregator_->keep_groups_where(std::exchange(group_tests_, {}));
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
  for (size_t a = 0; a < spec_.aggregates.size(); ++a)
    to_partial_states(spec_.aggregates[a].op, r.aggregates[a], out.states[a]);
  out.count_source = std::move(r.count_source);  // the compact form's (AggregationSpec::compact_result)
  report_.groups = n + r.dropped;  // the aggregation's groups, before HAVING's tests
  out.groups_dropped = r.dropped;
  host_mark("partial states");
  if (spec_.key_tuple && tuples_) {
    // The groups' keys are tuple ids: their column values, gathered on the device.
    const auto t_values = std::chrono::steady_clock::now();
    if (values_sized.valid()) values_sized.get();
    const long faults_before = process_minor_faults();
    tuples_->values_of(out.keys.data(), n, r.device_keys, narrow_key_parts(), out.key_codes, out.key_codes32,
                       out.key_code_valid, pipeline_->compute_stream());
    std::snprintf(line, sizeof line,
                  "GPU: key tuples: %llu distinct, table grown %d times, group values %.3f ms (%ld page faults)",
                  static_cast<unsigned long long>(tuples_->tuples()), tuples_->growths(), since_us(t_values) / 1e3,
                  process_minor_faults() - faults_before);
    report_.details.push_back(line);
    host_mark("key tuple values");
  }
  const auto t3 = std::chrono::steady_clock::now();
  const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::snprintf(line, sizeof line,
                "GPU: finalize %.3f ms: last chunk and wait %.3f ms, tuning cache %.3f ms, extracting %zu groups %.3f ms, "
                "to partial states %.3f ms",
                ms(t0, t3), ms(t0, t_wait), ms(t_wait, t1), n, ms(t1, t2), ms(t2, t3));
  report_.details.push_back(line);
  if (r.dropped > 0) {
    std::snprintf(line, sizeof line, "GPU: HAVING's tests dropped %llu of %llu groups before their arrays were built",
                  static_cast<unsigned long long>(r.dropped), static_cast<unsigned long long>(r.dropped + n));
    report_.details.push_back(line);
  }
  report_.details.push_back(path_line("GPU: end path (us after finalize began)", end_path));
  report_.finalize_ms = ms(t0, t3);
  return out;
}

uint32_t GpuRun::narrow_key_parts() const {
  uint32_t narrow = 0;
  for (size_t k = 0; k < spec_.key_parts.size(); ++k)
    if (spec_.key_parts[k].narrow) narrow |= 1u << k;
  return narrow;
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

}  // namespace tally::gpu
