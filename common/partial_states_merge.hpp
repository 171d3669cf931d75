#pragma once
// Merging aggregation partial states (common/aggregate_engine.hpp): one
// group's states into another's (the CPU engine's per-thread partials), and
// whole results of runs over disjoint parts of one input (one run per GPU)
// into the result one run over all of it would give. Counts and sums add,
// min/max keep the extreme, float moments combine as PostgreSQL's
// float8_combine / float8_regr_combine do.
#include <cmath>
#include <cstddef>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "common/float_moments.hpp"
#include "common/parallel_tasks.hpp"

namespace tally {

inline bool float_less(double a, double b) {  // PostgreSQL order: NaN greatest
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a < b;
}

// Calls f(&PartialStates::member) for every array the operation uses.
template <class F>
void visit_fields(PartialOp op, F&& f) {
  switch (op) {
    case PartialOp::count_rows:
    case PartialOp::count_valid: f(&PartialStates::count); break;
    case PartialOp::sum_int: f(&PartialStates::count); f(&PartialStates::sum_int); break;
    case PartialOp::sum_float: f(&PartialStates::count); f(&PartialStates::sum_float); break;
    case PartialOp::min_int:
    case PartialOp::max_int: f(&PartialStates::count); f(&PartialStates::extreme_int); break;
    case PartialOp::min_float:
    case PartialOp::max_float: f(&PartialStates::count); f(&PartialStates::extreme_float); break;
    case PartialOp::moments_int:
      f(&PartialStates::count); f(&PartialStates::sum_int); f(&PartialStates::sum2_int);
      break;
    case PartialOp::moments_float: f(&PartialStates::n); f(&PartialStates::sx); f(&PartialStates::sxx); break;
    case PartialOp::moments2_float:
      f(&PartialStates::n); f(&PartialStates::sx); f(&PartialStates::sxx);
      f(&PartialStates::sy); f(&PartialStates::syy); f(&PartialStates::sxy);
      break;
    // Kept outside the state set (executor/cpu/ordered_values_run.hpp).
    case PartialOp::ordered_values:
    case PartialOp::count_distinct: break;
  }
}

// Merges group `from` of `o` into group `to` of `s`: the states of one
// aggregate whose operation is `op` (never ordered_values or count_distinct,
// whose states are not per-group sums).
inline void combine_group(PartialOp op, PartialStates& s, size_t to, const PartialStates& o, size_t from) {
  switch (op) {
    case PartialOp::count_rows:
    case PartialOp::count_valid: s.count[to] += o.count[from]; break;
    case PartialOp::sum_int: s.count[to] += o.count[from]; s.sum_int[to] += o.sum_int[from]; break;
    case PartialOp::sum_float: s.count[to] += o.count[from]; s.sum_float[to] += o.sum_float[from]; break;
    case PartialOp::min_int:
    case PartialOp::max_int:
      if (o.count[from] == 0) break;
      if (s.count[to] == 0 || (op == PartialOp::min_int ? o.extreme_int[from] < s.extreme_int[to]
                                                        : o.extreme_int[from] > s.extreme_int[to])) {
        s.extreme_int[to] = o.extreme_int[from];
      }
      s.count[to] += o.count[from];
      break;
    case PartialOp::min_float:
    case PartialOp::max_float:
      if (o.count[from] == 0) break;
      if (s.count[to] == 0 || (op == PartialOp::min_float ? float_less(o.extreme_float[from], s.extreme_float[to])
                                                          : float_less(s.extreme_float[to], o.extreme_float[from]))) {
        s.extreme_float[to] = o.extreme_float[from];
      }
      s.count[to] += o.count[from];
      break;
    case PartialOp::moments_int:
      s.count[to] += o.count[from];
      s.sum_int[to] += o.sum_int[from];
      s.sum2_int[to] += o.sum2_int[from];
      break;
    case PartialOp::moments_float: {
      FloatMoments m{s.n[to], s.sx[to], s.sxx[to]};
      m.combine(FloatMoments{o.n[from], o.sx[from], o.sxx[from]});
      s.n[to] = m.n; s.sx[to] = m.sx; s.sxx[to] = m.sxx;
      break;
    }
    case PartialOp::moments2_float: {
      FloatMoments2 m{s.n[to], s.sx[to], s.sxx[to], s.sy[to], s.syy[to], s.sxy[to]};
      m.combine(FloatMoments2{o.n[from], o.sx[from], o.sxx[from], o.sy[from], o.syy[from], o.sxy[from]});
      s.n[to] = m.n; s.sx[to] = m.sx; s.sxx[to] = m.sxx;
      s.sy[to] = m.sy; s.syy[to] = m.syy; s.sxy[to] = m.sxy;
      break;
    }
    case PartialOp::ordered_values:
    case PartialOp::count_distinct: break;
  }
}

// Whether results of runs over disjoint parts of one input merge into the
// result over all of it (merge_results): every aggregate keeps per-group
// states (not ordered_values' sorted values or count_distinct's count), and
// each group is one int64 key (not a key tuple's ids, which each run numbers
// its own way).
bool mergeable(const AggregationSpec& spec);

// The result over all parts' input: groups with the same key (and the NULL
// key group) merged. Parts in the full form (compact_result off). The order
// is fixed whatever the threads: the largest part's groups (the first
// largest) as that part has them, then the groups it lacks in the order
// they first appear in the others, part by part; a group's states are
// combined in part order, so float sums round the same way every time.
// The groups are split by a hash of the key into `partitions` (a power of
// two; 0 = chosen from the number of groups: one for a small merge), each
// merged by one task of `parallel` on up to spec.threads threads (no
// `parallel`: all on the calling thread).
AggregationResult merge_results(const AggregationSpec& spec, std::vector<AggregationResult> parts,
                                const ParallelTasks& parallel = {}, size_t partitions = 0);

}  // namespace tally
