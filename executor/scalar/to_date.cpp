// to_date(text, template) and to_timestamp(text, template): a date or time
// read by PostgreSQL's template patterns, as formatting.c reads them
// outside FX mode: YYYY YYY YY Y (YYY YY Y of fewer than four digits: the
// year nearest 2020), MM,
// DD, DDD, HH HH12 HH24, MI, SS, MS, US, AM/PM (A.M./P.M.), Mon/MON/mon and
// Month (names in any case), Dy/Day (read and checked against nothing), J
// (Julian day), "quoted" text and FM/TH (no effect on input). A number takes
// as many digits as its field allows, or, when a separator follows its
// pattern, all the digits there are; a separator or space in the template
// skips one separator or space of the input, if there is one; spaces before
// a field are skipped. to_timestamp's value is the session zone's local time.
// A value out of its field's range is 22008, text that does not fit the
// template 22007, as in PostgreSQL; other patterns (IY, IW, TZ, OF, CC, Q,
// W, WW, RM) answer 0A000.
#include <array>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar_functions.hpp"
#include "executor/types/time_zone.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::scalar {
namespace {

const std::array<const char*, 12> kMonthNames = {"january", "february", "march",     "april",   "may",      "june",
                                                 "july",    "august",   "september", "october", "november", "december"};
const std::array<const char*, 7> kDayNames = {"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"};

struct Fields {
  std::optional<int> year, month, day, day_of_year, hour, minute, second, julian;
  int64_t micros = 0;
  std::optional<bool> pm;
  bool twelve_hour = false;
};

Error bad_value(std::string_view text, std::string_view pattern) {
  return Error(SqlState::invalid_datetime_format,
               "invalid value \"" + std::string(text.substr(0, 8)) + "\" for \"" + std::string(pattern) + "\"");
}
Error out_of_range(std::string_view what) {
  return Error(SqlState::datetime_field_overflow, "date/time field value out of range: \"" + std::string(what) + "\"");
}

bool is_separator(char c) { return !std::isalnum(static_cast<unsigned char>(c)); }

bool starts_with_ci(std::string_view s, size_t at, std::string_view word) {
  if (s.size() - at < word.size()) return false;
  for (size_t k = 0; k < word.size(); ++k) {
    if (std::tolower(static_cast<unsigned char>(s[at + k])) != std::tolower(static_cast<unsigned char>(word[k]))) return false;
  }
  return true;
}

int year_near_2020(int year) {
  if (year < 70) return year + 2000;
  if (year < 100) return year + 1900;
  if (year < 520) return year + 2000;
  if (year < 1000) return year + 1000;
  return year;
}

class Reader {
 public:
  Reader(std::string_view input, std::string_view format) : in_(input), format_(format) {}

  Fields read() {
    size_t f = 0;
    while (f < format_.size()) {
      if (starts_with_ci(format_, f, "FM")) {
        f += 2;
        continue;
      }
      if (format_[f] == '"') {
        for (++f; f < format_.size() && format_[f] != '"'; ++f) {
          if (format_[f] == '\\' && f + 1 < format_.size()) ++f;
          if (at_ < in_.size()) ++at_;
        }
        ++f;
        continue;
      }
      const std::string_view rest = format_.substr(f);
      if (const size_t n = pattern_length(rest)) {
        field(rest.substr(0, n), f + n);
        f += n;
        if (starts_with_ci(format_, f, "TH")) f += 2;  // an ordinal suffix: its letters are skipped below
        continue;
      }
      // A separator (or any other character) of the template skips one
      // character of the input that is not a letter or digit.
      if (at_ < in_.size() && is_separator(in_[at_])) ++at_;
      ++f;
    }
    return fields_;
  }

 private:
  // The length of the pattern at the start of `s`, longest first; 0 for none.
  static size_t pattern_length(std::string_view s) {
    static constexpr std::string_view kPatterns[] = {
        "YYYY", "HH24", "HH12", "MONTH", "A.M.", "P.M.", "YYY", "DDD", "DAY", "MON", "YY", "MM", "DD", "HH", "MI",
        "SS",   "MS",   "US",   "AM",    "PM",   "DY",   "Y",   "J",   "IY", "IW", "TZ", "OF", "CC", "WW", "RM", "Q", "W"};
    for (const std::string_view p : kPatterns) {
      if (starts_with_ci(s, 0, p)) return p.size();
    }
    return 0;
  }

  // Whether the template after a pattern (ending at `next`) continues with a
  // separator or ends: then the number takes all its digits.
  bool separator_follows(size_t next) const {
    return next >= format_.size() || (is_separator(format_[next]) && format_[next] != '"');
  }

  void skip_spaces() {
    while (at_ < in_.size() && in_[at_] == ' ') ++at_;
  }

  int64_t number(std::string_view pattern, size_t width, size_t next) {
    skip_spaces();
    const size_t start = at_;
    bool negative = false;
    if (at_ < in_.size() && (in_[at_] == '-' || in_[at_] == '+') && separator_follows(next)) {
      negative = in_[at_] == '-';
      ++at_;
    }
    const size_t limit = separator_follows(next) ? SIZE_MAX : width;
    int64_t value = 0;
    size_t digits = 0;
    while (at_ < in_.size() && digits < limit && std::isdigit(static_cast<unsigned char>(in_[at_]))) {
      if (value > 100'000'000) throw out_of_range(in_);
      value = value * 10 + (in_[at_++] - '0');
      ++digits;
    }
    if (digits == 0) throw bad_value(in_.substr(start), pattern);
    last_digits_ = digits;
    return negative ? -value : value;
  }

  // A month's or day's name (full or its first three letters); its index.
  int name(std::string_view pattern, const char* const* names, size_t count, bool abbreviated) {
    skip_spaces();
    for (size_t k = 0; k < count; ++k) {
      const std::string_view full = names[k];
      const std::string_view word = abbreviated ? full.substr(0, 3) : full;
      if (starts_with_ci(in_, at_, word)) {
        at_ += word.size();
        return static_cast<int>(k);
      }
    }
    throw bad_value(in_.substr(at_), pattern);
  }

  void field(std::string_view pattern, size_t next) {
    std::string upper(pattern);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper == "YYYY" || upper == "YYY" || upper == "YY" || upper == "Y") {
      fields_.year = static_cast<int>(number(pattern, upper.size(), next));
      // YYY, YY and Y read with fewer than four digits: the year nearest
      // 2020 (formatting.c's adjust_partial_year_to_2020).
      if (upper != "YYYY" && last_digits_ < 4) fields_.year = year_near_2020(*fields_.year);
    } else if (upper == "MM") {
      fields_.month = static_cast<int>(number(pattern, 2, next));
    } else if (upper == "DD") {
      fields_.day = static_cast<int>(number(pattern, 2, next));
    } else if (upper == "DDD") {
      fields_.day_of_year = static_cast<int>(number(pattern, 3, next));
    } else if (upper == "HH" || upper == "HH12" || upper == "HH24") {
      fields_.hour = static_cast<int>(number(pattern, 2, next));
      fields_.twelve_hour = upper != "HH24";
    } else if (upper == "MI") {
      fields_.minute = static_cast<int>(number(pattern, 2, next));
    } else if (upper == "SS") {
      fields_.second = static_cast<int>(number(pattern, 2, next));
    } else if (upper == "MS" || upper == "US") {
      const int64_t v = number(pattern, upper == "MS" ? 3 : 6, next);
      // Digits read as a fraction: "5" is 500 ms, as PostgreSQL reads them.
      int64_t scaled = v;
      for (size_t d = last_digits_; d < (upper == "MS" ? 3u : 6u); ++d) scaled *= 10;
      fields_.micros += upper == "MS" ? scaled * 1000 : scaled;
    } else if (upper == "AM" || upper == "PM" || upper == "A.M." || upper == "P.M.") {
      skip_spaces();
      const bool dotted = upper.size() == 4;
      if (starts_with_ci(in_, at_, dotted ? "A.M." : "AM")) fields_.pm = false;
      else if (starts_with_ci(in_, at_, dotted ? "P.M." : "PM")) fields_.pm = true;
      else throw bad_value(in_.substr(at_), pattern);
      at_ += upper.size();
    } else if (upper == "MONTH" || upper == "MON") {
      fields_.month = name(pattern, kMonthNames.data(), kMonthNames.size(), upper == "MON") + 1;
    } else if (upper == "DAY" || upper == "DY") {
      name(pattern, kDayNames.data(), kDayNames.size(), upper == "DY");
    } else if (upper == "J") {
      fields_.julian = static_cast<int>(number(pattern, SIZE_MAX, next));
    } else {
      throw Error(SqlState::feature_not_supported, "the \"" + std::string(pattern) + "\" pattern of to_date and to_timestamp is not supported");
    }
  }

  std::string_view in_, format_;
  size_t at_ = 0;
  size_t last_digits_ = 0;
  Fields fields_;
};

// Days since 2000-01-01 of the fields' date.
int32_t date_of(const Fields& f, std::string_view input) {
  if (f.julian) return *f.julian - 2451545;
  int year = f.year.value_or(1);
  if (year == 0) throw out_of_range(input);
  if (year < 0) year += 1;  // year -44 is 44 BC, PostgreSQL's astronomical year -43
  if (f.day_of_year) {
    if (*f.day_of_year < 1 || *f.day_of_year > 366) throw out_of_range(input);
    return days_from_civil(year, 1, 1) + *f.day_of_year - 1;
  }
  const int month = f.month.value_or(1), day = f.day.value_or(1);
  if (month < 1 || month > 12 || day < 1) throw out_of_range(input);
  const int32_t first = days_from_civil(year, month, 1);
  const int32_t next = month == 12 ? days_from_civil(year + 1, 1, 1) : days_from_civil(year, month + 1, 1);
  if (day > next - first) throw out_of_range(input);
  return first + day - 1;
}

int64_t time_of(const Fields& f, std::string_view input) {
  int hour = f.hour.value_or(0);
  if (f.twelve_hour || f.pm) {
    if (hour < 1 || hour > 12) {
      throw Error(SqlState::invalid_datetime_format,
                  "hour \"" + std::to_string(hour) + "\" is invalid for the 12-hour clock")
          .with_hint("Use the 24-hour clock, or give an hour between 1 and 12.");
    }
    if (f.pm.value_or(false) && hour < 12) hour += 12;
    if (!f.pm.value_or(false) && hour == 12) hour = 0;
  }
  const int minute = f.minute.value_or(0), second = f.second.value_or(0);
  if (hour > 24 || minute > 59 || second > 60 || hour < 0 || minute < 0 || second < 0) throw out_of_range(input);
  return ((int64_t{hour} * 60 + minute) * 60 + second) * 1'000'000 + f.micros;
}

}  // namespace

ExprPtr make_to_date_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  if ((name != "to_date" && name != "to_timestamp") || args.size() != 2) return nullptr;
  for (auto& a : args) {
    if (a->type.id != TypeId::unknown && !is_text_kind(a->type.id)) return nullptr;
    a = to_type(std::move(a), TypeId::text, context);
  }
  if (name == "to_date") {
    return call({TypeId::date}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const auto& input = std::get<std::string>(a[0]);
      return int64_t{date_of(Reader(input, std::get<std::string>(a[1])).read(), input)};
    });
  }
  return call({TypeId::timestamptz}, name, std::move(args), [](std::span<const Value> a) -> Value {
    const auto& input = std::get<std::string>(a[0]);
    const Fields f = Reader(input, std::get<std::string>(a[1])).read();
    const int64_t local = int64_t{date_of(f, input)} * kUsecsPerDay + time_of(f, input);
    return types::current_time_zone().to_utc(local);
  });
}

}  // namespace tally::executor::scalar
