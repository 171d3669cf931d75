// to_char for dates, timestamps and numbers with PostgreSQL's template
// patterns: YYYY YY MM DD DDD D ID HH HH12 HH24 MI SS MS US AM PM Mon Month
// Dy Day Q CC WW W J with the FM and TH modifiers and "quoted" text; for
// numbers 9 0 . , D G S MI with FM and TH. Other patterns PostgreSQL knows
// (RN, EEEE, V, PL, SG, PR, time zones) answer 0A000.
#include <array>
#include <cstdlib>

#include "common/error.hpp"
#include "executor/types/time_zone.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar_functions.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::scalar {
namespace {

const std::array<const char*, 12> kMonths = {"January", "February", "March",     "April",   "May",      "June",
                                             "July",    "August",   "September", "October", "November", "December"};
const std::array<const char*, 7> kDays = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};

bool starts_with(std::string_view s, size_t at, std::string_view word) { return s.substr(at, word.size()) == word; }

std::string ordinal_suffix(int64_t v, bool upper) {
  const int64_t last2 = std::llabs(v) % 100, last = std::llabs(v) % 10;
  const char* s = (last2 >= 11 && last2 <= 13) ? "th" : last == 1 ? "st" : last == 2 ? "nd" : last == 3 ? "rd" : "th";
  std::string out(s);
  if (upper) out = utf8_upper(out);
  return out;
}

std::string padded(int64_t v, int width, bool fill_mode) {
  std::string digits = std::to_string(std::llabs(v));
  if (!fill_mode && static_cast<int>(digits.size()) < width) digits.insert(0, static_cast<size_t>(width) - digits.size(), '0');
  return v < 0 ? "-" + digits : digits;
}

// A name in the pattern's capitalization ("Month", "MONTH", "month"), blank-padded to 9 unless FM.
std::string styled_name(const std::string& name, std::string_view pattern, bool fill_mode, bool pad) {
  std::string out;
  if (pattern[1] >= 'A' && pattern[1] <= 'Z') out = utf8_upper(name);
  else if (pattern[0] >= 'a' && pattern[0] <= 'z') out = utf8_lower(name);
  else out = name;
  if (pad && !fill_mode && out.size() < 9) out.append(9 - out.size(), ' ');
  return out;
}

Value timestamp_to_char(int64_t ts, const std::string& format) {
  if (ts == INT64_MIN || ts == INT64_MAX) return Null{};
  int64_t days = ts / kUsecsPerDay, time = ts % kUsecsPerDay;
  if (time < 0) {
    time += kUsecsPerDay;
    --days;
  }
  int year, month, day;
  civil_from_days(static_cast<int32_t>(days), year, month, day);
  const int64_t dow = ((days + 6) % 7 + 7) % 7;  // 2000-01-01 was a Saturday; 0 = Sunday
  const int64_t doy = days - days_from_civil(year, 1, 1) + 1;
  const int64_t hour = time / kUsecsPerHour, minute = time / kUsecsPerMinute % 60, second = time / 1'000'000 % 60;
  const int64_t micros = time % 1'000'000;
  const int64_t display_year = year > 0 ? year : 1 - year;  // BC years count from 1
  std::string out;
  size_t i = 0;
  while (i < format.size()) {
    bool fill_mode = false;
    if (starts_with(format, i, "FM") || starts_with(format, i, "fm")) {
      fill_mode = true;
      i += 2;
    }
    if (format[i] == '"') {
      for (++i; i < format.size() && format[i] != '"'; ++i) {
        if (format[i] == '\\' && i + 1 < format.size()) ++i;
        out.push_back(format[i]);
      }
      ++i;
      continue;
    }
    // Names first: "Day" is not the D pattern followed by "ay".
    const std::string_view rest = std::string_view(format).substr(i);
    const std::string upper_rest = utf8_upper(rest.substr(0, 5));
    bool named = true;
    if (upper_rest.rfind("MONTH", 0) == 0) {
      out += styled_name(kMonths[static_cast<size_t>(month - 1)], rest, fill_mode, true);
      i += 5;
    } else if (upper_rest.rfind("MON", 0) == 0) {
      out += styled_name(std::string(kMonths[static_cast<size_t>(month - 1)]).substr(0, 3), rest, fill_mode, false);
      i += 3;
    } else if (upper_rest.rfind("DAY", 0) == 0) {
      out += styled_name(kDays[static_cast<size_t>(dow)], rest, fill_mode, true);
      i += 3;
    } else if (upper_rest.rfind("DY", 0) == 0) {
      out += styled_name(std::string(kDays[static_cast<size_t>(dow)]).substr(0, 3), rest, fill_mode, false);
      i += 2;
    } else if (upper_rest.rfind("A.M.", 0) == 0 || upper_rest.rfind("P.M.", 0) == 0) {
      const std::string m = hour < 12 ? "A.M." : "P.M.";
      out += format[i] >= 'a' ? utf8_lower(m) : m;
      i += 4;
    } else if (upper_rest.rfind("AM", 0) == 0 || upper_rest.rfind("PM", 0) == 0) {
      const std::string m = hour < 12 ? "AM" : "PM";
      out += format[i] >= 'a' ? utf8_lower(m) : m;
      i += 2;
    } else if (upper_rest.rfind("TZ", 0) == 0 || upper_rest.rfind("OF", 0) == 0 || upper_rest.rfind("IYYY", 0) == 0 ||
               upper_rest.rfind("IW", 0) == 0 || upper_rest.rfind("RM", 0) == 0 || upper_rest.rfind("SSSS", 0) == 0) {
      throw Error(SqlState::feature_not_supported, "to_char pattern \"" + std::string(rest.substr(0, 4)) + "\" is not supported");
    } else {
      named = false;
    }
    if (named) continue;
    struct Field { const char* pattern; int64_t value; int width; };
    const Field numeric_fields[] = {
        {"HH24", hour, 2}, {"HH12", hour % 12 == 0 ? 12 : hour % 12, 2}, {"HH", hour % 12 == 0 ? 12 : hour % 12, 2},
        {"MI", minute, 2}, {"SS", second, 2}, {"MS", micros / 1000, 3}, {"US", micros, 6},
        {"YYYY", display_year, 4}, {"YYY", display_year % 1000, 3}, {"YY", display_year % 100, 2},
        {"Y", display_year % 10, 1}, {"CC", year > 0 ? (year + 99) / 100 : -((99 - (year - 1)) / 100), 2},
        {"DDD", doy, 3}, {"DD", day, 2}, {"ID", dow == 0 ? 7 : dow, 1}, {"D", dow + 1, 1}, {"MM", month, 2},
        {"Q", (month - 1) / 3 + 1, 1}, {"WW", (doy - 1) / 7 + 1, 2}, {"W", (day - 1) / 7 + 1, 1},
        {"J", days + 2451545, 1}};
    bool matched = false;
    for (const Field& f : numeric_fields) {
      const std::string_view p = f.pattern;
      const std::string upper_view = utf8_upper(std::string_view(format).substr(i, p.size()));
      if (upper_view != p) continue;
      out += padded(f.value, f.width, fill_mode);
      i += p.size();
      if (starts_with(format, i, "TH") || starts_with(format, i, "th")) {
        out += ordinal_suffix(f.value, format[i] == 'T');
        i += 2;
      }
      matched = true;
      break;
    }
    if (matched) continue;
    if (format[i] == '\\' && i + 1 < format.size()) ++i;
    out.push_back(format[i++]);
  }
  return out;
}

// Number formatting: the template's digit positions filled from the value.
Value number_to_char(const Numeric& value_in, const std::string& format) {
  enum class Kind { nine, zero, point, group, sign_s, sign_mi, literal };
  struct Token { Kind kind; char c; };
  std::vector<Token> tokens;
  bool fill_mode = false, ordinal = false, ordinal_upper = false, has_point = false;
  int int_positions = 0, frac_positions = 0, zero_start = -1;
  for (size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    const std::string two = utf8_upper(format.substr(i, 2));
    if (two == "FM") { fill_mode = true; ++i; continue; }
    if (two == "TH") { ordinal = true; ordinal_upper = c == 'T'; ++i; continue; }
    if (two == "MI") { tokens.push_back({Kind::sign_mi, c}); ++i; continue; }
    if (two == "PL" || two == "SG" || two == "PR" || two == "RN" || two == "EE" || c == 'V' || c == 'v') {
      throw Error(SqlState::feature_not_supported, "to_char pattern \"" + format.substr(i, 2) + "\" is not supported");
    }
    if (c == '9' || c == '0') {
      if (has_point) ++frac_positions;
      else {
        if (c == '0' && zero_start < 0) zero_start = int_positions;
        ++int_positions;
      }
      tokens.push_back({c == '9' ? Kind::nine : Kind::zero, c});
    } else if ((c == '.' || c == 'D' || c == 'd') && !has_point) {
      has_point = true;
      tokens.push_back({Kind::point, '.'});
    } else if (c == ',' || c == 'G' || c == 'g') {
      tokens.push_back({Kind::group, ','});
    } else if (c == 'S' || c == 's') {
      tokens.push_back({Kind::sign_s, c});
    } else if (c == '"') {
      for (++i; i < format.size() && format[i] != '"'; ++i) tokens.push_back({Kind::literal, format[i]});
    } else {
      tokens.push_back({Kind::literal, c});
    }
  }
  bool explicit_sign = false;
  for (const Token& t : tokens) explicit_sign |= t.kind == Kind::sign_s || t.kind == Kind::sign_mi;
  const Numeric value = value_in.rescaled(frac_positions);
  const bool negative = value.mantissa < 0;
  const std::string digits = Numeric{negative ? -value.mantissa : value.mantissa, 0}.to_string();
  std::string int_digits = digits.size() > static_cast<size_t>(frac_positions)
                               ? digits.substr(0, digits.size() - static_cast<size_t>(frac_positions)) : "0";
  std::string frac_digits = std::string(static_cast<size_t>(frac_positions) - std::min(digits.size(), static_cast<size_t>(frac_positions)), '0') +
                            digits.substr(digits.size() - std::min(digits.size(), static_cast<size_t>(frac_positions)));
  if (int_digits == "0" && has_point) int_digits.clear();  // ".50", not "0.50", unless a 0 position asks
  const bool overflow = static_cast<int>(int_digits.size()) > int_positions;
  std::string out;
  bool printed = false, sign_done = false;
  auto emit_sign = [&](bool plus_sign) {
    if (sign_done) return;
    sign_done = true;
    if (negative) out.push_back('-');
    else if (plus_sign) out.push_back('+');
    else if (!fill_mode) out.push_back(' ');
  };
  const bool leading_s = !tokens.empty() && tokens.front().kind == Kind::sign_s;
  int int_index = 0, frac_index = 0;
  size_t frac_trim_from = std::string::npos;  // FM: trailing zeros of 9 positions are dropped
  for (const Token& t : tokens) {
    switch (t.kind) {
      case Kind::nine:
      case Kind::zero: {
        if (int_index < int_positions) {
          const int j = int_index - (int_positions - static_cast<int>(int_digits.size()));
          const bool digit_here = overflow || j >= 0 || (zero_start >= 0 && int_index >= zero_start);
          if (digit_here) {
            if (!explicit_sign || leading_s) emit_sign(leading_s);
            out.push_back(overflow ? '#' : (j >= 0 ? int_digits[static_cast<size_t>(j)] : '0'));
            printed = true;
          } else if (!fill_mode) {
            out.push_back(' ');
          }
          ++int_index;
        } else {
          const char d = overflow ? '#' : frac_digits[static_cast<size_t>(frac_index)];
          if (t.kind == Kind::nine && d == '0') {
            if (frac_trim_from == std::string::npos) frac_trim_from = out.size();
          } else {
            frac_trim_from = std::string::npos;
          }
          out.push_back(d);
          ++frac_index;
        }
        break;
      }
      case Kind::point:
        if (!explicit_sign || leading_s) emit_sign(leading_s);
        out.push_back('.');
        printed = true;
        break;
      case Kind::group:
        if (printed) out.push_back(',');
        else if (!fill_mode) out.push_back(' ');
        break;
      case Kind::sign_s:
        if (&t != &tokens.front()) {
          sign_done = false;
          emit_sign(true);
        }
        break;
      case Kind::sign_mi:
        if (negative) out.push_back('-');
        else if (!fill_mode) out.push_back(' ');
        break;
      case Kind::literal: out.push_back(t.c); break;
    }
  }
  if (fill_mode && frac_trim_from != std::string::npos) out.resize(frac_trim_from);
  if (ordinal && !overflow && !negative) {
    out += ordinal_suffix(static_cast<int64_t>(int_digits.empty() ? 0 : std::strtoll(int_digits.c_str(), nullptr, 10)),
                          ordinal_upper);
  }
  return out;
}

}  // namespace

ExprPtr make_format_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  if (name != "to_char" || args.size() != 2) return nullptr;
  args[1] = to_type(std::move(args[1]), TypeId::text, context);
  TypeId t = args[0]->type.id;
  if (t == TypeId::unknown) throw no_function(name, args);
  if (t == TypeId::date) {
    args[0] = to_type(std::move(args[0]), TypeId::timestamp, context);
    t = TypeId::timestamp;
  }
  if (t == TypeId::timestamp || t == TypeId::timestamptz) {
    // A timestamptz prints its local time in the session's zone.
    const bool with_zone = t == TypeId::timestamptz;
    return call({TypeId::text}, name, std::move(args), [with_zone](std::span<const Value> a) -> Value {
      const int64_t ts = std::get<int64_t>(a[0]);
      return timestamp_to_char(with_zone ? types::current_time_zone().to_local(ts) : ts, std::get<std::string>(a[1]));
    });
  }
  if (numeric_rank(t) == 0) throw no_function(name, args);
  return call({TypeId::text}, name, std::move(args), [t](std::span<const Value> a) -> Value {
    Numeric n;
    if (is_integer(t)) n = Numeric::from_int(std::get<int64_t>(a[0]));
    else if (is_float(t)) n = Numeric::from_double(std::get<double>(a[0]));
    else n = std::get<Numeric>(a[0]);
    return number_to_char(n, std::get<std::string>(a[1]));
  });
}

}  // namespace tally::executor::scalar
