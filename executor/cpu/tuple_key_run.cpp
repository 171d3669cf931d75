// TupleKeyRun: see tuple_key_run.hpp.
#include "executor/cpu/tuple_key_run.hpp"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "common/elapsed.hpp"

namespace tally::executor::cpu {

AggregationSpec TupleKeyRun::inner_spec(const AggregationSpec& spec) {
  AggregationSpec inner = spec;
  inner.key_parts.clear();
  inner.key_tuple = false;
  inner.key_width = ColumnWidth::int64;
  inner.key_range_known = false;
  inner.key_min = inner.key_max = 0;
  inner.key_has_nulls = false;  // an id is never the NULL key
  return inner;
}

TupleKeyRun::TupleKeyRun(const AggregationSpec& spec, const InnerFactory& make_inner)
    : map_(spec.key_parts.size(), spec.estimated_groups) {
  if (!spec.aggregates.empty()) inner_ = make_inner(inner_spec(spec));
  threads_ = spec.threads > 0 ? spec.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void TupleKeyRun::sink(const ChunkInput& chunk) {
  const auto t = std::chrono::steady_clock::now();
  ids_.resize(chunk.rows);
  map_.assign(chunk, ids_.data(), threads_);
  ChunkInput inner;
  inner.rows = chunk.rows;
  inner.keys = ColumnView{ColumnWidth::int64, ids_.data(), nullptr};
  inner.values = chunk.values;
  inner.filters = chunk.filters;
  assign_ms_ += ms_since(t);
  rows_ += chunk.rows;
  if (inner_) inner_->sink(inner);
}

AggregationResult TupleKeyRun::finalize() {
  AggregationResult r;
  if (inner_) r = inner_->finalize();
  const auto t = std::chrono::steady_clock::now();
  if (!inner_) {
    r.keys = map_.ids();
    r.key_valid.assign(r.keys.size(), 1);
  }
  map_.codes_of(r.keys.data(), r.keys.size(), r.key_codes, r.key_code_valid, threads_);
  codes_ms_ = ms_since(t);
  return r;
}

AggregationReport TupleKeyRun::report() const {
  AggregationReport r;
  if (inner_) {
    r = inner_->report();
  } else {
    r.engine = "cpu";
    r.variant = "tuple ids";
    r.configuration = "threads=" + std::to_string(threads_);
    r.rows = rows_;
    r.groups = map_.size();
  }
  r.sink_ms += assign_ms_;
  r.finalize_ms += codes_ms_;
  char line[200];
  std::snprintf(line, sizeof line, "Key tuples on the host: %zu distinct, ids %.3f ms, group values %.3f ms",
                map_.size(), assign_ms_, codes_ms_);
  r.details.emplace_back(line);
  return r;
}

}  // namespace tally::executor::cpu
