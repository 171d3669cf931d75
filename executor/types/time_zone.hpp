#pragma once
// PostgreSQL's TimeZone setting: the UTC offset a timestamptz is shown in,
// and the one a timestamp without time zone (or a timestamptz literal without
// an offset) is read in. A timestamptz itself is an instant: int64 µs since
// 2000-01-01 00:00:00 UTC, whatever the zone.
//
// The session's zone reaches the conversions through a per-thread slot, as the
// statement's cancel token does (cancel_point.hpp): the session installs it
// for each statement (TimeZoneScope), and the CPU engine's helpers and the
// result encoder's pool tasks install the caller's in theirs.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tally::types {

class TimeZone {
 public:
  // The zone a TimeZone setting names, as PostgreSQL 15's check_timezone reads
  // it: a number of hours east of UTC ('+02', '-7', '5.5': shown as
  // '<+02>-02'), a zone of the IANA database in /usr/share/zoneinfo
  // ('Europe/Berlin', 'UTC', 'EST'), or a POSIX zone without daylight rules
  // ('UTC+3', '<+05>-05', '-05:30': there, west of Greenwich is positive).
  // Null when the setting names no zone (PostgreSQL's 22023 then).
  static std::shared_ptr<const TimeZone> find(std::string_view setting);
  // The zone AT TIME ZONE names (PostgreSQL's pg_tzset): an IANA zone or a
  // POSIX one, where a bare '+02' is two hours WEST of Greenwich. Null when
  // it names none. Zone abbreviations ('PST') are not read.
  static std::shared_ptr<const TimeZone> named(std::string_view name);
  // A fixed offset, seconds east of UTC (SET TIME ZONE INTERVAL '+03:00').
  static std::shared_ptr<const TimeZone> fixed_hours_east(int32_t seconds_east);
  static const std::shared_ptr<const TimeZone>& utc();

  // How SHOW TimeZone prints it after SET.
  const std::string& name() const { return name_; }
  // Seconds east of UTC in effect at a UTC instant (µs since 2000-01-01).
  int32_t offset_at(int64_t utc_micros) const;
  // Seconds east of UTC for a local wall-clock time (µs since 2000-01-01):
  // in a spring-forward gap the offset before it, in a fall-back overlap the
  // one after it (PostgreSQL's DetermineTimeZoneOffset).
  int32_t offset_for_local(int64_t local_micros) const;

  // The instant of a local time, and the local time of an instant (±infinity kept).
  int64_t to_utc(int64_t local_micros) const;
  int64_t to_local(int64_t utc_micros) const;

 private:
  struct Rule;  // a POSIX footer's daylight rule (time_zone.cpp)
  static std::shared_ptr<const TimeZone> load(const std::string& name);

  std::string name_;
  std::vector<int64_t> transitions_;  // UTC seconds since 1970-01-01, ascending
  std::vector<int32_t> offsets_;      // the offset from transitions_[i] on
  int32_t initial_offset_ = 0;        // before the first transition
};

// The zone the statement running on this thread reads and shows times in
// (UTC when none is installed).
const TimeZone& current_time_zone();
std::shared_ptr<const TimeZone> current_time_zone_shared();

// Installs a zone for this thread while it lives (null: UTC); nests.
class TimeZoneScope {
 public:
  explicit TimeZoneScope(std::shared_ptr<const TimeZone> zone);
  ~TimeZoneScope();
  TimeZoneScope(const TimeZoneScope&) = delete;
  TimeZoneScope& operator=(const TimeZoneScope&) = delete;

 private:
  std::shared_ptr<const TimeZone> previous_;
};

// A UTC offset (seconds east) as PostgreSQL prints a numeric zone: "+02"
// for whole hours, else "+05:30" or "-03:00:15".
std::string hours_text(int32_t seconds);
// A timestamptz's text in the current zone, its offset last as PostgreSQL
// prints it ("+02"; "+05:30", "-03:00:15" for offsets with minutes or
// seconds), BC after it.
void append_timestamptz(std::string& out, int64_t utc_micros);
// A timestamptz from text: its own offset ('+02', '+0530', '-05:30', 'Z',
// 'UTC', 'GMT') or, without one, the current zone's at that local time.
int64_t parse_timestamptz(std::string_view text);

}  // namespace tally::types
