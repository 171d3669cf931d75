// exp, ln, log (base 10) and log(b, x) over float8 and numeric, as
// PostgreSQL 15 types and rounds them. Integers go to float8 (PostgreSQL's
// preferred type), except in log(b, x), which PostgreSQL has for numeric
// only. A numeric result has the scale numeric.c gives it (at least 16
// significant digits, never fewer decimals than the input's), computed in
// binary128 (34 significant digits) and rounded there: the digits match
// PostgreSQL's exact computation wherever the result fits Numeric's 38 digits.
#include <quadmath.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "common/error.hpp"
#include "executor/numeric.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar_functions.hpp"

namespace tally::executor::scalar {
namespace {

// numeric.c's limits on a result's scale.
constexpr int kMinSignificantDigits = 16;
constexpr int kMaxDisplayScale = 1000;
// Numeric holds at most this many digits in its 128-bit mantissa.
constexpr int kMaxDigits = 38;

Error log_of_zero() { return Error(SqlState::invalid_argument_for_logarithm, "cannot take logarithm of zero"); }
Error log_of_negative() {
  return Error(SqlState::invalid_argument_for_logarithm, "cannot take logarithm of a negative number");
}

// 10^n, exact in binary128 for n <= 48 (5^48 needs 112 bits).
__float128 power_of_ten(int n) {
  __float128 p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

__float128 to_quad(const Numeric& x) { return static_cast<__float128>(x.mantissa) / power_of_ten(x.scale); }

// v rounded half away from zero to `scale` decimals, as a Numeric.
Numeric from_quad(__float128 v, int scale) {
  if (scale < 0 || scale > kMaxDigits) throw Error(SqlState::numeric_value_out_of_range, "value overflows numeric format");
  __float128 scaled = v * power_of_ten(scale);
  const __float128 half = 0.5;
  scaled = scaled < 0 ? -floorq(-scaled + half) : floorq(scaled + half);
  if (fabsq(scaled) >= power_of_ten(kMaxDigits)) throw Error(SqlState::numeric_value_out_of_range, "value overflows numeric format");
  return Numeric{static_cast<__int128>(scaled), scale};
}

// The decimal digit of |x| at exponent k (x = Σ d_k 10^k).
struct DecimalDigits {
  std::string digits;  // |mantissa|, most significant first
  int32_t scale = 0;
  int top() const { return static_cast<int>(digits.size()) - 1 - scale; }  // exponent of the first digit
  int at(int k) const {
    const int i = top() - k;
    return i >= 0 && i < static_cast<int>(digits.size()) ? digits[static_cast<size_t>(i)] - '0' : 0;
  }
  bool nonzero_below(int k) const {
    for (int e = k - 1; e >= -scale; --e) {
      if (at(e) != 0) return true;
    }
    return false;
  }
};

DecimalDigits decimal_digits(const Numeric& x) {
  unsigned __int128 m = x.mantissa < 0 ? -static_cast<unsigned __int128>(x.mantissa) : static_cast<unsigned __int128>(x.mantissa);
  std::string d;
  while (m != 0) {
    d.insert(d.begin(), static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  }
  return {d, x.scale};
}

int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// numeric.c's estimate_ln_dweight: the decimal weight of ln(x), for x > 0,
// from x's base-10000 digits as PostgreSQL holds them.
int estimate_ln_dweight(const Numeric& x) {
  const Numeric point_nine{9, 1}, one_point_one{11, 1};
  if (!(x < point_nine) && !(one_point_one < x)) {
    // ln(1 + y) ~ y: the weight of y's most significant digit.
    const Numeric y = x - Numeric::from_int(1);
    if (y.is_zero()) return 0;
    return decimal_digits(y).top();
  }
  const DecimalDigits d = decimal_digits(x);
  // x's first base-10000 digit holds decimal exponents 4w+3 .. 4w.
  const int w = floor_div(d.top(), 4);
  auto group = [&](int low) { return d.at(low + 3) * 1000 + d.at(low + 2) * 100 + d.at(low + 1) * 10 + d.at(low); };
  double digits = group(4 * w);
  int dweight = 4 * w;
  if (d.nonzero_below(4 * w)) {
    digits = digits * 10000 + group(4 * w - 4);
    dweight -= 4;
  }
  const double ln_x = std::log(digits) + dweight * 2.302585092994046;
  return static_cast<int>(std::log10(std::fabs(ln_x)));
}

int clamp_scale(int rscale, std::initializer_list<int32_t> input_scales) {
  for (const int32_t s : input_scales) rscale = std::max(rscale, static_cast<int>(s));
  return std::min(std::max(rscale, 0), kMaxDisplayScale);
}

void check_log_argument(const Numeric& x) {
  if (x.is_zero()) throw log_of_zero();
  if (x.sign() < 0) throw log_of_negative();
}

Numeric numeric_ln(const Numeric& x) {
  check_log_argument(x);
  const int rscale = clamp_scale(kMinSignificantDigits - estimate_ln_dweight(x), {x.scale});
  return from_quad(logq(to_quad(x)), rscale);
}

Numeric numeric_log(const Numeric& base, const Numeric& x) {
  check_log_argument(base);
  check_log_argument(x);
  if (base == Numeric::from_int(1)) throw Error(SqlState::division_by_zero, "division by zero");
  const int dweight = estimate_ln_dweight(x) - estimate_ln_dweight(base);
  const int rscale = clamp_scale(kMinSignificantDigits - dweight, {base.scale, x.scale});
  return from_quad(logq(to_quad(x)) / logq(to_quad(base)), rscale);
}

Numeric numeric_exp(const Numeric& x) {
  double weight = x.to_double() * 0.434294481903252;  // log10(e^x)
  weight = std::clamp(weight, -2000.0, 2000.0);
  const int rscale = clamp_scale(kMinSignificantDigits - static_cast<int>(weight), {x.scale});
  const __float128 r = expq(to_quad(x));
  if (isinfq(r)) throw Error(SqlState::numeric_value_out_of_range, "value overflows numeric format");
  return from_quad(r, rscale);
}

double float_log(double x, bool base10) {
  if (x == 0) throw log_of_zero();
  if (x < 0) throw log_of_negative();
  return base10 ? std::log10(x) : std::log(x);
}

double float_exp(double x) {
  const double r = std::exp(x);
  if (std::isinf(r) && !std::isinf(x)) throw Error(SqlState::numeric_value_out_of_range, "value out of range: overflow");
  if (r == 0 && !std::isinf(x)) throw Error(SqlState::numeric_value_out_of_range, "value out of range: underflow");
  return r;
}

}  // namespace

ExprPtr make_logarithm_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  const size_t n = args.size();
  if (name == "log" && n == 2) {
    for (auto& a : args) {
      if (a->type.id != TypeId::unknown && !numeric_rank(a->type.id)) throw no_function(name, args);
    }
    args[0] = to_type(std::move(args[0]), TypeId::numeric, context);
    args[1] = to_type(std::move(args[1]), TypeId::numeric, context);
    return call({TypeId::numeric}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return numeric_log(std::get<Numeric>(a[0]), std::get<Numeric>(a[1]));
    });
  }
  if ((name == "exp" || name == "ln" || name == "log" || name == "log10") && n == 1) {
    if (args[0]->type.id != TypeId::unknown && !numeric_rank(args[0]->type.id)) throw no_function(name, args);
    const bool exact = args[0]->type.id == TypeId::numeric;
    args[0] = to_type(std::move(args[0]), exact ? TypeId::numeric : TypeId::float8, context);
    const bool is_exp = name == "exp", base10 = name == "log" || name == "log10";
    if (exact) {
      return call({TypeId::numeric}, name, std::move(args), [is_exp, base10](std::span<const Value> a) -> Value {
        const Numeric& x = std::get<Numeric>(a[0]);
        if (x.is_infinite()) throw Error(SqlState::feature_not_supported, "logarithms and exp of infinite numerics are not supported");
        if (is_exp) return numeric_exp(x);
        return base10 ? numeric_log(Numeric::from_int(10), x) : numeric_ln(x);
      });
    }
    return call({TypeId::float8}, name, std::move(args), [is_exp, base10](std::span<const Value> a) -> Value {
      const double x = std::get<double>(a[0]);
      return is_exp ? float_exp(x) : float_log(x, base10);
    });
  }
  return nullptr;
}

}  // namespace tally::executor::scalar
