// Host-only: the GPU's plain float sums as the seam's Youngs-Cramer partial
// states (gpu/engine/partial_states.hpp), finalized by the shared layer,
// against the CPU's FloatMoments/FloatMoments2 fed row by row (runs without
// a GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "executor/finalize.hpp"
#include "gpu/engine/partial_states.hpp"

namespace tally::gpu {
namespace {

using executor::FloatMoments;
using executor::FloatMoments2;
using executor::RegressionFinal;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::optional<double> value_of(const executor::Value& v) {
  if (executor::is_null(v)) return std::nullopt;
  return std::get<double>(v);
}

void expect_same(std::optional<double> got, std::optional<double> want, const char* what) {
  ASSERT_EQ(got.has_value(), want.has_value()) << what;
  if (!got) return;
  if (std::isnan(*want)) {
    EXPECT_TRUE(std::isnan(*got)) << what << ": " << *got;
    return;
  }
  if (std::isinf(*want)) {
    EXPECT_EQ(*got, *want) << what;
    return;
  }
  EXPECT_NEAR(*got, *want, 1e-12 * std::max(1.0, std::fabs(*want))) << what;
}

// One group's values through plain sums and to_partial_states, against
// FloatMoments fed row by row.
void check_moments(const std::vector<double>& xs) {
  AggregateValues v;
  v.op = AggOp::moments_float;
  v.nonnull = {static_cast<int64_t>(xs.size())};
  double s = 0, ss = 0;
  FloatMoments want;
  for (double x : xs) {
    s += x;
    ss += x * x;
    want.add(x);
  }
  v.real = {s};
  v.squares = {ss};
  tally::PartialStates st;
  to_partial_states(tally::PartialOp::moments_float, v, st);
  const FloatMoments got{st.n[0], st.sx[0], st.sxx[0]};
  for (bool sample : {true, false})
    for (bool stddev : {true, false})
      expect_same(value_of(executor::finalize_float_variance(got, sample, stddev)),
                  value_of(executor::finalize_float_variance(want, sample, stddev)), "variance");
  expect_same(value_of(executor::finalize_float_avg(got)), value_of(executor::finalize_float_avg(want)), "avg");
}

TEST(GpuPartialStates, FloatMomentsFinalizeAsYoungsCramer) {
  check_moments({});
  check_moments({4.5});
  check_moments({1.5, 2.25, -7.0, 100.125});
  check_moments({0.1, 0.1, 0.1});  // constant: variance exactly 0, as PostgreSQL
  check_moments({kInf});           // one infinite input: var_pop NaN
  check_moments({1.0, kInf, 2.0});
  check_moments({kInf, -kInf});
  check_moments({3.0, kNaN});
}

void check_pairs(const std::vector<double>& ys, const std::vector<double>& xs) {
  AggregateValues v;
  v.op = AggOp::moments2;
  v.nonnull = {static_cast<int64_t>(xs.size())};
  double sx = 0, sxx = 0, sy = 0, syy = 0, sxy = 0;
  FloatMoments2 want;
  for (size_t i = 0; i < xs.size(); ++i) {
    sx += xs[i];
    sxx += xs[i] * xs[i];
    sy += ys[i];
    syy += ys[i] * ys[i];
    sxy += xs[i] * ys[i];
    want.add(ys[i], xs[i]);
  }
  v.sum_x = {sx};
  v.sum_xx = {sxx};
  v.sum_y = {sy};
  v.sum_yy = {syy};
  v.sum_xy = {sxy};
  tally::PartialStates st;
  to_partial_states(tally::PartialOp::moments2_float, v, st);
  const FloatMoments2 got{st.n[0], st.sx[0], st.sxx[0], st.sy[0], st.syy[0], st.sxy[0]};
  for (const RegressionFinal f :
       {RegressionFinal::corr, RegressionFinal::covar_pop, RegressionFinal::covar_samp, RegressionFinal::r2,
        RegressionFinal::slope, RegressionFinal::intercept, RegressionFinal::sxx, RegressionFinal::syy,
        RegressionFinal::sxy, RegressionFinal::avgx, RegressionFinal::avgy})
    expect_same(value_of(executor::finalize_regression(got, f)), value_of(executor::finalize_regression(want, f)),
                "regression");
}

TEST(GpuPartialStates, PairMomentsFinalizeAsYoungsCramer) {
  check_pairs({}, {});
  check_pairs({1}, {2});
  check_pairs({1, 2, 3, 4}, {2, 4, 6, 8.5});
  check_pairs({5, 5, 5}, {1, 2, 3});  // constant Y: corr NULL
  check_pairs({1, 2}, {kInf, 3});     // infinite X: Sxx and Sxy NaN, Syy kept
  check_pairs({kNaN, 2}, {1, 3});
  check_pairs({-3, 7, 1}, {4, -kInf, kInf});
}

}  // namespace
}  // namespace tally::gpu
