#include "common/float_moments.hpp"

#include <cmath>

#include "common/error.hpp"

namespace tally {

void FloatMoments::add(double x) {
  // float8_accum (PostgreSQL 12+): Youngs-Cramer.
  const double old_n = n;
  n += 1.0;
  sx += x;
  if (old_n > 0.0) {
    const double tmp = x * n - sx;
    sxx += tmp * tmp / (n * old_n);
    if (std::isinf(sx) || std::isinf(sxx)) {
      if (!std::isinf(sx - x) && !std::isinf(x)) {
        throw Error(SqlState::numeric_value_out_of_range, "value out of range: overflow");
      }
      sxx = std::nan("");
    }
  } else if (std::isnan(x) || std::isinf(x)) {
    sxx = std::nan("");
  }
}

void FloatMoments::combine(const FloatMoments& o) {
  if (o.n == 0) return;
  if (n == 0) { *this = o; return; }
  const double total = n + o.n;
  const double tmp = sx / n - o.sx / o.n;
  sxx = sxx + o.sxx + n * o.n * tmp * tmp / total;
  sx += o.sx;
  n = total;
}

void FloatMoments2::add(double y, double x) {
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
    if (std::isinf(sx) || std::isinf(sxx) || std::isinf(sy) || std::isinf(syy) || std::isinf(sxy)) {
      if (((std::isinf(sx) || std::isinf(sxx)) && !std::isinf(sx - x) && !std::isinf(x)) ||
          ((std::isinf(sy) || std::isinf(syy)) && !std::isinf(sy - y) && !std::isinf(y)) ||
          (std::isinf(sxy) && !std::isinf(sx - x) && !std::isinf(x) && !std::isinf(sy - y) && !std::isinf(y))) {
        throw Error(SqlState::numeric_value_out_of_range, "value out of range: overflow");
      }
      if (std::isinf(sxx)) sxx = std::nan("");
      if (std::isinf(syy)) syy = std::nan("");
      if (std::isinf(sxy)) sxy = std::nan("");
    }
  } else {
    if (std::isnan(x) || std::isinf(x)) sxx = sxy = std::nan("");
    if (std::isnan(y) || std::isinf(y)) syy = sxy = std::nan("");
  }
}

void FloatMoments2::combine(const FloatMoments2& o) {
  if (o.n == 0) return;
  if (n == 0) { *this = o; return; }
  const double total = n + o.n;
  const double tmp1 = sx / n - o.sx / o.n;
  const double tmp2 = sy / n - o.sy / o.n;
  sxx = sxx + o.sxx + n * o.n * tmp1 * tmp1 / total;
  syy = syy + o.syy + n * o.n * tmp2 * tmp2 / total;
  sxy = sxy + o.sxy + n * o.n * tmp1 * tmp2 / total;
  sx += o.sx;
  sy += o.sy;
  n = total;
}

}  // namespace tally
