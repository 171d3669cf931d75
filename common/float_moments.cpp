#include "common/float_moments.hpp"

#include <cmath>

#include "common/error.hpp"

namespace tally {

void FloatMoments::settle_infinity(double x) {
  if (!std::isinf(sx - x) && !std::isinf(x)) {
    throw Error(SqlState::numeric_value_out_of_range, "value out of range: overflow");
  }
  sxx = std::nan("");
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

void FloatMoments2::settle_infinity(double y, double x) {
  if (((std::isinf(sx) || std::isinf(sxx)) && !std::isinf(sx - x) && !std::isinf(x)) ||
      ((std::isinf(sy) || std::isinf(syy)) && !std::isinf(sy - y) && !std::isinf(y)) ||
      (std::isinf(sxy) && !std::isinf(sx - x) && !std::isinf(x) && !std::isinf(sy - y) && !std::isinf(y))) {
    throw Error(SqlState::numeric_value_out_of_range, "value out of range: overflow");
  }
  if (std::isinf(sxx)) sxx = std::nan("");
  if (std::isinf(syy)) syy = std::nan("");
  if (std::isinf(sxy)) sxy = std::nan("");
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
