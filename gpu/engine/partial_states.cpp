#include "gpu/engine/partial_states.hpp"

#include <cmath>
#include <limits>
#include <utility>

namespace tally::gpu {

using tally::PartialOp;

double centred_sum(double n, double sum_a, double sum_b, double sum_ab, bool square) {
  if (n <= 0) return 0;
  if (!std::isfinite(sum_a) || !std::isfinite(sum_b) || !std::isfinite(sum_ab))
    return std::numeric_limits<double>::quiet_NaN();
  const double c = sum_ab - sum_a * sum_b / n;
  if (!square) return c;
  // The sums' rounding error is at most about n ulps of sum_ab (sequential or
  // atomic adds in any order): a centred square below that is a constant
  // group's rounding, which Youngs-Cramer's update keeps exactly 0.
  const double noise = sum_ab * n * std::numeric_limits<double>::epsilon();
  return c <= noise ? 0.0 : c;
}

void to_partial_states(PartialOp op, AggregateValues& v, tally::PartialStates& st) {
  switch (op) {
    case PartialOp::count_rows:
    case PartialOp::count_valid: st.count = std::move(v.nonnull); break;
    case PartialOp::sum_int:
      st.count = std::move(v.nonnull);
      if (!v.value64.empty()) st.sum_int64 = std::move(v.value64);  // the compact form's
      else st.sum_int = std::move(v.value);
      break;
    case PartialOp::min_int:
    case PartialOp::max_int:
      st.count = std::move(v.nonnull);
      st.extreme_int = std::move(v.extreme);
      break;
    case PartialOp::sum_float:
      st.count = std::move(v.nonnull);
      st.sum_float = std::move(v.real);
      break;
    case PartialOp::min_float:
    case PartialOp::max_float:
      st.count = std::move(v.nonnull);
      st.extreme_float = std::move(v.real);
      break;
    case PartialOp::moments_int:
      st.count = std::move(v.nonnull);
      st.sum_int = std::move(v.value);
      st.sum2_int = std::move(v.value2);
      break;
    case PartialOp::moments_float: {
      const size_t n = v.nonnull.size();
      st.n.resize(n);
      st.sxx.resize(n);
      for (size_t g = 0; g < n; ++g) {
        const double c = static_cast<double>(v.nonnull[g]);
        st.n[g] = c;
        st.sxx[g] = centred_sum(c, v.real[g], v.real[g], v.squares[g], true);
      }
      st.sx = std::move(v.real);
      break;
    }
    case PartialOp::moments2_float: {
      const size_t n = v.nonnull.size();
      st.n.resize(n);
      st.sxx.resize(n);
      st.syy.resize(n);
      st.sxy.resize(n);
      for (size_t g = 0; g < n; ++g) {
        const double c = static_cast<double>(v.nonnull[g]);
        st.n[g] = c;
        st.sxx[g] = centred_sum(c, v.sum_x[g], v.sum_x[g], v.sum_xx[g], true);
        st.syy[g] = centred_sum(c, v.sum_y[g], v.sum_y[g], v.sum_yy[g], true);
        st.sxy[g] = centred_sum(c, v.sum_x[g], v.sum_y[g], v.sum_xy[g], false);
      }
      st.sx = std::move(v.sum_x);
      st.sy = std::move(v.sum_y);
      break;
    }
  }
}

}  // namespace tally::gpu
