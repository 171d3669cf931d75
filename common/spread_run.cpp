#include "common/spread_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "common/elapsed.hpp"
#include "common/partial_states_merge.hpp"

namespace tally {

SpreadRun::SpreadRun(const AggregationSpec& spec, std::vector<std::unique_ptr<AggregationRun>> runs,
                     std::vector<std::string> names, std::function<void(size_t)> enter, ParallelTasks parallel)
    : spec_(spec), runs_(std::move(runs)), names_(std::move(names)), enter_(std::move(enter)),
      parallel_(std::move(parallel)) {}

SpreadRun::~SpreadRun() {
  for (size_t i = 0; i < runs_.size(); ++i) {
    try {
      enter_(i);
    } catch (...) {
      // Released on whatever device is current: the memory is freed either way.
    }
    runs_[i].reset();
  }
}

int SpreadRun::passes() const {
  int p = 1;
  for (const auto& r : runs_) p = std::max(p, r->passes());
  return p;
}

void SpreadRun::begin_pass(int pass) {
  for (size_t i = 0; i < runs_.size(); ++i) {
    enter_(i);
    runs_[i]->begin_pass(pass);
  }
}

bool SpreadRun::hold(const ColumnIdentity& column, ColumnWidth width) {
  const size_t i = column.chunk % runs_.size();
  enter_(i);
  return runs_[i]->hold(column, width);
}

void SpreadRun::sink(const ChunkInput& chunk) {
  const size_t i = run_for(chunk);
  enter_(i);
  runs_[i]->sink(chunk);
}

size_t SpreadRun::run_for(const ChunkInput& chunk) {
  const ColumnView* stored = chunk.keys.identity.known() ? &chunk.keys : nullptr;
  for (const auto* list : {&chunk.key_columns, &chunk.values}) {
    for (const ColumnView& v : *list) {
      if (stored == nullptr && v.identity.known()) stored = &v;
    }
  }
  if (stored != nullptr) return stored->identity.chunk % runs_.size();
  return next_++ % runs_.size();
}

AggregationResult SpreadRun::finalize() {
  // Each run on a thread of its own where the host has them: a GPU run's
  // finalize waits for its device's last chunks and then reads its groups
  // back and builds their states on the host, which for many groups takes
  // milliseconds that need not wait for the other devices' reads.
  const auto start = std::chrono::steady_clock::now();
  std::vector<AggregationResult> parts(runs_.size());
  run_tasks(parallel_, spec_.threads == 1 ? 1 : static_cast<int>(runs_.size()), runs_.size(), [&](size_t i) {
    enter_(i);
    parts[i] = runs_[i]->finalize();
  });
  parts_groups_ = 0;
  for (const AggregationResult& p : parts) parts_groups_ += p.groups();
  const auto merge_start = std::chrono::steady_clock::now();
  AggregationResult merged = merge_results(spec_, std::move(parts), parallel_);
  merge_ms_ = ms_since(merge_start);
  finalize_ms_ = ms_since(start);
  groups_ = merged.groups();
  return merged;
}

AggregationReport SpreadRun::report() const {
  AggregationReport out = runs_.front()->report();
  out.variant += " on " + std::to_string(runs_.size()) + " devices";
  out.rows = out.chunks = 0;
  out.sink_ms = out.device_ms = 0;
  out.details.clear();
  char line[160];
  for (size_t i = 0; i < runs_.size(); ++i) {
    const AggregationReport r = runs_[i]->report();
    out.rows += r.rows;
    out.chunks += r.chunks;
    out.sink_ms += r.sink_ms;
    out.device_ms = std::max(out.device_ms, r.device_ms);
    out.passes = std::max(out.passes, r.passes);
    std::snprintf(line, sizeof line, "%s: %s, rows %llu, groups %llu, device time %.3f ms", names_[i].c_str(),
                  r.variant.c_str(), static_cast<unsigned long long>(r.rows), static_cast<unsigned long long>(r.groups),
                  r.device_ms);
    out.details.push_back(line + (r.configuration.empty() ? "" : " (" + r.configuration + ")"));
    for (const std::string& d : r.details) out.details.push_back("  " + d);
  }
  out.groups = groups_;
  out.finalize_ms = finalize_ms_;
  std::snprintf(line, sizeof line, "Partial states merged on the host: %.3f ms (%llu groups of %zu runs into %llu)",
                merge_ms_, static_cast<unsigned long long>(parts_groups_), runs_.size(),
                static_cast<unsigned long long>(groups_));
  out.details.push_back(line);
  return out;
}

}  // namespace tally
