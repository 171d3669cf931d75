#include "executor/types/interval_io.hpp"

#include <cmath>
#include <cstdlib>
#include <vector>

#include "common/error.hpp"
#include "executor/types/type_io.hpp"

namespace tally::types {
namespace {

constexpr int64_t usecs_per_hour = 3'600'000'000LL;
constexpr int64_t usecs_per_minute = 60'000'000LL;
constexpr int64_t usecs_per_sec = 1'000'000LL;

enum class Unit { none, microsecond, millisecond, second, minute, hour, day, week, month, year, decade, century,
                  millennium, ago };

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// PostgreSQL's deltatktbl: the unit words an interval accepts.
Unit unit_of(std::string_view word_in) {
  std::string word;
  for (char c : word_in) word.push_back(lower(c));
  struct Name { const char* name; Unit unit; };
  static const Name names[] = {
      {"microsecond", Unit::microsecond}, {"microseconds", Unit::microsecond}, {"us", Unit::microsecond},
      {"usec", Unit::microsecond}, {"usecs", Unit::microsecond}, {"usecond", Unit::microsecond},
      {"useconds", Unit::microsecond}, {"millisecond", Unit::millisecond}, {"milliseconds", Unit::millisecond},
      {"ms", Unit::millisecond}, {"msec", Unit::millisecond}, {"msecs", Unit::millisecond},
      {"msecond", Unit::millisecond}, {"mseconds", Unit::millisecond}, {"s", Unit::second},
      {"sec", Unit::second}, {"secs", Unit::second}, {"second", Unit::second}, {"seconds", Unit::second},
      {"m", Unit::minute}, {"min", Unit::minute}, {"mins", Unit::minute}, {"minute", Unit::minute},
      {"minutes", Unit::minute}, {"h", Unit::hour}, {"hr", Unit::hour}, {"hrs", Unit::hour},
      {"hour", Unit::hour}, {"hours", Unit::hour}, {"d", Unit::day}, {"day", Unit::day}, {"days", Unit::day},
      {"w", Unit::week}, {"week", Unit::week}, {"weeks", Unit::week}, {"mon", Unit::month},
      {"mons", Unit::month}, {"month", Unit::month}, {"months", Unit::month}, {"y", Unit::year},
      {"yr", Unit::year}, {"yrs", Unit::year}, {"year", Unit::year}, {"years", Unit::year},
      {"dec", Unit::decade}, {"decs", Unit::decade}, {"decade", Unit::decade}, {"decades", Unit::decade},
      {"c", Unit::century}, {"cent", Unit::century}, {"century", Unit::century},
      {"centuries", Unit::century}, {"mil", Unit::millennium}, {"mils", Unit::millennium},
      {"millennium", Unit::millennium}, {"millennia", Unit::millennium}, {"ago", Unit::ago}};
  for (const Name& n : names) {
    if (word == n.name) return n.unit;
  }
  return Unit::none;
}

struct Token {
  enum class Kind { number, time, word } kind;
  std::string_view text;
};

// Sums kept wide while parsing, checked against the fields' widths at the end.
struct Accumulator {
  __int128 months = 0, days = 0, micros = 0;
};

Error bad_syntax(std::string_view text) {
  return Error(SqlState::invalid_datetime_format,
               "invalid input syntax for type interval: \"" + std::string(text) + "\"");
}

Error field_overflow(std::string_view text) {
  return Error(SqlState::datetime_field_overflow,
               "interval field value out of range: \"" + std::string(text) + "\"");
}

std::vector<Token> tokenize(std::string_view s, std::string_view text) {
  std::vector<Token> tokens;
  size_t i = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == ',') { ++i; continue; }
    if (c == '@' && tokens.empty()) { ++i; continue; }
    const size_t start = i;
    if (digit(c) || c == '.' || c == '+' || c == '-') {
      ++i;
      bool colon = false;
      while (i < s.size() && (digit(s[i]) || s[i] == '.' || s[i] == ':')) colon |= s[i++] == ':';
      const std::string_view t = s.substr(start, i - start);
      if (t == "+" || t == "-" || t == ".") throw bad_syntax(text);
      tokens.push_back({colon ? Token::Kind::time : Token::Kind::number, t});
      continue;
    }
    if (alpha(c)) {
      while (i < s.size() && alpha(s[i])) ++i;
      tokens.push_back({Token::Kind::word, s.substr(start, i - start)});
      continue;
    }
    throw bad_syntax(text);
  }
  return tokens;
}

// A signed decimal number split into its integer part and its fraction (same sign).
void split_number(std::string_view t, std::string_view text, int64_t& whole, double& fraction) {
  bool negative = false;
  size_t i = 0;
  if (t[0] == '+' || t[0] == '-') negative = t[i++] == '-';
  __int128 v = 0;
  bool any = false;
  for (; i < t.size() && t[i] != '.'; ++i) {
    if (t[i] < '0' || t[i] > '9') throw bad_syntax(text);
    v = v * 10 + (t[i] - '0');
    if (v > INT64_MAX) throw field_overflow(text);
    any = true;
  }
  fraction = 0;
  if (i < t.size()) {
    const std::string frac = "0" + std::string(t.substr(i));
    char* end = nullptr;
    fraction = std::strtod(frac.c_str(), &end);
    if (end != frac.c_str() + frac.size() || (!any && frac.size() <= 2)) throw bad_syntax(text);
  } else if (!any) {
    throw bad_syntax(text);
  }
  whole = static_cast<int64_t>(negative ? -v : v);
  if (negative) fraction = -fraction;
}

// "[-]h:m[:s[.f]]" or "[-]m:s.f" (two fields with a fraction are minutes and seconds).
__int128 parse_time(std::string_view t, std::string_view text) {
  bool negative = false;
  if (t[0] == '+' || t[0] == '-') { negative = t[0] == '-'; t.remove_prefix(1); }
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= t.size(); ++i) {
    if (i == t.size() || t[i] == ':') { parts.push_back(t.substr(start, i - start)); start = i + 1; }
  }
  if (parts.size() < 2 || parts.size() > 3) throw bad_syntax(text);
  auto integer = [&](std::string_view p) {
    if (p.empty()) throw bad_syntax(text);
    __int128 v = 0;
    for (char c : p) {
      if (c < '0' || c > '9') throw bad_syntax(text);
      v = v * 10 + (c - '0');
      if (v > INT64_MAX) throw field_overflow(text);
    }
    return v;
  };
  auto seconds = [&](std::string_view p) -> __int128 {
    const size_t dot = p.find('.');
    __int128 micros = integer(p.substr(0, dot)) * usecs_per_sec;
    if (dot != std::string_view::npos) {
      const std::string frac = "0" + std::string(p.substr(dot));
      char* end = nullptr;
      const double f = std::strtod(frac.c_str(), &end);
      if (end != frac.c_str() + frac.size()) throw bad_syntax(text);
      micros += static_cast<__int128>(std::rint(f * usecs_per_sec));
    }
    return micros;
  };
  __int128 total;
  if (parts.size() == 2 && parts[1].find('.') != std::string_view::npos) {
    total = integer(parts[0]) * usecs_per_minute + seconds(parts[1]);
  } else {
    if (parts[0].find('.') != std::string_view::npos || parts[1].find('.') != std::string_view::npos) {
      throw bad_syntax(text);
    }
    const __int128 minutes = integer(parts[1]);
    if (minutes > 59) throw field_overflow(text);
    total = integer(parts[0]) * usecs_per_hour + minutes * usecs_per_minute;
    if (parts.size() == 3) {
      const __int128 secs = seconds(parts[2]);
      if (secs >= 60 * usecs_per_sec) throw field_overflow(text);
      total += secs;
    }
  }
  return negative ? -total : total;
}

// The unit of a bare number: the rightmost field of the typmod's range (seconds without one).
Unit default_unit(int range) {
  using namespace interval_mask;
  if (range == year) return Unit::year;
  if (range == month || range == (year | month)) return Unit::month;
  if (range == day) return Unit::day;
  if (range == hour || range == (day | hour)) return Unit::hour;
  if (range == minute || range == (hour | minute) || range == (day | hour | minute)) return Unit::minute;
  return Unit::second;
}

// Adds `whole` + `fraction` of a unit, cascading the fraction into the smaller
// fields as PostgreSQL 15's DecodeInterval does (AdjustFract*).
void add_unit(Accumulator& a, Unit unit, int64_t whole, double fraction) {
  auto fract_days = [&](double frac, int scale) {
    frac *= scale;
    const int64_t extra = static_cast<int64_t>(frac);
    a.days += extra;
    a.micros += static_cast<__int128>(std::rint((frac - static_cast<double>(extra)) * usecs_per_day));
  };
  auto micros_of = [&](int64_t scale) {
    a.micros += static_cast<__int128>(whole) * scale + static_cast<__int128>(std::rint(fraction * static_cast<double>(scale)));
  };
  auto years = [&](int per) {
    a.months += static_cast<__int128>(whole) * per * 12;
    a.months += static_cast<__int128>(std::rint(fraction * per * 12));
  };
  switch (unit) {
    case Unit::microsecond: micros_of(1); break;
    case Unit::millisecond: micros_of(1000); break;
    case Unit::second:
    case Unit::none: micros_of(usecs_per_sec); break;
    case Unit::minute: micros_of(usecs_per_minute); break;
    case Unit::hour: micros_of(usecs_per_hour); break;
    case Unit::day:
      a.days += whole;
      a.micros += static_cast<__int128>(std::rint(fraction * usecs_per_day));
      break;
    case Unit::week: a.days += static_cast<__int128>(whole) * 7; fract_days(fraction, 7); break;
    case Unit::month: a.months += whole; fract_days(fraction, 30); break;
    case Unit::year: years(1); break;
    case Unit::decade: years(10); break;
    case Unit::century: years(100); break;
    case Unit::millennium: years(1000); break;
    case Unit::ago: break;
  }
}

}  // namespace

Interval apply_interval_typmod(Interval v, int32_t typmod) {
  using namespace interval_mask;
  const int range = interval_range(typmod);
  if (range == full_range) return v;
  if (range == year) {
    v.months = v.months / 12 * 12;
    v.days = 0;
    v.micros = 0;
  } else if (range == month || range == (year | month)) {
    v.days = 0;
    v.micros = 0;
  } else if (range == day) {
    v.micros = 0;
  } else if (range == hour || range == (day | hour)) {
    v.micros = v.micros / usecs_per_hour * usecs_per_hour;
  } else if (range == minute || range == (hour | minute) || range == (day | hour | minute)) {
    v.micros = v.micros / usecs_per_minute * usecs_per_minute;
  }
  return v;
}

Interval parse_interval(std::string_view text, int32_t typmod) {
  const std::vector<Token> tokens = tokenize(text, text);
  if (tokens.empty()) throw bad_syntax(text);
  Accumulator acc;
  bool ago = false;
  // Right to left, as PostgreSQL reads them: a unit word names the number
  // before it; a number before a time of day counts days.
  Unit pending = Unit::none;
  bool has_pending = false, soft = false;  // soft: the day a time of day implies, a word may override
  for (size_t k = tokens.size(); k-- > 0;) {
    const Token& t = tokens[k];
    if (t.kind == Token::Kind::word) {
      const Unit u = unit_of(t.text);
      if (u == Unit::none || (has_pending && !soft)) throw bad_syntax(text);
      if (u == Unit::ago) {
        if (k + 1 != tokens.size() || ago) throw bad_syntax(text);
        ago = true;
        continue;
      }
      pending = u;
      has_pending = true;
      soft = false;
      continue;
    }
    if (t.kind == Token::Kind::time) {
      if (has_pending && !soft) throw bad_syntax(text);
      acc.micros += parse_time(t.text, text);
      pending = Unit::day;
      has_pending = soft = true;
      continue;
    }
    int64_t whole;
    double fraction;
    split_number(t.text, text, whole, fraction);
    const Unit unit = has_pending ? pending : default_unit(interval_range(typmod));
    add_unit(acc, unit, whole, fraction);
    has_pending = soft = false;
  }
  if (has_pending && !soft) throw bad_syntax(text);  // a unit word with no number
  if (ago) {
    acc.months = -acc.months;
    acc.days = -acc.days;
    acc.micros = -acc.micros;
  }
  if (acc.months < INT32_MIN || acc.months > INT32_MAX || acc.days < INT32_MIN || acc.days > INT32_MAX ||
      acc.micros < INT64_MIN || acc.micros > INT64_MAX) {
    throw field_overflow(text);
  }
  Interval v{static_cast<int32_t>(acc.months), static_cast<int32_t>(acc.days), static_cast<int64_t>(acc.micros)};
  return apply_interval_typmod(v, typmod);
}

namespace {

// PostgreSQL's AddPostgresIntPart: " +1 day" after a negative field, plural
// unless exactly 1.
void add_part(std::string& out, int64_t value, const char* unit, bool& is_zero, bool& is_before) {
  if (value == 0) return;
  if (!is_zero) out.push_back(' ');
  if (is_before && value > 0) out.push_back('+');
  out += std::to_string(value);
  out.push_back(' ');
  out += unit;
  if (value != 1) out.push_back('s');
  is_before = value < 0;
  is_zero = false;
}

void put2(std::string& out, int64_t v) {
  if (v < 10) out.push_back('0');
  out += std::to_string(v);
}

}  // namespace

void append_interval(std::string& out, const Interval& v) {
  bool is_zero = true, is_before = false;
  add_part(out, v.months / 12, "year", is_zero, is_before);
  add_part(out, v.months % 12, "mon", is_zero, is_before);
  add_part(out, v.days, "day", is_zero, is_before);
  const int64_t hour = v.micros / usecs_per_hour;
  int64_t rest = v.micros - hour * usecs_per_hour;
  const int64_t minute = rest / usecs_per_minute;
  rest -= minute * usecs_per_minute;
  const int64_t sec = rest / usecs_per_sec;
  const int64_t fsec = rest - sec * usecs_per_sec;
  if (!is_zero && hour == 0 && minute == 0 && sec == 0 && fsec == 0) return;
  const bool minus = hour < 0 || minute < 0 || sec < 0 || fsec < 0;
  if (!is_zero) out.push_back(' ');
  if (minus) out.push_back('-');
  else if (is_before) out.push_back('+');
  // |hour| of INT64_MIN micros still fits: it is about 2.5e6 hours.
  put2(out, hour < 0 ? -hour : hour);
  out.push_back(':');
  put2(out, minute < 0 ? -minute : minute);
  out.push_back(':');
  put2(out, sec < 0 ? -sec : sec);
  if (fsec != 0) {
    int64_t f = fsec < 0 ? -fsec : fsec;
    char buf[6];
    for (int i = 5; i >= 0; --i) { buf[i] = static_cast<char>('0' + f % 10); f /= 10; }
    int len = 6;
    while (len > 0 && buf[len - 1] == '0') --len;
    out.push_back('.');
    out.append(buf, static_cast<size_t>(len));
  }
}

void send_interval(std::string& out, const Interval& v) {
  auto put = [&out](uint64_t x, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>(x >> (8 * i)));
  };
  put(static_cast<uint64_t>(v.micros), 8);
  put(static_cast<uint32_t>(v.days), 4);
  put(static_cast<uint32_t>(v.months), 4);
}

Interval recv_interval(std::string_view bytes) {
  if (bytes.size() != 16) {
    throw Error(SqlState::invalid_binary_representation, "incorrect binary data format in bind parameter");
  }
  auto get = [&bytes](size_t at, int n) {
    uint64_t x = 0;
    for (int i = 0; i < n; ++i) x = (x << 8) | static_cast<uint8_t>(bytes[at + static_cast<size_t>(i)]);
    return x;
  };
  Interval v;
  v.micros = static_cast<int64_t>(get(0, 8));
  v.days = static_cast<int32_t>(static_cast<uint32_t>(get(8, 4)));
  v.months = static_cast<int32_t>(static_cast<uint32_t>(get(12, 4)));
  return v;
}

}  // namespace tally::types
