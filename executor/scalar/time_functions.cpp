// Operators and functions of time without time zone, with PostgreSQL 15's
// result types: time_mi_time, time_pl_interval / time_mi_interval (the
// interval's months and days are ignored, the result wraps at midnight),
// datetime_timestamp (date + time), and extract/date_part (time_part_common).
#include "executor/scalar/time_functions.hpp"

#include "common/error.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar/interval_functions.hpp"
#include "executor/scalar_functions.hpp"

namespace tally::executor::scalar {
namespace {

int64_t micros_of(const Value& v) { return std::get<int64_t>(v); }

// time_pl_interval: the interval's time part added modulo a day.
int64_t time_plus(int64_t time, int64_t span_micros) {
  int64_t r = (time + span_micros % kUsecsPerDay) % kUsecsPerDay;
  if (r < 0) r += kUsecsPerDay;
  return r;
}

// datetime_timestamp: the date's midnight plus the time; infinite dates stay
// infinite, the end of the timestamp range is 22008.
Value date_plus_time(int64_t date, int64_t time) {
  if (date == INT32_MIN) return INT64_MIN;
  if (date == INT32_MAX) return INT64_MAX;
  const __int128 r = static_cast<__int128>(date) * kUsecsPerDay + time;
  // Timestamps end before 294277-01-01 (julian 109203528, PostgreSQL's END_TIMESTAMP).
  constexpr int64_t kEndMicros = (109203528LL - 2451545LL) * kUsecsPerDay;
  if (r >= kEndMicros) throw Error(SqlState::datetime_field_overflow, "timestamp out of range");
  return static_cast<int64_t>(r);
}

Numeric extract_time(const std::string& field, int64_t time) {
  const std::string unit = canonical_unit(utf8_lower(field));
  const int64_t of_minute = time % kUsecsPerMinute;
  if (unit == "microseconds") return {of_minute, 0};
  if (unit == "milliseconds") return {of_minute, 3};
  if (unit == "second") return {of_minute, 6};
  if (unit == "minute") return Numeric::from_int(time / kUsecsPerMinute % 60);
  if (unit == "hour") return Numeric::from_int(time / kUsecsPerHour);
  if (unit == "epoch") return {time, 6};
  if (unit.empty()) {
    throw Error(SqlState::invalid_parameter_value,
                "unit \"" + field + "\" not recognized for type time without time zone");
  }
  throw Error(SqlState::feature_not_supported, "unit \"" + field + "\" not supported for type time without time zone");
}

}  // namespace

ExprPtr make_time_operator(const std::string& op, ExprPtr& left, ExprPtr& right, BindContext& context) {
  TypeId l = left->type.id, r = right->type.id;
  if (l != TypeId::time && r != TypeId::time) return nullptr;
  if (op == "*" || op == "/") {
    // No time * number: PostgreSQL casts the time to interval (an implicit cast) and multiplies that.
    if (l == TypeId::time && numeric_rank(r) != 0) {
      left = to_type(std::move(left), TypeId::interval, context);
      return make_interval_operator(op, left, right, context);
    }
    if (op == "*" && numeric_rank(l) != 0 && r == TypeId::time) {
      right = to_type(std::move(right), TypeId::interval, context);
      return make_interval_operator(op, left, right, context);
    }
    return nullptr;
  }
  if (op != "+" && op != "-") return nullptr;
  // An untyped literal beside a time: time - 'x' is time - time, time + 'x' time + interval.
  if (l == TypeId::time && r == TypeId::unknown) {
    right = to_type(std::move(right), op == "-" ? TypeId::time : TypeId::interval, context);
    r = right->type.id;
  } else if (r == TypeId::time && l == TypeId::unknown && op == "+") {
    left = to_type(std::move(left), TypeId::interval, context);
    l = left->type.id;
  }
  if (l == TypeId::time && r == TypeId::time && op == "+") {
    // PostgreSQL finds both time + interval and interval + time through the implicit time -> interval cast.
    throw Error(SqlState::ambiguous_function, "operator is not unique: " + format_type(left->type) + " + " +
                                                  format_type(right->type))
        .with_hint("Could not choose a best candidate operator. You might need to add explicit type casts.");
  }
  if (l == TypeId::time && r == TypeId::time && op == "-") {
    return call({TypeId::interval}, op, pack(std::move(left), std::move(right)), [](std::span<const Value> a) -> Value {
      return Interval{0, 0, micros_of(a[0]) - micros_of(a[1])};
    });
  }
  const bool minus = op == "-";
  if (l == TypeId::time && r == TypeId::interval) {
    return call({TypeId::time}, op, pack(std::move(left), std::move(right)), [minus](std::span<const Value> a) -> Value {
      const int64_t span = std::get<Interval>(a[1]).micros;
      return time_plus(micros_of(a[0]), minus ? -span : span);
    });
  }
  if (l == TypeId::interval && r == TypeId::time && !minus) {
    return call({TypeId::time}, op, pack(std::move(left), std::move(right)), [](std::span<const Value> a) -> Value {
      return time_plus(micros_of(a[1]), std::get<Interval>(a[0]).micros);
    });
  }
  if (!minus && ((l == TypeId::date && r == TypeId::time) || (l == TypeId::time && r == TypeId::date))) {
    const bool date_first = l == TypeId::date;
    return call({TypeId::timestamp}, op, pack(std::move(left), std::move(right)), [date_first](std::span<const Value> a) -> Value {
      return date_plus_time(micros_of(a[date_first ? 0 : 1]), micros_of(a[date_first ? 1 : 0]));
    });
  }
  return nullptr;
}

ExprPtr make_time_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  if ((name == "date_part" || name == "extract") && args.size() == 2 && args[1]->type.id == TypeId::time) {
    args[0] = to_type(std::move(args[0]), TypeId::text, context);
    const bool numeric_result = name == "extract";
    return call({numeric_result ? TypeId::numeric : TypeId::float8}, name, std::move(args),
                [numeric_result](std::span<const Value> a) -> Value {
                  const Numeric v = extract_time(std::get<std::string>(a[0]), micros_of(a[1]));
                  if (numeric_result) return v;
                  return v.to_double();
                });
  }
  return nullptr;
}

}  // namespace tally::executor::scalar
