#pragma once
// Per-group partial states of one aggregation (struct-of-arrays, one
// PartialStates per aggregate, as aggregate_engine.hpp returns them) and the
// per-chunk update loops: one tight loop per (operation, input type, whether
// NULLs/FILTER must be checked, whether rows are read through an index list),
// so the inner loop has no dispatch.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "common/memory_tracker.hpp"
#include "common/partial_states_merge.hpp"
#include "executor/finalize.hpp"

namespace tally::executor::cpu {

// A sum_int over an int32 input accumulates in int64 ("narrow") while the run
// has seen fewer rows than this: |sum| < 2^31 * 2^32 = 2^63 cannot overflow.
// Half the state of an int128 and no carry chain in the update.
constexpr uint64_t kNarrowSumRowLimit = (uint64_t{1} << 32) - 1;

struct StateSet {
  std::vector<PartialStates> states;
  std::vector<uint8_t> narrow;               // per aggregate: sum kept in narrow_sum, not sum_int
  std::vector<std::vector<int64_t>> narrow_sum;
  // Per aggregate: its count is not kept (another aggregate's count is the
  // same: no FILTER, no NULL input), so updates skip it; integer min/max then
  // start from sentinels instead of testing count == 0. Only for
  // count_rows/count_valid/sum_int/min_int/max_int, and only in a scratch
  // state whose groups all get rows before they are read (emit_deferred).
  std::vector<uint8_t> no_count;
  size_t size = 0;
  // The arrays' bytes, held against the statement's memory budget.
  MemoryReservation memory;

  void init(const std::vector<PartialAggregate>& aggs, const std::vector<uint8_t>& narrow_flags = {}) {
    states.assign(aggs.size(), {});
    narrow = narrow_flags;
    narrow.resize(aggs.size(), 0);
    narrow_sum.assign(aggs.size(), {});
    no_count.assign(aggs.size(), 0);
    size = 0;
  }

  void resize(const std::vector<PartialAggregate>& aggs, size_t n) {
    // Reserved before the arrays grow: past the budget nothing is allocated.
    if (n > size) memory.resize(n * bytes_per_group(aggs));
    for (size_t a = 0; a < aggs.size(); ++a) {
      if (narrow[a]) {
        states[a].count.resize(n, 0);
        narrow_sum[a].resize(n, 0);
        continue;
      }
      visit_fields(aggs[a].op, [&](auto member) { (states[a].*member).resize(n, 0); });
    }
    size = n;
  }

  size_t bytes_per_group(const std::vector<PartialAggregate>& aggs) const {
    size_t bytes = 0;
    for (size_t a = 0; a < aggs.size(); ++a) {
      if (narrow[a]) {
        bytes += sizeof(uint64_t) + sizeof(int64_t);
        continue;
      }
      visit_fields(aggs[a].op, [&](auto member) {
        bytes += sizeof((std::declval<PartialStates&>().*member)[0]);
      });
    }
    return bytes;
  }

  // Zeroes groups [0, n) of every array (a scratch state reused per partition).
  void clear(const std::vector<PartialAggregate>& aggs, size_t n) {
    for (size_t a = 0; a < aggs.size(); ++a) {
      if (!no_count.empty() && no_count[a]) {
        if (aggs[a].op == PartialOp::min_int) std::fill_n(states[a].extreme_int.begin(), n, INT64_MAX);
        else if (aggs[a].op == PartialOp::max_int) std::fill_n(states[a].extreme_int.begin(), n, INT64_MIN);
        else if (narrow[a]) std::fill_n(narrow_sum[a].begin(), n, 0);
        else if (aggs[a].op == PartialOp::sum_int) std::fill_n(states[a].sum_int.begin(), n, 0);
        continue;
      }
      if (narrow[a]) {
        std::fill_n(states[a].count.begin(), n, 0);
        std::fill_n(narrow_sum[a].begin(), n, 0);
        continue;
      }
      visit_fields(aggs[a].op, [&](auto member) {
        auto& v = states[a].*member;
        std::fill(v.begin(), v.begin() + static_cast<long>(n), 0);
      });
    }
  }

  // Moves aggregate a's narrow sums into sum_int (before results are read,
  // or when the run reaches kNarrowSumRowLimit rows).
  void widen(size_t a) {
    if (a >= narrow.size() || !narrow[a]) return;
    std::vector<__int128>& wide = states[a].sum_int;
    const std::vector<int64_t>& sums = narrow_sum[a];
    wide.resize(sums.size());
    for (size_t i = 0; i < sums.size(); ++i) wide[i] = sums[i];
    narrow_sum[a] = {};
    narrow[a] = 0;
  }
  void widen_all() {
    for (size_t a = 0; a < narrow.size(); ++a) widen(a);
  }

  // Grows (amortized doubling) so that group id `groups - 1` exists.
  void ensure(const std::vector<PartialAggregate>& aggs, size_t groups) {
    if (groups > size) resize(aggs, std::max(groups, size * 2));
  }

  // Merges group `from` of other into group `to` of this.
  void combine(const std::vector<PartialAggregate>& aggs, size_t to, const StateSet& other, size_t from) {
    for (size_t a = 0; a < aggs.size(); ++a) {
      if (aggs[a].op == PartialOp::sum_int && narrow[a]) {
        states[a].count[to] += other.states[a].count[from];
        narrow_sum[a][to] += other.narrow_sum[a][from];
      } else {
        combine_group(aggs[a].op, states[a], to, other.states[a], from);
      }
    }
  }
};

template <class F>
void with_values(ColumnWidth width, const void* data, F&& f) {
  switch (width) {
    case ColumnWidth::int32: f(static_cast<const int32_t*>(data)); break;
    case ColumnWidth::int64: f(static_cast<const int64_t*>(data)); break;
    case ColumnWidth::float32: f(static_cast<const float*>(data)); break;
    case ColumnWidth::float64: f(static_cast<const double*>(data)); break;
  }
}

// The chunk rows an update reads: [begin, begin + n) or rows[0 .. n).
template <bool Indirect>
struct RowIndex {
  const uint32_t* rows;
  size_t begin;
  size_t operator()(size_t i) const {
    if constexpr (Indirect) return rows[i];
    else return begin + i;
  }
};

// Groups up to which integer counts and sums go through few_group_sums.
inline constexpr size_t kFewGroups = 16;

// count_valid or sum_int of n rows over at most kFewGroups groups. Over a
// few groups (TPC-H Q1's four) consecutive rows mostly update the same
// state, each add waiting on the one before through memory: four
// interleaved partial states per group, added in at the end, keep four
// rows' adds in flight. Integers only: the sums are exact in any order
// (float sums keep the rows' order).
template <PartialOp Op, class T, bool Check, bool Indirect, bool Narrow>
void few_group_sums(PartialStates& s, const T* v, const uint8_t* valid, const uint8_t* filter, const uint32_t* gids,
                    RowIndex<Indirect> row, size_t n, int64_t* narrow_sum) {
  using Sum = std::conditional_t<Narrow, int64_t, __int128>;
  const size_t groups = s.count.size();
  int64_t count[4][kFewGroups] = {};
  Sum sum[4][kFewGroups] = {};
  auto add = [&](size_t lane, size_t i) {
    const size_t r = row(i);
    if constexpr (Check) {
      if ((filter && !filter[r]) || (valid && !valid[r])) return;
    }
    const uint32_t g = gids[i];
    ++count[lane][g];
    if constexpr (Op == PartialOp::sum_int) sum[lane][g] += static_cast<int64_t>(v[r]);
  };
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    add(0, i);
    add(1, i + 1);
    add(2, i + 2);
    add(3, i + 3);
  }
  for (; i < n; ++i) add(0, i);
  for (size_t g = 0; g < groups; ++g) {
    s.count[g] += count[0][g] + count[1][g] + count[2][g] + count[3][g];
    if constexpr (Op != PartialOp::sum_int) continue;
    const Sum total = sum[0][g] + sum[1][g] + sum[2][g] + sum[3][g];
    if constexpr (Narrow) narrow_sum[g] += total;
    else s.sum_int[g] += total;
  }
}

// One aggregate over n rows whose group ids are gids[0 .. n).
template <PartialOp Op, class T, bool Check, bool Indirect, bool Narrow = false>
void apply_op(PartialStates& s, const T* v, const uint8_t* valid, const uint8_t* filter, const uint32_t* gids,
              RowIndex<Indirect> row, size_t n, int64_t* narrow_sum = nullptr) {
  if constexpr (Op == PartialOp::count_valid || (Op == PartialOp::sum_int && std::is_integral_v<T>)) {
    if (n >= 4 * kFewGroups && s.count.size() <= kFewGroups) {
      few_group_sums<Op, T, Check, Indirect, Narrow>(s, v, valid, filter, gids, row, n, narrow_sum);
      return;
    }
  }
  int64_t* count = s.count.data();
  (void)narrow_sum;
  for (size_t i = 0; i < n; ++i) {
    const size_t r = row(i);
    if constexpr (Check) {
      if ((filter && !filter[r]) || (valid && !valid[r])) continue;
    }
    const uint32_t g = gids[i];
    if constexpr (Op == PartialOp::count_valid) {
      ++count[g];
    } else if constexpr (Op == PartialOp::sum_int && Narrow) {
      ++count[g];
      narrow_sum[g] += static_cast<int64_t>(v[r]);
    } else if constexpr (Op == PartialOp::sum_int) {
      ++count[g];
      s.sum_int[g] += static_cast<int64_t>(v[r]);
    } else if constexpr (Op == PartialOp::sum_float) {
      ++count[g];
      s.sum_float[g] += static_cast<double>(v[r]);
    } else if constexpr (Op == PartialOp::min_int) {
      const auto x = static_cast<int64_t>(v[r]);
      if (count[g]++ == 0 || x < s.extreme_int[g]) s.extreme_int[g] = x;
    } else if constexpr (Op == PartialOp::max_int) {
      const auto x = static_cast<int64_t>(v[r]);
      if (count[g]++ == 0 || x > s.extreme_int[g]) s.extreme_int[g] = x;
    } else if constexpr (Op == PartialOp::min_float) {
      const auto x = static_cast<double>(v[r]);
      if (count[g]++ == 0 || float_less(x, s.extreme_float[g])) s.extreme_float[g] = x;
    } else if constexpr (Op == PartialOp::max_float) {
      const auto x = static_cast<double>(v[r]);
      if (count[g]++ == 0 || float_less(s.extreme_float[g], x)) s.extreme_float[g] = x;
    } else if constexpr (Op == PartialOp::moments_int) {
      const __int128 y = static_cast<int64_t>(v[r]);
      ++count[g];
      s.sum_int[g] += y;
      s.sum2_int[g] += y * y;
    } else if constexpr (Op == PartialOp::moments_float) {
      FloatMoments m{s.n[g], s.sx[g], s.sxx[g]};
      m.add(static_cast<double>(v[r]));
      s.n[g] = m.n;
      s.sx[g] = m.sx;
      s.sxx[g] = m.sxx;
    }
  }
}

template <PartialOp Op, class T, bool Indirect>
void apply_checked(PartialStates& s, const T* v, const uint8_t* valid, const uint8_t* filter, const uint32_t* gids,
                   RowIndex<Indirect> row, size_t n) {
  if (valid || filter) apply_op<Op, T, true, Indirect>(s, v, valid, filter, gids, row, n);
  else apply_op<Op, T, false, Indirect>(s, v, valid, filter, gids, row, n);
}

// Every row in group 0 (one key: global aggregates, G = 1): count, sum,
// min and max of rows [begin, begin + n) without NULLs or FILTER are plain
// reductions (independent lanes, vectorizable) instead of a chain of
// read-modify-writes of one state. Returns false for other shapes.
inline bool reduce_single_group(const PartialAggregate& agg, StateSet& set, size_t a, const ColumnView* in,
                                size_t begin, size_t n) {
  PartialStates& s = set.states[a];
  if (agg.op == PartialOp::count_rows || agg.op == PartialOp::count_valid) {
    s.count[0] += static_cast<int64_t>(n);
    return true;
  }
  if (in == nullptr || n == 0) return false;
  auto reduce = [&](auto* v) -> bool {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(v)>>;
    if constexpr (std::is_integral_v<T>) {
      v += begin;
      if (agg.op == PartialOp::sum_int) {
        int64_t sum = 0;  // n <= a chunk, |v| < 2^31 when narrow: no overflow
        if (set.narrow[a]) {
          for (size_t i = 0; i < n; ++i) sum += v[i];
          set.narrow_sum[a][0] += sum;
        } else {
          __int128 wide = 0;
          for (size_t i = 0; i < n; ++i) wide += v[i];
          s.sum_int[0] += wide;
        }
        s.count[0] += static_cast<int64_t>(n);
        return true;
      }
      if (agg.op == PartialOp::min_int || agg.op == PartialOp::max_int) {
        const bool is_min = agg.op == PartialOp::min_int;
        T best = v[0];
        for (size_t i = 1; i < n; ++i) best = is_min ? std::min(best, v[i]) : std::max(best, v[i]);
        const auto x = static_cast<int64_t>(best);
        if (s.count[0] == 0 || (is_min ? x < s.extreme_int[0] : x > s.extreme_int[0])) s.extreme_int[0] = x;
        s.count[0] += static_cast<int64_t>(n);
        return true;
      }
    } else if (agg.op == PartialOp::sum_float) {
      // In row order, as the per-row update adds them, but in a register:
      // the update's chain through the state's memory was most of a
      // million-row check query over a CREATE TABLE AS answer.
      v += begin;
      double sum = s.sum_float[0];
      for (size_t i = 0; i < n; ++i) sum += static_cast<double>(v[i]);
      s.sum_float[0] = sum;
      s.count[0] += static_cast<int64_t>(n);
      return true;
    }
    return false;
  };
  bool done = false;
  with_values(in->width, in->data, [&](auto* v) { done = reduce(v); });
  return done;
}

template <bool Indirect>
void update_states_impl(const std::vector<PartialAggregate>& aggs, StateSet& set, const ChunkInput& chunk,
                        const uint32_t* gids, RowIndex<Indirect> row, size_t n, bool single_group = false) {
  for (size_t a = 0; a < aggs.size(); ++a) {
    PartialStates& s = set.states[a];
    const PartialAggregate& agg = aggs[a];
    const uint8_t* filter = chunk.filters.empty() ? nullptr : chunk.filters[a];
    if constexpr (!Indirect) {
      if (single_group && !filter) {
        const ColumnView* in = agg.input >= 0 ? &chunk.values[static_cast<size_t>(agg.input)] : nullptr;
        if ((in == nullptr || in->validity == nullptr) && agg.op != PartialOp::moments2_float &&
            reduce_single_group(agg, set, a, in, row.begin, n)) {
          continue;
        }
      }
    }
    if (!set.no_count.empty() && set.no_count[a]) {
      // Another aggregate counts these rows, and none is NULL or filtered.
      if (agg.op == PartialOp::count_rows || agg.op == PartialOp::count_valid) continue;
      const ColumnView& in = chunk.values[static_cast<size_t>(agg.input)];
      with_values(in.width, in.data, [&](auto* v) {
        using T = std::remove_cv_t<std::remove_pointer_t<decltype(v)>>;
        if constexpr (std::is_integral_v<T>) {
          if (agg.op == PartialOp::sum_int && set.narrow[a]) {
            int64_t* sums = set.narrow_sum[a].data();
            for (size_t i = 0; i < n; ++i) sums[gids[i]] += static_cast<int64_t>(v[row(i)]);
          } else if (agg.op == PartialOp::sum_int) {
            __int128* sums = s.sum_int.data();
            for (size_t i = 0; i < n; ++i) sums[gids[i]] += static_cast<int64_t>(v[row(i)]);
          } else if (agg.op == PartialOp::min_int) {
            int64_t* ext = s.extreme_int.data();
            for (size_t i = 0; i < n; ++i) ext[gids[i]] = std::min(ext[gids[i]], static_cast<int64_t>(v[row(i)]));
          } else {
            int64_t* ext = s.extreme_int.data();
            for (size_t i = 0; i < n; ++i) ext[gids[i]] = std::max(ext[gids[i]], static_cast<int64_t>(v[row(i)]));
          }
        }
      });
      continue;
    }
    if (agg.op == PartialOp::count_rows) {
      int64_t* count = s.count.data();
      if (filter) {
        for (size_t i = 0; i < n; ++i) count[gids[i]] += filter[row(i)];
      } else {
        for (size_t i = 0; i < n; ++i) ++count[gids[i]];
      }
      continue;
    }
    const ColumnView& in = chunk.values[static_cast<size_t>(agg.input)];
    const uint8_t* valid = in.validity;
    if (set.narrow[a]) {  // the run widens before a non-int32 chunk
      const auto* v = static_cast<const int32_t*>(in.data);
      int64_t* sums = set.narrow_sum[a].data();
      if (valid || filter) apply_op<PartialOp::sum_int, int32_t, true, Indirect, true>(s, v, valid, filter, gids, row, n, sums);
      else apply_op<PartialOp::sum_int, int32_t, false, Indirect, true>(s, v, valid, filter, gids, row, n, sums);
      continue;
    }
    if (agg.op == PartialOp::moments2_float) {
      const ColumnView& in2 = chunk.values[static_cast<size_t>(agg.input2)];
      with_values(in.width, in.data, [&](auto* ys) {
        with_values(in2.width, in2.data, [&](auto* xs) {
          for (size_t i = 0; i < n; ++i) {
            const size_t r = row(i);
            if ((filter && !filter[r]) || (valid && !valid[r]) || (in2.validity && !in2.validity[r])) continue;
            const uint32_t g = gids[i];
            FloatMoments2 m{s.n[g], s.sx[g], s.sxx[g], s.sy[g], s.syy[g], s.sxy[g]};
            m.add(static_cast<double>(ys[r]), static_cast<double>(xs[r]));
            s.n[g] = m.n; s.sx[g] = m.sx; s.sxx[g] = m.sxx; s.sy[g] = m.sy; s.syy[g] = m.syy; s.sxy[g] = m.sxy;
          }
        });
      });
      continue;
    }
    with_values(in.width, in.data, [&](auto* v) {
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(v)>>;
      switch (agg.op) {
        case PartialOp::count_valid: apply_checked<PartialOp::count_valid, T>(s, v, valid, filter, gids, row, n); break;
        case PartialOp::sum_int: apply_checked<PartialOp::sum_int, T>(s, v, valid, filter, gids, row, n); break;
        case PartialOp::sum_float: apply_checked<PartialOp::sum_float, T>(s, v, valid, filter, gids, row, n); break;
        case PartialOp::min_int: apply_checked<PartialOp::min_int, T>(s, v, valid, filter, gids, row, n); break;
        case PartialOp::max_int: apply_checked<PartialOp::max_int, T>(s, v, valid, filter, gids, row, n); break;
        case PartialOp::min_float: apply_checked<PartialOp::min_float, T>(s, v, valid, filter, gids, row, n); break;
        case PartialOp::max_float: apply_checked<PartialOp::max_float, T>(s, v, valid, filter, gids, row, n); break;
        case PartialOp::moments_int: apply_checked<PartialOp::moments_int, T>(s, v, valid, filter, gids, row, n); break;
        case PartialOp::moments_float: apply_checked<PartialOp::moments_float, T>(s, v, valid, filter, gids, row, n); break;
        default: break;
      }
    });
  }
}

// Applies every aggregate to n rows with group ids gids[0 .. n): chunk rows
// [begin, begin + n) when rows is null, else rows[0 .. n).
// single_group: every gid is 0 (lets simple aggregates reduce without gids).
inline void update_states(const std::vector<PartialAggregate>& aggs, StateSet& set, const ChunkInput& chunk,
                          const uint32_t* gids, const uint32_t* rows, size_t begin, size_t n,
                          bool single_group = false) {
  if (rows) update_states_impl<true>(aggs, set, chunk, gids, RowIndex<true>{rows, 0}, n);
  else update_states_impl<false>(aggs, set, chunk, gids, RowIndex<false>{nullptr, begin}, n, single_group);
}

}  // namespace tally::executor::cpu
