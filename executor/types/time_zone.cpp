#include "executor/types/time_zone.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>

#include "executor/types/type_io.hpp"

namespace tally::types {
namespace {

// Seconds from 1970-01-01 (the zone database's epoch) to 2000-01-01.
constexpr int64_t kUnixToPostgres = 946'684'800;
constexpr int64_t kMicros = 1'000'000;
// Where the IANA database is installed (Debian's tzdata; PostgreSQL's
// --with-system-tzdata reads the same files).
constexpr const char* kZoneDirectory = "/usr/share/zoneinfo/";
// A footer's daylight rules are spelled out as transitions up to this year;
// later instants keep the last offset.
constexpr int kLastRuleYear = 2500;

thread_local std::shared_ptr<const TimeZone> current_zone;

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// "[+-]hh[:mm[:ss]]" at s[i...]: seconds (sign applied); nullopt when malformed.
std::optional<int32_t> posix_offset(std::string_view s, size_t& i) {
  int sign = 1;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) sign = s[i++] == '-' ? -1 : 1;
  int parts[3] = {0, 0, 0};
  for (int n = 0; n < 3; ++n) {
    const size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i - start < 3) ++i;
    if (i == start) return std::nullopt;
    std::from_chars(s.data() + start, s.data() + i, parts[n]);
    if (i >= s.size() || s[i] != ':' || n == 2) break;
    ++i;
  }
  if (parts[0] > 167 || parts[1] > 59 || parts[2] > 59) return std::nullopt;
  return sign * ((parts[0] * 60 + parts[1]) * 60 + parts[2]);
}

// A POSIX zone name: letters, or anything in <...>.
bool posix_name(std::string_view s, size_t& i) {
  if (i < s.size() && s[i] == '<') {
    const size_t close = s.find('>', i);
    if (close == std::string_view::npos) return false;
    i = close + 1;
    return true;
  }
  const size_t start = i;
  while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
  return i - start >= 3;
}


// A name that can only be a file under kZoneDirectory.
bool safe_zone_name(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.find("..") != std::string_view::npos) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' || c == '+';
  });
}

// Big-endian integers of a TZif file.
int64_t be(const std::string& data, size_t at, size_t bytes) {
  uint64_t v = 0;
  for (size_t k = 0; k < bytes; ++k) v = v << 8 | static_cast<unsigned char>(data[at + k]);
  if (bytes == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
  return static_cast<int64_t>(v);
}

// Day of a POSIX "Mm.w.d" rule in a year: weekday d (0 = Sunday) of week w
// (5 = the last) of month m; days since 1970-01-01.
int64_t rule_day(int year, int month, int week, int weekday) {
  const int64_t first = date_from_ymd(year, month, 1) + kUnixToPostgres / 86400;
  const int first_weekday = static_cast<int>(((first % 7) + 7 + 4) % 7);  // 1970-01-01 was a Thursday
  int64_t day = first + (weekday - first_weekday + 7) % 7 + 7 * (week - 1);
  int y, m, d;
  while (true) {
    ymd_from_date(static_cast<int32_t>(day - kUnixToPostgres / 86400), y, m, d);
    if (m == month) break;
    day -= 7;  // week 5 past the month's end: its last such weekday
  }
  return day;
}

}  // namespace

// "hh" for whole hours, else "hh:mm[:ss]", as PostgreSQL names a numeric zone.
std::string hours_text(int32_t seconds) {
  const int32_t a = std::abs(seconds);
  char buf[16];
  std::string out = seconds < 0 ? "-" : "+";
  const int h = a / 3600, m = a / 60 % 60, s = a % 60;
  std::snprintf(buf, sizeof buf, "%02d", h);
  out += buf;
  if (m != 0 || s != 0) {
    std::snprintf(buf, sizeof buf, ":%02d", m);
    out += buf;
  }
  if (s != 0) {
    std::snprintf(buf, sizeof buf, ":%02d", s);
    out += buf;
  }
  return out;
}

// A footer's "Mm.w.d[/time]" change.
struct TimeZone::Rule {
  int month = 0, week = 0, weekday = 0;
  int32_t time = 7200;  // local seconds after midnight
};

const std::shared_ptr<const TimeZone>& TimeZone::utc() {
  static const std::shared_ptr<const TimeZone> zone = [] {
    auto z = std::make_shared<TimeZone>();
    z->name_ = "UTC";
    return std::shared_ptr<const TimeZone>(std::move(z));
  }();
  return zone;
}

std::shared_ptr<const TimeZone> TimeZone::fixed_hours_east(int32_t seconds_east) {
  auto z = std::make_shared<TimeZone>();
  // PostgreSQL names it as a POSIX zone: <+02>-02 is two hours east.
  z->name_ = "<" + hours_text(seconds_east) + ">" + hours_text(-seconds_east);
  z->initial_offset_ = seconds_east;
  return z;
}

std::shared_ptr<const TimeZone> TimeZone::find(std::string_view setting) {
  // A plain number: hours east of UTC (PostgreSQL's check_timezone reads it with strtod).
  {
    std::string text(setting);
    char* end = nullptr;
    const double hours = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size() && !std::isspace(static_cast<unsigned char>(text[0]))) {
      if (!std::isfinite(hours) || std::abs(hours) > 168) return nullptr;
      return fixed_hours_east(static_cast<int32_t>(std::lround(hours * 3600)));
    }
  }
  return named(setting);
}

std::shared_ptr<const TimeZone> TimeZone::named(std::string_view name) {
  if (safe_zone_name(name)) {
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<const TimeZone>, std::less<>> cache;
    std::lock_guard lock(mutex);
    if (auto it = cache.find(name); it != cache.end()) return it->second;
    // The database's names are matched without case, as PostgreSQL does for
    // the common spellings: 'utc' and 'gmt' are the files UTC and GMT.
    std::string upper(name);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (const std::string& candidate : {std::string(name), upper}) {
      if (auto zone = load(candidate)) {
        cache.emplace(std::string(name), zone);
        return zone;
      }
      if (name.find('/') != std::string_view::npos) break;  // Area/City: its own spelling only
    }
  }
  // A POSIX zone with a standard offset only: [NAME][+-]hh[:mm[:ss]].
  size_t i = 0;
  const bool has_name = posix_name(name, i);
  if (!has_name) i = 0;
  const auto west = posix_offset(name, i);
  if (!west || i != name.size()) return nullptr;
  auto z = std::make_shared<TimeZone>();
  z->name_ = std::string(name);
  z->initial_offset_ = -*west;
  return z;
}

std::shared_ptr<const TimeZone> TimeZone::load(const std::string& name) {
  std::ifstream in(kZoneDirectory + name, std::ios::binary);
  if (!in) return nullptr;
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.size() < 44 || data.compare(0, 4, "TZif") != 0) return nullptr;
  // The header's six counts: isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt.
  auto counts = [&](size_t at, int64_t c[6]) {
    for (int k = 0; k < 6; ++k) c[k] = be(data, at + 20 + 4 * static_cast<size_t>(k), 4);
  };
  int64_t c[6];
  counts(0, c);
  size_t at = 44;
  size_t time_size = 4;
  if (data[4] >= '2') {
    // Skip the 32-bit block for the 64-bit one that follows it.
    at += static_cast<size_t>(c[3] * 5 + c[4] * 6 + c[5] + c[2] * 8 + c[1] + c[0]);
    if (data.size() < at + 44 || data.compare(at, 4, "TZif") != 0) return nullptr;
    counts(at, c);
    at += 44;
    time_size = 8;
  }
  const size_t timecnt = static_cast<size_t>(c[3]), typecnt = static_cast<size_t>(c[4]);
  const size_t block = timecnt * (time_size + 1) + typecnt * 6 + static_cast<size_t>(c[5]) +
                       static_cast<size_t>(c[2]) * (time_size + 4) + static_cast<size_t>(c[1] + c[0]);
  if (typecnt == 0 || data.size() < at + block) return nullptr;
  const size_t types_at = at + timecnt * (time_size + 1);
  auto type_offset = [&](size_t type) {
    return static_cast<int32_t>(be(data, types_at + 6 * std::min(type, typecnt - 1), 4));
  };
  auto z = std::make_shared<TimeZone>();
  z->name_ = name;
  // Before the first transition: the first standard-time type (RFC 8536), else type 0.
  z->initial_offset_ = type_offset(0);
  for (size_t k = 0; k < timecnt; ++k) {
    z->transitions_.push_back(be(data, at + k * time_size, time_size));
    z->offsets_.push_back(type_offset(static_cast<unsigned char>(data[at + timecnt * time_size + k])));
  }
  // The footer (version 2+): a POSIX zone for instants after the last transition.
  if (time_size == 8) {
    const size_t start = at + block + 1, end = data.find('\n', start);
    if (end != std::string::npos) {
      const std::string_view tz(data.data() + start, end - start);
      size_t i = 0;
      if (posix_name(tz, i)) {
        const auto std_west = posix_offset(tz, i);
        if (std_west && i < tz.size()) {
          size_t j = i;
          if (posix_name(tz, j)) {
            int32_t dst_west = *std_west - 3600;
            if (j < tz.size() && tz[j] != ',') {
              if (auto o = posix_offset(tz, j)) dst_west = *o;
            }
            Rule rules[2];
            bool ok = true;
            for (Rule& r : rules) {
              if (j >= tz.size() || tz[j] != ',' || j + 1 >= tz.size() || tz[j + 1] != 'M') {
                ok = false;
                break;
              }
              j += 2;
              int* fields[3] = {&r.month, &r.week, &r.weekday};
              for (int f = 0; f < 3 && ok; ++f) {
                const size_t s0 = j;
                while (j < tz.size() && std::isdigit(static_cast<unsigned char>(tz[j]))) ++j;
                ok = j > s0 && std::from_chars(tz.data() + s0, tz.data() + j, *fields[f]).ec == std::errc();
                if (ok && f < 2) ok = j < tz.size() && tz[j++] == '.';
              }
              if (ok && j < tz.size() && tz[j] == '/') {
                ++j;
                auto t = posix_offset(tz, j);
                ok = t.has_value();
                if (ok) r.time = *t;
              }
            }
            if (ok && j == tz.size()) {
              const int32_t std_east = -*std_west, dst_east = -dst_west;
              int first_year = 1970;
              if (!z->transitions_.empty()) {
                int y, m, d;
                ymd_from_date(static_cast<int32_t>(floor_div(z->transitions_.back() - kUnixToPostgres, 86400)), y, m,
                              d);
                first_year = y;
              }
              for (int year = first_year; year <= kLastRuleYear; ++year) {
                // Into daylight time at rules[0] (local standard time), out at rules[1] (local daylight time).
                const int64_t on = rule_day(year, rules[0].month, rules[0].week, rules[0].weekday) * 86400 +
                                   rules[0].time - std_east;
                const int64_t off = rule_day(year, rules[1].month, rules[1].week, rules[1].weekday) * 86400 +
                                    rules[1].time - dst_east;
                std::pair<int64_t, int32_t> changes[2] = {{on, dst_east}, {off, std_east}};
                if (off < on) std::swap(changes[0], changes[1]);
                for (const auto& [when, offset] : changes) {
                  if (!z->transitions_.empty() && when <= z->transitions_.back()) continue;
                  z->transitions_.push_back(when);
                  z->offsets_.push_back(offset);
                }
              }
            }
          }
        }
      }
    }
  }
  return z;
}

int32_t TimeZone::offset_at(int64_t utc_micros) const {
  if (transitions_.empty()) return initial_offset_;
  const int64_t seconds = floor_div(utc_micros, kMicros) + kUnixToPostgres;
  const auto it = std::upper_bound(transitions_.begin(), transitions_.end(), seconds);
  if (it == transitions_.begin()) return initial_offset_;
  return offsets_[static_cast<size_t>(it - transitions_.begin() - 1)];
}

int32_t TimeZone::offset_for_local(int64_t local_micros) const {
  if (transitions_.empty()) return initial_offset_;
  const int64_t t = floor_div(local_micros, kMicros) + kUnixToPostgres;
  // The first transition after a day before: the one this local time may fall around.
  const int64_t previous = t - 86400;
  const auto it = std::upper_bound(transitions_.begin(), transitions_.end(), previous);
  const int32_t before = it == transitions_.begin() ? initial_offset_
                                                    : offsets_[static_cast<size_t>(it - transitions_.begin() - 1)];
  if (it == transitions_.end()) return before;
  const int64_t boundary = *it;
  const int32_t after = offsets_[static_cast<size_t>(it - transitions_.begin())];
  const int64_t before_time = t - before, after_time = t - after;
  if (before_time < boundary && after_time < boundary) return before;
  if (before_time >= boundary && after_time >= boundary) return after;
  // In a gap or an overlap: the later instant's reading (PostgreSQL's rule).
  return before_time > after_time ? before : after;
}

int64_t TimeZone::to_utc(int64_t local_micros) const {
  if (local_micros == timestamp_neg_infinity || local_micros == timestamp_pos_infinity) return local_micros;
  return local_micros - static_cast<int64_t>(offset_for_local(local_micros)) * kMicros;
}

int64_t TimeZone::to_local(int64_t utc_micros) const {
  if (utc_micros == timestamp_neg_infinity || utc_micros == timestamp_pos_infinity) return utc_micros;
  return utc_micros + static_cast<int64_t>(offset_at(utc_micros)) * kMicros;
}

const TimeZone& current_time_zone() { return current_zone ? *current_zone : *TimeZone::utc(); }

std::shared_ptr<const TimeZone> current_time_zone_shared() { return current_zone ? current_zone : TimeZone::utc(); }

TimeZoneScope::TimeZoneScope(std::shared_ptr<const TimeZone> zone) : previous_(std::move(current_zone)) {
  current_zone = std::move(zone);
}

TimeZoneScope::~TimeZoneScope() { current_zone = std::move(previous_); }

void append_timestamptz(std::string& out, int64_t utc_micros) {
  if (utc_micros == timestamp_neg_infinity || utc_micros == timestamp_pos_infinity) {
    append_timestamp(out, utc_micros);
    return;
  }
  const int32_t offset = current_time_zone().offset_at(utc_micros);
  append_timestamp(out, utc_micros + static_cast<int64_t>(offset) * kMicros);
  // The offset goes before a trailing " BC".
  const bool bc = out.size() >= 3 && out.compare(out.size() - 3, 3, " BC") == 0;
  if (bc) out.resize(out.size() - 3);
  out += hours_text(offset);
  if (bc) out += " BC";
}

int64_t parse_timestamptz(std::string_view text) {
  bool has_zone = false;
  int zone_seconds = 0;
  const int64_t local = parse_timestamp_zone(text, has_zone, zone_seconds);
  if (local == timestamp_neg_infinity || local == timestamp_pos_infinity) return local;
  if (has_zone) return local - static_cast<int64_t>(zone_seconds) * kMicros;
  return current_time_zone().to_utc(local);
}

}  // namespace tally::types
