#include "common/group_test.hpp"

#include <optional>

namespace tally {

namespace {

// 10^k in 128 bits, or nullopt past 10^38.
std::optional<__int128> power_of_ten(int32_t k) {
  if (k < 0 || k > 38) return std::nullopt;
  __int128 p = 1;
  for (int32_t i = 0; i < k; ++i) p *= 10;
  return p;
}

// a * 10^k, or nullopt where it leaves 127 bits.
std::optional<__int128> scaled(__int128 a, int32_t k) {
  const auto p = power_of_ten(k);
  if (!p) return std::nullopt;
  __int128 out;
  if (__builtin_mul_overflow(a, *p, &out)) return std::nullopt;
  return out;
}

}  // namespace

ScaledGroupTest::ScaledGroupTest(std::string_view op, __int128 mantissa, int32_t constant_scale, int32_t scale) {
  op_ = op == "<" ? Op::lt : op == "<=" ? Op::le : op == ">" ? Op::gt : op == ">=" ? Op::ge : op == "=" ? Op::eq : Op::ne;
  decided_ = false;
  if (constant_scale <= scale) {
    const auto c = scaled(mantissa, scale - constant_scale);
    if (c) constant_ = *c;
    else decided_ = true;
  } else {
    const auto f = power_of_ten(constant_scale - scale);
    if (f) factor_ = *f;
    else decided_ = true;
    constant_ = mantissa;
  }
}

}  // namespace tally
