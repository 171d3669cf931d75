#include "executor/cpu/ordered_values_run.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "common/elapsed.hpp"
#include "common/error.hpp"
#include "common/ordered_code.hpp"
#include "executor/cancel_point.hpp"
#include "executor/cpu/code_sort.hpp"
#include "executor/cpu/group_index.hpp"
#include "executor/cpu/key_table.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/cpu/top_codes_rows.hpp"

namespace tally::executor::cpu {

namespace {

bool is_float_width(ColumnWidth w) { return w == ColumnWidth::float32 || w == ColumnWidth::float64; }

}  // namespace

bool is_ordered_op(PartialOp op) { return op == PartialOp::ordered_values || op == PartialOp::count_distinct; }

bool has_ordered_aggregates(const AggregationSpec& spec) {
  return std::any_of(spec.aggregates.begin(), spec.aggregates.end(),
                     [](const PartialAggregate& a) { return is_ordered_op(a.op); });
}

AggregationSpec OrderedValuesRun::inner_spec(const AggregationSpec& spec, std::vector<int>* values) {
  AggregationSpec inner = spec;
  inner.aggregates.clear();
  inner.ordered_picks.clear();
  inner.value_widths.clear();
  inner.value_not_null.clear();
  std::vector<int> inner_index(spec.value_widths.size(), -1), taken;
  auto take = [&](int& input) {
    if (input < 0) return;
    const auto i = static_cast<size_t>(input);
    if (inner_index[i] < 0) {
      inner_index[i] = static_cast<int>(taken.size());
      taken.push_back(input);
      inner.value_widths.push_back(spec.value_widths[i]);
      inner.value_not_null.push_back(i < spec.value_not_null.size() ? spec.value_not_null[i] : 0);
    }
    input = inner_index[i];
  };
  for (PartialAggregate a : spec.aggregates) {
    if (is_ordered_op(a.op)) continue;
    take(a.input);
    take(a.input2);
    inner.aggregates.push_back(a);
  }
  if (inner.aggregates.empty()) inner.aggregates.push_back(PartialAggregate{PartialOp::count_rows, -1, -1});
  // Input programs follow their inputs (the ordered aggregates' own are left out).
  if (!spec.value_programs.empty()) {
    inner.value_programs.clear();
    for (const int t : taken) {
      const auto i = static_cast<size_t>(t);
      inner.value_programs.push_back(i < spec.value_programs.size() ? spec.value_programs[i] : ColumnProgram{});
    }
  }
  if (values != nullptr) *values = std::move(taken);
  return inner;
}

OrderedValuesRun::OrderedValuesRun(const AggregationSpec& spec, const InnerFactory& make_inner, SegmentSorter sorter,
                                   std::string sorter_name, std::unique_ptr<OrderedRowsCollector> collector)
    : spec_(spec), collected_(spec.aggregates.size()), sorter_(std::move(sorter)), sorter_name_(std::move(sorter_name)),
      collector_(std::move(collector)), picks_(spec.ordered_picks) {
  picks_.resize(spec.aggregates.size());
  threads_ = spec.threads > 0 ? spec.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int next = 0;
  for (const PartialAggregate& a : spec.aggregates) inner_of_.push_back(is_ordered_op(a.op) ? -1 : next++);
  // Ordered aggregates of one input (several percentiles of a column, or a
  // percentile beside count(DISTINCT)) keep and sort its rows once.
  shares_.assign(spec.aggregates.size(), -1);
  for (size_t a = 0; a < spec.aggregates.size(); ++a) {
    for (size_t b = 0; b < a && inner_of_[a] < 0; ++b) {
      if (inner_of_[b] < 0 && shares_[b] < 0 && spec.aggregates[b].input == spec.aggregates[a].input) {
        shares_[a] = static_cast<int>(b);
        break;
      }
    }
  }
  slot_of_.assign(spec.aggregates.size(), -1);
  int slots = 0;
  for (size_t a = 0; a < spec.aggregates.size(); ++a) {
    if (inner_of_[a] < 0 && shares_[a] < 0) slot_of_[a] = slots++;
  }
  inner_ = make_inner(inner_spec(spec, &inner_values_));
  // Without an engine's collector, slots whose readers all take a top-n's
  // ranks keep each key's best codes as the rows pass, not every row.
  engine_collector_ = collector_ != nullptr;
  if (!collector_) {
    std::vector<std::optional<TopCodesShape>> shapes(static_cast<size_t>(slots));
    for (size_t a = 0; a < spec.aggregates.size(); ++a) {
      if (slot_of_[a] < 0) continue;
      if (const auto picks = slot_picks(a)) shapes[static_cast<size_t>(slot_of_[a])] = top_codes_shape(*picks);
    }
    collector_ = make_top_codes_rows(spec, shapes, threads_);
    if (collector_) form_ = "kept as each key's best";
  }
  for (size_t a = 0; a < spec.aggregates.size() && collector_; ++a) {
    if (slot_of_[a] < 0) continue;
    if (const auto picks = slot_picks(a)) collector_->plan_picks(static_cast<size_t>(slot_of_[a]), *picks);
  }
  // Asked once the picks are planned: a collector counts every row only
  // where its one slot keeps each key's best codes.
  keyed_by_collector_ = collector_ != nullptr && slots == 1 && inner_->passes() == 1 && counts_only() &&
                        collector_->count_every_row();
  if (keyed_by_collector_) form_ = "kept as each key's best";
}

bool OrderedValuesRun::counts_only() const {
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    const PartialOp op = spec_.aggregates[a].op;
    if (inner_of_[a] >= 0 && op != PartialOp::count_rows && op != PartialOp::count_valid) return false;
  }
  return true;
}

bool OrderedValuesRun::any_filter(const ChunkInput& chunk) const {
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    if (filter_of(chunk, a) != nullptr) return true;
  }
  return false;
}

bool OrderedValuesRun::counts_are_the_collectors(const ChunkInput& chunk) const {
  const ColumnView* slot_input = nullptr;
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    if (slot_of_[a] == 0) slot_input = &chunk.values[static_cast<size_t>(spec_.aggregates[a].input)];
  }
  if (slot_input == nullptr || any_filter(chunk)) return false;
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    if (inner_of_[a] < 0 || spec_.aggregates[a].op != PartialOp::count_valid) continue;
    const ColumnView& v = chunk.values[static_cast<size_t>(spec_.aggregates[a].input)];
    if (v.data != slot_input->data || v.validity != slot_input->validity) return false;
    // A held column comes without data: its identity tells it apart.
    const ColumnIdentity &a_id = v.identity, &b_id = slot_input->identity;
    if (v.data == nullptr && (a_id.table != b_id.table || a_id.chunk != b_id.chunk || a_id.column != b_id.column)) return false;
  }
  return true;
}

int OrderedValuesRun::passes() const { return keyed_by_collector_ ? 1 : inner_->passes(); }

void OrderedValuesRun::begin_pass(int pass) {
  pass_ = pass;
  inner_->begin_pass(pass);
}

bool OrderedValuesRun::hold(const ColumnIdentity& column, ColumnWidth width) {
  // Both must keep it: the column then comes without data to either. One
  // that holds it alone keeps a copy it does not use (the chunk brings the
  // data), which the device collector drops after the chunk.
  return collector_ != nullptr && passes() == 1 && collector_->hold(column, width) && inner_->hold(column, width);
}

void OrderedValuesRun::sink(const ChunkInput& chunk) {
  if (!sunk_) {
    sunk_ = true;
    keyed_by_collector_ = keyed_by_collector_ && counts_are_the_collectors(chunk);
  } else if (keyed_by_collector_ && any_filter(chunk)) {
    // Settled at the first chunk: the inner run has had none since.
    throw Error(SqlState::internal_error, "top-codes groups: a FILTER after the first chunk");
  }
  if (!keyed_by_collector_) {
    ChunkInput inner = chunk;
    inner.values.clear();
    for (const int v : inner_values_) inner.values.push_back(chunk.values[static_cast<size_t>(v)]);
    inner.filters.clear();
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      if (inner_of_[a] >= 0) inner.filters.push_back(a < chunk.filters.size() ? chunk.filters[a] : nullptr);
    }
    if (inner.filters.empty()) inner.filters.push_back(nullptr);  // the stand-in count_rows
    inner_->sink(inner);
  }
  // Every pass sees every row; the values are kept once.
  if (pass_ != 0) return;
  const auto t = std::chrono::steady_clock::now();
  // An aggregate sharing another's rows (same input) keeps sharing while
  // their FILTERs are the same mask (none, in practice); from the first chunk
  // where they differ it keeps its own, starting from the rows so far.
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    if (shares_[a] < 0) continue;
    const auto source = static_cast<size_t>(shares_[a]);
    if (filter_of(chunk, a) == filter_of(chunk, source)) continue;
    // A collector's slots are fixed at the first chunk (the GPU engine takes
    // no FILTER, and a top-n's ranks have none, so their aggregates never part).
    if (collector_) throw Error(SqlState::feature_not_supported, "ordered aggregates of one input under different FILTERs, kept by one collector");
    collected_[a] = collected_[source];
    shares_[a] = -1;
  }
  if (collector_) {
    std::vector<OrderedRowsSlot> slots;
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      if (slot_of_[a] >= 0) slots.push_back(OrderedRowsSlot{spec_.aggregates[a].input, filter_of(chunk, a)});
    }
    collector_->collect(chunk, slots);
    collect_ms_ += ms_since(t);
    return;
  }
  const int64_t* packed = nullptr;
  if (!spec_.key_parts.empty()) {
    packed_.resize(chunk.rows);
    parallel_for(chunk.rows >= kParallelRows ? threads_ : 1, chunk.rows, [&](int, size_t b, size_t e) {
      pack_key_rows(spec_.key_parts, chunk, b, e, packed_.data() + b);
    });
    packed = packed_.data();
  }
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    if (inner_of_[a] < 0 && shares_[a] < 0) collect(chunk, packed, a);
  }
  collect_ms_ += ms_since(t);
}

void OrderedValuesRun::grow(Collected& c, size_t rows) const {
  if (c.codes.capacity() >= rows) return;
  // Geometric growth: reserving each chunk's rows exactly would copy the
  // whole array once per chunk.
  size_t want = std::max(rows, 2 * c.codes.capacity());
  // Where the run knows the rows to come, the arrays are sized once for the
  // rows it will keep (the share kept so far of every row, and a little
  // more): each doubling copied the arrays into fresh pages, whose faults
  // were most of a first run's time. A budget too small for that leaves
  // the doubling to go as far as it can.
  if (spec_.input_rows > c.seen_rows && c.seen_rows > 0) {
    const double kept_share = static_cast<double>(rows) / static_cast<double>(c.seen_rows);
    const auto projected = static_cast<size_t>(kept_share * static_cast<double>(spec_.input_rows));
    const size_t once = projected + projected / 32;
    if (once > want) {
      try {
        reserve_collected(c, once);
        return;
      } catch (const Error& e) {
        if (e.state() != SqlState::out_of_memory) throw;
      }
    }
  }
  reserve_collected(c, want);
}

void OrderedValuesRun::reserve_collected(Collected& c, size_t rows) {
  // The old arrays and the new live together while they are copied.
  c.memory.resize((rows + c.codes.capacity()) * (sizeof(int64_t) + sizeof(uint64_t)) +
                  c.null_key_codes.capacity() * sizeof(uint64_t));
  c.keys.reserve(rows);
  c.codes.reserve(rows);
}

void OrderedValuesRun::collect(const ChunkInput& chunk, const int64_t* packed, size_t a) {
  const PartialAggregate& agg = spec_.aggregates[a];
  const ColumnView& in = chunk.values.at(static_cast<size_t>(agg.input));
  const uint8_t* filter = filter_of(chunk, a);
  const uint8_t* key_valid = packed != nullptr ? nullptr : chunk.keys.validity;
  Collected& c = collected_[a];
  const size_t n = chunk.rows;
  auto key_at = [&](size_t r) -> int64_t {
    if (packed != nullptr) return packed[r];
    if (chunk.keys.data == nullptr) return 0;
    return chunk.keys.width == ColumnWidth::int32 ? static_cast<const int32_t*>(chunk.keys.data)[r]
                                                  : static_cast<const int64_t*>(chunk.keys.data)[r];
  };
  auto kept = [&](size_t r) { return (in.validity == nullptr || in.validity[r]) && (filter == nullptr || filter[r]); };
  auto null_key = [&](size_t r) { return key_valid != nullptr && !key_valid[r]; };
  // Two passes over each thread's rows: count what it keeps, then write it
  // at its place (arrival order, so a chunk's rows stay together).
  const int parts = n >= kParallelRows ? threads_ : 1;
  std::vector<size_t> keyed(static_cast<size_t>(parts)), nulls(static_cast<size_t>(parts));
  const bool keeps_all = in.validity == nullptr && filter == nullptr && key_valid == nullptr;
  parallel_for(parts, n, [&](int p, size_t b, size_t e) {
    size_t k = 0, z = 0;
    if (keeps_all) k = e - b;
    else for (size_t r = b; r < e; ++r) {
      if (!kept(r)) continue;
      if (null_key(r)) ++z;
      else ++k;
    }
    keyed[static_cast<size_t>(p)] = k;
    nulls[static_cast<size_t>(p)] = z;
  });
  std::vector<size_t> keyed_at(static_cast<size_t>(parts)), null_at(static_cast<size_t>(parts));
  size_t keyed_end = c.codes.size(), null_end = c.null_key_codes.size();
  for (size_t p = 0; p < static_cast<size_t>(parts); ++p) {
    keyed_at[p] = keyed_end;
    null_at[p] = null_end;
    keyed_end += keyed[p];
    null_end += nulls[p];
  }
  c.seen_rows += n;
  grow(c, keyed_end);
  c.keys.resize(keyed_end);
  c.codes.resize(keyed_end);
  c.null_key_codes.resize(null_end);
  auto add = [&](auto code_of) {
    parallel_for(parts, n, [&](int p, size_t b, size_t e) {
      size_t k = keyed_at[static_cast<size_t>(p)], z = null_at[static_cast<size_t>(p)];
      for (size_t r = b; r < e; ++r) {
        if (!keeps_all && !kept(r)) continue;
        if (null_key(r)) {
          c.null_key_codes[z++] = code_of(r);
          continue;
        }
        c.keys[k] = key_at(r);
        c.codes[k++] = code_of(r);
      }
    });
  };
  with_order_codes(in, add);
}

AggregationResult OrderedValuesRun::finalize() {
  if (keyed_by_collector_) return finalize_keyed();
  // The collector's sorts come first: the inner run's kernels,
  // enqueued chunk by chunk, keep running on the device meanwhile, where
  // waiting for the inner run first put its device time and the sorts' one
  // after the other.
  const auto t_collector = std::chrono::steady_clock::now();
  std::vector<KeyedSegments> segments(spec_.aggregates.size());
  std::vector<std::optional<KeyedPicks>> picked(spec_.aggregates.size());
  std::vector<std::optional<KeyedDistinct>> counted(spec_.aggregates.size());
  for (size_t a = 0; a < spec_.aggregates.size() && collector_; ++a) {
    if (inner_of_[a] >= 0 || shares_[a] >= 0) continue;
    const auto slot = static_cast<size_t>(slot_of_[a]);
    if (const auto picks = slot_picks(a)) {
      picked[a] = collector_->picked(slot, *picks);
    } else if (slot_counts_distinct(a)) {
      counted[a] = collector_->distinct_counts(slot, input_is_float(a));
      values_ += counted[a]->values;
    } else {
      segments[a] = collector_->sorted(slot);
    }
  }
  const double collector_ms = ms_since(t_collector);
  collector_ms_ = collector_ms;
  const auto t_inner = std::chrono::steady_clock::now();
  AggregationResult r = inner_->finalize();
  report_ = inner_->report();
  inner_ms_ = ms_since(t_inner);
  const auto t = std::chrono::steady_clock::now();
  const size_t inner_count = std::max<size_t>(1, spec_.aggregates.size() - static_cast<size_t>(std::count(
                                                                                inner_of_.begin(), inner_of_.end(), -1)));
  r.states.resize(inner_count);
  AggregationResult out;
  out.keys = std::move(r.keys);
  out.key_valid = std::move(r.key_valid);
  out.states.resize(spec_.aggregates.size());
  // Inner aggregate -> ours, for the compact form's count sources.
  std::vector<int> outer_of(inner_count, -1);
  for (size_t a = 0; a < inner_of_.size(); ++a) {
    if (inner_of_[a] >= 0) outer_of[static_cast<size_t>(inner_of_[a])] = static_cast<int>(a);
  }
  if (!r.count_source.empty()) {
    r.count_source.resize(inner_count, -1);
    out.count_source.resize(spec_.aggregates.size());
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      const int inner = inner_of_[a];
      const int source = inner >= 0 ? r.count_source[static_cast<size_t>(inner)] : -1;
      out.count_source[a] = source >= 0 && static_cast<size_t>(source) < inner_count && outer_of[static_cast<size_t>(source)] >= 0
                                ? outer_of[static_cast<size_t>(source)]
                                : static_cast<int>(a);
    }
  }
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    if (inner_of_[a] >= 0) out.states[a] = std::move(r.states[static_cast<size_t>(inner_of_[a])]);
  }
  const auto t_index = std::chrono::steady_clock::now();
  const GroupIndex index(out, threads_);
  index_ms_ = ms_since(t_index);
  // Each collector's rows sorted once, for every aggregate that shares them.
  std::vector<Sorted> sorted(spec_.aggregates.size());
  for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
    if (inner_of_[a] >= 0) continue;
    const size_t source = shares_[a] >= 0 ? static_cast<size_t>(shares_[a]) : a;
    if (counted[source]) {
      place_distinct(*counted[source], index, out.keys.size(), out.states[a]);
      continue;
    }
    if (source == a && picked[a]) sorted[a] = place_picks(std::move(*picked[a]), index, out.keys.size());
    else if (source == a && collector_) sorted[a] = place_segments(std::move(segments[a]), index, out.keys.size());
    else if (source == a) sorted[a] = sort_rows(a, index, out.keys.size());
    const auto t_emit = std::chrono::steady_clock::now();
    emit(a, sorted[source], out);
    emit_ms_ += ms_since(t_emit);
  }
  sort_ms_ = collector_ms + ms_since(t);
  report_.finalize_ms += sort_ms_;
  return out;
}

OrderedValuesRun::Sorted OrderedValuesRun::sort_rows(size_t a, const GroupIndex& index, size_t groups) {
  Collected c = std::move(collected_[a]);
  collected_[a] = {};
  const size_t keyed = c.codes.size();
  const size_t n = keyed + c.null_key_codes.size();
  values_ += n;
  // Result group of every row.
  auto t = std::chrono::steady_clock::now();
  std::vector<uint32_t> gid(n);
  parallel_for(threads_, keyed, [&](int, size_t b, size_t e) {
    CancelTicker ticker;
    for (size_t i = b; i < e; ++i) {
      ticker.tick();
      const uint32_t g = index.find(c.keys[i]);
      if (g == KeyTable::kNotFound) throw Error(SqlState::internal_error, "ordered values: a key without a group");
      gid[i] = g;
    }
  });
  c.keys = {};
  if (!c.null_key_codes.empty()) {
    if (index.null_group() == KeyTable::kNotFound) throw Error(SqlState::internal_error, "ordered values: no NULL-key group");
    std::fill(gid.begin() + static_cast<long>(keyed), gid.end(), index.null_group());
    c.codes.insert(c.codes.end(), c.null_key_codes.begin(), c.null_key_codes.end());
    c.null_key_codes = {};
  }
  assign_ms_ += ms_since(t);
  t = std::chrono::steady_clock::now();
  // Counting sort by group: per-thread histograms while they stay small.
  int parts = threads_;
  while (parts > 1 && static_cast<uint64_t>(parts) * groups > (uint64_t{1} << 24)) --parts;
  if (n < (size_t{1} << 16)) parts = 1;
  const size_t per = (n + static_cast<size_t>(parts) - 1) / static_cast<size_t>(std::max(parts, 1));
  std::vector<std::vector<uint64_t>> at(static_cast<size_t>(parts), std::vector<uint64_t>(groups, 0));
  parallel_for(parts, static_cast<size_t>(parts), [&](int, size_t pb, size_t pe) {
    for (size_t p = pb; p < pe; ++p) {
      CancelTicker ticker;
      for (size_t i = p * per, e = std::min(n, (p + 1) * per); i < e; ++i) {
        ticker.tick();
        ++at[p][gid[i]];
      }
    }
  });
  std::vector<uint64_t> offsets(groups + 1, 0);
  uint64_t running = 0;
  for (size_t g = 0; g < groups; ++g) {
    offsets[g] = running;
    for (auto& h : at) {
      const uint64_t count = h[g];
      h[g] = running;
      running += count;
    }
  }
  offsets[groups] = running;
  OrderCodes sorted(n);  // every element written below
  parallel_for(parts, static_cast<size_t>(parts), [&](int, size_t pb, size_t pe) {
    for (size_t p = pb; p < pe; ++p) {
      CancelTicker ticker;
      for (size_t i = p * per, e = std::min(n, (p + 1) * per); i < e; ++i) {
        ticker.tick();
        sorted[at[p][gid[i]]++] = c.codes[i];
      }
    }
  });
  at = {};
  gid = {};
  c.codes = {};
  partition_ms_ += ms_since(t);
  check_cancel_point();
  // Readers that take known positions only (percentiles of a constant
  // fraction): each group's values are selected around those positions
  // (nth_element, linear) rather than sorted.
  if (const auto picks = slot_picks(a); picks && !sorter_) {
    form_ = "selected at their readers' positions";
    return select_picks(*picks, std::move(offsets), sorted);
  }
  // Each group's values sorted: by the sorter when it takes them, else
  // groups in blocks taken by free threads, and a group too large for one
  // thread by all of them.
  const bool by_sorter = sorter_ && sorter_(sorted.data(), n, offsets.data(), groups);
  sorted_by_sorter_ |= by_sorter;
  constexpr size_t kBlock = 64;
  if (!by_sorter) parallel_tasks(threads_, (groups + kBlock - 1) / kBlock, [&](int, size_t block) {
    for (size_t g = block * kBlock, e = std::min(groups, g + kBlock); g < e; ++g) {
      const size_t len = offsets[g + 1] - offsets[g];
      if (len >= kParallelSortValues && threads_ > 1) continue;
      sort_codes(sorted.data() + offsets[g], len);
    }
  });
  for (size_t g = 0; g < groups && threads_ > 1 && !by_sorter; ++g) {
    const size_t len = offsets[g + 1] - offsets[g];
    if (len >= kParallelSortValues) sort_codes_parallel(sorted.data() + offsets[g], len, threads_);
  }
  return Sorted{std::move(offsets), std::move(sorted), {}, {}, {}};
}

bool OrderedValuesRun::slot_counts_distinct(size_t a) const {
  for (size_t b = 0; b < spec_.aggregates.size(); ++b) {
    if (inner_of_[b] >= 0 || (b != a && shares_[b] != static_cast<int>(a))) continue;
    if (spec_.aggregates[b].op != PartialOp::count_distinct) return false;
  }
  return true;
}

bool OrderedValuesRun::input_is_float(size_t a) const {
  return is_float_width(spec_.value_widths.at(static_cast<size_t>(spec_.aggregates[a].input)));
}

void OrderedValuesRun::place_distinct(const KeyedDistinct& k, const GroupIndex& index, size_t groups, PartialStates& s) {
  const auto t = std::chrono::steady_clock::now();
  // A group no key names has no value: count(DISTINCT) of nothing is 0.
  s.count.assign(groups, 0);
  for (size_t i = 0; i < k.keys.size(); ++i) {
    const uint32_t g = index.find(k.keys[i]);
    if (g == KeyTable::kNotFound) throw Error(SqlState::internal_error, "ordered values: a key without a group");
    s.count[g] = static_cast<int64_t>(k.distinct[i]);
  }
  if (k.null_key_rows > 0) {
    if (index.null_group() == KeyTable::kNotFound) throw Error(SqlState::internal_error, "ordered values: no NULL-key group");
    s.count[index.null_group()] = static_cast<int64_t>(k.null_key_distinct);
  }
  sorted_by_sorter_ = true;
  assign_ms_ += ms_since(t);
}

OrderedValuesRun::Sorted OrderedValuesRun::place_segments(KeyedSegments k, const GroupIndex& index, size_t groups) {
  const auto t = std::chrono::steady_clock::now();
  values_ += k.codes.size();
  sorted_by_sorter_ = true;
  // Each key segment's group; the codes stay where the device put them.
  std::vector<uint64_t> count(groups, 0);
  Sorted out;
  out.from.assign(groups, 0);
  uint64_t at = 0;
  for (size_t i = 0; i < k.keys.size(); ++i) {
    const uint32_t g = index.find(k.keys[i]);
    if (g == KeyTable::kNotFound) throw Error(SqlState::internal_error, "ordered values: a key without a group");
    count[g] = k.counts[i];
    out.from[g] = at;
    at += k.counts[i];
  }
  if (k.null_key_rows > 0) {
    if (index.null_group() == KeyTable::kNotFound) throw Error(SqlState::internal_error, "ordered values: no NULL-key group");
    count[index.null_group()] = k.null_key_rows;
    out.from[index.null_group()] = at;
  }
  out.offsets.assign(groups + 1, 0);
  for (size_t g = 0; g < groups; ++g) out.offsets[g + 1] = out.offsets[g] + count[g];
  out.codes = std::move(k.codes);
  assign_ms_ += ms_since(t);
  return out;
}

std::optional<std::vector<OrderedPick>> OrderedValuesRun::slot_picks(size_t a) const {
  std::vector<OrderedPick> picks;
  for (size_t b = 0; b < spec_.aggregates.size(); ++b) {
    if (inner_of_[b] >= 0 || (b != a && shares_[b] != static_cast<int>(a))) continue;
    if (!picks_[b]) return std::nullopt;
    picks.push_back(*picks_[b]);
  }
  return picks;
}

std::pair<uint64_t, uint64_t> OrderedValuesRun::pick_range(size_t a) const {
  const size_t source = shares_[a] >= 0 ? static_cast<size_t>(shares_[a]) : a;
  uint64_t offset = 0;
  for (size_t b = 0; b < spec_.aggregates.size(); ++b) {
    if (inner_of_[b] >= 0 || (b != source && shares_[b] != static_cast<int>(source))) continue;
    const uint64_t length = picks_[b] && picks_[b]->kind == OrderedPick::Kind::cont ? 2 : 1;
    if (b == a) return {offset, length};
    offset += length;
  }
  throw Error(SqlState::internal_error, "ordered values: an aggregate outside its collector's picks");
}

void OrderedValuesRun::emit(size_t a, const Sorted& rows, AggregationResult& out) const {
  const size_t groups = out.keys.size();
  const std::vector<uint64_t>& offsets = rows.offsets;
  const OrderCodes& sorted = rows.codes;
  const size_t n = sorted.size();
  PartialStates& s = out.states[a];
  const PartialAggregate& agg = spec_.aggregates[a];
  const bool floats = input_is_float(a);
  if (agg.op == PartialOp::count_distinct) {
    s.count.assign(groups, 0);
    parallel_for(threads_, groups, [&](int, size_t b, size_t e) {
      for (size_t g = b; g < e; ++g) {
        int64_t distinct = 0;
        const uint64_t* codes = sorted.data() + (rows.from.empty() ? offsets[g] : rows.from[g]);
        for (uint64_t i = 0; i < offsets[g + 1] - offsets[g]; ++i) {
          distinct += i == 0 || !same_order_value(codes[i], codes[i - 1], floats);
        }
        s.count[g] = distinct;
      }
    });
    return;
  }
  if (!rows.positions.empty()) {
    // Picked: of each group's kept codes, the ones this aggregate reads
    // (its part of the collector's picks), with their positions.
    const uint64_t per = rows.per;
    const auto [first, length] = pick_range(a);
    if (length == 1) {
      // One value per group (a top-n's rank, percentile_disc): the value at
      // the group's index, with its number of values (PartialStates::one_pick).
      s.one_pick = true;
      if (floats) resize_prefaulted(s.ordered_float, groups);
      else resize_prefaulted(s.ordered_int, groups);
      resize_prefaulted(s.count, groups);
      parallel_for(groups >= kParallelRows ? threads_ : 1, groups, [&](int, size_t b, size_t e) {
        for (size_t g = b; g < e; ++g) {
          s.count[g] = static_cast<int64_t>(rows.n[g]);
          const uint64_t code = rows.n[g] == 0 ? 0 : sorted[rows.from[g] + first];
          if (floats) s.ordered_float[g] = rows.n[g] == 0 ? 0.0 : float_of_order_code(code);
          else s.ordered_int[g] = rows.n[g] == 0 ? 0 : int_of_order_code(code);
        }
      });
      return;
    }
    const uint64_t kept = per == 0 ? 0 : offsets[groups] / per * length;
    if (floats) resize_prefaulted(s.ordered_float, kept);
    else resize_prefaulted(s.ordered_int, kept);
    resize_prefaulted(s.ordered_pos, kept);
    resize_prefaulted(s.count, groups);
    resize_prefaulted(s.offsets, groups + 1);
    parallel_for(groups >= kParallelRows ? threads_ : 1, groups + 1, [&](int, size_t b, size_t e) {
      for (size_t g = b; g < e; ++g) {
        const uint64_t at = per == 0 ? 0 : offsets[g] / per * length;
        s.offsets[g] = at;
        if (g == groups) continue;
        s.count[g] = static_cast<int64_t>(rows.n[g]);
        if (offsets[g + 1] == offsets[g]) continue;
        for (uint64_t i = 0; i < length; ++i) {
          const uint64_t code = sorted[rows.from[g] + first + i];
          if (floats) s.ordered_float[at + i] = float_of_order_code(code);
          else s.ordered_int[at + i] = int_of_order_code(code);
          s.ordered_pos[at + i] = rows.positions[rows.from[g] + first + i];
        }
      }
    });
    return;
  }
  if (floats) s.ordered_float.resize(n);
  else s.ordered_int.resize(n);
  s.offsets = offsets;
  if (!rows.from.empty()) {
    // Segments in the device's order: moved to their groups' places.
    parallel_for(threads_, groups, [&](int, size_t b, size_t e) {
      for (size_t g = b; g < e; ++g) {
        const uint64_t* codes = sorted.data() + rows.from[g];
        for (uint64_t i = 0, len = offsets[g + 1] - offsets[g]; i < len; ++i) {
          if (floats) s.ordered_float[offsets[g] + i] = float_of_order_code(codes[i]);
          else s.ordered_int[offsets[g] + i] = int_of_order_code(codes[i]);
        }
      }
    });
    return;
  }
  parallel_for(threads_, n, [&](int, size_t b, size_t e) {
    if (floats) {
      for (size_t i = b; i < e; ++i) s.ordered_float[i] = float_of_order_code(sorted[i]);
    } else {
      for (size_t i = b; i < e; ++i) s.ordered_int[i] = int_of_order_code(sorted[i]);
    }
  });
}

AggregationReport OrderedValuesRun::report() const {
  AggregationReport r = report_;
  r.sink_ms += collect_ms_;
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "Ordered-set and DISTINCT aggregates: %llu values %s per group (%s), collect %.3f ms, "
                "finalize %.3f ms (collector %.3f ms, groups' run %.3f ms, group index %.3f ms, groups found %.3f ms, "
                "partitioned %.3f ms, values placed %.3f ms)",
                static_cast<unsigned long long>(values_), form_,
                collector_            ? collector_->name().c_str()
                : sorted_by_sorter_ ? sorter_name_.c_str()
                                    : ("host, " + std::to_string(threads_) + " threads").c_str(),
                collect_ms_, sort_ms_, collector_ms_, inner_ms_, index_ms_, assign_ms_, partition_ms_, emit_ms_);
  r.details.push_back(buf);
  return r;
}

}  // namespace tally::executor::cpu
