// date, timestamp and time text input/output with PostgreSQL 15's rules
// (DateStyle ISO; numeric fields in its order, MDY, DMY or YMD, as the
// statement's thread has it: thread_settings.hpp): ISO dates, month names, M/D/Y, YYYYMMDD, BC/AD,
// infinity, epoch, times with fractional seconds rounded to microseconds and
// AM/PM, ISO output with BC.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>

#include "executor/types/clock.hpp"
#include "executor/types/thread_settings.hpp"
#include "executor/types/time_zone.hpp"
#include "executor/types/type_io.hpp"

namespace tally::types {
namespace {

constexpr int postgres_epoch_jdate = 2451545;  // date2j(2000, 1, 1)
// Valid julian day range for date: [0, 2147483494) (PostgreSQL's IS_VALID_DATE).
constexpr int64_t date_end_julian = 2147483494;
// Timestamps end at 294277-01-01 (julian 109203528).
constexpr int64_t timestamp_end_julian = 109203528;

int date2j(int year, int month, int day) {
  int julian, century;
  if (month > 2) {
    month += 1;
    year += 4800;
  } else {
    month += 13;
    year += 4799;
  }
  century = year / 100;
  julian = year * 365 - 32167;
  julian += year / 4 - century + century / 4;
  julian += 7834 * month / 256 + day;
  return julian;
}

void j2date(int jd, int* year, int* month, int* day) {
  unsigned int julian = static_cast<unsigned int>(jd);
  julian += 32044;
  unsigned int quad = julian / 146097;
  const unsigned int extra = (julian - quad * 146097) * 4 + 3;
  julian += 60 + quad * 3 + extra / 146097;
  quad = julian / 1461;
  julian -= quad * 1461;
  int y = static_cast<int>(julian * 4 / 1461);
  julian = ((y != 0) ? ((julian + 305) % 365) : ((julian + 306) % 366)) + 123;
  y += static_cast<int>(quad * 4);
  *year = y - 4800;
  quad = julian * 2141 / 65536;
  *day = static_cast<int>(julian - 7834 * quad / 256);
  *month = static_cast<int>((quad + 10) % 12 + 1);
}

bool is_leap(int year) {
  // year in PostgreSQL's internal numbering (0 = 1 BC).
  return (year % 4 == 0) && ((year % 100 != 0) || (year % 400 == 0));
}

int days_in_month(int year, int month) {
  static constexpr std::array<int, 12> days = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap(year) ? 29 : days[static_cast<size_t>(month - 1)];
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != b[i]) return false;
  return true;
}

int month_from_name(std::string_view word) {
  static constexpr std::array<std::string_view, 12> full = {
      "january", "february", "march", "april", "may", "june",
      "july", "august", "september", "october", "november", "december"};
  for (size_t m = 0; m < 12; ++m) {
    if (iequals(word, full[m])) return static_cast<int>(m) + 1;
    if (iequals(word, full[m].substr(0, 3))) return static_cast<int>(m) + 1;
  }
  if (iequals(word, "sept")) return 9;
  return 0;
}

void put2(std::string& out, int v) {
  out += static_cast<char>('0' + v / 10);
  out += static_cast<char>('0' + v % 10);
}

void put_year(std::string& out, int year) {
  // At least four digits, as PostgreSQL's EncodeDateOnly prints them.
  char buf[16];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + year % 10);
    year /= 10;
  } while (year != 0);
  for (int k = n; k < 4; ++k) out += '0';
  while (n > 0) out += buf[--n];
}

enum class Kind { date, timestamp, timestamptz, time };

struct Field {
  std::string_view text;
  bool numeric;
};

[[noreturn]] void bad_syntax(Kind kind, std::string_view text) {
  // DateTimeParseError: bad format is 22007, not 22P02.
  throw Error(SqlState::invalid_datetime_format, std::string("invalid input syntax for type ") +
                                                     (kind == Kind::date        ? "date"
                                                      : kind == Kind::timestamp ? "timestamp"
                                                      : kind == Kind::time      ? "time"
                                                                                : "timestamp with time zone") + ": \"" +
                                                     std::string(text) + "\"");
}

[[noreturn]] void field_out_of_range(std::string_view text, bool month_hint = false) {
  Error e(SqlState::datetime_field_overflow,
          "date/time field value out of range: \"" + std::string(text) + "\"");
  if (month_hint) e.with_hint("Perhaps you need a different \"datestyle\" setting.");
  throw e;
}

int to_int(std::string_view digits) {
  int v = 0;
  for (char c : digits) {
    if (v > 100000000) return 1000000000;  // overflow -> out of range downstream
    v = v * 10 + (c - '0');
  }
  return v;
}

// The result of decoding: either a special value or fields.
struct Decoded {
  int special = 0;  // -1 = -infinity, +1 = infinity
  int year = 0, month = 0, day = 0;
  int hour = 0, minute = 0, second = 0;
  int64_t usec = 0;
  bool has_time = false;
  bool has_zone = false;  // the text names its UTC offset (timestamptz reads it)
  int zone_seconds = 0;   // east of UTC
};

// Splits "HH:MM[:SS[.ffff]]" into the decoded time.
void decode_time(Kind kind, std::string_view token, std::string_view text, Decoded& d) {
  int parts[3] = {0, 0, 0};
  int nparts = 0;
  size_t i = 0;
  while (nparts < 3) {
    const size_t start = i;
    while (i < token.size() && token[i] >= '0' && token[i] <= '9') ++i;
    if (i == start || i - start > 9) bad_syntax(kind, text);
    parts[nparts++] = to_int(token.substr(start, i - start));
    if (i < token.size() && token[i] == ':') { ++i; continue; }
    break;
  }
  if (nparts < 2) bad_syntax(kind, text);
  int64_t usec = 0;
  if (i < token.size() && token[i] == '.') {
    ++i;
    int ndigits = 0;
    bool round_up = false;
    while (i < token.size() && token[i] >= '0' && token[i] <= '9') {
      // PostgreSQL rounds to the microsecond: the 7th digit decides.
      if (ndigits < 6) usec = usec * 10 + (token[i] - '0');
      else if (ndigits == 6) round_up = token[i] >= '5';
      ++ndigits;
      ++i;
    }
    if (ndigits == 0) bad_syntax(kind, text);
    for (int k = ndigits; k < 6; ++k) usec *= 10;
    if (round_up) ++usec;
    if (nparts < 3) bad_syntax(kind, text);
  }
  if (i != token.size()) bad_syntax(kind, text);
  d.hour = parts[0];
  d.minute = parts[1];
  d.second = parts[2];
  d.usec = usec;
  d.has_time = true;
  if (d.hour < 0 || d.hour > 24 || d.minute > 59 || d.second > 60 ||
      (d.hour == 24 && (d.minute != 0 || d.second != 0 || d.usec != 0)))
    field_out_of_range(text);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// The seconds of a zone offset's digits: HH, HHMM, HHMMSS, HH:MM, HH:MM:SS
// (PostgreSQL's DecodeTimezone), at most 15:59:59 as it allows.
int zone_offset(Kind kind, std::string_view digits, std::string_view text) {
  int parts[3] = {0, 0, 0};
  int n = 0;
  if (digits.find(':') == std::string_view::npos) {
    if (digits.size() > 6 || (digits.size() % 2 == 1 && digits.size() != 1)) bad_syntax(kind, text);
    if (digits.size() <= 2) {
      parts[n++] = to_int(digits);
    } else {
      for (size_t k = 0; k < digits.size(); k += 2) parts[n++] = to_int(digits.substr(k, 2));
    }
  } else {
    size_t start = 0;
    while (n < 3) {
      const size_t colon = digits.find(':', start);
      const std::string_view part = digits.substr(start, colon == std::string_view::npos ? colon : colon - start);
      if (part.empty() || part.size() > 2) bad_syntax(kind, text);
      parts[n++] = to_int(part);
      if (colon == std::string_view::npos) break;
      start = colon + 1;
      if (n == 3) bad_syntax(kind, text);
    }
  }
  if (parts[0] > 15 || parts[1] > 59 || parts[2] > 59) {
    throw Error(SqlState::invalid_time_zone_displacement_value,
                "time zone displacement out of range: \"" + std::string(text) + "\"");
  }
  return (parts[0] * 60 + parts[1]) * 60 + parts[2];
}

Decoded decode(Kind kind, std::string_view text) {
  Decoded d;
  std::string_view s = text;
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  if (kind == Kind::time) {
    // time_in has no infinities and no date words; 'allballs' is midnight
    // and 'now' is read by parse_time (the session's local time of day).
    if (iequals(s, "allballs")) { d.has_time = true; return d; }
    if (iequals(s, "infinity") || iequals(s, "+infinity") || iequals(s, "-infinity") || iequals(s, "epoch") ||
        iequals(s, "today") || iequals(s, "yesterday") || iequals(s, "tomorrow"))
      bad_syntax(kind, text);
  }
  if (iequals(s, "infinity") || iequals(s, "+infinity")) { d.special = 1; return d; }
  if (iequals(s, "-infinity")) { d.special = -1; return d; }
  if (iequals(s, "epoch")) { d.year = 1970; d.month = 1; d.day = 1; d.has_zone = true; return d; }
  if (iequals(s, "today") || iequals(s, "now") || iequals(s, "yesterday") || iequals(s, "tomorrow")) {
    const auto now = std::chrono::system_clock::now();
    const auto today = std::chrono::floor<std::chrono::days>(now);
    std::chrono::year_month_day ymd{today};
    int offset = iequals(s, "yesterday") ? -1 : iequals(s, "tomorrow") ? 1 : 0;
    std::chrono::year_month_day shifted{std::chrono::sys_days{ymd} + std::chrono::days{offset}};
    d.year = static_cast<int>(shifted.year());
    d.month = static_cast<int>(static_cast<unsigned>(shifted.month()));
    d.day = static_cast<int>(static_cast<unsigned>(shifted.day()));
    if (iequals(s, "now") && kind != Kind::date) {
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(now - today).count();
      d.hour = static_cast<int>(us / 3600000000LL);
      d.minute = static_cast<int>(us / 60000000LL % 60);
      d.second = static_cast<int>(us / 1000000 % 60);
      d.usec = us % 1000000;
      d.has_time = true;
      d.has_zone = true;  // the clock's time is UTC
    }
    return d;
  }
  if (s.empty()) bad_syntax(kind, text);

  // Tokenize: date sub-fields (numbers and words, separated by - / . space ,),
  // one time token (contains ':'), an optional 'T' between date and time, and
  // a trailing time zone (ignored by timestamp without time zone).
  Field fields[8];
  int nfields = 0;
  bool bc = false;
  int month_word = 0;
  size_t i = 0;
  bool time_seen = false;
  int meridian = 0;  // 1 = AM, 2 = PM
  while (i < s.size()) {
    const char c = s[i];
    if (is_space(c) || c == ',') { ++i; continue; }
    if (is_digit(c)) {
      size_t j = i;
      while (j < s.size() && is_digit(s[j])) ++j;
      if (j < s.size() && s[j] == ':') {
        // A time token.
        size_t k = j;
        while (k < s.size() && (is_digit(s[k]) || s[k] == ':' || s[k] == '.')) ++k;
        if (time_seen) bad_syntax(kind, text);
        decode_time(kind, s.substr(i, k - i), text, d);
        time_seen = true;
        i = k;
        continue;
      }
      if (nfields == 8) bad_syntax(kind, text);
      fields[nfields++] = {s.substr(i, j - i), true};
      i = j;
      if (i < s.size() && (s[i] == '-' || s[i] == '/' || s[i] == '.')) {
        ++i;
        if (i == s.size()) bad_syntax(kind, text);
      } else if (i < s.size() && (s[i] == 'T' || s[i] == 't') && i + 1 < s.size() && is_digit(s[i + 1])) {
        ++i;  // ISO 8601 'T' separator
      }
      continue;
    }
    if (is_alpha(c)) {
      size_t j = i;
      while (j < s.size() && is_alpha(s[j])) ++j;
      const std::string_view word = s.substr(i, j - i);
      if (iequals(word, "bc")) {
        bc = true;
      } else if (iequals(word, "ad")) {
      } else if (time_seen && meridian == 0 && (iequals(word, "am") || iequals(word, "pm"))) {
        meridian = iequals(word, "am") ? 1 : 2;
      } else if (time_seen && (iequals(word, "z") || iequals(word, "utc") || iequals(word, "gmt"))) {
        d.has_zone = true;
        d.zone_seconds = 0;
      } else if (const int m = month_from_name(word); m != 0 && month_word == 0) {
        month_word = m;
        if (nfields == 8) bad_syntax(kind, text);
        fields[nfields++] = {word, false};
      } else {
        bad_syntax(kind, text);
      }
      i = j;
      if (i < s.size() && (s[i] == '-' || s[i] == '/' || s[i] == '.')) ++i;
      continue;
    }
    if ((c == '+' || c == '-') && (time_seen || nfields >= 3 || (nfields > 0 && is_space(s[i - 1])))) {
      // Time zone offset: +HH[:MM[:SS]] or +HHMM; ignored for timestamp and
      // date. PostgreSQL takes one after a date without a time too
      // ('YYYY-MM-DD +00', as pgjdbc's setDate sends it).
      size_t j = i + 1;
      while (j < s.size() && (is_digit(s[j]) || s[j] == ':')) ++j;
      if (j == i + 1) bad_syntax(kind, text);
      d.zone_seconds = zone_offset(kind, s.substr(i + 1, j - i - 1), text) * (c == '-' ? -1 : 1);
      d.has_zone = true;
      i = j;
      continue;
    }
    bad_syntax(kind, text);
  }

  if (meridian != 0) {
    // PostgreSQL's DecodeTimeOnly: 12 AM is midnight, 12 PM noon, and a
    // 12-hour clock has no hour above 12.
    if (d.hour > 12) field_out_of_range(text);
    if (meridian == 1 && d.hour == 12) d.hour = 0;
    else if (meridian == 2 && d.hour != 12) d.hour += 12;
  }
  if (kind == Kind::time) {
    // A date before the time is checked and then ignored.
    if (!time_seen) bad_syntax(kind, text);
    if (nfields == 0) return d;
  }
  // Resolve the date fields.
  int nums[8];
  int num_len[8];
  int nnums = 0;
  for (int f = 0; f < nfields; ++f) {
    if (fields[f].numeric) {
      nums[nnums] = to_int(fields[f].text);
      num_len[nnums] = static_cast<int>(fields[f].text.size());
      ++nnums;
    }
  }
  int year_len = 0;
  if (month_word != 0) {
    if (nnums != 2) bad_syntax(kind, text);
    d.month = month_word;
    if (num_len[0] > 2 || nums[0] > 31) {
      d.year = nums[0]; year_len = num_len[0]; d.day = nums[1];
    } else {
      d.day = nums[0]; d.year = nums[1]; year_len = num_len[1];
    }
  } else if (nnums == 3) {
    const DateOrder order = current_date_order();
    if (num_len[0] > 2 || order == DateOrder::ymd) {  // Y-M-D
      d.year = nums[0]; year_len = num_len[0]; d.month = nums[1]; d.day = nums[2];
    } else if (order == DateOrder::dmy) {
      d.day = nums[0]; d.month = nums[1]; d.year = nums[2]; year_len = num_len[2];
    } else {
      d.month = nums[0]; d.day = nums[1]; d.year = nums[2]; year_len = num_len[2];
    }
  } else if (nnums == 1 && (num_len[0] == 8 || num_len[0] == 6)) {
    // YYYYMMDD (or YYMMDD)
    const std::string_view f = fields[0].numeric ? fields[0].text : fields[1].text;
    const size_t ylen = f.size() - 4;
    d.year = to_int(f.substr(0, ylen)); year_len = static_cast<int>(ylen);
    d.month = to_int(f.substr(ylen, 2));
    d.day = to_int(f.substr(ylen + 2, 2));
  } else {
    bad_syntax(kind, text);
  }
  // Two-digit years map to 1970..2069, as PostgreSQL's AdjustYears does.
  if (year_len == 2 && !bc) d.year += d.year < 70 ? 2000 : 1900;
  if (d.month < 1 || d.month > 12) field_out_of_range(text, true);
  if (d.year == 0 || d.year > 10000000) {
    if (d.year == 0) field_out_of_range(text);
  }
  if (bc) d.year = -(d.year - 1);
  if (d.day < 1 || d.day > days_in_month(d.year, d.month)) field_out_of_range(text);
  return d;
}

}  // namespace

int32_t date_from_ymd(int year, int month, int day) { return date2j(year, month, day) - postgres_epoch_jdate; }

void ymd_from_date(int32_t days, int& year, int& month, int& day) {
  j2date(days + postgres_epoch_jdate, &year, &month, &day);
}

int32_t parse_date(std::string_view text) {
  // Fast path for the common exact ISO form YYYY-MM-DD (COPY of dates).
  if (text.size() == 10 && text[4] == '-' && text[7] == '-') {
    int v[8];
    bool digits = true;
    static constexpr int at[8] = {0, 1, 2, 3, 5, 6, 8, 9};
    for (int k = 0; k < 8; ++k) {
      const char c = text[static_cast<size_t>(at[k])];
      digits = digits && c >= '0' && c <= '9';
      v[k] = c - '0';
    }
    if (digits) {
      const int year = v[0] * 1000 + v[1] * 100 + v[2] * 10 + v[3];
      const int month = v[4] * 10 + v[5], day = v[6] * 10 + v[7];
      if (year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= days_in_month(year, month))
        return static_cast<int32_t>(date2j(year, month, day) - postgres_epoch_jdate);
    }
  }
  const Decoded d = decode(Kind::date, text);
  if (d.special != 0) return d.special > 0 ? date_pos_infinity : date_neg_infinity;
  if (d.year > 5874898 || d.year < -4714) 
    throw Error(SqlState::datetime_field_overflow, "date out of range: \"" + std::string(text) + "\"");
  const int64_t julian = date2j(d.year, d.month, d.day);
  if (julian < 0 || julian >= date_end_julian)
    throw Error(SqlState::datetime_field_overflow, "date out of range: \"" + std::string(text) + "\"");
  return static_cast<int32_t>(julian - postgres_epoch_jdate);
}

namespace {

int64_t decoded_timestamp(Kind kind, std::string_view text, bool& has_zone, int& zone_seconds) {
  const Decoded d = decode(kind, text);
  has_zone = d.has_zone;
  zone_seconds = d.zone_seconds;
  if (d.special != 0) return d.special > 0 ? timestamp_pos_infinity : timestamp_neg_infinity;
  if (d.year > 294277 || d.year < -4714)
    throw Error(SqlState::datetime_field_overflow, "timestamp out of range: \"" + std::string(text) + "\"");
  const int64_t julian = date2j(d.year, d.month, d.day);
  const int64_t micros = (julian - postgres_epoch_jdate) * usecs_per_day +
                         ((static_cast<int64_t>(d.hour) * 60 + d.minute) * 60 + d.second) * 1000000LL + d.usec;
  const int64_t min_micros = -static_cast<int64_t>(postgres_epoch_jdate) * usecs_per_day;
  const int64_t end_micros = (timestamp_end_julian - postgres_epoch_jdate) * usecs_per_day;
  if (julian < 0 || micros < min_micros || micros >= end_micros)
    throw Error(SqlState::datetime_field_overflow, "timestamp out of range: \"" + std::string(text) + "\"");
  return micros;
}

}  // namespace

int64_t parse_timestamp(std::string_view text) {
  bool has_zone = false;
  int zone_seconds = 0;
  return decoded_timestamp(Kind::timestamp, text, has_zone, zone_seconds);
}

int64_t parse_timestamp_zone(std::string_view text, bool& has_zone, int& zone_seconds) {
  return decoded_timestamp(Kind::timestamptz, text, has_zone, zone_seconds);
}

void append_date(std::string& out, int32_t days) {
  if (days == date_neg_infinity) { out += "-infinity"; return; }
  if (days == date_pos_infinity) { out += "infinity"; return; }
  int year, month, day;
  j2date(days + postgres_epoch_jdate, &year, &month, &day);
  const bool bc = year <= 0;
  put_year(out, bc ? 1 - year : year);
  out += '-';
  put2(out, month);
  out += '-';
  put2(out, day);
  if (bc) out += " BC";
}

void append_timestamp(std::string& out, int64_t micros) {
  if (micros == timestamp_neg_infinity) { out += "-infinity"; return; }
  if (micros == timestamp_pos_infinity) { out += "infinity"; return; }
  int64_t days = micros / usecs_per_day;
  int64_t time = micros % usecs_per_day;
  if (time < 0) { time += usecs_per_day; --days; }
  int year, month, day;
  j2date(static_cast<int>(days + postgres_epoch_jdate), &year, &month, &day);
  const bool bc = year <= 0;
  put_year(out, bc ? 1 - year : year);
  out += '-';
  put2(out, month);
  out += '-';
  put2(out, day);
  out += ' ';
  append_time(out, time);
  if (bc) out += " BC";
}

int64_t parse_time(std::string_view text, int32_t typmod) {
  std::string_view s = text;
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  int64_t micros;
  if (iequals(s, "now")) {
    micros = current_time_zone().to_local(executor::clock_us()) % usecs_per_day;
    if (micros < 0) micros += usecs_per_day;
  } else {
    const Decoded d = decode(Kind::time, text);
    // 24:00:00 is a valid time, and DecodeTimeOnly takes 23:59:60 (a leap second) as 24:00:00.
    micros = ((static_cast<int64_t>(d.hour) * 60 + d.minute) * 60 + d.second) * 1000000LL + d.usec;
  }
  return round_time(micros, typmod);
}

int64_t parse_time_zone(std::string_view text, bool& has_zone, int& zone_seconds) {
  const Decoded d = decode(Kind::time, text);
  has_zone = d.has_zone;
  zone_seconds = d.zone_seconds;
  return ((static_cast<int64_t>(d.hour) * 60 + d.minute) * 60 + d.second) * 1000000LL + d.usec;
}

int32_t time_typmod(const std::vector<int64_t>& modifiers) {
  if (modifiers.empty()) return -1;
  if (modifiers.size() != 1) throw Error(SqlState::invalid_parameter_value, "invalid type modifier");
  const int64_t p = modifiers[0];
  if (p < 0)
    throw Error(SqlState::invalid_parameter_value, "TIME(" + std::to_string(p) + ") precision must not be negative");
  return static_cast<int32_t>(std::min<int64_t>(p, 6));
}

int64_t round_time(int64_t micros, int32_t typmod) {
  // PostgreSQL's AdjustTimeForTypmod: half away from zero to 10^-p seconds.
  if (typmod < 0 || typmod >= 6) return micros;
  int64_t scale = 1;
  for (int k = typmod; k < 6; ++k) scale *= 10;
  const int64_t half = scale / 2;
  if (micros >= 0) return (micros + half) / scale * scale;
  return -((-micros + half) / scale * scale);
}

void append_time(std::string& out, int64_t micros) {
  // time_out (EncodeTimeOnly): HH:MM:SS and the fraction without trailing
  // zeros, as a timestamp prints its time of day.
  const int64_t secs = micros / 1000000;
  int usec = static_cast<int>(micros % 1000000);
  put2(out, static_cast<int>(secs / 3600));
  out += ':';
  put2(out, static_cast<int>(secs / 60 % 60));
  out += ':';
  put2(out, static_cast<int>(secs % 60));
  if (usec != 0) {
    char frac[7];
    for (int k = 5; k >= 0; --k) { frac[k] = static_cast<char>('0' + usec % 10); usec /= 10; }
    int len = 6;
    while (len > 0 && frac[len - 1] == '0') --len;
    out += '.';
    out.append(frac, static_cast<size_t>(len));
  }
}

}  // namespace tally::types
