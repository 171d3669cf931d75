// Ordered-set aggregates (percentile_cont, percentile_disc, mode) and
// count(DISTINCT) from an engine's sorted values, as PostgreSQL's
// orderedsetaggs.c computes them (finalize.hpp).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>

#include "common/error.hpp"
#include "executor/finalize.hpp"

namespace tally::executor {

void check_percentile(double fraction) {
  if (fraction < 0 || fraction > 1 || std::isnan(fraction)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", fraction);
    throw Error(SqlState::numeric_value_out_of_range,
                std::string("percentile value ") + buf + " is not between 0 and 1");
  }
}

size_t percentile_disc_position(double fraction, size_t n) {
  const auto rownum = static_cast<int64_t>(std::ceil(fraction * static_cast<double>(n)));
  return rownum <= 1 ? 0
                     : static_cast<size_t>(std::min<int64_t>(rownum, static_cast<int64_t>(n)) - 1);
}

namespace {

bool float_type(TypeId id) { return id == TypeId::float4 || id == TypeId::float8; }

// One group's values in the aggregate's order (descending reverses the
// engine's ascending order). In the picked form (PartialStates::ordered_pos)
// only `kept` of the n values are there, at ascending positions `positions`.
template <class T>
struct GroupValues {
  const T* first;
  size_t n;
  bool descending;
  const uint64_t* positions = nullptr;
  size_t kept = 0;
  T operator[](size_t i) const {
    const size_t at = descending ? n - 1 - i : i;
    if (positions == nullptr) return first[at];
    for (size_t k = 0; k < kept; ++k) {
      if (positions[k] == at) return first[k];
    }
    throw Error(SqlState::internal_error, "ordered values: a percentile's position was not picked");
  }
};

// PostgreSQL's equality of sorted values: the engines give every NaN as one
// NaN and -0 as 0, so only NaN needs a word.
inline bool same_value(int64_t a, int64_t b) { return a == b; }
inline bool same_value(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// mode_final: the most frequent value, the first in the aggregate's order on a tie.
template <class T>
T mode_of(const GroupValues<T>& v) {
  T best = v[0];
  size_t best_run = 0, run = 0;
  for (size_t i = 0; i < v.n; ++i) {
    run = i > 0 && same_value(v[i], v[i - 1]) ? run + 1 : 1;
    if (run > best_run) {
      best_run = run;
      best = v[i];
    }
  }
  return best;
}

template <class T>
void finalize_groups(const OrderedFinal& call, const PartialStates& s, const std::vector<T>& values,
                     size_t groups, double fraction, Vector& out) {
  const ColumnFinal& c = call.column;
  auto store = [&](size_t g, T v) {
    if constexpr (std::is_same_v<T, double>) {
      out.floats[g] = v;
    } else if (c.input == TypeId::numeric) {
      out.numerics[g] = Numeric{v, c.input_scale};
    } else {
      out.ints[g] = v;
    }
  };
  const bool picked = !s.ordered_pos.empty();
  if (picked && c.kind == AggKind::mode)
    throw Error(SqlState::internal_error, "ordered values: mode() over picked values");
  // NULL flags in an array of their own, written by every thread (Vector::set_null allocates on
  // first use).
  std::vector<uint8_t> nulls(groups, 0);
  std::atomic<bool> any_null{false};
  for_group_ranges(groups, [&](size_t first, size_t last) {
    bool null_here = false;
    for (size_t g = first; g < last; ++g) {
      const uint64_t begin = g + 1 < s.offsets.size() ? s.offsets[g] : 0;
      const uint64_t end = g + 1 < s.offsets.size() ? s.offsets[g + 1] : 0;
      if (begin == end) {
        nulls[g] = 1;
        null_here = true;
        continue;
      }
      GroupValues<T> v{values.data() + begin, static_cast<size_t>(end - begin), call.descending};
      if (picked) {
        v.n = static_cast<size_t>(s.count.at(g));
        v.positions = s.ordered_pos.data() + begin;
        v.kept = static_cast<size_t>(end - begin);
      }
      switch (c.kind) {
        case AggKind::mode:
          store(g, mode_of(v));
          break;
        case AggKind::ordered_nth: {
          const auto at = static_cast<size_t>(fraction);
          if (at < v.n) {
            store(g, v[at]);
          } else {
            nulls[g] = 1;
            null_here = true;
          }
          break;
        }
        case AggKind::percentile_disc:
          store(g, v[percentile_disc_position(fraction, v.n)]);
          break;
        default:
          out.floats[g] = percentile_cont_of(fraction, v.n,
                                             [&](size_t i) { return static_cast<double>(v[i]); });
          break;
      }
    }
    if (null_here) any_null = true;
  });
  if (any_null) out.nulls = std::move(nulls);
}

// The one-pick form (PartialStates::one_pick): each group's value is there,
// NULL where the group has fewer values than the position read needs.
template <class T>
void finalize_one_pick(const OrderedFinal& call, const PartialStates& s, const std::vector<T>& values,
                       size_t groups, double fraction, Vector& out) {
  const ColumnFinal& c = call.column;
  const int64_t needed = c.kind == AggKind::ordered_nth ? static_cast<int64_t>(fraction) + 1 : 1;
  std::vector<uint8_t> nulls(groups, 0);
  std::atomic<bool> any_null{false};
  for_group_ranges(groups, [&](size_t first, size_t last) {
    bool null_here = false;
    for (size_t g = first; g < last; ++g) {
      if (s.count[g] < needed) {
        nulls[g] = 1;
        null_here = true;
      } else if constexpr (std::is_same_v<T, double>) {
        out.floats[g] = values[g];
      } else if (c.input == TypeId::numeric) {
        out.numerics[g] = Numeric{values[g], c.input_scale};
      } else {
        out.ints[g] = values[g];
      }
    }
    if (null_here) any_null = true;
  });
  if (any_null) out.nulls = std::move(nulls);
}

}  // namespace

void finalize_ordered_column(const OrderedFinal& call, const PartialStates& s, size_t groups,
                             Vector& out) {
  const ColumnFinal& c = call.column;
  out.resize(groups);
  if (c.kind == AggKind::count) {  // count(DISTINCT x): never NULL
    std::copy_n(s.count.begin(), std::min(groups, s.count.size()), out.ints.begin());
    return;
  }
  double fraction = 0;
  if (c.kind == AggKind::ordered_nth) {
    if (is_null(call.fraction)) {
      for (size_t g = 0; g < groups; ++g) out.set_null(g);
      return;
    }
    fraction = static_cast<double>(std::get<int64_t>(call.fraction));
  } else if (c.kind != AggKind::mode) {
    if (is_null(call.fraction)) {
      for (size_t g = 0; g < groups; ++g) out.set_null(g);
      return;
    }
    fraction = std::get<double>(call.fraction);
    if (groups > 0) check_percentile(fraction);
  }
  if (s.one_pick) {
    if (c.kind != AggKind::ordered_nth && c.kind != AggKind::percentile_disc)
      throw Error(SqlState::internal_error, "ordered values: one picked value for an aggregate that reads more");
    if (float_type(c.input)) finalize_one_pick<double>(call, s, s.ordered_float, groups, fraction, out);
    else finalize_one_pick<int64_t>(call, s, s.ordered_int, groups, fraction, out);
    return;
  }
  if (c.kind == AggKind::percentile_cont || float_type(c.input)) {
    finalize_groups<double>(call, s, s.ordered_float, groups, fraction, out);
  } else {
    finalize_groups<int64_t>(call, s, s.ordered_int, groups, fraction, out);
  }
}

}  // namespace tally::executor
