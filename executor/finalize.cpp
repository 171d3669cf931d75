#include "executor/finalize.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>

#include "common/error.hpp"
#include "executor/cancel_point.hpp"
#include "executor/cpu/parallel.hpp"

namespace tally::executor {

Value finalize_avg_numeric(const Numeric& sum, int64_t count) {
  if (count == 0) return Null{};
  return numeric_div(sum, Numeric::from_int(count));
}

Value finalize_sum_int(__int128 sum, int64_t count, bool result_is_numeric) {
  if (count == 0) return Null{};
  if (result_is_numeric) return Numeric{sum, 0};
  if (sum > INT64_MAX || sum < INT64_MIN) throw Error(SqlState::numeric_value_out_of_range, "bigint out of range");
  return static_cast<int64_t>(sum);
}

Value finalize_numeric_variance(int64_t count, const Numeric& sum_x, const Numeric& sum_x2, bool sample, bool stddev) {
  if (count == 0 || (sample && count == 1)) return Null{};
  const Numeric n = Numeric::from_int(count);
  // numerator = N * sumX2 - sumX * sumX, at scale 2 * dscale(sumX) (exact).
  const Numeric numerator = n * sum_x2 - sum_x * sum_x;
  if (numerator.sign() <= 0) return Numeric{0, 0};
  const Numeric denominator = sample ? Numeric::from_int(count) * Numeric::from_int(count - 1)
                                     : Numeric::from_int(count) * Numeric::from_int(count);
  const int32_t rscale = select_div_scale(numerator, denominator);
  Numeric variance = numeric_div_scale(numerator, denominator, rscale);
  if (stddev) variance = numeric_sqrt(variance, rscale);
  return variance;
}

Value finalize_float_variance(const FloatMoments& m, bool sample, bool stddev) {
  if (m.n == 0.0 || (sample && m.n <= 1.0)) return Null{};
  const double v = m.sxx / (sample ? m.n - 1.0 : m.n);
  return stddev ? std::sqrt(v) : v;
}

Value finalize_float_avg(const FloatMoments& m) {
  if (m.n == 0.0) return Null{};
  return m.sx / m.n;
}

Value finalize_regression(const FloatMoments2& m, RegressionFinal which) {
  switch (which) {
    case RegressionFinal::covar_pop:
      if (m.n < 1.0) return Null{};
      return m.sxy / m.n;
    case RegressionFinal::covar_samp:
      if (m.n < 2.0) return Null{};
      return m.sxy / (m.n - 1.0);
    case RegressionFinal::corr:
      if (m.n < 1.0) return Null{};
      if (m.sxx == 0 || m.syy == 0) return Null{};
      return m.sxy / std::sqrt(m.sxx * m.syy);
    case RegressionFinal::r2:
      if (m.n < 1.0) return Null{};
      if (m.sxx == 0) return Null{};
      if (m.syy == 0) return 1.0;
      return (m.sxy * m.sxy) / (m.sxx * m.syy);
    case RegressionFinal::slope:
      if (m.n < 1.0) return Null{};
      if (m.sxx == 0) return Null{};
      return m.sxy / m.sxx;
    case RegressionFinal::intercept:
      if (m.n < 1.0) return Null{};
      if (m.sxx == 0) return Null{};
      return (m.sy - m.sx * m.sxy / m.sxx) / m.n;
    case RegressionFinal::sxx:
      if (m.n < 1.0) return Null{};
      return m.sxx;
    case RegressionFinal::syy:
      if (m.n < 1.0) return Null{};
      return m.syy;
    case RegressionFinal::sxy:
      if (m.n < 1.0) return Null{};
      return m.sxy;
    case RegressionFinal::avgx:
      if (m.n < 1.0) return Null{};
      return m.sx / m.n;
    case RegressionFinal::avgy:
      if (m.n < 1.0) return Null{};
      return m.sy / m.n;
  }
  return Null{};
}

namespace {

bool float_input(TypeId id) { return id == TypeId::float4 || id == TypeId::float8; }

// Marks row g NULL (allocating the NULL map on the first one).
void set_null(Vector& out, size_t g) {
  if (out.nulls.empty()) out.nulls.assign(out.count, 0);
  out.nulls[g] = 1;
}

RegressionFinal regression_of(AggKind kind) {
  switch (kind) {
    case AggKind::corr: return RegressionFinal::corr;
    case AggKind::covar_pop: return RegressionFinal::covar_pop;
    case AggKind::covar_samp: return RegressionFinal::covar_samp;
    case AggKind::regr_r2: return RegressionFinal::r2;
    case AggKind::regr_slope: return RegressionFinal::slope;
    case AggKind::regr_intercept: return RegressionFinal::intercept;
    case AggKind::regr_sxx: return RegressionFinal::sxx;
    case AggKind::regr_syy: return RegressionFinal::syy;
    case AggKind::regr_sxy: return RegressionFinal::sxy;
    case AggKind::regr_avgx: return RegressionFinal::avgx;
    default: return RegressionFinal::avgy;
  }
}

}  // namespace

namespace {

// numeric_div's answer for sum / count of integers (both scale 0) in 64-bit
// and one 128-bit division, for |sum| < 2^63 (the avg of any int2/int4/int8
// group sum the engines produce in practice): select_div_scale's weights and
// first base-10000 digits come from 64-bit values, and the quotient is
// rounded half away from zero as numeric_div_scale rounds it. False (the
// caller uses numeric_div) when the inputs or the scaled dividend are out of
// that range.
constexpr int32_t kMinSigDigits = 16;  // NUMERIC_MIN_SIG_DIGITS
constexpr int32_t kDecDigits = 4;      // DEC_DIGITS

constexpr uint64_t kPow10_64[20] = {1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
                                    100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL,
                                    1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
                                    1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
                                    1000000000000000000ULL, 10000000000000000000ULL};

struct Pow10Table {
  __int128 v[39];
  constexpr Pow10Table() : v() {
    v[0] = 1;
    for (int i = 1; i < 39; ++i) v[i] = v[i - 1] * 10;
  }
};
constexpr Pow10Table kPow10_128;

// Base-10000 weight and leading digit of a non-negative integer (0: 0, 0);
// constant divisors, so no hardware division (this runs twice per avg group).
inline void weight_and_first(uint64_t m, int& weight, int& first) {
  if (m < 10000ULL) { weight = 0; first = static_cast<int>(m); }
  else if (m < 100000000ULL) { weight = 1; first = static_cast<int>(m / 10000ULL); }
  else if (m < 1000000000000ULL) { weight = 2; first = static_cast<int>(m / 100000000ULL); }
  else if (m < 10000000000000000ULL) { weight = 3; first = static_cast<int>(m / 1000000000000ULL); }
  else { weight = 4; first = static_cast<int>(m / 10000000000000000ULL); }
}

// q = round(scaled / count) half away from zero, as numeric_div_scale rounds.
template <class Int>
inline Int divide_rounded(Int scaled, Int count) {
  Int q = scaled / count;
  const Int r = scaled - q * count;
  // |r| < count, so 2|r| fits in the unsigned type.
  using Unsigned = std::conditional_t<sizeof(Int) == 16, unsigned __int128, uint64_t>;
  const Unsigned twice = (r < 0 ? Unsigned{0} - static_cast<Unsigned>(r) : static_cast<Unsigned>(r)) * 2;
  if (r != 0 && twice >= static_cast<Unsigned>(count)) q += scaled < 0 ? -1 : 1;
  return q;
}

bool avg_of_integers(__int128 sum, int64_t count, Numeric& out) {
  if (count <= 0 || sum > INT64_MAX || sum < -static_cast<__int128>(INT64_MAX)) return false;
  const uint64_t magnitude = static_cast<uint64_t>(sum < 0 ? -sum : sum);
  int weight1, first1, weight2, first2;
  weight_and_first(magnitude, weight1, first1);
  weight_and_first(static_cast<uint64_t>(count), weight2, first2);
  int qweight = weight1 - weight2;
  if (first1 <= first2) --qweight;
  const int32_t rscale = std::max(kMinSigDigits - qweight * kDecDigits, 0);  // <= 16 + 4*5: far below the 1000 cap
  if (rscale > 38) return false;
  // Most groups' scaled sum fits in 64 bits (an avg below ~900 at scale 16):
  // a 64-bit division instead of the 128-bit library call.
  int64_t scaled64;
  // Groups of one or two rows (most groups when there are nearly as many
  // groups as rows) divide by a constant: no hardware division.
  if (rscale <= 18 && !__builtin_mul_overflow(static_cast<int64_t>(sum), static_cast<int64_t>(kPow10_64[rscale]), &scaled64)) {
    const int64_t q = count == 1   ? scaled64
                      : count == 2 ? divide_rounded<int64_t>(scaled64, 2)
                                   : divide_rounded<int64_t>(scaled64, count);
    out = Numeric{q, rscale};
    return true;
  }
  __int128 scaled;
  if (__builtin_mul_overflow(sum, kPow10_128.v[rscale], &scaled)) return false;
  out = Numeric{count == 1 ? scaled : divide_rounded<__int128>(scaled, count), rscale};
  return true;
}

}  // namespace

namespace {

// Large columns are finalized by several cores, each thread a contiguous
// range of at least this many groups (the avg division and the stores into a
// fresh column are the cost, hundreds of ms for millions of groups on one
// core). Smaller columns stay on one thread: starting many threads per
// column costs a result of tens of thousands of groups several times its
// finalization.
constexpr size_t kFinalizeGroupsPerThread = size_t{1} << 17;

int finalize_threads(size_t groups) {
  const size_t by_work = groups / kFinalizeGroupsPerThread;
  return static_cast<int>(std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), by_work));
}

}  // namespace

void for_group_ranges(size_t groups, const std::function<void(size_t begin, size_t end)>& body) {
  const int threads = finalize_threads(groups);
  if (threads <= 1) {
    body(0, groups);
    return;
  }
  // In blocks, each after a look at the statement's cancel: 1e8 groups take seconds.
  constexpr size_t block = size_t{1} << 16;
  cpu::parallel_for(threads, groups, [&](int, size_t begin, size_t end) {
    for (size_t b = begin; b < end; b += block) {
      check_cancel_point();
      body(b, std::min(end, b + block));
    }
  });
}

namespace {

// Non-owning views of one aggregate's partial-state arrays: an engine's
// PartialStates as they are, or a compact result (aggregate_engine.hpp:
// AggregationSpec::compact_result) whose count may be another aggregate's
// and whose integer sums may be int64.
struct StateRefs {
  const int64_t* count = nullptr;
  const __int128* sum_int = nullptr;  // null when the sums are int64
  const int64_t* sum_int64 = nullptr;
  const int64_t* extreme_int = nullptr;
  const double* sum_float = nullptr;
  const double* extreme_float = nullptr;
  __int128 sum(size_t g) const { return sum_int != nullptr ? sum_int[g] : __int128{sum_int64[g]}; }
};

StateRefs refs_of(const PartialStates& s) {
  return StateRefs{s.count.data(), s.sum_int.data(), nullptr, s.extreme_int.data(), s.sum_float.data(),
                   s.extreme_float.data()};
}

// Whether any group [0, groups) is empty (its aggregate is NULL), so the
// NULL map is allocated once before threads write into it. Over the
// finalizing threads: one thread's look through 1e8 counts took 130 ms.
bool any_empty(const int64_t* count, size_t groups) {
  std::atomic<bool> empty{false};
  for_group_ranges(groups, [&](size_t begin, size_t end) {
    if (!empty.load(std::memory_order_relaxed) && std::find(count + begin, count + end, 0) != count + end)
      empty.store(true, std::memory_order_relaxed);
  });
  return empty.load();
}

// Groups [begin, end) of the aggregates whose NULL is "no input row"
// (count = 0): sum, avg of integers and numerics, min/max, bool_and/bool_or.
// Writes only rows [begin, end) of out (and of its NULL map when it exists).
void finalize_counted_range(const ColumnFinal& call, const StateRefs& s, size_t begin, size_t end, Vector& out) {
  const TypeId in = call.input;
  const int32_t scale = call.input_scale;
  switch (call.kind) {
    case AggKind::sum:
      for (size_t g = begin; g < end; ++g) {
        if (s.count[g] == 0) { set_null(out, g); continue; }
        if (float_input(in)) {
          // sum(float4) is float4 arithmetic in PostgreSQL: round to float.
          out.floats[g] = in == TypeId::float4 ? static_cast<double>(static_cast<float>(s.sum_float[g])) : s.sum_float[g];
        } else if (in == TypeId::numeric) {
          out.numerics[g] = Numeric{s.sum(g), scale};
        } else if (in == TypeId::int8) {
          out.numerics[g] = Numeric{s.sum(g), 0};  // sum(int8) -> numeric
        } else {
          const __int128 sum = s.sum(g);
          if (sum > INT64_MAX || sum < INT64_MIN) throw Error(SqlState::numeric_value_out_of_range, "bigint out of range");
          out.ints[g] = static_cast<int64_t>(sum);
        }
      }
      return;
    case AggKind::avg:
      for (size_t g = begin; g < end; ++g) {
        if (s.count[g] == 0) set_null(out, g);
        else if (scale != 0 || !avg_of_integers(s.sum(g), s.count[g], out.numerics[g]))
          out.numerics[g] = numeric_div(Numeric{s.sum(g), scale}, Numeric::from_int(s.count[g]));
      }
      return;
    default:  // min, max, bool_and, bool_or
      for (size_t g = begin; g < end; ++g) {
        if (s.count[g] == 0) { set_null(out, g); continue; }
        if (float_input(in)) out.floats[g] = s.extreme_float[g];
        else if (in == TypeId::numeric) out.numerics[g] = Numeric{s.extreme_int[g], scale};
        else if (in == TypeId::boolean) out.ints[g] = s.extreme_int[g] != 0 ? 1 : 0;
        else out.ints[g] = s.extreme_int[g];
      }
      return;
  }
}

}  // namespace

namespace {

// out.ints = [first, first + groups), copied on several cores when large.
void assign_ints(Vector& out, const int64_t* first, size_t groups) {
  out.ints.clear();
  cpu::resize_prefaulted(out.ints, groups);
  int64_t* to = out.ints.data();
  for_group_ranges(groups, [&](size_t begin, size_t end) { std::memcpy(to + begin, first + begin, (end - begin) * sizeof(int64_t)); });
  if (!out.nulls.empty()) out.nulls.assign(groups, 0);
  out.count = groups;
}

}  // namespace

namespace {

// finalize_column over views: `s` gives the arrays every aggregate reads
// (count, sums, extremes), `full` the moments of variance and regression.
void finalize_refs(const ColumnFinal& call, const StateRefs& refs, const PartialStates& s, size_t groups, Vector& out) {
  const TypeId in = call.input;
  switch (call.kind) {
    case AggKind::count_star:
    case AggKind::count:
      assign_ints(out, refs.count, groups);
      return;
    case AggKind::min:
    case AggKind::max:
      if (!float_input(in) && in != TypeId::numeric && in != TypeId::boolean && refs.extreme_int != nullptr) {
        // Integer-like min/max are the engine's extremes as they are; only
        // groups without input (count 0) become NULL.
        assign_ints(out, refs.extreme_int, groups);
        if (any_empty(refs.count, groups)) {
          for (size_t g = 0; g < groups; ++g) {
            if (refs.count[g] == 0) {
              set_null(out, g);
              out.ints[g] = 0;  // as a resized column holds under a NULL
            }
          }
        }
        return;
      }
      break;
    default: break;
  }
  if (physical_of(out.type.id) == Physical::floating) cpu::resize_prefaulted(out.floats, groups);
  else if (physical_of(out.type.id) == Physical::integer) cpu::resize_prefaulted(out.ints, groups);
  out.resize(groups);
  switch (call.kind) {
    case AggKind::count_star:
    case AggKind::count:
      return;  // assigned above
    case AggKind::avg:
      if (float_input(in) && s.n.empty() && s.sum_float.size() >= groups) {
        // From a count and a sum (sum_float states: values bounded so that
        // the moments could not overflow, engine_aggregator.cpp): Sx / N.
        if (any_empty(refs.count, groups) && out.nulls.empty()) out.nulls.assign(groups, 0);
        for_group_ranges(groups, [&](size_t begin, size_t end) {
          for (size_t g = begin; g < end; ++g) {
            if (refs.count[g] == 0) set_null(out, g);
            else out.floats[g] = refs.sum_float[g] / static_cast<double>(refs.count[g]);
          }
        });
        return;
      }
      if (float_input(in)) {
        if (std::find(s.n.begin(), s.n.begin() + static_cast<long>(groups), 0.0) != s.n.begin() + static_cast<long>(groups) &&
            out.nulls.empty())
          out.nulls.assign(groups, 0);
        for_group_ranges(groups, [&](size_t begin, size_t end) {
          for (size_t g = begin; g < end; ++g) {
            if (s.n[g] == 0.0) set_null(out, g);
            else out.floats[g] = s.sx[g] / s.n[g];
          }
        });
        return;
      }
      [[fallthrough]];
    case AggKind::sum:
    case AggKind::min:
    case AggKind::max:
    case AggKind::bool_and:
    case AggKind::bool_or:
      if (finalize_threads(groups) > 1 && any_empty(refs.count, groups) && out.nulls.empty()) out.nulls.assign(groups, 0);
      for_group_ranges(groups, [&](size_t begin, size_t end) { finalize_counted_range(call, refs, begin, end, out); });
      return;
    case AggKind::var_samp:
    case AggKind::var_pop:
    case AggKind::stddev_samp:
    case AggKind::stddev_pop: {
      const bool sample = call.kind == AggKind::var_samp || call.kind == AggKind::stddev_samp;
      const bool stddev = call.kind == AggKind::stddev_samp || call.kind == AggKind::stddev_pop;
      for (size_t g = 0; g < groups; ++g) {
        const Value v = float_input(in) ? finalize_float_variance(FloatMoments{s.n[g], s.sx[g], s.sxx[g]}, sample, stddev)
                                        : finalize_numeric_variance(s.count[g], Numeric{s.sum_int[g], 0},
                                                                    Numeric{s.sum2_int[g], 0}, sample, stddev);
        out.set(g, v);
      }
      return;
    }
    case AggKind::regr_count:
      for (size_t g = 0; g < groups; ++g) out.ints[g] = static_cast<int64_t>(s.n[g]);
      return;
    default:
      for (size_t g = 0; g < groups; ++g) {
        const FloatMoments2 m{s.n[g], s.sx[g], s.sxx[g], s.sy[g], s.syy[g], s.sxy[g]};
        out.set(g, finalize_regression(m, regression_of(call.kind)));
      }
      return;
  }
}

}  // namespace

void finalize_column(const ColumnFinal& call, const PartialStates& s, size_t groups, Vector& out) {
  StateRefs refs = refs_of(s);
  if (s.extreme_int.size() < groups) refs.extreme_int = nullptr;
  finalize_refs(call, refs, s, groups, out);
}

Numeric avg_of_int64(int64_t sum, int64_t count) {
  Numeric out;
  if (!avg_of_integers(sum, count, out)) out = numeric_div(Numeric::from_int(sum), Numeric::from_int(count));
  return out;
}

void finalize_compact_column(const ColumnFinal& call, PartialStates& s, std::vector<int64_t>& count, bool count_movable,
                             size_t groups, Vector& out, std::optional<bool> count_has_zero, bool defer_avg,
                             std::shared_ptr<const std::vector<int64_t>> shared_count) {
  const TypeId in = call.input;
  const bool sizes_match = count.size() == groups;
  auto has_zero = [&] {
    if (!count_has_zero) count_has_zero = any_empty(count.data(), groups);
    return *count_has_zero;
  };
  auto move_ints = [&](std::vector<int64_t>& from) {
    out.ints = std::move(from);
    out.nulls.clear();
    out.count = groups;
  };
  // Where the column is an array as it is (no group empty, so no NULL), the
  // array becomes the column: 64 MB per column at 8M groups not copied.
  if (sizes_match) {
    switch (call.kind) {
      case AggKind::count_star:
      case AggKind::count:
        if (shared_count && defer_avg) {
          out.ints.clear();
          out.nulls.clear();
          out.count = groups;
          out.shared_ints = std::move(shared_count);
          return;
        }
        if (count_movable) { move_ints(count); return; }
        break;
      case AggKind::min:
      case AggKind::max:
        if (!float_input(in) && in != TypeId::numeric && in != TypeId::boolean && s.extreme_int.size() == groups &&
            !has_zero()) {
          move_ints(s.extreme_int);
          return;
        }
        break;
      case AggKind::avg:
        if (defer_avg && call.input_scale == 0 && (in == TypeId::int2 || in == TypeId::int4) &&
            s.sum_int64.size() == groups) {
          const bool zero = has_zero();  // before the count may be moved
          auto parts = std::make_shared<AvgParts>();
          parts->sum = std::move(s.sum_int64);
          if (shared_count) parts->shared_count = std::move(shared_count);
          else if (count_movable) parts->count = std::move(count);
          else parts->count.assign(count.begin(), count.begin() + static_cast<long>(groups));
          out.numerics.clear();
          out.nulls.clear();
          if (zero) {
            out.nulls.assign(groups, 0);
            for (size_t g = 0; g < groups; ++g) out.nulls[g] = parts->count[g] == 0 ? 1 : 0;
          }
          out.count = groups;
          out.avg_parts = std::move(parts);
          return;
        }
        break;
      case AggKind::sum:
        // sum(int2/int4) is bigint: int64 sums are its values.
        if ((in == TypeId::int2 || in == TypeId::int4) && s.sum_int64.size() == groups && !has_zero()) {
          move_ints(s.sum_int64);
          return;
        }
        // sum(float8) is the float sums as they are (float4's round to float).
        if (in == TypeId::float8 && s.sum_float.size() == groups && !has_zero()) {
          out.floats = std::move(s.sum_float);
          out.nulls.clear();
          out.count = groups;
          return;
        }
        break;
      default: break;
    }
  }
  StateRefs refs = refs_of(s);
  refs.count = count.data();
  if (!s.sum_int64.empty()) {
    refs.sum_int = nullptr;
    refs.sum_int64 = s.sum_int64.data();
  }
  if (s.extreme_int.size() < groups) refs.extreme_int = nullptr;
  finalize_refs(call, refs, s, groups, out);
}

}  // namespace tally::executor
