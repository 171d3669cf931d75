// Operators and functions of the interval type: date/timestamp ± interval,
// timestamp - timestamp, interval ± interval, interval * / number, unary
// minus, extract / date_part / date_trunc of an interval, age, make_interval,
// justify_days / justify_hours, with PostgreSQL 15's result types.
#include <ctime>

#include "common/error.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar/interval_functions.hpp"
#include "executor/scalar/interval_math.hpp"
#include "executor/scalar_functions.hpp"
#include "executor/types/time_zone.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::scalar {

std::string canonical_unit(const std::string& field) {
  struct Alias { const char* name; const char* unit; };
  static const Alias aliases[] = {
      {"microsecond", "microseconds"}, {"microseconds", "microseconds"}, {"us", "microseconds"},
      {"usec", "microseconds"}, {"usecs", "microseconds"}, {"millisecond", "milliseconds"},
      {"milliseconds", "milliseconds"}, {"ms", "milliseconds"}, {"msec", "milliseconds"}, {"msecs", "milliseconds"},
      {"second", "second"}, {"seconds", "second"}, {"sec", "second"}, {"secs", "second"}, {"s", "second"},
      {"minute", "minute"}, {"minutes", "minute"}, {"min", "minute"}, {"mins", "minute"}, {"m", "minute"},
      {"hour", "hour"}, {"hours", "hour"}, {"h", "hour"}, {"hr", "hour"}, {"hrs", "hour"}, {"day", "day"},
      {"days", "day"}, {"d", "day"}, {"week", "week"}, {"weeks", "week"}, {"w", "week"}, {"month", "month"},
      {"months", "month"}, {"mon", "month"}, {"mons", "month"}, {"quarter", "quarter"}, {"qtr", "quarter"},
      {"year", "year"}, {"years", "year"}, {"y", "year"}, {"yr", "year"}, {"yrs", "year"}, {"decade", "decade"},
      {"decades", "decade"}, {"dec", "decade"}, {"century", "century"}, {"centuries", "century"},
      {"c", "century"}, {"millennium", "millennium"}, {"millennia", "millennium"}, {"mil", "millennium"},
      {"epoch", "epoch"}, {"dow", "dow"}, {"isodow", "isodow"}, {"doy", "doy"}, {"isoyear", "isoyear"},
      {"julian", "julian"}, {"timezone", "timezone"}, {"timezone_hour", "timezone_hour"},
      {"timezone_minute", "timezone_minute"}};
  for (const Alias& a : aliases) {
    if (field == a.name) return a.unit;
  }
  return {};
}

namespace {

const Interval& iv(const Value& v) { return std::get<Interval>(v); }
int64_t ts(const Value& v) { return std::get<int64_t>(v); }

bool is_timestamp(TypeId id) { return id == TypeId::timestamp || id == TypeId::timestamptz; }

// A date operand becomes a timestamp at midnight (infinite dates stay infinite).
ExprPtr as_timestamp(ExprPtr e, BindContext& context) {
  if (e->type.id == TypeId::date) return to_type(std::move(e), TypeId::timestamp, context);
  return e;
}

ExprPtr plus_interval(ExprPtr stamp, ExprPtr span, bool minus, const std::string& op, BindContext& context) {
  stamp = as_timestamp(std::move(stamp), context);
  const SqlType result = stamp->type;
  if (result.id == TypeId::timestamptz) {
    // PostgreSQL's timestamptz_pl_interval: months and days move the local
    // time of the session's zone (a day is 23 or 25 hours across a daylight
    // change), the rest of the interval the instant.
    return call(result, op, pack(std::move(stamp), std::move(span)), [minus](std::span<const Value> a) -> Value {
      return timestamptz_plus_interval(ts(a[0]), minus ? interval_negate(iv(a[1])) : iv(a[1]));
    });
  }
  return call(result, op, pack(std::move(stamp), std::move(span)), [minus](std::span<const Value> a) -> Value {
    return timestamp_plus_interval(ts(a[0]), minus ? interval_negate(iv(a[1])) : iv(a[1]));
  });
}

std::string lower_field(const Value& v) { return utf8_lower(std::get<std::string>(v)); }

Error unit_error(const std::string& field, const std::string& unit) {
  if (unit.empty()) {
    return Error(SqlState::invalid_parameter_value, "unit \"" + field + "\" not recognized for type interval");
  }
  return Error(SqlState::feature_not_supported, "unit \"" + field + "\" not supported for type interval");
}

Numeric extract_interval(const std::string& field, const Interval& v) {
  const std::string unit = canonical_unit(field);
  const IntervalFields f = interval_fields(v);
  auto whole = [](int64_t x) { return Numeric::from_int(x); };
  if (unit == "microseconds") return {f.micros_of_minute, 0};
  if (unit == "milliseconds") return {f.micros_of_minute, 3};
  if (unit == "second") return {f.micros_of_minute, 6};
  if (unit == "minute") return whole(f.minutes);
  if (unit == "hour") return whole(f.hours);
  if (unit == "day") return whole(f.days);
  if (unit == "month") return whole(f.months);
  if (unit == "quarter") return whole(f.months / 3 + 1);
  if (unit == "year") return whole(f.years);
  if (unit == "decade") return whole(f.years / 10);
  if (unit == "century") return whole(f.years / 100);
  if (unit == "millennium") return whole(f.years / 1000);
  if (unit == "epoch") {
    // A year counts 365.25 days and a month 30, as PostgreSQL's interval epoch does.
    const __int128 secs = static_cast<__int128>(31'557'600) * (v.months / 12) +
                          static_cast<__int128>(2'592'000) * (v.months % 12) + static_cast<__int128>(86'400) * v.days;
    return {secs * 1'000'000 + v.micros, 6};
  }
  throw unit_error(field, unit);
}

Interval truncate_interval(const std::string& field, const Interval& v) {
  const std::string unit = canonical_unit(field);
  IntervalFields f = interval_fields(v);
  if (unit == "week") {
    throw Error(SqlState::feature_not_supported, "interval units \"" + field + "\" not supported because months usually have fractional weeks");
  }
  // Each unit clears every smaller field (PostgreSQL's fall-through switch).
  static const char* const order[] = {"millennium", "century", "decade", "year", "quarter", "month", "day",
                                      "hour", "minute", "second", "milliseconds", "microseconds"};
  int level = -1;
  for (int i = 0; i < 12; ++i) {
    if (unit == order[i]) level = i;
  }
  if (level < 0) throw unit_error(field, unit);
  if (level == 0) f.years = f.years / 1000 * 1000;
  if (level == 1) f.years = f.years / 100 * 100;
  if (level == 2) f.years = f.years / 10 * 10;
  if (level <= 3) f.months = 0;
  if (level == 4) f.months = 3 * (f.months / 3);
  if (level <= 5) f.days = 0;
  if (level <= 6) f.hours = 0;
  if (level <= 7) f.minutes = 0;
  if (level <= 8) f.micros_of_minute = 0;
  if (level == 9) f.micros_of_minute = f.micros_of_minute / 1'000'000 * 1'000'000;
  if (level == 10) f.micros_of_minute = f.micros_of_minute / 1000 * 1000;
  return {static_cast<int32_t>(f.years * 12 + f.months), static_cast<int32_t>(f.days),
          (f.hours * 60 + f.minutes) * kUsecsPerMinute + f.micros_of_minute};
}

struct Fields {
  int year, month, day;
  int64_t time;  // microseconds of the day
};

Fields fields_of(int64_t stamp) {
  if (stamp == INT64_MIN || stamp == INT64_MAX) {
    throw Error(SqlState::datetime_field_overflow, "timestamp out of range");
  }
  int64_t days = stamp / kUsecsPerDay, time = stamp % kUsecsPerDay;
  if (time < 0) {
    time += kUsecsPerDay;
    --days;
  }
  Fields f{};
  civil_from_days(static_cast<int32_t>(days), f.year, f.month, f.day);
  f.time = time;
  return f;
}

int days_in(int year, int month) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
  return month == 2 && leap ? 29 : days[month - 1];
}

// PostgreSQL's timestamp_age: the field-by-field difference, borrowing from
// the next larger field with the month lengths of the earlier operand's month.
Interval age(int64_t a, int64_t b) {
  const Fields x = fields_of(a), y = fields_of(b);
  const bool flip = a < b;
  const int sign = flip ? -1 : 1;
  int64_t time = sign * (x.time - y.time);
  int64_t day = sign * (x.day - y.day), month = sign * (x.month - y.month), year = sign * (x.year - y.year);
  while (time < 0) {
    time += kUsecsPerDay;
    --day;
  }
  const Fields& borrow = flip ? x : y;
  while (day < 0) {
    day += days_in(borrow.year, borrow.month);
    --month;
  }
  while (month < 0) {
    month += 12;
    --year;
  }
  return {static_cast<int32_t>(sign * (year * 12 + month)), static_cast<int32_t>(sign * day), sign * time};
}

}  // namespace

ExprPtr make_interval_arithmetic(const std::string& op, ExprPtr& left, ExprPtr& right, BindContext& context);

namespace {

// A call over constants only is evaluated once, here, as PostgreSQL's planner
// folds immutable functions: date '1998-12-01' - interval '90' day is one timestamp.
ExprPtr folded(ExprPtr e) {
  auto* f = dynamic_cast<FunctionExpr*>(e.get());
  if (f == nullptr) return e;
  for (const auto& a : f->args) {
    if (!a->is_constant()) return e;
  }
  return std::make_unique<ConstExpr>(e->type, evaluate_constant(*e, nullptr));
}

// date_column <op> timestamp_constant as the equivalent comparison of dates,
// so the column is not cast to timestamp row by row (TPC-H's filters:
// l_shipdate <= date '1998-12-01' - interval '90' day). nullptr when the
// shape differs or the rewrite would not be exact.
ExprPtr date_versus_timestamp_constant(std::string op, ExprPtr& left, ExprPtr& right, BindContext& context) {
  const bool flipped = left->type.id != TypeId::date;
  ExprPtr& column = flipped ? right : left;
  ExprPtr& bound = flipped ? left : right;
  auto* konst = dynamic_cast<ConstExpr*>(bound.get());
  if (column->type.id != TypeId::date || konst == nullptr || !is_timestamp(konst->type.id) || is_null(konst->value)) {
    return nullptr;
  }
  const int64_t stamp = std::get<int64_t>(konst->value);
  if (stamp == INT64_MIN || stamp == INT64_MAX) return nullptr;
  if (flipped) op = op == "<" ? ">" : op == ">" ? "<" : op == "<=" ? ">=" : op == ">=" ? "<=" : op;
  int64_t day = stamp / kUsecsPerDay;
  if (stamp % kUsecsPerDay < 0) --day;
  const bool midnight = stamp == day * kUsecsPerDay;
  // Between two midnights, d < t is d <= floor(t) and d >= t is d > floor(t).
  if (!midnight) {
    if (op == "<") op = "<=";
    else if (op == ">=") op = ">";
    else if (op != "<=" && op != ">") return nullptr;  // = and <> keep the general path
  }
  ExprPtr date_bound = std::make_unique<ConstExpr>(SqlType{TypeId::date}, day);
  return make_binary_operator(op, std::move(column), std::move(date_bound), context);
}

}  // namespace

ExprPtr make_interval_operator(const std::string& op, ExprPtr& left, ExprPtr& right, BindContext& context) {
  if (op == "<" || op == "<=" || op == ">" || op == ">=" || op == "=" || op == "<>") {
    return date_versus_timestamp_constant(op, left, right, context);
  }
  if (ExprPtr e = make_interval_arithmetic(op, left, right, context)) return folded(std::move(e));
  return nullptr;
}

ExprPtr make_interval_arithmetic(const std::string& op, ExprPtr& left, ExprPtr& right, BindContext& context) {
  const TypeId l = left->type.id, r = right->type.id;
  const bool l_iv = l == TypeId::interval, r_iv = r == TypeId::interval;
  const bool l_dt = l == TypeId::date || is_timestamp(l), r_dt = r == TypeId::date || is_timestamp(r);
  if (op == "+" || op == "-") {
    // An untyped literal beside a timestamp is the interval (timestamp - 'x': a timestamp).
    if (is_timestamp(l) && r == TypeId::unknown) {
      right = to_type(std::move(right), op == "+" ? TypeId::interval : l, context);
      return make_interval_arithmetic(op, left, right, context);
    }
    if ((l_iv && r == TypeId::unknown) || (l == TypeId::unknown && r_iv)) {
      if (l_iv) right = to_type(std::move(right), TypeId::interval, context);
      else left = to_type(std::move(left), TypeId::interval, context);
      return make_interval_arithmetic(op, left, right, context);
    }
    if (l_dt && r_iv) return plus_interval(std::move(left), std::move(right), op == "-", op, context);
    if (l_iv && r_dt && op == "+") return plus_interval(std::move(right), std::move(left), false, op, context);
    if (l_iv && r_iv) {
      const bool minus = op == "-";
      return call({TypeId::interval}, op, pack(std::move(left), std::move(right)), [minus](std::span<const Value> a) -> Value {
        return interval_add(iv(a[0]), minus ? interval_negate(iv(a[1])) : iv(a[1]));
      });
    }
    if (op == "-" && ((is_timestamp(l) && r_dt) || (l_dt && is_timestamp(r)))) {
      left = as_timestamp(std::move(left), context);
      right = as_timestamp(std::move(right), context);
      if (left->type.id != right->type.id) {
        left = to_type(std::move(left), TypeId::timestamptz, context);
        right = to_type(std::move(right), TypeId::timestamptz, context);
      }
      return call({TypeId::interval}, op, pack(std::move(left), std::move(right)), [](std::span<const Value> a) -> Value {
        return timestamp_difference(ts(a[0]), ts(a[1]));
      });
    }
    return nullptr;
  }
  if (op == "*" || op == "/") {
    auto number = [](TypeId t) { return numeric_rank(t) != 0 || t == TypeId::unknown; };
    if (l_iv && number(r)) {
      right = to_type(std::move(right), TypeId::float8, context);
      const bool divide = op == "/";
      return call({TypeId::interval}, op, pack(std::move(left), std::move(right)), [divide](std::span<const Value> a) -> Value {
        const double x = std::get<double>(a[1]);
        return divide ? interval_divide(iv(a[0]), x) : interval_multiply(iv(a[0]), x);
      });
    }
    if (op == "*" && number(l) && r_iv) {
      left = to_type(std::move(left), TypeId::float8, context);
      return call({TypeId::interval}, op, pack(std::move(left), std::move(right)), [](std::span<const Value> a) -> Value {
        return interval_multiply(iv(a[1]), std::get<double>(a[0]));
      });
    }
  }
  return nullptr;
}

SqlType interval_type(const std::vector<int>& typmods) {
  if (typmods.empty()) return {TypeId::interval};
  const int range = typmods[0];
  const int precision = typmods.size() > 1 ? typmods[1] : types::interval_full_precision;
  if (precision != types::interval_full_precision && (precision < 0 || precision > 6)) {
    throw Error(SqlState::feature_not_supported, "interval precision " + std::to_string(precision) + " is not supported");
  }
  return {TypeId::interval, types::interval_typmod(range, precision)};
}

ExprPtr make_interval_negate(ExprPtr arg) {
  if (auto* k = dynamic_cast<ConstExpr*>(arg.get()); k != nullptr && !is_null(k->value)) {
    return std::make_unique<ConstExpr>(SqlType{TypeId::interval}, interval_negate(iv(k->value)));
  }
  return call({TypeId::interval}, "-", pack(std::move(arg)),
              [](std::span<const Value> a) -> Value { return interval_negate(iv(a[0])); });
}

ExprPtr make_interval_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  const size_t n = args.size();
  const bool second_is_interval = n == 2 && args[1]->type.id == TypeId::interval;
  if ((name == "date_part" || name == "extract") && second_is_interval) {
    args[0] = to_type(std::move(args[0]), TypeId::text, context);
    const bool numeric_result = name == "extract";
    return call({numeric_result ? TypeId::numeric : TypeId::float8}, name, std::move(args),
                [numeric_result](std::span<const Value> a) -> Value {
                  const Numeric v = extract_interval(lower_field(a[0]), iv(a[1]));
                  if (numeric_result) return v;
                  return v.to_double();
                });
  }
  if (name == "date_trunc" && second_is_interval) {
    args[0] = to_type(std::move(args[0]), TypeId::text, context);
    return call({TypeId::interval}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return truncate_interval(lower_field(a[0]), iv(a[1]));
    });
  }
  if (name == "age" && (n == 1 || n == 2)) {
    if (n == 1) {
      // age(x) is age(current_date at midnight, x).
      args.insert(args.begin(), make_sql_value_function("SVFOP_CURRENT_DATE", context));
    }
    for (auto& a : args) {
      if (a->type.id == TypeId::unknown) a = to_type(std::move(a), TypeId::timestamp, context);
      if (a->type.id != TypeId::date && !is_timestamp(a->type.id)) throw no_function(name, args);
      a = as_timestamp(std::move(a), context);
    }
    return call({TypeId::interval}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return age(ts(a[0]), ts(a[1]));
    });
  }
  if ((name == "justify_days" || name == "justify_hours") && n == 1) {
    args[0] = to_type(std::move(args[0]), TypeId::interval, context);
    const bool days = name == "justify_days";
    return call({TypeId::interval}, name, std::move(args), [days](std::span<const Value> a) -> Value {
      Interval v = iv(a[0]);
      if (days) {
        // 30 days make a month; the signs of months and days are made to agree.
        const int64_t months = static_cast<int64_t>(v.months) + v.days / 30;
        int64_t d = v.days % 30;
        int64_t m = months;
        if (m > 0 && d < 0) { d += 30; --m; }
        else if (m < 0 && d > 0) { d -= 30; ++m; }
        if (m < INT32_MIN || m > INT32_MAX) throw Error(SqlState::datetime_field_overflow, "interval out of range");
        return Interval{static_cast<int32_t>(m), static_cast<int32_t>(d), v.micros};
      }
      return justify_hours(v);
    });
  }
  return nullptr;
}

int64_t timestamptz_plus_interval(int64_t t, const Interval& span) {
  if (t == INT64_MIN || t == INT64_MAX) return t;
  if (span.months != 0 || span.days != 0) {
    const types::TimeZone& zone = types::current_time_zone();
    t = zone.to_utc(timestamp_plus_interval(zone.to_local(t), Interval{span.months, span.days, 0}));
  }
  return timestamp_plus_interval(t, Interval{0, 0, span.micros});
}

std::optional<TypeId> timestamp_series_type(TypeId start, TypeId stop, TypeId step) {
  const auto datetime = [](TypeId id) { return id == TypeId::date || id == TypeId::timestamp || id == TypeId::timestamptz; };
  if (!datetime(start) && !datetime(stop) && step != TypeId::interval) return std::nullopt;
  const bool plain = start == TypeId::timestamp || stop == TypeId::timestamp;
  const bool zoned = start == TypeId::timestamptz || stop == TypeId::timestamptz;
  return zoned || !plain ? TypeId::timestamptz : TypeId::timestamp;
}

std::vector<int64_t> timestamp_series(int64_t start, int64_t stop, const Interval& step, bool with_zone,
                                      int64_t max_rows) {
  const __int128 direction = interval_key(step);
  if (direction == 0) throw Error(SqlState::invalid_parameter_value, "step size cannot equal zero");
  std::vector<int64_t> out;
  const auto too_many = [&] {
    return Error(SqlState::feature_not_supported,
                 "generate_series of more than " + std::to_string(max_rows) + " rows is not supported");
  };
  for (int64_t t = start; direction > 0 ? t <= stop : t >= stop;
       t = with_zone ? timestamptz_plus_interval(t, step) : timestamp_plus_interval(t, step)) {
    // An infinite start never moves: PostgreSQL's series would not end.
    if (static_cast<int64_t>(out.size()) >= max_rows || t == INT64_MIN || t == INT64_MAX) throw too_many();
    out.push_back(t);
  }
  return out;
}

}  // namespace tally::executor::scalar
