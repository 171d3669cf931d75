// CpuRun's run: variant choice, sink and finalize, passes, and the report.
#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "executor/cpu/cpu_run.hpp"
#include "executor/cpu/parallel.hpp"

namespace tally::executor::cpu {

CpuRun::CpuRun(const AggregationSpec& spec) : spec_(spec) {
  threads_ = spec.threads > 0 ? spec.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  l2_bytes_ = l2_cache_bytes();
  // Integer sums start narrow; the first chunk whose input is not int32
  // (the planner's nominal widths say int64 even for stored int4 columns,
  // so the chunks decide) widens them.
  narrow_.assign(spec.aggregates.size(), 0);
  for (size_t a = 0; a < spec.aggregates.size(); ++a) {
    narrow_[a] = spec.aggregates[a].op == PartialOp::sum_int && spec.aggregates[a].input >= 0;
  }
  counts_group_rows_.assign(spec.aggregates.size(), 0);
  count_source_.resize(spec.aggregates.size());
  compact_sum_.assign(spec.aggregates.size(), 0);
  for (size_t a = 0; a < spec.aggregates.size(); ++a) {
    count_source_[a] = static_cast<int>(a);
    switch (spec.aggregates[a].op) {
      case PartialOp::count_rows: case PartialOp::count_valid: case PartialOp::sum_int: case PartialOp::sum_float:
      case PartialOp::min_int: case PartialOp::max_int: case PartialOp::min_float: case PartialOp::max_float:
        counts_group_rows_[a] = 1;  // until a chunk brings a FILTER or NULLs for it
        break;
      default: break;
    }
  }
  variant_ = choose_variant(spec, threads_, l2_bytes_);
  const uint64_t per_group = bytes_per_group(spec);
  if (variant_ == Variant::dense || variant_ == Variant::dense_radix) {
    range_ = static_cast<size_t>(spec.key_max - spec.key_min + 1);
  }
  // Memory-bounded passes: the estimated hash state must fit the budget
  // (thread-local tables hold up to one copy per thread plus the merge).
  if ((variant_ == Variant::hash || variant_ == Variant::hash_radix) && spec.memory_budget > 0 &&
      spec.estimated_groups > 0) {
    const uint64_t copies = variant_ == Variant::hash ? static_cast<uint64_t>(threads_ + 1) : 1;
    const uint64_t need = spec.estimated_groups * per_group * copies;
    passes_ = static_cast<int>(std::min<uint64_t>(64, (need + spec.memory_budget - 1) / spec.memory_budget));
    if (passes_ < 1) passes_ = 1;
  }
  if (variant_ == Variant::dense_radix || variant_ == Variant::hash_radix) {
    setup_radix(per_group, /*defer=*/true);
    return;
  }
  locals_.resize(static_cast<size_t>(threads_));
  // Presize each worker's table for the estimated groups (capped: an
  // overestimate must not allocate gigabytes up front).
  const size_t expected = static_cast<size_t>(std::min<uint64_t>(spec.estimated_groups, uint64_t{1} << 23));
  for (auto& l : locals_) {
    if (variant_ == Variant::hash && expected > 0) l.table = KeyTable(expected);
    l.states.init(spec.aggregates, narrow_);
    if (variant_ == Variant::dense) {
      l.states.resize(spec.aggregates, range_ + 1);  // last slot: the NULL key
      l.dense_seen.assign(range_ + 1, 0);
    }
  }
}

// Dense needs a known key range small enough for direct indexing.
bool CpuRun::can_use_dense(const AggregationSpec& spec, uint64_t copies) {
  if (!spec.key_range_known || spec.key_max < spec.key_min) return false;
  const __int128 range = static_cast<__int128>(spec.key_max) - spec.key_min + 1;
  if (range > kDenseMaxRange) return false;
  if (spec.memory_budget > 0 && static_cast<uint64_t>(range) * bytes_per_group(spec) * copies > spec.memory_budget) {
    return false;
  }
  if (range <= kDenseAlwaysRange) return true;
  return static_cast<__int128>(spec.estimated_groups) * 4 >= range;
}

// Thread-local state pays off while each thread's copy stays in its L2;
// beyond that the radix variants keep one copy and cache-sized partitions.
Variant CpuRun::choose_variant(const AggregationSpec& spec, int threads, uint64_t l2_bytes) {
  const std::string& forced = spec.forced_variant;
  if (forced == "dense" && spec.key_range_known) return Variant::dense;
  if (forced == "dense-radix" && spec.key_range_known && spec.key_max >= spec.key_min) return Variant::dense_radix;
  if (forced == "hash") return Variant::hash;
  if (forced == "hash-radix") return Variant::hash_radix;
  const uint64_t per_group = bytes_per_group(spec);
  if (spec.key_range_known && spec.key_max >= spec.key_min) {
    const uint64_t range = static_cast<uint64_t>(spec.key_max - spec.key_min) + 1;
    if (range * per_group <= l2_bytes * kLocalStateL2Multiple && can_use_dense(spec, static_cast<uint64_t>(threads))) {
      return Variant::dense;
    }
    if (can_use_dense(spec, 1)) return Variant::dense_radix;
  }
  if (spec.estimated_groups == 0 || spec.estimated_groups * per_group <= l2_bytes * kLocalStateL2Multiple) {
    return Variant::hash;
  }
  return Variant::hash_radix;
}

void CpuRun::begin_pass(int pass) {
  if (pass != pass_) {
    flush_pass();
    pass_ = pass;
  }
}

void CpuRun::sink(const ChunkInput& input) {
  if (spec_.key_parts.empty()) {
    sink_keys(input);
    return;
  }
  // A packed key (KeyPart): the workers pack their rows' codes, then the
  // chunk runs as one int64 key column. The columns stay separate up to
  // here, so that nothing before the engine touches every row.
  const auto started = std::chrono::steady_clock::now();
  packed_keys_.resize(input.rows);
  const int threads = input.rows >= kMinRowsPerThread * 2 ? threads_ : 1;
  parallel_for(threads, input.rows, [&](int, size_t begin, size_t end) {
    pack_key_rows(spec_.key_parts, input, begin, end, packed_keys_.data() + begin);
  });
  ChunkInput chunk;
  chunk.rows = input.rows;
  chunk.keys = ColumnView{ColumnWidth::int64, packed_keys_.data(), nullptr};
  chunk.values = input.values;
  chunk.filters = input.filters;
  sink_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  sink_keys(chunk);
}

void CpuRun::sink_keys(const ChunkInput& chunk) {
  if (chunk.rows > kEscalationCheckRows) {
    // A whole stored chunk takes too long for cancel and statement_timeout
    // to wait for: it is sunk in slices, with a look at the token between.
    for (size_t begin = 0; begin < chunk.rows; begin += kEscalationCheckRows) {
      check_cancel_point();
      sink_keys(slice(chunk, begin, std::min(chunk.rows, begin + kEscalationCheckRows)));
    }
    return;
  }
  const auto started = std::chrono::steady_clock::now();
  for (size_t a = 0; a < narrow_.size(); ++a) {
    if (narrow_[a] && (rows_ + chunk.rows > cpu::kNarrowSumRowLimit ||
                       chunk.values[static_cast<size_t>(spec_.aggregates[a].input)].width != ColumnWidth::int32)) {
      widen_aggregate(a);
    }
  }
  rows_ += chunk.rows;
  for (size_t a = 0; a < counts_group_rows_.size(); ++a) {
    const int input = spec_.aggregates[a].input;
    if ((!chunk.filters.empty() && chunk.filters[a] != nullptr) ||
        (input >= 0 && chunk.values[static_cast<size_t>(input)].validity != nullptr)) {
      counts_group_rows_[a] = 0;
    }
  }
  // The dense range comes from statistics; a key outside it (stale or
  // missing statistics) moves this run to a hash variant, keeping its state.
  if ((variant_ == Variant::dense || variant_ == Variant::dense_radix) && !keys_in_range(chunk)) switch_to_hash();
  if (variant_ == Variant::dense_radix || variant_ == Variant::hash_radix) {
    sink_radix(chunk);
  } else if (variant_ == Variant::hash && passes_ == 1 && spec_.forced_variant.empty()) {
    // Slices, so that a low estimate is found out early in the chunk; the
    // rest of the chunk then goes to the radix variant.
    for (size_t begin = 0; begin < chunk.rows; begin += kEscalationCheckRows) {
      const size_t end = std::min(chunk.rows, begin + kEscalationCheckRows);
      const ChunkInput part = slice(chunk, begin, end);
      if (variant_ != Variant::hash) {
        sink_radix(part);
        continue;
      }
      sink_local_parallel(part);
      if (local_state_too_large(rows_ - chunk.rows + end)) escalate_to_radix(rows_ - chunk.rows + end);
    }
  } else {
    sink_local_parallel(chunk);
  }
  sink_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
}

AggregationResult CpuRun::finalize() {
  const auto started = std::chrono::steady_clock::now();
  flush_pass();
  finalize_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  groups_ = result_.groups();
  // One PartialStates per aggregate even without a group (no input: the
  // variants that emit nothing never sized the result).
  if (result_.states.size() != spec_.aggregates.size()) result_.states.resize(spec_.aggregates.size());
  if (spec_.compact_result) result_.count_source = count_source_;
  return std::move(result_);
}

AggregationReport CpuRun::report() const {
  AggregationReport r;
  r.engine = "cpu";
  r.variant = std::string(variant_name(variant_)) + (switched_ ? " (left dense: key outside statistics range)" : "") +
              (escalated_ ? " (from hash-partitioned: more groups than estimated)" : "");
  r.configuration = "threads=" + std::to_string(threads_);
  switch (variant_) {
    case Variant::dense: r.configuration += " range=" + std::to_string(range_); break;
    case Variant::hash: r.configuration += " partitions=" + std::to_string(threads_ * kPartitionsPerThread); break;
    case Variant::dense_radix:
      r.configuration += " range=" + std::to_string(range_) + " partitions=" + std::to_string(parts_.size() - 1);
      if (aggregated_deferred_) {
        r.configuration += emitted_direct_ ? " (rows kept, aggregated at finalize into the result)"
                                           : " (rows kept, aggregated at finalize)";
      }
      break;
    case Variant::hash_radix: r.configuration += " partitions=" + std::to_string(parts_.size() - 1); break;
  }
  r.rows = rows_;
  r.groups = groups_;
  r.passes = static_cast<uint64_t>(passes_);
  r.sink_ms = sink_ms_;
  r.finalize_ms = finalize_ms_;
  return r;
}

// Merges the state of the current pass into result_, then clears it.
void CpuRun::flush_pass() {
  if (flushed_pass_ == pass_ && flushed_any_) return;
  if (!flushed_any_) choose_result_form();
  flushed_any_ = true;
  flushed_pass_ = pass_;
  if (variant_ == Variant::dense_radix || variant_ == Variant::hash_radix) { flush_radix(); return; }
  if (variant_ == Variant::dense) { merge_dense(); return; }
  merge_hash();
  for (auto& l : locals_) {
    l = LocalTable{};
    l.states.init(spec_.aggregates, narrow_);
  }
}

// Past kNarrowSumRowLimit rows, or for an input wider than int32, int64
// sums could overflow: every state set switches aggregate a to int128.
void CpuRun::widen_aggregate(size_t a) {
  for (auto& l : locals_) l.states.widen(a);
  dense_.states.widen(a);
  for (auto& p : parts_) p.states.widen(a);
  narrow_[a] = 0;
}

void CpuRun::sink_local_parallel(const ChunkInput& chunk) {
  const int threads = chunk.rows >= kMinRowsPerThread * 2 ? threads_ : 1;
  parallel_for(threads, chunk.rows, [&](int t, size_t begin, size_t end) {
    sink_local(locals_[static_cast<size_t>(t)], chunk, begin, end);
  });
}

// Rows [begin, end) of chunk as a chunk of their own (views, no copies).
ChunkInput CpuRun::slice(const ChunkInput& chunk, size_t begin, size_t end) {
  auto offset = [&](const ColumnView& in) {
    ColumnView out = in;
    const size_t width = in.width == ColumnWidth::int32 || in.width == ColumnWidth::float32 ? 4 : 8;
    out.data = static_cast<const char*>(in.data) + begin * width;
    if (in.validity) out.validity = in.validity + begin;
    out.identity = {};  // no longer the whole stored column
    return out;
  };
  ChunkInput out;
  out.rows = end - begin;
  out.keys = offset(chunk.keys);
  for (const ColumnView& v : chunk.values) out.values.push_back(v.data ? offset(v) : v);
  for (const uint8_t* f : chunk.filters) out.filters.push_back(f ? f + begin : nullptr);
  return out;
}

void CpuRun::sink_local(LocalTable& local, const ChunkInput& chunk, size_t begin, size_t end) {
  if (variant_ == Variant::dense) sink_dense(local, chunk, begin, end);
  else sink_hash(local, chunk, begin, end);
}

}  // namespace tally::executor::cpu
