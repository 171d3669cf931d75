// float8 functions: the trigonometric ones (sin, cos, tan, cot, asin, acos,
// atan, atan2), degrees, radians and pi, with PostgreSQL's errors, and
// random() / setseed().
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <string>

#include "common/error.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar_functions.hpp"

namespace tally::executor::scalar {
namespace {

// float.c's RADIANS_PER_DEGREE.
constexpr double kRadiansPerDegree = 0.0174532925199432957692;

Error out_of_range_input() { return Error(SqlState::numeric_value_out_of_range, "input is out of range"); }

// float.c's checks: an infinite argument of sin/cos/tan/cot, or an
// argument of asin/acos outside [-1, 1], is 22003; NaN gives NaN.
double trigonometric(const std::string& fn, double x) {
  if (std::isnan(x)) return x;
  if (fn == "asin" || fn == "acos") {
    if (x < -1 || x > 1) throw out_of_range_input();
    return fn == "asin" ? std::asin(x) : std::acos(x);
  }
  if (fn == "atan") return std::atan(x);
  if (std::isinf(x)) throw out_of_range_input();
  if (fn == "sin") return std::sin(x);
  if (fn == "cos") return std::cos(x);
  if (fn == "tan") return std::tan(x);
  return 1.0 / std::tan(x);  // cot: cot(0) is Infinity, as PostgreSQL's
}

// random(): each thread its own generator, seeded from the system's entropy;
// setseed(x) seeds the calling thread's, so that a session's random() calls
// on its own thread repeat their sequence after it.
std::mt19937_64& generator() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

}  // namespace

ExprPtr make_trigonometric_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  const size_t n = args.size();
  auto float_arguments = [&] {
    for (auto& a : args) {
      if (a->type.id != TypeId::unknown && !numeric_rank(a->type.id)) throw no_function(name, args);
      a = to_type(std::move(a), TypeId::float8, context);
    }
  };
  if ((name == "sin" || name == "cos" || name == "tan" || name == "cot" || name == "asin" || name == "acos" ||
       name == "atan") &&
      n == 1) {
    float_arguments();
    return call({TypeId::float8}, name, std::move(args), [fn = name](std::span<const Value> a) -> Value {
      return trigonometric(fn, std::get<double>(a[0]));
    });
  }
  if (name == "atan2" && n == 2) {
    float_arguments();
    return call({TypeId::float8}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return std::atan2(std::get<double>(a[0]), std::get<double>(a[1]));
    });
  }
  if ((name == "degrees" || name == "radians") && n == 1) {
    float_arguments();
    const bool to_degrees = name == "degrees";
    return call({TypeId::float8}, name, std::move(args), [to_degrees](std::span<const Value> a) -> Value {
      const double x = std::get<double>(a[0]);
      return to_degrees ? x / kRadiansPerDegree : x * kRadiansPerDegree;
    });
  }
  if (name == "pi" && n == 0) {
    return call({TypeId::float8}, name, {}, [](std::span<const Value>) -> Value { return M_PI; });
  }
  if (name == "random" && n == 0) {
    return call({TypeId::float8}, name, {}, [](std::span<const Value>) -> Value {
      return std::uniform_real_distribution<double>(0.0, 1.0)(generator());
    });
  }
  if (name == "setseed" && n == 1) {
    float_arguments();
    return call({TypeId::void_}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const double seed = std::get<double>(a[0]);
      if (!(seed >= -1 && seed <= 1)) {
        char text[64];
        std::snprintf(text, sizeof text, "%g", seed);
        throw Error(SqlState::invalid_parameter_value,
                    std::string("setseed parameter ") + text + " is out of allowed range [-1,1]");
      }
      generator().seed(static_cast<uint64_t>((seed + 1) * 4294967296.0 * 1024));
      return std::string();  // void_out prints the empty string
    });
  }
  return nullptr;
}

}  // namespace tally::executor::scalar
