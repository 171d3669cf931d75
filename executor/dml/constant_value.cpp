#include "executor/dml/constant_value.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "executor/ddl/session_sequences.hpp"
#include "executor/ddl/type_name.hpp"
#include "executor/dml/column_default.hpp"
#include "executor/types/time_zone.hpp"
#include "executor/types/timetz.hpp"
#include "executor/types/type_io.hpp"

namespace tally::executor {
namespace {

enum class Category { boolean, integer, floating, numeric, text, date, timestamp, timestamptz, time, timetz, bytea, other };

Category category(TypeId id) {
  switch (id) {
    case TypeId::boolean: return Category::boolean;
    case TypeId::int2: case TypeId::int4: case TypeId::int8: return Category::integer;
    case TypeId::float4: case TypeId::float8: return Category::floating;
    case TypeId::numeric: return Category::numeric;
    case TypeId::text: case TypeId::varchar: case TypeId::bpchar: return Category::text;
    case TypeId::date: return Category::date;
    case TypeId::timestamp: return Category::timestamp;
    case TypeId::timestamptz: return Category::timestamptz;
    case TypeId::time: return Category::time;
    case TypeId::timetz: return Category::timetz;
    case TypeId::bytea: return Category::bytea;
    default: return Category::other;
  }
}

std::string type_display(SqlType t) {
  if (t.id == TypeId::numeric && t.typmod < 4) return "numeric";
  if (t.id == TypeId::varchar && t.typmod < 4) return "character varying";
  return format_type(t);
}

ConstantValue typed(SqlType type, std::string text, int location) {
  ConstantValue v;
  v.kind = ConstantValue::Kind::typed;
  v.type = type;
  v.text = std::move(text);
  v.location = location;
  return v;
}

[[noreturn]] void out_of_range(TypeId id) {
  const char* name = id == TypeId::int2 ? "smallint" : id == TypeId::int4 ? "integer" : "bigint";
  throw Error(SqlState::numeric_value_out_of_range, std::string(name) + " out of range");
}

std::string int_text(TypeId target, __int128 v) {
  const __int128 lo = target == TypeId::int2 ? INT16_MIN : target == TypeId::int4 ? INT32_MIN : INT64_MIN;
  const __int128 hi = target == TypeId::int2 ? INT16_MAX : target == TypeId::int4 ? INT32_MAX : INT64_MAX;
  if (v < lo || v > hi) out_of_range(target);
  std::string s;
  types::append_int(s, static_cast<int64_t>(v));
  return s;
}

// Numeric literal text -> integer, rounding half away from zero.
__int128 numeric_to_integer(const std::string& text, TypeId target) {
  try {
    return types::parse_numeric(text, 18, 0);
  } catch (const Error& e) {
    if (e.state() == SqlState::numeric_value_out_of_range) out_of_range(target);
    throw;
  }
}

std::string float_text(TypeId target, double v) {
  std::string s;
  if (target == TypeId::float4) {
    if (std::isinf(static_cast<float>(v)) && !std::isinf(v))
      throw Error(SqlState::numeric_value_out_of_range, "value out of range: overflow");
    if (static_cast<float>(v) == 0 && v != 0)
      throw Error(SqlState::numeric_value_out_of_range, "value out of range: underflow");
    types::append_float4(s, static_cast<float>(v));
  } else {
    types::append_float8(s, v);
  }
  return s;
}

std::string numeric_text(SqlType target, const std::string& decimal_text) {
  std::string s;
  if (target.typmod < 4) {
    const types::NumericValue n = types::parse_numeric_any(decimal_text);
    types::append_numeric(s, n.mantissa, n.scale);
    return s;
  }
  types::append_numeric(s, types::parse_numeric128(decimal_text, target.numeric_precision(), target.numeric_scale()),
                        target.numeric_scale());
  return s;
}

// float8 -> numeric keeps DBL_DIG (15) significant digits, float4 -> numeric
// FLT_DIG (6), as PostgreSQL's float8_numeric/float4_numeric print them.
std::string float_as_numeric_text(const ConstantValue& v, double d) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", v.type.id == TypeId::float4 ? 6 : 15, d);
  return buffer;
}

// The value's text in its input-function form for numeric conversion.
double as_double(const ConstantValue& v) {
  const double d = types::parse_float8(v.text);
  // numeric has no negative zero: -0.0 as a numeric literal is 0.
  return d == 0 && v.type.id != TypeId::float4 && v.type.id != TypeId::float8 ? 0.0 : d;
}

}  // namespace

bool is_constant_item(const nlohmann::json& expr) {
  if (expr.contains("A_Const") || expr.contains("ParamRef") || expr.contains("SetToDefault")) return true;
  if (expr.contains("TypeCast")) return is_constant_item(expr["TypeCast"].at("arg"));
  if (expr.contains("A_Expr")) {
    const auto& e = expr["A_Expr"];
    const std::string op = e.contains("name") ? e["name"].back().at("String").value("sval", std::string()) : "";
    return !e.contains("lexpr") && e.contains("rexpr") && e.value("kind", std::string()) == "AEXPR_OP" &&
           (op == "-" || op == "+") && is_constant_item(e["rexpr"]);
  }
  return !dml::nextval_argument(expr).empty();
}

ConstantValue evaluate_constant(const StatementContext& ctx, const nlohmann::json& expr) {
  if (expr.contains("A_Const")) {
    const auto& c = expr["A_Const"];
    const int location = c.value("location", -1);
    if (c.value("isnull", false)) {
      ConstantValue v;
      v.location = location;
      return v;
    }
    if (c.contains("ival")) return typed({TypeId::int4}, std::to_string(const_int(c["ival"])), location);
    if (c.contains("fval")) {
      const std::string f = c["fval"].value("fval", std::string("0"));
      // Integer literals beyond int4 arrive as fval: int8 when they fit, else numeric.
      if (f.find_first_of(".eE") == std::string::npos) {
        try {
          return typed({TypeId::int8}, std::to_string(types::parse_int8(f)), location);
        } catch (const Error&) {
        }
      }
      return typed({TypeId::numeric, -1}, f, location);
    }
    if (c.contains("sval")) {
      ConstantValue v;
      v.kind = ConstantValue::Kind::unknown_literal;
      v.text = c["sval"].value("sval", std::string());
      v.location = location;
      return v;
    }
    if (c.contains("boolval")) return typed({TypeId::boolean}, c["boolval"].value("boolval", false) ? "t" : "f", location);
    throw std::move(Error(SqlState::feature_not_supported, "bit string constants are not supported")
                        .with_position(ctx.position(location)));
  }
  if (expr.contains("ParamRef")) {
    const auto& ref = expr["ParamRef"];
    const int number = ref.value("number", 0);
    const int location = ref.value("location", -1);
    if (number < 1 || static_cast<size_t>(number) > ctx.parameters.size())
      throw std::move(Error(SqlState::undefined_parameter, "there is no parameter $" + std::to_string(number))
                          .with_position(ctx.position(location)));
    const StatementParameter& p = ctx.parameters[static_cast<size_t>(number - 1)];
    if (!p.text) {
      ConstantValue v;
      v.location = location;
      return v;
    }
    return typed(p.type, *p.text, location);
  }
  if (expr.contains("SetToDefault")) {
    // The column's DEFAULT (dml/column_default.hpp) is the caller's to apply.
    ConstantValue v;
    v.is_default = true;
    v.location = expr["SetToDefault"].value("location", -1);
    return v;
  }
  if (expr.contains("TypeCast")) {
    const auto& tc = expr["TypeCast"];
    ConstantValue arg = evaluate_constant(ctx, tc.at("arg"));
    const auto& tn = tc.at("typeName");
    SqlType target;
    const auto& names = tn.at("names");
    const std::string last = names.back().at("String").value("sval", std::string());
    if ((last == "numeric" || last == "decimal") && !tn.contains("typmods")) {
      target = {TypeId::numeric, -1};
    } else {
      target = resolve_type_name(ctx, tn);
    }
    if (arg.location < 0) arg.location = tc.value("location", -1);
    ConstantValue out = cast_constant(ctx, arg, target, true);
    out.location = arg.location;
    return out;
  }
  if (expr.contains("A_Expr")) {
    const auto& e = expr["A_Expr"];
    const int location = e.value("location", -1);
    const bool unary = !e.contains("lexpr") && e.contains("rexpr") && e.value("kind", std::string()) == "AEXPR_OP";
    const std::string op = e.contains("name") ? e["name"].back().at("String").value("sval", std::string()) : "";
    if (unary && (op == "-" || op == "+")) {
      ConstantValue v = evaluate_constant(ctx, e["rexpr"]);
      if (v.kind == ConstantValue::Kind::null) return v;
      const Category cat = v.kind == ConstantValue::Kind::typed ? category(v.type.id) : Category::other;
      if (cat != Category::integer && cat != Category::floating && cat != Category::numeric)
        throw std::move(Error(SqlState::undefined_function,
                              "operator does not exist: " + op + " " +
                                  (v.kind == ConstantValue::Kind::typed ? type_display(v.type) : std::string("unknown")))
                            .with_hint("No operator matches the given name and argument type. You might need to add an explicit type cast.")
                            .with_position(ctx.position(location)));
      if (op == "+") return v;
      if (cat == Category::integer) {
        v.text = int_text(v.type.id, -static_cast<__int128>(types::parse_int8(v.text)));
      } else if (!v.text.empty() && v.text[0] == '-') {
        v.text.erase(0, 1);
      } else if (v.text != "0" && v.text != "NaN") {
        v.text.insert(0, 1, '-');
      }
      v.location = location;
      return v;
    }
  }
  if (const std::string seq = dml::nextval_argument(expr); !seq.empty() && ctx.sequences) {
    // nextval('s') in VALUES (what ORMs and pg_dump send for serial columns).
    return typed(SqlType{TypeId::int8}, std::to_string(ctx.sequences->nextval(seq)), expr["FuncCall"].value("location", -1));
  }
  const int location = expr.begin().value().is_object() ? expr.begin().value().value("location", -1) : -1;
  throw std::move(Error(SqlState::feature_not_supported,
                        "only constant values (literals, casts of literals, NULL, DEFAULT) are supported in "
                        "INSERT ... VALUES by Tally")
                      .with_position(ctx.position(location)));
}

ConstantValue cast_constant(const StatementContext& ctx, const ConstantValue& value, SqlType target,
                            bool explicit_cast, const std::string& column) {
  if (value.kind == ConstantValue::Kind::null) {
    ConstantValue v = value;
    return v;
  }
  const Category to = category(target.id);
  std::string scratch;
  try {
    if (value.kind == ConstantValue::Kind::unknown_literal) {
      // A quoted literal takes the target's input function.
      if (to == Category::text) {
        types::check_utf8(value.text);
        return typed(target, std::string(types::coerce_char(target, value.text, scratch, explicit_cast)), value.location);
      }
      if (to == Category::numeric) return typed(target, numeric_text(target, value.text), value.location);
      if (to == Category::bytea) {
        std::string s;
        types::append_bytea(s, types::parse_bytea(value.text));
        return typed(target, s, value.location);
      }
      uint8_t native[8];
      types::parse_text_value(target, value.text, native);
      std::string s;
      types::append_text_value(s, target, native);
      return typed(target, s, value.location);
    }
    const Category from = category(value.type.id);
    const bool same = value.type.id == target.id;
    auto incompatible = [&]() -> Error {
      if (explicit_cast)
        return std::move(Error(SqlState::cannot_coerce, "cannot cast type " + type_display(value.type) + " to " +
                                                            type_display(target))
                             .with_position(ctx.position(value.location)));
      return std::move(Error(SqlState::datatype_mismatch, "column \"" + column + "\" is of type " +
                                                              format_type(target) + " but expression is of type " +
                                                              type_display(value.type))
                           .with_hint("You will need to rewrite or cast the expression.")
                           .with_position(ctx.position(value.location)));
    };
    switch (to) {
      case Category::text: {
        std::string text = value.text;
        if (from == Category::boolean) text = value.text == "t" ? "true" : "false";
        return typed(target, std::string(types::coerce_char(target, text, scratch, explicit_cast)), value.location);
      }
      case Category::boolean:
        if (same) return value;
        if (from == Category::text && explicit_cast)
          return typed(target, types::parse_bool(value.text) ? "t" : "f", value.location);
        if (from == Category::integer && value.type.id == TypeId::int4 && explicit_cast)
          return typed(target, types::parse_int4(value.text) != 0 ? "t" : "f", value.location);
        throw incompatible();
      case Category::integer:
        if (from == Category::integer) return typed(target, int_text(target.id, types::parse_int8(value.text)), value.location);
        if (from == Category::numeric) return typed(target, int_text(target.id, numeric_to_integer(value.text, target.id)), value.location);
        if (from == Category::floating) {
          const double d = std::rint(as_double(value));  // float -> int rounds half to even
          if (std::isnan(d) || d < -9.3e18 || d > 9.3e18) out_of_range(target.id);
          return typed(target, int_text(target.id, static_cast<__int128>(d)), value.location);
        }
        if (from == Category::boolean && target.id == TypeId::int4 && explicit_cast)
          return typed(target, value.text == "t" ? "1" : "0", value.location);
        if (from == Category::text && explicit_cast) {
          uint8_t native[8];
          types::parse_text_value(target, value.text, native);
          std::string s;
          types::append_text_value(s, target, native);
          return typed(target, s, value.location);
        }
        throw incompatible();
      case Category::floating:
        if (from == Category::integer || from == Category::numeric || from == Category::floating)
          return typed(target, float_text(target.id, as_double(value)), value.location);
        if (from == Category::text && explicit_cast)
          return typed(target, float_text(target.id, target.id == TypeId::float4 ? types::parse_float4(value.text)
                                                                                   : types::parse_float8(value.text)),
                       value.location);
        throw incompatible();
      case Category::numeric:
        if (from == Category::integer || from == Category::numeric ||
            (from == Category::text && explicit_cast))
          return typed(target, numeric_text(target, value.text), value.location);
        if (from == Category::floating) {
          const double d = as_double(value);
          if (std::isinf(d))
            throw Error(SqlState::feature_not_supported, "cannot convert infinity to numeric");
          if (std::isnan(d)) throw Error(SqlState::feature_not_supported, "NaN is not supported in numeric columns");
          return typed(target, numeric_text(target, float_as_numeric_text(value, d)), value.location);
        }
        throw incompatible();
      case Category::date:
        if (same) return value;
        // timestamptz's text is already in the session's zone: its offset drops.
        if (from == Category::timestamp || from == Category::timestamptz) {
          const int64_t ts = types::parse_timestamp(value.text);
          int32_t days;
          if (ts == types::timestamp_neg_infinity) days = types::date_neg_infinity;
          else if (ts == types::timestamp_pos_infinity) days = types::date_pos_infinity;
          else days = static_cast<int32_t>(ts >= 0 ? ts / types::usecs_per_day
                                                   : -((-ts + types::usecs_per_day - 1) / types::usecs_per_day));
          std::string s;
          types::append_date(s, days);
          return typed(target, s, value.location);
        }
        if (from == Category::text && explicit_cast) {
          std::string s;
          types::append_date(s, types::parse_date(value.text));
          return typed(target, s, value.location);
        }
        throw incompatible();
      case Category::timestamp:
        if (same) return value;
        if (from == Category::date || from == Category::timestamptz || (from == Category::text && explicit_cast)) {
          std::string s;
          if (from == Category::date) {
            const int32_t d = types::parse_date(value.text);
            types::append_timestamp(s, d == types::date_neg_infinity   ? types::timestamp_neg_infinity
                                       : d == types::date_pos_infinity ? types::timestamp_pos_infinity
                                                                       : d * types::usecs_per_day);
          } else {
            types::append_timestamp(s, types::parse_timestamp(value.text));
          }
          return typed(target, s, value.location);
        }
        throw incompatible();
      case Category::timestamptz: {
        if (same) return value;
        // A date or timestamp is a local time of the session's zone.
        int64_t instant;
        if (from == Category::date) {
          const int32_t d = types::parse_date(value.text);
          instant = d == types::date_neg_infinity   ? types::timestamp_neg_infinity
                    : d == types::date_pos_infinity ? types::timestamp_pos_infinity
                                                    : types::current_time_zone().to_utc(d * types::usecs_per_day);
        } else if (from == Category::timestamp) {
          instant = types::current_time_zone().to_utc(types::parse_timestamp(value.text));
        } else if (from == Category::text && explicit_cast) {
          instant = types::parse_timestamptz(value.text);
        } else {
          throw incompatible();
        }
        std::string s;
        types::append_timestamptz(s, instant);
        return typed(target, s, value.location);
      }
      case Category::time: {
        // time(p) rounds a time of another precision; a timestamp gives its time of day.
        int64_t micros;
        if (same || (from == Category::text && explicit_cast)) {
          micros = types::parse_time(value.text, target.typmod);
        } else if (from == Category::timestamp || from == Category::timestamptz) {
          const int64_t ts = types::parse_timestamp(value.text);
          if (ts == types::timestamp_neg_infinity || ts == types::timestamp_pos_infinity) {
            ConstantValue null_value;  // timestamp_time: an infinite timestamp has no time of day
            null_value.location = value.location;
            return null_value;
          }
          micros = types::round_time(((ts % types::usecs_per_day) + types::usecs_per_day) % types::usecs_per_day,
                                     target.typmod);
        } else {
          throw incompatible();
        }
        std::string s;
        types::append_time(s, micros);
        return typed(target, s, value.location);
      }
      case Category::timetz: {
        // A time takes the session zone's offset; a timestamptz its local time of day.
        int64_t packed;
        if (same || (from == Category::text && explicit_cast)) packed = types::parse_timetz(value.text, target.typmod);
        else if (from == Category::time) packed = types::time_to_timetz(types::parse_time(value.text, target.typmod));
        else if (from == Category::timestamptz) {
          const int64_t ts = types::parse_timestamptz(value.text);
          if (ts == types::timestamp_neg_infinity || ts == types::timestamp_pos_infinity) {
            ConstantValue null_value;  // timestamptz_timetz: an infinite timestamp has no time of day
            null_value.location = value.location;
            return null_value;
          }
          packed = types::round_timetz(types::timestamptz_to_timetz(ts), target.typmod);
        } else {
          throw incompatible();
        }
        std::string s;
        types::append_timetz(s, packed);
        return typed(target, s, value.location);
      }
      case Category::bytea:
        if (same) return value;
        if (from == Category::text && explicit_cast) {
          std::string s;
          types::append_bytea(s, types::parse_bytea(value.text));
          return typed(target, s, value.location);
        }
        throw incompatible();
      default:
        // A parameter bound as the column's own type (interval, ...).
        if (same) return value;
        throw incompatible();
    }
  } catch (Error& e) {
    // Input-function errors point at the literal, as PostgreSQL's do; the
    // typmod checks (length, precision) run later there and carry no position.
    if (e.position() == 0 && value.kind == ConstantValue::Kind::unknown_literal &&
        e.state() != SqlState::string_data_right_truncation &&
        std::string_view(e.what()) != "numeric field overflow")
      e.with_position(ctx.position(value.location));
    throw;
  }
}

}  // namespace tally::executor
