// Math functions: abs, round/trunc, floor/ceil, sign, sqrt, cbrt, power and
// mod, over integers, float8 and numeric as PostgreSQL types them (exp and
// the logarithms: logarithm_functions.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "common/error.hpp"
#include "executor/numeric.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar_functions.hpp"

namespace tally::executor::scalar {

namespace {

// For math functions over numbers: int -> float8 (PostgreSQL's preferred type), numeric stays.
TypeId float_or_numeric(SqlType t) {
  if (t.id == TypeId::numeric) return TypeId::numeric;
  return TypeId::float8;
}

Error width_bucket_error(const char* message) {
  return Error(SqlState::invalid_argument_for_width_bucket_function, message);
}

// count + 1, the bucket past the upper bound, as an int4.
int64_t bucket_past_end(int64_t count) {
  if (count >= INT32_MAX) throw Error(SqlState::numeric_value_out_of_range, "integer out of range");
  return count + 1;
}

// width_bucket(float8, float8, float8, int) as PostgreSQL 15's float.c
// computes it: count * offset / width + 1, truncated (its rounding decides
// the buckets of values near a boundary).
int64_t width_bucket_float8(double operand, double low, double high, int64_t count) {
  if (count <= 0) throw width_bucket_error("count must be greater than zero");
  if (std::isnan(operand) || std::isnan(low) || std::isnan(high))
    throw width_bucket_error("operand, lower bound, and upper bound cannot be NaN");
  if (std::isinf(low) || std::isinf(high)) throw width_bucket_error("lower and upper bounds must be finite");
  if (low == high) throw width_bucket_error("lower bound cannot equal upper bound");
  const bool rising = low < high;
  if (rising ? operand < low : operand > low) return 0;
  if (rising ? operand >= high : operand <= high) return bucket_past_end(count);
  const double c = static_cast<double>(count);
  const double width = rising ? high - low : low - high;
  const double bucket = std::isinf(width)
                            ? c * (rising ? operand / 2 - low / 2 : low / 2 - operand / 2) /
                                  (rising ? high / 2 - low / 2 : low / 2 - high / 2) + 1
                            : c * (rising ? operand - low : low - operand) / width + 1;
  return static_cast<int32_t>(bucket);
}

// width_bucket(numeric, numeric, numeric, int): the bucket is
// floor(offset * count / width) + 1, computed exactly on the values brought
// to one scale.
int64_t width_bucket_numeric(Numeric operand, Numeric low, Numeric high, int64_t count) {
  if (count <= 0) throw width_bucket_error("count must be greater than zero");
  if (operand.is_infinite() || low.is_infinite() || high.is_infinite())
    throw width_bucket_error("lower and upper bounds must be finite");
  const int32_t scale = std::max({operand.scale, low.scale, high.scale});
  const __int128 x = operand.rescaled(scale).mantissa, lo = low.rescaled(scale).mantissa,
                 hi = high.rescaled(scale).mantissa;
  if (lo == hi) throw width_bucket_error("lower bound cannot equal upper bound");
  const bool rising = lo < hi;
  if (rising ? x < lo : x > lo) return 0;
  if (rising ? x >= hi : x <= hi) return bucket_past_end(count);
  const unsigned __int128 width = static_cast<unsigned __int128>(rising ? hi - lo : lo - hi);
  const unsigned __int128 offset = static_cast<unsigned __int128>(rising ? x - lo : lo - x);
  // offset < width; offset * count fits unless the values span more than
  // 2^96 units of their scale, where a long double quotient stands in.
  const unsigned __int128 limit = static_cast<unsigned __int128>(1) << 96;
  const int64_t bucket =
      offset < limit ? static_cast<int64_t>(offset * static_cast<unsigned __int128>(count) / width)
                     : static_cast<int64_t>(static_cast<long double>(offset) / static_cast<long double>(width) *
                                            static_cast<long double>(count));
  return std::min(bucket, count - 1) + 1;
}

// Both values as mantissas of one scale (the larger), for the functions that
// work on a numeric's digits: gcd, lcm, div.
std::pair<__int128, __int128> common_scale(const Numeric& a, const Numeric& b, int32_t& scale) {
  if (a.is_infinite() || b.is_infinite())
    throw Error(SqlState::feature_not_supported, "infinite numeric values are not supported here");
  scale = std::max(a.scale, b.scale);
  return {a.rescaled(scale).mantissa, b.rescaled(scale).mantissa};
}

unsigned __int128 magnitude(__int128 v) {
  return v < 0 ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
}

unsigned __int128 euclid(unsigned __int128 a, unsigned __int128 b) {
  while (b != 0) {
    const unsigned __int128 r = a % b;
    a = b;
    b = r;
  }
  return a;
}

// gcd/lcm of two mantissas; nullopt when the lcm does not fit.
std::optional<unsigned __int128> gcd_or_lcm(__int128 a, __int128 b, bool lcm) {
  const unsigned __int128 g = euclid(magnitude(a), magnitude(b));
  if (!lcm) return g;
  if (a == 0 || b == 0) return 0;
  unsigned __int128 out;
  if (__builtin_mul_overflow(magnitude(a) / g, magnitude(b), &out)) return std::nullopt;
  return out;
}

}  // namespace

ExprPtr make_math_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  const size_t n = args.size();
  auto type_of = [&](size_t i) { return args[i]->type; };
  if (name == "abs" && n == 1) {
    if (type_of(0).id == TypeId::unknown) args[0] = to_type(std::move(args[0]), TypeId::float8, context);
    const SqlType t = type_of(0);
    if (!numeric_rank(t.id)) throw no_function(name, args);
    return call(t, name, std::move(args), [t](std::span<const Value> a) -> Value {
      if (is_integer(t.id)) { const __int128 v = std::get<int64_t>(a[0]); return int_checked(v < 0 ? -v : v, t.id); }
      if (t.id == TypeId::numeric) { Numeric x = std::get<Numeric>(a[0]); if (x.mantissa < 0) x = -x; return x; }
      return std::fabs(std::get<double>(a[0]));
    });
  }
  if ((name == "round" || name == "trunc") && (n == 1 || n == 2)) {
    if (type_of(0).id == TypeId::unknown) args[0] = to_type(std::move(args[0]), TypeId::float8, context);
    if (!numeric_rank(type_of(0).id)) throw no_function(name, args);
    const bool is_round = name == "round";
    if (n == 2 || type_of(0).id == TypeId::numeric) {
      args[0] = to_type(std::move(args[0]), TypeId::numeric, context);
      if (n == 2) args[1] = to_type(std::move(args[1]), TypeId::int4, context);
      return call({TypeId::numeric}, name, std::move(args), [is_round](std::span<const Value> a) -> Value {
        const Numeric x = std::get<Numeric>(a[0]);
        const int64_t places = a.size() == 2 ? std::get<int64_t>(a[1]) : 0;
        if (places >= 0) {
          if (places >= x.scale && !is_round) return x.rescaled(static_cast<int32_t>(places));
          if (is_round) return x.rescaled(static_cast<int32_t>(std::min<int64_t>(places, 1000)));
          // trunc: drop digits toward zero
          __int128 m = x.mantissa;
          for (int64_t i = places; i < x.scale; ++i) m /= 10;
          return Numeric{m, static_cast<int32_t>(places)};
        }
        // Negative places round to tens, hundreds, ...: result scale 0.
        Numeric whole = is_round ? x.rescaled(0) : Numeric{x.mantissa, x.scale}.rescaled(x.scale);
        __int128 m = is_round ? whole.mantissa : x.mantissa;
        int drop = is_round ? 0 : x.scale;
        for (int i = 0; i < drop; ++i) m /= 10;
        __int128 unit = 1;
        for (int64_t i = 0; i < -places && i < 38; ++i) unit *= 10;
        __int128 q = m / unit, r = m % unit;
        if (is_round && (r < 0 ? -r : r) * 2 >= unit) q += m < 0 ? -1 : 1;
        return Numeric{q * unit, 0};
      });
    }
    args[0] = to_type(std::move(args[0]), TypeId::float8, context);
    return call({TypeId::float8}, name, std::move(args), [is_round](std::span<const Value> a) -> Value {
      const double x = std::get<double>(a[0]);
      return is_round ? std::rint(x) : std::trunc(x);
    });
  }
  if ((name == "floor" || name == "ceil" || name == "ceiling") && n == 1) {
    if (type_of(0).id == TypeId::unknown) args[0] = to_type(std::move(args[0]), TypeId::float8, context);
    if (!numeric_rank(type_of(0).id)) throw no_function(name, args);
    const bool is_floor = name == "floor";
    if (type_of(0).id == TypeId::numeric) {
      return call({TypeId::numeric}, name, std::move(args), [is_floor](std::span<const Value> a) -> Value {
        const Numeric x = std::get<Numeric>(a[0]);
        __int128 m = x.mantissa, unit = 1;
        for (int i = 0; i < x.scale; ++i) unit *= 10;
        __int128 q = m / unit, r = m % unit;
        if (r != 0 && is_floor && m < 0) q -= 1;
        if (r != 0 && !is_floor && m > 0) q += 1;
        return Numeric{q, 0};
      });
    }
    args[0] = to_type(std::move(args[0]), TypeId::float8, context);
    return call({TypeId::float8}, name, std::move(args), [is_floor](std::span<const Value> a) -> Value {
      return is_floor ? std::floor(std::get<double>(a[0])) : std::ceil(std::get<double>(a[0]));
    });
  }
  if (name == "width_bucket" && n == 4) {
    // PostgreSQL has a numeric and a float8 form; float8 wins unless an
    // argument is numeric and none is a float (floats do not cast to
    // numeric implicitly), as its function resolution decides.
    bool any_numeric = false, any_float = false;
    for (size_t i = 0; i < 3; ++i) {
      if (type_of(i).id == TypeId::unknown) continue;
      if (!numeric_rank(type_of(i).id)) throw no_function(name, args);
      any_numeric |= type_of(i).id == TypeId::numeric;
      any_float |= type_of(i).id == TypeId::float4 || type_of(i).id == TypeId::float8;
    }
    const TypeId t = any_numeric && !any_float ? TypeId::numeric : TypeId::float8;
    for (size_t i = 0; i < 3; ++i) args[i] = to_type(std::move(args[i]), t, context);
    args[3] = to_type(std::move(args[3]), TypeId::int4, context);
    return call({TypeId::int4}, name, std::move(args), [t](std::span<const Value> a) -> Value {
      return t == TypeId::numeric
                 ? width_bucket_numeric(std::get<Numeric>(a[0]), std::get<Numeric>(a[1]), std::get<Numeric>(a[2]),
                                        std::get<int64_t>(a[3]))
                 : width_bucket_float8(std::get<double>(a[0]), std::get<double>(a[1]), std::get<double>(a[2]),
                                       std::get<int64_t>(a[3]));
    });
  }
  if ((name == "gcd" || name == "lcm") && n == 2) {
    // int4, int8 and numeric forms; the result has the arguments' type.
    TypeId t = TypeId::int4;
    for (const auto& a : args) {
      const TypeId id = a->type.id;
      if (id == TypeId::numeric || id == TypeId::unknown) t = TypeId::numeric;
      else if (id == TypeId::int8 && t != TypeId::numeric) t = TypeId::int8;
      else if (!is_integer(id)) throw no_function(name, args);
    }
    for (auto& a : args) a = to_type(std::move(a), t, context);
    const bool lcm = name == "lcm";
    return call({t}, name, std::move(args), [t, lcm](std::span<const Value> a) -> Value {
      if (t == TypeId::numeric) {
        int32_t scale = 0;
        const auto [x, y] = common_scale(std::get<Numeric>(a[0]), std::get<Numeric>(a[1]), scale);
        const auto r = gcd_or_lcm(x, y, lcm);
        if (!r || *r > static_cast<unsigned __int128>(std::numeric_limits<__int128>::max()))
          throw Error(SqlState::numeric_value_out_of_range, "value overflows numeric format");
        return Numeric{static_cast<__int128>(*r), scale};
      }
      const auto r = gcd_or_lcm(std::get<int64_t>(a[0]), std::get<int64_t>(a[1]), lcm);
      if (!r || *r > static_cast<unsigned __int128>(INT64_MAX)) throw out_of_range(t);
      return int_checked(static_cast<__int128>(*r), t);
    });
  }
  if (name == "div" && n == 2) {
    // The integral part of the quotient, toward zero, as numeric.
    for (auto& a : args) {
      if (a->type.id != TypeId::unknown && !is_integer(a->type.id) && a->type.id != TypeId::numeric)
        throw no_function(name, args);
      a = to_type(std::move(a), TypeId::numeric, context);
    }
    return call({TypeId::numeric}, name, std::move(args), [](std::span<const Value> a) -> Value {
      int32_t scale = 0;
      const auto [x, y] = common_scale(std::get<Numeric>(a[0]), std::get<Numeric>(a[1]), scale);
      if (y == 0) throw Error(SqlState::division_by_zero, "division by zero");
      return Numeric{x / y, 0};
    });
  }
  if ((name == "scale" || name == "trim_scale") && n == 1) {
    if (args[0]->type.id != TypeId::unknown && !numeric_rank(args[0]->type.id)) throw no_function(name, args);
    args[0] = to_type(std::move(args[0]), TypeId::numeric, context);
    if (name == "scale") {
      return call({TypeId::int4}, name, std::move(args), [](std::span<const Value> a) -> Value {
        const Numeric& x = std::get<Numeric>(a[0]);
        if (x.is_infinite()) return Null{};
        return int64_t{x.scale};
      });
    }
    return call({TypeId::numeric}, name, std::move(args), [](std::span<const Value> a) -> Value {
      Numeric x = std::get<Numeric>(a[0]);
      if (x.is_infinite()) return x;
      while (x.scale > 0 && x.mantissa % 10 == 0) {
        x.mantissa /= 10;
        --x.scale;
      }
      return x;
    });
  }
  if (name == "sign" && n == 1) {
    const TypeId t = float_or_numeric(type_of(0));
    args[0] = to_type(std::move(args[0]), t, context);
    return call({t}, name, std::move(args), [t](std::span<const Value> a) -> Value {
      if (t == TypeId::numeric) return Numeric::from_int(std::get<Numeric>(a[0]).sign());
      const double x = std::get<double>(a[0]);
      return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
    });
  }
  if (name == "cbrt" && n == 1) {
    if (args[0]->type.id != TypeId::unknown && !numeric_rank(args[0]->type.id)) throw no_function(name, args);
    args[0] = to_type(std::move(args[0]), TypeId::float8, context);
    return call({TypeId::float8}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return std::cbrt(std::get<double>(a[0]));
    });
  }
  if (name == "sqrt" && n == 1) {
    const TypeId t = float_or_numeric(type_of(0));
    args[0] = to_type(std::move(args[0]), t, context);
    return call({t}, name, std::move(args), [t](std::span<const Value> a) -> Value {
      if (t == TypeId::numeric) {
        const Numeric x = std::get<Numeric>(a[0]);
        // numeric_sqrt's result scale (numeric.c).
        int weight = 0, dummy = 0;
        {
          // base-10000 weight of x
          unsigned __int128 m = x.mantissa < 0 ? -static_cast<unsigned __int128>(x.mantissa) : static_cast<unsigned __int128>(x.mantissa);
          int digits = 0;
          while (m) { m /= 10; ++digits; }
          const int e = digits - 1 - x.scale;
          weight = x.mantissa == 0 ? 0 : (e >= 0 ? e / 4 : -((-e + 3) / 4));
          (void)dummy;
        }
        const int sweight = (weight + 1) * 4 / 2 - 1;
        int rscale = 16 - sweight;
        rscale = std::max(rscale, x.scale);
        rscale = std::max(rscale, 0);
        rscale = std::min(rscale, 1000);
        return numeric_sqrt(x, rscale);
      }
      const double x = std::get<double>(a[0]);
      if (x < 0) throw Error(SqlState::invalid_argument_for_power_function, "cannot take square root of a negative number");
      return std::sqrt(x);
    });
  }
  if ((name == "power" || name == "pow") && n == 2) {
    const TypeId t = (type_of(0).id == TypeId::numeric || type_of(1).id == TypeId::numeric) ? TypeId::numeric : TypeId::float8;
    if (t == TypeId::numeric) {
      args[0] = to_type(std::move(args[0]), t, context);
      args[1] = to_type(std::move(args[1]), t, context);
      return call({t}, name, std::move(args), [](std::span<const Value> a) -> Value {
        const Numeric x = std::get<Numeric>(a[0]), y = std::get<Numeric>(a[1]);
        if (y.scale == 0 || y.rescaled(0) == y) {
          const int64_t e = y.to_int64();
          if (e >= 0 && e <= 64) {
            Numeric r = Numeric::from_int(1);
            for (int64_t i = 0; i < e; ++i) r = r * x;
            return r;
          }
        }
        throw Error(SqlState::feature_not_supported, "numeric power with this exponent is not supported");
      });
    }
    args[0] = to_type(std::move(args[0]), t, context);
    args[1] = to_type(std::move(args[1]), t, context);
    return call({t}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const double x = std::get<double>(a[0]), y = std::get<double>(a[1]);
      if (x == 0 && y < 0) throw Error(SqlState::invalid_argument_for_power_function, "zero raised to a negative power is undefined");
      if (x < 0 && std::floor(y) != y) {
        throw Error(SqlState::invalid_argument_for_power_function, "a negative number raised to a non-integer power yields a complex result");
      }
      const double r = std::pow(x, y);
      if (std::isinf(r) && !std::isinf(x) && !std::isinf(y)) throw Error(SqlState::numeric_value_out_of_range, "value out of range: overflow");
      return r;
    });
  }
  if (name == "mod" && n == 2) {
    ExprPtr l = std::move(args[0]), r = std::move(args[1]);
    return make_binary_operator("%", std::move(l), std::move(r), context);
  }
  return nullptr;
}

}  // namespace tally::executor::scalar
