#include "executor/scalar_functions.hpp"

#include <clocale>
#include <cmath>
#include <ctime>
#include <cwctype>
#include <locale.h>

#include "common/error.hpp"
#include "executor/settings.hpp"
#include "executor/value_codec.hpp"
#include "executor/vector_comparison.hpp"

namespace tally::executor {
namespace {

constexpr int64_t kUsecsPerDay = 86'400'000'000LL;
constexpr int64_t kUsecsPerHour = 3'600'000'000LL;
constexpr int64_t kUsecsPerMinute = 60'000'000LL;

int numeric_rank(TypeId id) {
  switch (id) {
    case TypeId::int2: return 1;
    case TypeId::int4: return 2;
    case TypeId::int8: return 3;
    case TypeId::numeric: return 4;
    case TypeId::float4: return 5;
    case TypeId::float8: return 6;
    default: return 0;
  }
}

bool is_datetime(TypeId id) {
  return id == TypeId::date || id == TypeId::timestamp || id == TypeId::timestamptz;
}

Error no_operator(const std::string& op, SqlType l, SqlType r) {
  return Error(SqlState::undefined_function,
               "operator does not exist: " + format_type(l) + " " + op + " " + format_type(r))
      .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts.");
}

Error no_function(const std::string& name, const std::vector<ExprPtr>& args) {
  std::string sig = name + "(";
  for (size_t i = 0; i < args.size(); ++i) sig += (i ? ", " : "") + format_type(args[i]->type);
  sig += ")";
  return Error(SqlState::undefined_function, "function " + sig + " does not exist")
      .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.");
}

ExprPtr call(SqlType result, std::string name, std::vector<ExprPtr> args, ScalarFunction fn, bool strict = true) {
  return std::make_unique<FunctionExpr>(result, std::move(name), std::move(args), std::move(fn), strict);
}

std::vector<ExprPtr> pack(ExprPtr a) {
  std::vector<ExprPtr> v;
  v.push_back(std::move(a));
  return v;
}
std::vector<ExprPtr> pack(ExprPtr a, ExprPtr b) {
  std::vector<ExprPtr> v;
  v.push_back(std::move(a));
  v.push_back(std::move(b));
  return v;
}

Error out_of_range(TypeId t) {
  const char* name = t == TypeId::int2 ? "smallint" : (t == TypeId::int4 ? "integer" : "bigint");
  return Error(SqlState::numeric_value_out_of_range, std::string(name) + " out of range");
}

int64_t int_checked(__int128 v, TypeId t) {
  __int128 lo = INT64_MIN, hi = INT64_MAX;
  if (t == TypeId::int2) { lo = INT16_MIN; hi = INT16_MAX; }
  if (t == TypeId::int4) { lo = INT32_MIN; hi = INT32_MAX; }
  if (v < lo || v > hi) throw out_of_range(t);
  return static_cast<int64_t>(v);
}

double float_checked(double r, double a, double b, bool is_float4) {
  if (std::isinf(r) && !std::isinf(a) && !std::isinf(b)) {
    throw Error(SqlState::numeric_value_out_of_range, "value out of range: overflow");
  }
  if (is_float4) {
    const float f = static_cast<float>(r);
    if (std::isinf(f) && !std::isinf(r)) throw Error(SqlState::numeric_value_out_of_range, "value out of range: overflow");
    if (f == 0 && r != 0) throw Error(SqlState::numeric_value_out_of_range, "value out of range: underflow");
    return f;
  }
  return r;
}

Error division_by_zero() { return Error(SqlState::division_by_zero, "division by zero"); }

ScalarFunction arithmetic(char op, SqlType type) {
  const TypeId t = type.id;
  if (is_integer(t)) {
    return [op, t](std::span<const Value> a) -> Value {
      const __int128 x = std::get<int64_t>(a[0]), y = std::get<int64_t>(a[1]);
      switch (op) {
        case '+': return int_checked(x + y, t);
        case '-': return int_checked(x - y, t);
        case '*': return int_checked(x * y, t);
        case '/':
          if (y == 0) throw division_by_zero();
          return int_checked(x / y, t);
        default:
          if (y == 0) throw division_by_zero();
          return int_checked(x % y, t);
      }
    };
  }
  if (t == TypeId::numeric) {
    return [op](std::span<const Value> a) -> Value {
      const Numeric& x = std::get<Numeric>(a[0]);
      const Numeric& y = std::get<Numeric>(a[1]);
      switch (op) {
        case '+': return x + y;
        case '-': return x - y;
        case '*': return x * y;
        case '/': return numeric_div(x, y);
        default: return numeric_mod(x, y);
      }
    };
  }
  const bool f4 = t == TypeId::float4;
  return [op, f4](std::span<const Value> a) -> Value {
    const double x = std::get<double>(a[0]), y = std::get<double>(a[1]);
    switch (op) {
      case '+': return float_checked(x + y, x, y, f4);
      case '-': return float_checked(x - y, x, y, f4);
      case '*': return float_checked(x * y, x, y, f4);
      default:
        if (y == 0) throw division_by_zero();
        return float_checked(x / y, x, y == 0 ? 1 : y, f4);
    }
  };
}

// The type both operands of an arithmetic/comparison operator are cast to.
SqlType arithmetic_type(SqlType l, SqlType r) {
  const int rl = numeric_rank(l.id), rr = numeric_rank(r.id);
  if (!rl || !rr) return {TypeId::unknown};
  if (l.id == TypeId::float4 && r.id == TypeId::float4) return {TypeId::float4};
  if (l.id == TypeId::float4 || r.id == TypeId::float4) return {TypeId::float8};
  if (l.id == TypeId::float8 || r.id == TypeId::float8) return {TypeId::float8};
  if (l.id == TypeId::numeric || r.id == TypeId::numeric) return {TypeId::numeric};
  return {rl >= rr ? l.id : r.id};
}

// Resolves unknown-typed operands (literals, untyped parameters) against the other side.
void resolve_unknowns(ExprPtr& left, ExprPtr& right, BindContext& context) {
  if (left->type.id == TypeId::unknown && right->type.id != TypeId::unknown) {
    left = coerce_to(std::move(left), {right->type.id}, CastContext::implicit, context);
  } else if (right->type.id == TypeId::unknown && left->type.id != TypeId::unknown) {
    right = coerce_to(std::move(right), {left->type.id}, CastContext::implicit, context);
  } else if (left->type.id == TypeId::unknown && right->type.id == TypeId::unknown) {
    left = coerce_to(std::move(left), {TypeId::text}, CastContext::implicit, context);
    right = coerce_to(std::move(right), {TypeId::text}, CastContext::implicit, context);
  }
}

ScalarFunction comparison(const std::string& op) {
  int want_lt = 0, want_eq = 0, want_gt = 0;
  if (op == "=") want_eq = 1;
  else if (op == "<>" || op == "!=") { want_lt = 1; want_gt = 1; }
  else if (op == "<") want_lt = 1;
  else if (op == "<=") { want_lt = 1; want_eq = 1; }
  else if (op == ">") want_gt = 1;
  else { want_gt = 1; want_eq = 1; }
  return [want_lt, want_eq, want_gt](std::span<const Value> a) -> Value {
    const int c = compare_values(a[0], a[1]);
    return c < 0 ? want_lt == 1 : (c == 0 ? want_eq == 1 : want_gt == 1);
  };
}

bool is_comparison(const std::string& op) {
  return op == "=" || op == "<>" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=";
}

// UTF-8 decoding for character-based text functions.
size_t utf8_char_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

std::vector<size_t> char_offsets(std::string_view s) {
  std::vector<size_t> offsets;
  for (size_t i = 0; i < s.size(); i += utf8_char_length(static_cast<unsigned char>(s[i]))) offsets.push_back(i);
  return offsets;
}

uint32_t decode(std::string_view s, size_t& i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  const size_t n = std::min(utf8_char_length(c), s.size() - i);
  uint32_t cp = n == 1 ? c : (c & (0xFF >> (n + 1)));
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += n;
  return cp;
}

void encode(std::string& out, uint32_t cp) {
  if (cp < 0x80) out.push_back(static_cast<char>(cp));
  else if (cp < 0x800) { out.push_back(static_cast<char>(0xC0 | (cp >> 6))); out.push_back(static_cast<char>(0x80 | (cp & 0x3F))); }
  else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

locale_t utf8_locale() {
  // PostgreSQL's lower()/upper() follow the database's LC_CTYPE (C.UTF-8 on
  // Debian's initdb default): full Unicode simple case mapping.
  static locale_t loc = [] {
    locale_t l = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
    return l;
  }();
  return loc;
}

std::string map_case(std::string_view s, bool upper) {
  std::string out;
  out.reserve(s.size());
  locale_t loc = utf8_locale();
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out.push_back(static_cast<char>(upper ? (c >= 'a' && c <= 'z' ? c - 32 : c) : (c >= 'A' && c <= 'Z' ? c + 32 : c)));
      ++i;
      continue;
    }
    uint32_t cp = decode(s, i);
    if (loc != static_cast<locale_t>(0)) {
      cp = static_cast<uint32_t>(upper ? towupper_l(static_cast<wint_t>(cp), loc) : towlower_l(static_cast<wint_t>(cp), loc));
    }
    encode(out, cp);
  }
  return out;
}

bool like_impl(std::string_view t, size_t ti, std::string_view p, size_t pi, bool ci) {
  while (pi < p.size()) {
    const char pc = p[pi];
    if (pc == '%') {
      while (pi < p.size() && p[pi] == '%') ++pi;
      if (pi == p.size()) return true;
      for (size_t k = ti; k <= t.size(); k += (k < t.size() ? utf8_char_length(static_cast<unsigned char>(t[k])) : 1)) {
        if (like_impl(t, k, p, pi, ci)) return true;
        if (k == t.size()) break;
      }
      return false;
    }
    if (ti >= t.size()) return false;
    if (pc == '_') {
      ti += utf8_char_length(static_cast<unsigned char>(t[ti]));
      ++pi;
      continue;
    }
    size_t plen = 1;
    if (pc == '\\') {
      ++pi;
      if (pi >= p.size()) {
        throw Error(SqlState::invalid_escape_sequence, "LIKE pattern must not end with escape character");
      }
    }
    plen = utf8_char_length(static_cast<unsigned char>(p[pi]));
    const size_t tlen = utf8_char_length(static_cast<unsigned char>(t[ti]));
    if (plen != tlen || t.compare(ti, tlen, p.substr(pi, plen)) != 0) {
      if (!ci) return false;
      if (map_case(t.substr(ti, tlen), false) != map_case(p.substr(pi, plen), false)) return false;
    }
    ti += tlen;
    pi += plen;
  }
  return ti == t.size();
}

int64_t ts_of(const Value& v) { return std::get<int64_t>(v); }

void split_timestamp(int64_t ts, int& y, int& m, int& d, int64_t& time_of_day) {
  int64_t days = ts / kUsecsPerDay;
  time_of_day = ts % kUsecsPerDay;
  if (time_of_day < 0) { time_of_day += kUsecsPerDay; --days; }
  civil_from_days(static_cast<int32_t>(days), y, m, d);
}

int64_t truncate_timestamp(const std::string& field_in, int64_t ts) {
  if (ts == INT64_MIN || ts == INT64_MAX) return ts;
  const std::string field = utf8_lower(field_in);
  int y, m, d;
  int64_t tod;
  split_timestamp(ts, y, m, d, tod);
  auto at = [](int year, int month, int day) { return static_cast<int64_t>(days_from_civil(year, month, day)) * kUsecsPerDay; };
  if (field == "microseconds") return ts;
  if (field == "milliseconds") return ts - ((ts % 1000) + 1000) % 1000;
  if (field == "second") return at(y, m, d) + tod / 1'000'000 * 1'000'000;
  if (field == "minute") return at(y, m, d) + tod / kUsecsPerMinute * kUsecsPerMinute;
  if (field == "hour") return at(y, m, d) + tod / kUsecsPerHour * kUsecsPerHour;
  if (field == "day") return at(y, m, d);
  if (field == "week") {
    const int64_t days = days_from_civil(y, m, d);
    // 2000-01-01 was a Saturday; ISO weeks start on Monday.
    int64_t dow = ((days + 5) % 7 + 7) % 7;  // 0 = Monday
    return (days - dow) * kUsecsPerDay;
  }
  if (field == "month") return at(y, m, 1);
  if (field == "quarter") return at(y, (m - 1) / 3 * 3 + 1, 1);
  if (field == "year") return at(y, 1, 1);
  if (field == "decade") return at(y >= 0 ? y / 10 * 10 : -((9 - y) / 10 * 10), 1, 1);
  if (field == "century") return at(y > 0 ? (y - 1) / 100 * 100 + 1 : -((99 - (y - 1)) / 100 * 100) + 1, 1, 1);
  if (field == "millennium") return at(y > 0 ? (y - 1) / 1000 * 1000 + 1 : -((999 - (y - 1)) / 1000 * 1000) + 1, 1, 1);
  throw Error(SqlState::feature_not_supported, "unit \"" + field_in + "\" not supported for type timestamp without time zone");
}

// extract/date_part: the value as a numeric with PostgreSQL 15's scale.
Numeric extract_field(const std::string& field_in, int64_t ts, bool is_date) {
  const std::string field = utf8_lower(field_in);
  int y, m, d;
  int64_t tod;
  split_timestamp(ts, y, m, d, tod);
  const int64_t days = days_from_civil(y, m, d);
  auto whole = [](int64_t v) { return Numeric::from_int(v); };
  if (field == "year" || field == "years") return whole(y > 0 ? y : y - 1);
  if (field == "month" || field == "mon" || field == "months") return whole(m);
  if (field == "day" || field == "days") return whole(d);
  if (field == "quarter") return whole((m - 1) / 3 + 1);
  if (field == "dow") return whole(((days + 6) % 7 + 7) % 7);
  if (field == "isodow") { const int64_t dow = ((days + 6) % 7 + 7) % 7; return whole(dow == 0 ? 7 : dow); }
  if (field == "doy") return whole(days - days_from_civil(y, 1, 1) + 1);
  if (field == "decade") return whole(y >= 0 ? y / 10 : -((8 - (y - 1)) / 10));
  if (field == "century") return whole(y > 0 ? (y + 99) / 100 : -((99 - (y - 1)) / 100));
  if (field == "millennium") return whole(y > 0 ? (y + 999) / 1000 : -((999 - (y - 1)) / 1000));
  if (field == "week" || field == "isoyear") {
    // ISO 8601 week: the week with the year's first Thursday is week 1.
    auto iso_week_start = [](int year) {
      const int64_t jan4 = days_from_civil(year, 1, 4);
      const int64_t dow = ((jan4 + 5) % 7 + 7) % 7;  // 0 = Monday
      return jan4 - dow;
    };
    int iso_year = y;
    int64_t start = iso_week_start(y);
    if (days < start) start = iso_week_start(--iso_year);
    else if (days >= iso_week_start(y + 1)) start = iso_week_start(++iso_year);
    if (field == "isoyear") return whole(iso_year > 0 ? iso_year : iso_year - 1);
    return whole((days - start) / 7 + 1);
  }
  if (field == "epoch") {
    const __int128 micros = static_cast<__int128>(ts) + static_cast<__int128>(946684800) * 1'000'000;
    if (is_date) return {micros / 1'000'000, 0};
    return {micros, 6};
  }
  if (is_date) {
    throw Error(SqlState::feature_not_supported, "unit \"" + field_in + "\" not supported for type date");
  }
  if (field == "hour" || field == "hours") return whole(tod / kUsecsPerHour);
  if (field == "minute" || field == "minutes") return whole(tod / kUsecsPerMinute % 60);
  if (field == "second" || field == "seconds") return {tod % kUsecsPerMinute, 6};
  if (field == "milliseconds") return {tod % kUsecsPerMinute, 3};
  if (field == "microseconds") return {tod % kUsecsPerMinute, 0};
  throw Error(SqlState::feature_not_supported, "unit \"" + field_in + "\" not supported for type timestamp");
}

std::string text_of(const Value& v) { return std::get<std::string>(v); }

ExprPtr to_type(ExprPtr e, TypeId id, BindContext& context) {
  return coerce_to(std::move(e), {id}, CastContext::implicit, context);
}

// For math functions over numbers: int -> float8 (PostgreSQL's preferred type), numeric stays.
TypeId float_or_numeric(SqlType t) {
  if (t.id == TypeId::numeric) return TypeId::numeric;
  return TypeId::float8;
}

}  // namespace

std::string utf8_lower(std::string_view s) { return map_case(s, false); }
std::string utf8_upper(std::string_view s) { return map_case(s, true); }
bool like_match(std::string_view text, std::string_view pattern, bool case_insensitive) {
  return like_impl(text, 0, pattern, 0, case_insensitive);
}

SqlType common_supertype(SqlType a, SqlType b, const char* construct) {
  if (a.id == TypeId::unknown) return b.id == TypeId::unknown ? b : SqlType{b.id, b.typmod};
  if (b.id == TypeId::unknown) return a;
  if (a == b) return a;
  if (a.id == b.id) return {a.id};
  if (numeric_rank(a.id) && numeric_rank(b.id)) return arithmetic_type(a, b);
  if (is_text_kind(a.id) && is_text_kind(b.id)) return {TypeId::text};
  if (is_datetime(a.id) && is_datetime(b.id)) {
    if (a.id == TypeId::timestamptz || b.id == TypeId::timestamptz) return {TypeId::timestamptz};
    return {TypeId::timestamp};
  }
  throw Error(SqlState::datatype_mismatch, std::string(construct) + " types " + format_type(a) + " and " +
                                               format_type(b) + " cannot be matched");
}

ExprPtr make_binary_operator(const std::string& op, ExprPtr left, ExprPtr right, BindContext& context) {
  if (op == "~~" || op == "!~~" || op == "~~*" || op == "!~~*") {
    left = to_type(std::move(left), TypeId::text, context);
    right = to_type(std::move(right), TypeId::text, context);
    const bool negate = op[0] == '!', ci = op.back() == '*';
    return call({TypeId::boolean}, "like", pack(std::move(left), std::move(right)),
                [negate, ci](std::span<const Value> a) -> Value {
                  return like_match(std::get<std::string>(a[0]), std::get<std::string>(a[1]), ci) != negate;
                });
  }
  if (op == "||") {
    if (left->type.id == TypeId::unknown) left = to_type(std::move(left), TypeId::text, context);
    if (right->type.id == TypeId::unknown) right = to_type(std::move(right), TypeId::text, context);
    if (!is_text_kind(left->type.id) && !is_text_kind(right->type.id)) throw no_operator(op, left->type, right->type);
    left = coerce_to(std::move(left), {TypeId::text}, CastContext::assignment, context);
    right = coerce_to(std::move(right), {TypeId::text}, CastContext::assignment, context);
    return call({TypeId::text}, "textcat", pack(std::move(left), std::move(right)),
                [](std::span<const Value> a) -> Value { return text_of(a[0]) + text_of(a[1]); });
  }
  resolve_unknowns(left, right, context);
  const SqlType l = left->type, r = right->type;
  if (is_comparison(op)) {
    SqlType common{TypeId::unknown};
    if (numeric_rank(l.id) && numeric_rank(r.id)) common = arithmetic_type(l, r);
    else if (is_text_kind(l.id) && is_text_kind(r.id)) common = (l.id == TypeId::bpchar && r.id == TypeId::bpchar) ? SqlType{TypeId::bpchar} : SqlType{TypeId::text};
    else if (is_datetime(l.id) && is_datetime(r.id)) common = common_supertype(l, r, "comparison");
    else if (l.id == r.id) common = {l.id};
    else throw no_operator(op, l, r);
    left = coerce_to(std::move(left), common, CastContext::implicit, context);
    right = coerce_to(std::move(right), common, CastContext::implicit, context);
    if (common.id == TypeId::bpchar) {
      // char(n) compares ignoring trailing blanks.
      auto cmp = comparison(op);
      return call({TypeId::boolean}, op, pack(std::move(left), std::move(right)), [cmp](std::span<const Value> a) -> Value {
        std::string x = text_of(a[0]), y = text_of(a[1]);
        while (!x.empty() && x.back() == ' ') x.pop_back();
        while (!y.empty() && y.back() == ' ') y.pop_back();
        const Value v[2] = {x, y};
        return cmp(v);
      });
    }
    auto compare = std::make_unique<FunctionExpr>(SqlType{TypeId::boolean}, op, pack(std::move(left), std::move(right)),
                                                  comparison(op));
    compare->batch = vector_comparison(op, common);
    return compare;
  }
  if (op == "+" || op == "-" || op == "*" || op == "/" || op == "%") {
    // date +/- integer, date - date
    if (l.id == TypeId::date && is_integer(r.id) && (op == "+" || op == "-")) {
      right = to_type(std::move(right), TypeId::int4, context);
      const bool minus = op == "-";
      return call({TypeId::date}, op, pack(std::move(left), std::move(right)), [minus](std::span<const Value> a) -> Value {
        const int64_t d = std::get<int64_t>(a[0]), n = std::get<int64_t>(a[1]);
        const int64_t r = minus ? d - n : d + n;
        if (r < -2451545 || r > 2147483647 - 2451545) throw Error(SqlState::datetime_field_overflow, "date out of range");
        return r;
      });
    }
    if (is_integer(l.id) && r.id == TypeId::date && op == "+") {
      left = to_type(std::move(left), TypeId::int4, context);
      return call({TypeId::date}, op, pack(std::move(left), std::move(right)), [](std::span<const Value> a) -> Value {
        return std::get<int64_t>(a[0]) + std::get<int64_t>(a[1]);
      });
    }
    if (l.id == TypeId::date && r.id == TypeId::date && op == "-") {
      return call({TypeId::int4}, op, pack(std::move(left), std::move(right)), [](std::span<const Value> a) -> Value {
        return std::get<int64_t>(a[0]) - std::get<int64_t>(a[1]);
      });
    }
    const SqlType type = arithmetic_type(l, r);
    if (type.id == TypeId::unknown || (op == "%" && is_float(type.id))) throw no_operator(op, l, r);
    left = coerce_to(std::move(left), type, CastContext::implicit, context);
    right = coerce_to(std::move(right), type, CastContext::implicit, context);
    return call(type, op, pack(std::move(left), std::move(right)), arithmetic(op[0], type));
  }
  if (op == "^") {
    const SqlType type = arithmetic_type(l, r);
    if (type.id == TypeId::unknown) throw no_operator(op, l, r);
    std::vector<ExprPtr> args = pack(std::move(left), std::move(right));
    return make_function("power", std::move(args), context);
  }
  throw no_operator(op, l, r);
}

ExprPtr make_unary_operator(const std::string& op, ExprPtr arg, BindContext& context) {
  if (arg->type.id == TypeId::unknown) arg = to_type(std::move(arg), TypeId::text, context);
  const SqlType t = arg->type;
  if (op == "+" && numeric_rank(t.id)) return arg;
  if (op == "-" && numeric_rank(t.id)) {
    // Fold negative literals so that -2147483648 stays an int4 constant.
    if (auto* k = dynamic_cast<ConstExpr*>(arg.get())) {
      if (!is_null(k->value)) {
        if (is_integer(t.id)) return std::make_unique<ConstExpr>(t, int_checked(-static_cast<__int128>(std::get<int64_t>(k->value)), t.id));
        if (t.id == TypeId::numeric) return std::make_unique<ConstExpr>(t, -std::get<Numeric>(k->value));
      }
    }
    return call(t, "-", pack(std::move(arg)), [t](std::span<const Value> a) -> Value {
      if (is_integer(t.id)) return int_checked(-static_cast<__int128>(std::get<int64_t>(a[0])), t.id);
      if (t.id == TypeId::numeric) return -std::get<Numeric>(a[0]);
      return -std::get<double>(a[0]);
    });
  }
  if (op == "@" && numeric_rank(t.id)) {
    std::vector<ExprPtr> args = pack(std::move(arg));
    return make_function("abs", std::move(args), context);
  }
  throw Error(SqlState::undefined_function, "operator does not exist: " + op + " " + format_type(t))
      .with_hint("No operator matches the given name and argument type. You might need to add an explicit type cast.");
}

ExprPtr make_nullif(ExprPtr left, ExprPtr right, BindContext& context) {
  resolve_unknowns(left, right, context);
  const SqlType result = left->type;
  auto eq = make_binary_operator("=", nullptr == left ? nullptr : std::move(left), std::move(right), context);
  // nullif(a, b): a unless a = b. The comparison node holds a and b; evaluate
  // it and a's value from its first argument.
  auto* f = dynamic_cast<FunctionExpr*>(eq.get());
  ScalarFunction cmp = f->fn;
  std::vector<ExprPtr> args = std::move(f->args);
  // Compare values in the common type but return the first argument's value cast back.
  const SqlType common = args[0]->type;
  return call(result, "nullif", std::move(args), [cmp, common, result](std::span<const Value> a) -> Value {
    if (is_null(a[0])) return Null{};
    if (!is_null(a[1]) && std::get<bool>(cmp(a))) return Null{};
    return cast_value(a[0], common, result, false);
  }, false);
}

ExprPtr make_is_distinct(ExprPtr left, ExprPtr right, bool not_distinct, BindContext& context) {
  auto eq = make_binary_operator("=", std::move(left), std::move(right), context);
  auto* f = dynamic_cast<FunctionExpr*>(eq.get());
  ScalarFunction cmp = f->fn;
  return call({TypeId::boolean}, "is distinct from", std::move(f->args),
              [cmp, not_distinct](std::span<const Value> a) -> Value {
                bool distinct;
                if (is_null(a[0]) || is_null(a[1])) distinct = is_null(a[0]) != is_null(a[1]);
                else distinct = !std::get<bool>(cmp(a));
                return distinct != not_distinct;
              }, false);
}

ExprPtr make_boolean_test(ExprPtr arg, const std::string& test) {
  return call({TypeId::boolean}, "booltest", pack(std::move(arg)), [test](std::span<const Value> a) -> Value {
    const bool n = is_null(a[0]);
    const bool v = !n && std::get<bool>(a[0]);
    if (test == "IS_TRUE") return !n && v;
    if (test == "IS_NOT_TRUE") return n || !v;
    if (test == "IS_FALSE") return !n && !v;
    if (test == "IS_NOT_FALSE") return n || v;
    if (test == "IS_UNKNOWN") return n;
    return !n;  // IS_NOT_UNKNOWN
  }, false);
}

ExprPtr make_greatest_least(bool greatest, std::vector<ExprPtr> args, BindContext& context) {
  SqlType common{TypeId::unknown};
  for (const auto& a : args) common = common_supertype(common, a->type, greatest ? "GREATEST" : "LEAST");
  if (common.id == TypeId::unknown) common = {TypeId::text};
  for (auto& a : args) a = coerce_to(std::move(a), common, CastContext::implicit, context);
  return call(common, greatest ? "greatest" : "least", std::move(args), [greatest](std::span<const Value> a) -> Value {
    Value best = Null{};
    for (const auto& v : a) {
      if (is_null(v)) continue;
      if (is_null(best) || (greatest ? compare_values(v, best) > 0 : compare_values(v, best) < 0)) best = v;
    }
    return best;
  }, false);
}

ExprPtr make_sql_value_function(const std::string& op, BindContext& context) {
  if (op == "SVFOP_CURRENT_USER" || op == "SVFOP_USER" || op == "SVFOP_SESSION_USER" || op == "SVFOP_CURRENT_ROLE") {
    return std::make_unique<ConstExpr>(SqlType{TypeId::name}, context.session_user);
  }
  if (op == "SVFOP_CURRENT_CATALOG") return std::make_unique<ConstExpr>(SqlType{TypeId::name}, context.database);
  if (op == "SVFOP_CURRENT_SCHEMA") return std::make_unique<ConstExpr>(SqlType{TypeId::name}, std::string("public"));
  const auto now_us = [] {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec - 946684800) * 1'000'000 + ts.tv_nsec / 1000;
  };
  if (op == "SVFOP_CURRENT_DATE") {
    int64_t us = now_us();
    return std::make_unique<ConstExpr>(SqlType{TypeId::date}, us / kUsecsPerDay);
  }
  if (op == "SVFOP_CURRENT_TIMESTAMP" || op == "SVFOP_LOCALTIMESTAMP") {
    return std::make_unique<ConstExpr>(SqlType{op == "SVFOP_LOCALTIMESTAMP" ? TypeId::timestamp : TypeId::timestamptz}, now_us());
  }
  throw Error(SqlState::feature_not_supported, "SQL value function " + op + " is not supported");
}

ExprPtr make_function(const std::string& name, std::vector<ExprPtr> args, BindContext& context) {
  const size_t n = args.size();
  auto type_of = [&](size_t i) { return args[i]->type; };
  auto unknown_to_text = [&] {
    for (auto& a : args) if (a->type.id == TypeId::unknown) a = to_type(std::move(a), TypeId::text, context);
  };

  if (name == "version" && n == 0) {
    return std::make_unique<ConstExpr>(SqlType{TypeId::text}, version_string());
  }
  if ((name == "current_database" || name == "current_catalog") && n == 0) {
    return std::make_unique<ConstExpr>(SqlType{TypeId::name}, context.database);
  }
  if (name == "current_schema" && n == 0) return std::make_unique<ConstExpr>(SqlType{TypeId::name}, std::string("public"));
  if ((name == "current_user" || name == "session_user") && n == 0) {
    return std::make_unique<ConstExpr>(SqlType{TypeId::name}, context.session_user);
  }
  if (name == "pg_backend_pid" && n == 0) {
    return std::make_unique<ConstExpr>(SqlType{TypeId::int4}, static_cast<int64_t>(context.backend_pid));
  }
  if ((name == "now" || name == "transaction_timestamp" || name == "statement_timestamp" || name == "clock_timestamp") && n == 0) {
    return make_sql_value_function("SVFOP_CURRENT_TIMESTAMP", context);
  }
  if (name == "current_setting" && (n == 1 || n == 2)) {
    unknown_to_text();
    if (n == 2) args[1] = to_type(std::move(args[1]), TypeId::boolean, context);
    const Settings* settings = context.settings;
    return call({TypeId::text}, name, std::move(args), [settings](std::span<const Value> a) -> Value {
      const std::string setting = std::get<std::string>(a[0]);
      auto value = settings ? settings->get(setting) : std::nullopt;
      if (!value) {
        if (a.size() == 2 && std::get<bool>(a[1])) return Null{};
        throw Error(SqlState::undefined_object, "unrecognized configuration parameter \"" + setting + "\"");
      }
      return *value;
    });
  }
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
  if (name == "sign" && n == 1) {
    const TypeId t = float_or_numeric(type_of(0));
    args[0] = to_type(std::move(args[0]), t, context);
    return call({t}, name, std::move(args), [t](std::span<const Value> a) -> Value {
      if (t == TypeId::numeric) return Numeric::from_int(std::get<Numeric>(a[0]).sign());
      const double x = std::get<double>(a[0]);
      return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
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
  if ((name == "exp" || name == "ln" || name == "log" || name == "log10") && n == 1) {
    args[0] = to_type(std::move(args[0]), TypeId::float8, context);
    const std::string fn = name;
    return call({TypeId::float8}, name, std::move(args), [fn](std::span<const Value> a) -> Value {
      const double x = std::get<double>(a[0]);
      if (fn == "exp") return std::exp(x);
      if (x == 0) throw Error(SqlState::invalid_argument_for_power_function, "cannot take logarithm of zero");
      if (x < 0) throw Error(SqlState::invalid_argument_for_power_function, "cannot take logarithm of a negative number");
      return fn == "ln" ? std::log(x) : std::log10(x);
    });
  }
  if (name == "mod" && n == 2) {
    ExprPtr l = std::move(args[0]), r = std::move(args[1]);
    return make_binary_operator("%", std::move(l), std::move(r), context);
  }
  if ((name == "lower" || name == "upper") && n == 1) {
    unknown_to_text();
    if (!is_text_kind(type_of(0).id)) throw no_function(name, args);
    args[0] = to_type(std::move(args[0]), TypeId::text, context);
    const bool upper = name == "upper";
    return call({TypeId::text}, name, std::move(args), [upper](std::span<const Value> a) -> Value {
      return upper ? utf8_upper(std::get<std::string>(a[0])) : utf8_lower(std::get<std::string>(a[0]));
    });
  }
  if ((name == "length" || name == "char_length" || name == "character_length" || name == "octet_length") && n == 1) {
    unknown_to_text();
    if (!is_text_kind(type_of(0).id)) throw no_function(name, args);
    const bool octets = name == "octet_length";
    const bool bpchar = type_of(0).id == TypeId::bpchar;
    return call({TypeId::int4}, name, std::move(args), [octets, bpchar](std::span<const Value> a) -> Value {
      std::string_view s = std::get<std::string>(a[0]);
      if (bpchar && !octets) while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
      if (octets) return static_cast<int64_t>(s.size());
      return static_cast<int64_t>(char_offsets(s).size());
    });
  }
  if ((name == "substr" || name == "substring") && (n == 2 || n == 3)) {
    unknown_to_text();
    if (!is_text_kind(type_of(0).id)) throw no_function(name, args);
    args[0] = to_type(std::move(args[0]), TypeId::text, context);
    args[1] = to_type(std::move(args[1]), TypeId::int4, context);
    if (n == 3) args[2] = to_type(std::move(args[2]), TypeId::int4, context);
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const std::string& s = std::get<std::string>(a[0]);
      const int64_t start = std::get<int64_t>(a[1]);
      int64_t end;  // exclusive, 1-based
      if (a.size() == 3) {
        const int64_t count = std::get<int64_t>(a[2]);
        if (count < 0) throw Error(SqlState::invalid_parameter_value, "negative substring length not allowed");
        end = start + count;
      } else {
        end = INT64_MAX;
      }
      const auto offsets = char_offsets(s);
      const int64_t chars = static_cast<int64_t>(offsets.size());
      const int64_t from = std::max<int64_t>(start, 1), to = std::min<int64_t>(end, chars + 1);
      if (from >= to) return std::string();
      const size_t b = offsets[static_cast<size_t>(from - 1)];
      const size_t e = to - 1 < chars ? offsets[static_cast<size_t>(to - 1)] : s.size();
      return s.substr(b, e - b);
    });
  }
  if ((name == "concat") && n >= 1) {
    for (auto& a : args) a = coerce_to(std::move(a), {TypeId::text}, CastContext::explicit_, context);
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      std::string out;
      for (const auto& v : a) if (!is_null(v)) out += std::get<std::string>(v);
      return out;
    }, false);
  }
  if (name == "replace" && n == 3) {
    for (auto& a : args) a = to_type(std::move(a), TypeId::text, context);
    return call({TypeId::text}, name, std::move(args), [](std::span<const Value> a) -> Value {
      std::string s = std::get<std::string>(a[0]);
      const std::string& from = std::get<std::string>(a[1]);
      const std::string& to = std::get<std::string>(a[2]);
      if (from.empty()) return s;
      std::string out;
      size_t pos = 0, hit;
      while ((hit = s.find(from, pos)) != std::string::npos) { out += s.substr(pos, hit - pos) + to; pos = hit + from.size(); }
      return out + s.substr(pos);
    });
  }
  if ((name == "btrim" || name == "ltrim" || name == "rtrim") && (n == 1 || n == 2)) {
    for (auto& a : args) a = to_type(std::move(a), TypeId::text, context);
    const bool left = name != "rtrim", right = name != "ltrim";
    return call({TypeId::text}, name, std::move(args), [left, right](std::span<const Value> a) -> Value {
      std::string s = std::get<std::string>(a[0]);
      const std::string set = a.size() == 2 ? std::get<std::string>(a[1]) : " ";
      size_t b = 0, e = s.size();
      if (left) while (b < e && set.find(s[b]) != std::string::npos) ++b;
      if (right) while (e > b && set.find(s[e - 1]) != std::string::npos) --e;
      return s.substr(b, e - b);
    });
  }
  if (name == "strpos" && n == 2) {
    for (auto& a : args) a = to_type(std::move(a), TypeId::text, context);
    return call({TypeId::int4}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const std::string& s = std::get<std::string>(a[0]);
      const size_t hit = s.find(std::get<std::string>(a[1]));
      if (hit == std::string::npos) return int64_t{0};
      return static_cast<int64_t>(char_offsets(std::string_view(s).substr(0, hit)).size() + 1);
    });
  }
  if (name == "date_trunc" && n == 2) {
    args[0] = to_type(std::move(args[0]), TypeId::text, context);
    if (type_of(1).id == TypeId::unknown) args[1] = to_type(std::move(args[1]), TypeId::timestamptz, context);
    if (type_of(1).id == TypeId::date) args[1] = to_type(std::move(args[1]), TypeId::timestamptz, context);
    const TypeId t = type_of(1).id;
    if (t != TypeId::timestamp && t != TypeId::timestamptz) throw no_function(name, args);
    return call({t}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return truncate_timestamp(std::get<std::string>(a[0]), ts_of(a[1]));
    });
  }
  if ((name == "date_part" || name == "extract") && n == 2) {
    args[0] = to_type(std::move(args[0]), TypeId::text, context);
    if (type_of(1).id == TypeId::unknown) args[1] = to_type(std::move(args[1]), TypeId::timestamp, context);
    const TypeId t = type_of(1).id;
    if (!is_datetime(t)) throw no_function(name, args);
    const bool is_date = t == TypeId::date;
    if (is_date) {
      // Dates are converted to timestamps at midnight for the field arithmetic.
      args[1] = std::make_unique<FunctionExpr>(SqlType{TypeId::timestamp}, "cast", pack(std::move(args[1])),
                                               [](std::span<const Value> a) -> Value {
                                                 return cast_value(a[0], {TypeId::date}, {TypeId::timestamp});
                                               });
    }
    const bool numeric_result = name == "extract";
    return call({numeric_result ? TypeId::numeric : TypeId::float8}, name, std::move(args),
                [is_date, numeric_result](std::span<const Value> a) -> Value {
                  const Numeric v = extract_field(std::get<std::string>(a[0]), ts_of(a[1]), is_date && numeric_result);
                  if (numeric_result) return v;
                  return v.to_double();
                });
  }
  if (name == "to_date" || name == "to_char" || name == "to_timestamp" || name == "regexp_replace") {
    throw Error(SqlState::feature_not_supported, "function " + name + " is not supported");
  }
  if (name == "pg_typeof" && n == 1) {
    const std::string type = format_type(type_of(0));
    return std::make_unique<ConstExpr>(SqlType{TypeId::regtype}, type);
  }
  throw no_function(name, args);
}

}  // namespace tally::executor
