// EngineAggregator's result: the engine's partial states finalized into
// PostgreSQL values through finalize.hpp, engine arrays moved where they
// already are the column.

#include <algorithm>
#include <chrono>
#include <cstring>
#include <atomic>
#include <list>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include "common/column_program_run.hpp"
#include "common/engine_counters.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "common/process_faults.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/engine_aggregator.hpp"
#include "executor/finalize.hpp"
#include "executor/having_filter.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/row_sort.hpp"
#include "executor/row_top_n.hpp"

namespace tally::executor::engine_aggregation {
namespace {

// Marks the NULL key's group. At most one group is marked: found with memchr
// rather than by testing every group.
void mark_null_keys(const std::vector<uint8_t>& key_valid, size_t groups, Vector& v) {
  const uint8_t* valid = key_valid.data();
  const size_t marked = std::min(groups, key_valid.size());
  // (memchr of a null pointer is undefined even for 0 bytes: no group, no key_valid.)
  for (const void* at = marked > 0 ? std::memchr(valid, 0, marked) : nullptr; at != nullptr;) {
    const auto g = static_cast<size_t>(static_cast<const uint8_t*>(at) - valid);
    v.set_null(g);
    at = g + 1 < marked ? std::memchr(valid + g + 1, 0, marked - g - 1) : nullptr;
  }
}

}  // namespace

size_t EngineAggregator::finalize(std::vector<Vector>& columns) {
  AggregationResult result;
  try {
    if (!keys_.empty() && !group_filter_.empty()) run_->keep_groups_where(group_tests());
    result = run_->finalize();
  } catch (const ProgramOverflow&) {
    // A GPU run reads its programs' error flags once, at the end.
    throw EngineInputOverflow(SqlState::numeric_value_out_of_range, "an engine program overflowed");
  }
  report_ = run_->report();
  // The query log line names them; at level debug it also gets EXPLAIN
  // ANALYZE's lines of this aggregation (every run's, first runs included),
  // once the result columns are timed (`timed` ends first).
  note_aggregation(report_.engine, report_.variant);
  struct NoteDetails {
    const EngineAggregator& self;
    ~NoteDetails() {
      if (!log::enabled(log::Level::debug)) return;
      const std::vector<std::string> lines = self.explain();
      note_aggregation(self.report_.engine, self.report_.variant, &lines);
    }
  } note_details{*this};
  const auto t_columns = std::chrono::steady_clock::now();
  struct Timed {
    double& us;
    long& faults;
    std::chrono::steady_clock::time_point t;
    long faults_before = process_minor_faults();
    ~Timed() {
      us = since_us(t);
      faults = process_minor_faults() - faults_before;
    }
  } timed{columns_us_, column_faults_, t_columns};
  count(on_gpu_ ? engine_counters().gpu_aggregations : engine_counters().cpu_aggregations);
  size_t groups = result.groups();
  // An engine may answer no input with no state arrays at all (the CPU
  // engine's compact form over an empty table did, and a GROUP BY over it
  // then read past the end): every aggregate gets its (empty) arrays, and
  // a count source that names a missing aggregate is its own.
  if (result.states.size() < spec_.aggregates.size()) result.states.resize(spec_.aggregates.size());
  if (!result.count_source.empty()) {
    result.count_source.resize(spec_.aggregates.size(), -1);
    for (size_t a = 0; a < result.count_source.size(); ++a) {
      const int source = result.count_source[a];
      if (source < 0 || static_cast<size_t>(source) >= spec_.aggregates.size()) result.count_source[a] = static_cast<int>(a);
    }
  }
  const bool global = keys_.empty();
  const bool empty_global = global && groups == 0;  // its one group counts no row
  if (empty_global) {
    // A global aggregate returns one row even without input (in the full
    // form: every array below gets its one entry).
    result.count_source.clear();
    result.keys.push_back(0);
    result.key_valid.push_back(1);
    for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
      PartialStates& s = result.states[a];
      s.count.push_back(0); s.sum_int.push_back(0); s.sum2_int.push_back(0); s.sum_float.push_back(0);
      s.extreme_int.push_back(0); s.extreme_float.push_back(0);
      s.n.push_back(0); s.sx.push_back(0); s.sxx.push_back(0); s.sy.push_back(0); s.syy.push_back(0); s.sxy.push_back(0);
      s.sum_int64.clear();
    }
    groups = 1;
  }
  filtered_out_ = result.groups_dropped;
  if (!global) groups = filter_groups(result, groups);
  // Where the ORDER BY reads aggregates alone, the top groups are cut
  // before the keys are built, which are then built for the groups kept
  // alone (TPC-H Q10: seven key columns, texts among them, of 20 of 389K
  // customers).
  const bool top_before_keys = !global && top_groups_by_aggregates();
  if (top_before_keys) groups = keep_top_groups(result, groups, columns, false);
  // Keys.
  if (mode_ == KeyMode::packed) unpack_keys(result, groups, columns);
  if (mode_ == KeyMode::tuple || mode_ == KeyMode::evaluated_tuple) tuple_keys(result, groups, columns);
  for (size_t k = 0; k < keys_.size() && !key_columns_mode(mode_); ++k) {
    Vector v(keys_[k]->type);
    if (!interned_ && mode_ == KeyMode::dict_column) {
      decode_dictionary_keys(result, groups, v);
      columns.push_back(std::move(v));
      continue;
    }
    const bool int_keys = !interned_ && mode_ != KeyMode::interned && physical_of(v.type.id) != Physical::text;
    if (int_keys && keys_.size() == 1 && result.keys.size() == groups) {
      v.ints = std::move(result.keys);  // the engine's keys are the column (no copy)
      v.count = groups;
    } else {
      v.resize(groups);
      if (int_keys) std::copy(result.keys.begin(), result.keys.begin() + static_cast<long>(groups), v.ints.begin());
    }
    if (int_keys) {
      mark_null_keys(result.key_valid, groups, v);
      columns.push_back(std::move(v));
      continue;
    }
    for (size_t g = 0; g < groups; ++g) {
      if (!result.key_valid[g]) { v.set_null(g); continue; }
      const int64_t key = result.keys[g];
      if (interned_ || mode_ == KeyMode::interned) {
        v.set(g, interner_.tuple(key)[k]);
      } else {
        v.ints[g] = key;
      }
    }
    columns.push_back(std::move(v));
  }
  if (!global && !top_before_keys) groups = keep_top_groups(result, groups, columns, true);
  column_parts_us_.assign(1, since_us(t_columns));
  // Aggregates through the shared finalizer.
  const std::vector<int>& count_source = result.count_source;
  // Counts moved into a shared buffer, by source aggregate (see below).
  std::vector<std::shared_ptr<std::vector<int64_t>>> shared_counts(result.states.size());
  for (size_t a = 0; a < aggregates_.size(); ++a) {
    const AggregateCall& call = aggregates_[a];
    PartialStates& s = result.states[a];
    const int input = spec_.aggregates[a].input;
    // min or max of text is finalized as the int8 of its rank, then read
    // back as the entry of that rank.
    const TextRanks* text = mappings_[a].text_rank ? &text_ranks_[static_cast<size_t>(input)] : nullptr;
    const SqlType out_type = text ? SqlType{TypeId::int8} : call.signature.result_type;
    const TypeId in = text                                ? TypeId::int8
                      : call.signature.arg_types.empty() ? TypeId::unknown
                                                          : call.signature.arg_types[0].id;
    const int32_t decided = in == TypeId::numeric && input >= 0 ? input_scales_[static_cast<size_t>(input)].load() : 0;
    const int scale = decided == kScaleUnknown ? 0 : decided;
    // The shared column finalizer: no Value per group (finalize.hpp).
    Vector v(out_type);
    const ColumnFinal final{call.signature.kind, in, scale};
    const PartialOp op = spec_.aggregates[a].op;
    if (op == PartialOp::ordered_values || op == PartialOp::count_distinct) {
      finalize_ordered_column(OrderedFinal{final, fractions_[a], call.descending}, s, groups, v);
    } else if (count_source.empty() &&
               ((call.signature.kind == AggKind::sum && in == TypeId::float8 && s.sum_float.size() == groups &&
                 s.count.size() == groups) ||
                narrow_int_sums(call, s, groups, table_rows_))) {
      // The GPU's full form (own count, 128-bit sums) of a count, sum or
      // avg of int2/int4, or of a sum of float8: as the compact form, so the
      // column takes the arrays (no zero-filled column, no pass per group).
      const size_t column = keys_.size() + a;
      const bool defer = column < deferrable_.size() && deferrable_[column] != 0 && text == nullptr;
      // No group of an input without NULLs (chunk statistics) has an
      // empty count, but for a global aggregate over no row: no scan of the counts.
      const PartialAggregate& p = spec_.aggregates[a];
      const bool not_null = !empty_global && p.input >= 0 &&
                            static_cast<size_t>(p.input) < spec_.value_not_null.size() &&
                            spec_.value_not_null[static_cast<size_t>(p.input)] != 0;
      finalize_compact_column(final, s, s.count, /*count_movable=*/true, groups, v,
                              not_null ? std::optional<bool>(false) : std::nullopt, defer);
    } else if (count_source.empty()) {
      finalize_column(final, s, groups, v);
    } else {
      // Compact form: this aggregate's count may be an earlier one's; it
      // may be moved into the column when no later aggregate reads it.
      const int source = count_source[a];
      bool read_later = false, shared = source != static_cast<int>(a);
      for (size_t b = a + 1; b < count_source.size(); ++b) read_later |= count_source[b] == source;
      shared |= read_later;
      // A count shared by several aggregates counts every row of its group
      // (that is why it is shared), so no group's is 0: no scan of it.
      const size_t column = keys_.size() + a;
      const bool defer = column < deferrable_.size() && deferrable_[column] != 0 && text == nullptr;
      // A streamed count column or avg whose count a later aggregate reads
      // shares it (the array goes into a shared buffer once) instead of
      // copying it: count(*) next to avg(v) copied 64 MB at 8M groups.
      std::vector<int64_t>& source_count = result.states[static_cast<size_t>(source)].count;
      auto& shared_count = shared_counts[static_cast<size_t>(source)];
      const AggKind kind = call.signature.kind;
      if (defer && read_later && !shared_count && source_count.size() == groups &&
          (kind == AggKind::count_star || kind == AggKind::count || kind == AggKind::avg)) {
        shared_count = std::make_shared<std::vector<int64_t>>(std::move(source_count));
      }
      finalize_compact_column(final, s, shared_count ? *shared_count : source_count, !read_later && !shared_count,
                              groups, v, shared ? std::optional<bool>(false) : std::nullopt, defer,
                              defer ? shared_count : nullptr);
    }
    if (text != nullptr) v = entries_of_ranks(v, *text->order, text->dictionary, call.signature.result_type);
    columns.push_back(std::move(v));
    column_parts_us_.push_back(since_us(t_columns) - std::accumulate(column_parts_us_.begin(), column_parts_us_.end(), 0.0));
  }
  return groups;
}

namespace {

// Entries `kept` (ascending) of a per-group array, in place; an array not
// of `groups` entries (absent for this aggregate) is left as it is.
template <class T, class A>
void keep_groups(std::vector<T, A>& v, const std::vector<uint32_t>& kept, size_t groups) {
  if (v.size() != groups) return;
  for (size_t i = 0; i < kept.size(); ++i) v[i] = v[kept[i]];
  v.resize(kept.size());
  v.shrink_to_fit();
}

// Groups `kept` (ascending) of every per-group array of `result`. Not the
// arrays of ordered-set values, which callers rule out.
void keep_result_groups(AggregationResult& result, const std::vector<uint32_t>& kept, size_t groups) {
  keep_groups(result.keys, kept, groups);
  keep_groups(result.key_valid, kept, groups);
  for (auto& codes : result.key_codes) keep_groups(codes, kept, groups);
  for (auto& codes : result.key_codes32) keep_groups(codes, kept, groups);
  for (auto& valid : result.key_code_valid) keep_groups(valid, kept, groups);
  for (PartialStates& s : result.states) {
    keep_groups(s.count, kept, groups);
    keep_groups(s.sum_int, kept, groups);
    keep_groups(s.sum2_int, kept, groups);
    keep_groups(s.sum_float, kept, groups);
    keep_groups(s.extreme_int, kept, groups);
    keep_groups(s.extreme_float, kept, groups);
    for (auto* moments : {&s.n, &s.sx, &s.sxx, &s.sy, &s.syy, &s.sxy}) keep_groups(*moments, kept, groups);
    keep_groups(s.sum_int64, kept, groups);
  }
}

}  // namespace

bool EngineAggregator::top_groups_by_aggregates() const {
  return !top_groups_.keys.empty() &&
         std::all_of(top_groups_.keys.begin(), top_groups_.keys.end(),
                     [this](const GroupAggregator::OrderKey& key) { return key.column >= keys_.size(); });
}

size_t EngineAggregator::keep_top_groups(AggregationResult& result, size_t groups, std::vector<Vector>& columns,
                                         bool keys_built) {
  if (top_groups_.keys.empty() || keys_.empty() || groups == 0) return groups;
  if (keys_built ? columns.size() < keys_.size() : !top_groups_by_aggregates()) return groups;
  for (const PartialAggregate& p : spec_.aggregates) {
    if (p.op == PartialOp::ordered_values || p.op == PartialOp::count_distinct) return groups;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const size_t first_key = keys_built ? columns.size() - keys_.size() : columns.size();
  // Each sort key's values: a key column as built; a count's array as the
  // engine left it (moved into a Vector for the comparison, and back); or an
  // exact sum, min or max of integers or numerics (at its input's one
  // scale, which keeps their order), copied, NULL where no value counted.
  struct Source {
    int count = -1;  // the state whose count: the values, or (exact) where they are NULL
    int exact = -1;  // the state of an exact sum, min or max
  };
  std::vector<Source> sources(top_groups_.keys.size());
  for (size_t i = 0; i < top_groups_.keys.size(); ++i) {
    const size_t column = top_groups_.keys[i].column;
    if (column < keys_.size()) {
      if (columns[first_key + column].size() != groups) return groups;
      continue;
    }
    const size_t a = column - keys_.size();
    if (a >= aggregates_.size() || a >= result.states.size() || a >= spec_.aggregates.size()) return groups;
    const int source = result.count_source.empty() ? static_cast<int>(a) : result.count_source[a];
    if (source < 0 || static_cast<size_t>(source) >= result.states.size() ||
        result.states[static_cast<size_t>(source)].count.size() != groups) {
      return groups;
    }
    sources[i].count = source;
    const AggregateCall& call = aggregates_[a];
    const AggKind kind = call.signature.kind;
    if (kind == AggKind::count_star || kind == AggKind::count) continue;
    const PartialAggregate& p = spec_.aggregates[a];
    const TypeId in = call.signature.arg_types.empty() ? TypeId::unknown : call.signature.arg_types[0].id;
    const bool exact_input = in == TypeId::int2 || in == TypeId::int4 || in == TypeId::int8 || in == TypeId::numeric;
    const bool exact_state = (kind == AggKind::sum && p.op == PartialOp::sum_int) ||
                             (kind == AggKind::min && p.op == PartialOp::min_int) ||
                             (kind == AggKind::max && p.op == PartialOp::max_int);
    if (!exact_input || !exact_state || p.input < 0 || mappings_[a].text_rank) return groups;
    if (in == TypeId::numeric && input_scales_[static_cast<size_t>(p.input)].load() == kScaleUnknown) return groups;
    const PartialStates& s = result.states[a];
    const bool held = kind == AggKind::sum ? (s.sum_int64.size() == groups || s.sum_int.size() == groups)
                                           : s.extreme_int.size() == groups;
    if (!held) return groups;
    sources[i].exact = static_cast<int>(a);
  }
  std::list<Vector> exact;  // stable addresses for the sort columns
  for (const Source& source : sources) {
    if (source.exact < 0) continue;
    const PartialStates& s = result.states[static_cast<size_t>(source.exact)];
    const int64_t* count = result.states[static_cast<size_t>(source.count)].count.data();
    Vector& v = exact.emplace_back(SqlType{TypeId::int8});
    v.resize(groups);
    v.nulls.assign(groups, 0);
    std::atomic<bool> wide{false};
    for_group_ranges(groups, [&](size_t begin, size_t end) {
      for (size_t g = begin; g < end; ++g) {
        if (count[g] == 0) {
          v.nulls[g] = 1;
        } else if (!s.sum_int64.empty()) {
          v.ints[g] = s.sum_int64[g];
        } else if (!s.sum_int.empty()) {
          const __int128 x = s.sum_int[g];
          if (x > INT64_MAX || x < INT64_MIN) wide.store(true, std::memory_order_relaxed);
          v.ints[g] = static_cast<int64_t>(x);
        } else {
          v.ints[g] = s.extreme_int[g];
        }
      }
    });
    if (wide.load()) return groups;  // a sum past 64 bits: not compared here
  }
  std::map<int, Vector> counts;  // by state: stable addresses for the sort columns
  struct GiveBack {
    AggregationResult& result;
    std::map<int, Vector>& counts;
    ~GiveBack() {
      for (auto& [state, v] : counts) result.states[static_cast<size_t>(state)].count = std::move(v.ints);
    }
  } give_back{result, counts};
  std::vector<SortColumn> sort;
  auto next_exact = exact.begin();
  for (size_t i = 0; i < top_groups_.keys.size(); ++i) {
    const GroupAggregator::OrderKey& key = top_groups_.keys[i];
    const Source& source = sources[i];
    const Vector* values = nullptr;
    if (source.count < 0) {
      values = &columns[first_key + key.column];
    } else if (source.exact >= 0) {
      values = &*next_exact++;
    } else {
      auto [at, fresh] = counts.try_emplace(source.count, SqlType{TypeId::int8});
      if (fresh) {
        at->second.ints = std::move(result.states[static_cast<size_t>(source.count)].count);
        at->second.count = groups;
      }
      values = &at->second;
    }
    sort.push_back({values, key.descending, key.nulls_first});
  }
  const int threads = spec_.threads > 0 ? spec_.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::optional<std::vector<uint32_t>> kept = top_n_candidates(groups, sort, top_groups_.count, threads);
  for (auto& [state, v] : counts) result.states[static_cast<size_t>(state)].count = std::move(v.ints);
  counts.clear();
  if (!kept) return groups;
  for (size_t k = first_key; keys_built && k < columns.size(); ++k) columns[k] = gather(columns[k], *kept, threads);
  keep_result_groups(result, *kept, groups);
  top_dropped_ = groups - kept->size();
  top_us_ = since_us(t0);
  return kept->size();
}

std::vector<GroupTest> EngineAggregator::group_tests() const {
  std::vector<GroupTest> tests;
  for (const PartialAggregate& p : spec_.aggregates) {
    if (p.op == PartialOp::ordered_values || p.op == PartialOp::count_distinct) return tests;
  }
  for (const GroupFilter& f : group_filter_) {
    if (f.aggregate >= aggregates_.size() || f.aggregate >= spec_.aggregates.size()) continue;
    const AggregateCall& call = aggregates_[f.aggregate];
    const PartialAggregate& p = spec_.aggregates[f.aggregate];
    const AggKind kind = call.signature.kind;
    if (kind == AggKind::count_star || kind == AggKind::count) {
      tests.push_back(GroupTest{f.aggregate, true, scaled_group_test(f, 0)});
      continue;
    }
    const TypeId in = call.signature.arg_types.empty() ? TypeId::unknown : call.signature.arg_types[0].id;
    const bool exact_input = in == TypeId::int2 || in == TypeId::int4 || in == TypeId::int8 || in == TypeId::numeric;
    if (!exact_input || p.input < 0) continue;
    const bool exact_state = (kind == AggKind::sum && p.op == PartialOp::sum_int) ||
                             (kind == AggKind::min && p.op == PartialOp::min_int) ||
                             (kind == AggKind::max && p.op == PartialOp::max_int);
    if (!exact_state) continue;
    int32_t scale = 0;
    if (in == TypeId::numeric) {
      scale = input_scales_[static_cast<size_t>(p.input)].load();
      if (scale == kScaleUnknown) continue;
    }
    tests.push_back(GroupTest{f.aggregate, false, scaled_group_test(f, scale)});
  }
  return tests;
}

size_t EngineAggregator::filter_groups(AggregationResult& result, size_t groups) {
  if (group_filter_.empty() || groups == 0) return groups;
  const auto t0 = std::chrono::steady_clock::now();
  // Per test, where its aggregate's value is: a count, or a 128- or
  // 64-bit integer that is NULL where the count is 0.
  struct Test {
    ScaledGroupTest test;
    const int64_t* count = nullptr;
    const __int128* wide = nullptr;
    const int64_t* narrow = nullptr;
    bool counts = false;
  };
  std::vector<Test> tests;
  for (const GroupTest& g : group_tests()) {
    if (g.aggregate >= result.states.size()) continue;
    const PartialStates& s = result.states[g.aggregate];
    const int source = result.count_source.empty() ? static_cast<int>(g.aggregate) : result.count_source[g.aggregate];
    const std::vector<int64_t>& count = result.states[static_cast<size_t>(source)].count;
    if (count.size() != groups) continue;
    Test t{g.test, count.data()};
    t.counts = g.on_count;
    if (!g.on_count) {
      if (spec_.aggregates[g.aggregate].op == PartialOp::sum_int) {
        if (s.sum_int.size() == groups) t.wide = s.sum_int.data();
        else if (s.sum_int64.size() == groups) t.narrow = s.sum_int64.data();
        else continue;
      } else {
        if (s.extreme_int.size() != groups) continue;
        t.narrow = s.extreme_int.data();
      }
    }
    tests.push_back(t);
  }
  if (tests.empty()) return groups;
  // Each range of groups lists the groups it keeps; the lists join in order.
  std::mutex lists_mutex;
  std::map<size_t, std::vector<uint32_t>> lists;
  for_group_ranges(groups, [&](size_t begin, size_t end) {
    std::vector<uint32_t> mine;
    for (size_t g = begin; g < end; ++g) {
      bool keep = true;
      for (const Test& t : tests) {
        if (t.counts) {
          keep = keep && t.test.passes(t.count[g]);
        } else {
          // A sum, min or max over no value is NULL: the comparison is not true.
          keep = keep && t.count[g] != 0 && t.test.passes(t.wide ? t.wide[g] : t.narrow[g]);
        }
      }
      if (keep) mine.push_back(static_cast<uint32_t>(g));
    }
    std::lock_guard lock(lists_mutex);
    lists[begin] = std::move(mine);
  });
  std::vector<uint32_t> kept;
  for (auto& [begin, list] : lists) kept.insert(kept.end(), list.begin(), list.end());
  if (kept.size() == groups) return groups;
  keep_result_groups(result, kept, groups);
  filtered_out_ += groups - kept.size();
  filter_us_ = since_us(t0);
  return kept.size();
}

// A text key column from its dictionary codes: the column stays coded
// (value.hpp), so no group's string is built here; the client's rows and a
// CREATE TABLE AS read the dictionary's entries where they are.
void EngineAggregator::decode_dictionary_keys(const AggregationResult& result, size_t groups, Vector& v) const {
  // A column of NULLs alone may have no dictionary entry: no code to hold
  // (a coded NULL row holds code 0, which must exist).
  if (!dictionary_ || dictionary_->size() == 0) {
    v.resize(groups);
    mark_null_keys(result.key_valid, groups, v);
    return;
  }
  v.dictionary = dictionary_;
  v.count = groups;
  cpu::resize_prefaulted(v.codes, groups);
  const int64_t* keys = result.keys.data();
  const uint8_t* valid = result.key_valid.data();
  int32_t* codes = v.codes.data();
  for_group_ranges(groups, [&](size_t begin, size_t end) {
    for (size_t g = begin; g < end; ++g) codes[g] = valid[g] ? static_cast<int32_t>(keys[g]) : 0;
  });
  mark_null_keys(result.key_valid, groups, v);
}

// For a count, or a sum/avg of int2/int4 with 128-bit sums in `s`: whether
// the sums all fit in int64; they then go to s.sum_int64 (the compact
// form's; sum_int is emptied). Else (another aggregate, or a sum out of
// the int64 range, which finalize_column reports as 22003) false, `s` unchanged.
// `rows` bounds the rows aggregated (the table's).
bool EngineAggregator::narrow_int_sums(const AggregateCall& call, PartialStates& s, size_t groups, uint64_t rows) {
  const AggKind kind = call.signature.kind;
  if (kind == AggKind::count_star || kind == AggKind::count) return s.count.size() == groups;
  if (kind != AggKind::sum && kind != AggKind::avg) return false;
  const TypeId in = call.signature.arg_types.empty() ? TypeId::unknown : call.signature.arg_types[0].id;
  if ((in != TypeId::int2 && in != TypeId::int4) || s.sum_int.size() != groups || s.count.size() != groups) return false;
  // |v| <= 2^31, so a sum over fewer than 2^32 rows fits in int64 without
  // looking (PostgreSQL's int4 sum accumulates in int8 on the same ground).
  // Otherwise one pass with 64-bit operations only: a value fits when its
  // high half is its low half's sign. The comparisons of whole 128-bit
  // values this replaces were a pass of their own, most of the time a
  // GPU result of many groups spends in "result columns".
  const bool bounded = rows < (uint64_t{1} << 32);
  if (!bounded) {
    uint64_t misfit = 0;
    const __int128* sums = s.sum_int.data();
    for (size_t g = 0; g < groups; ++g) {
      const auto low = static_cast<int64_t>(sums[g]);
      const auto high = static_cast<int64_t>(sums[g] >> 64);
      misfit |= static_cast<uint64_t>(high ^ (low >> 63));
    }
    if (misfit != 0) return false;
  }
  cpu::resize_prefaulted(s.sum_int64, groups);
  const __int128* wide = s.sum_int.data();
  int64_t* narrow = s.sum_int64.data();
  for_group_ranges(groups, [&](size_t begin, size_t end) {
    for (size_t g = begin; g < end; ++g) narrow[g] = static_cast<int64_t>(wide[g]);
  });
  s.sum_int.clear();
  return true;
}

}  // namespace tally::executor::engine_aggregation
