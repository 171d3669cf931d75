#pragma once
// Youngs-Cramer moments of float8 inputs, as PostgreSQL keeps them
// (float8_accum / float8_regr_accum, and float8_combine / float8_regr_combine
// to merge two): the state every engine's float variance, stddev and
// regression aggregates carry, and whatever merges engines' partial states.
//
// add() is inline: the engines call it once per row (stddev, corr over
// millions of rows), and its rare infinite case is out of line.
#include <cmath>

namespace tally {

struct FloatMoments {
  double n = 0, sx = 0, sxx = 0;
  [[gnu::always_inline]] void add(double x) {
    // float8_accum (PostgreSQL 12+): Youngs-Cramer.
    const double old_n = n;
    n += 1.0;
    sx += x;
    if (old_n > 0.0) {
      const double tmp = x * n - sx;
      sxx += tmp * tmp / (n * old_n);
      if (std::isinf(sx) || std::isinf(sxx)) settle_infinity(x);
    } else if (std::isnan(x) || std::isinf(x)) {
      sxx = std::nan("");
    }
  }
  void combine(const FloatMoments& other);

 private:
  // An infinite sum: 22003 where finite inputs overflowed, else NaN.
  [[gnu::cold]] void settle_infinity(double x);
};

struct FloatMoments2 {
  double n = 0, sx = 0, sxx = 0, sy = 0, syy = 0, sxy = 0;
  [[gnu::always_inline]] void add(double y, double x) {  // PostgreSQL's argument order: (Y, X)
    const double old_n = n;
    n += 1.0;
    sx += x;
    sy += y;
    if (old_n > 0.0) {
      const double tmp_x = x * n - sx;
      const double tmp_y = y * n - sy;
      const double scale = 1.0 / (n * old_n);
      sxx += tmp_x * tmp_x * scale;
      syy += tmp_y * tmp_y * scale;
      sxy += tmp_x * tmp_y * scale;
      if (std::isinf(sx) || std::isinf(sxx) || std::isinf(sy) || std::isinf(syy) || std::isinf(sxy)) settle_infinity(y, x);
    } else {
      if (std::isnan(x) || std::isinf(x)) sxx = sxy = std::nan("");
      if (std::isnan(y) || std::isinf(y)) syy = sxy = std::nan("");
    }
  }
  void combine(const FloatMoments2& other);

 private:
  [[gnu::cold]] void settle_infinity(double y, double x);
};

}  // namespace tally
