#pragma once
// time with time zone (timetz): a time of day (µs since midnight, 0 ..
// 24:00:00) and a UTC offset (seconds east, at most 15:59:59 either way).
// Both are packed into one int64 whose integer order is PostgreSQL's
// timetz_cmp order (first the UTC instant the time of day names, then the
// offset, the larger offset west last), and which is equal only when both
// parts are: so comparisons, hashing, sorting, grouping, joins and storage
// treat a timetz as they treat an int8.
#include <cstdint>
#include <string>
#include <string_view>

namespace tally::types {

int64_t pack_timetz(int64_t time_micros, int32_t zone_east);
int64_t timetz_time(int64_t packed);
int32_t timetz_zone(int64_t packed);  // seconds east of UTC

// timetz_in: a time as time_in reads it, with its offset ('+02', '-05:30',
// 'Z', 'UTC'), else the current zone's offset on the current date at that
// time of day (PostgreSQL's DetermineTimeZoneOffset); 'now' is the current
// time in the current zone. Rounded to time(p) with time zone's typmod.
int64_t parse_timetz(std::string_view text, int32_t typmod = -1);
// timetz_out: the time as time_out prints it, then the offset ("+02",
// "+05:30", "-03:00:15").
void append_timetz(std::string& out, int64_t packed);
// timetz_recv: 8 bytes of µs since midnight, 4 bytes of offset in seconds
// west of UTC; 22008/22009 out of range.
int64_t recv_timetz(std::string_view bytes, int32_t typmod);
// timetz_send: the same 12 bytes, appended.
void send_timetz(std::string& out, int64_t packed);
// The time part rounded to typmod (AdjustTimeForTypmod), the offset kept.
int64_t round_timetz(int64_t packed, int32_t typmod);

// Casts: time -> timetz takes the current zone's offset on the current date
// at that time (time_timetz); timestamptz -> timetz the local time of day of
// the instant and the zone's offset then (timestamptz_timetz).
int64_t time_to_timetz(int64_t time_micros);
int64_t timestamptz_to_timetz(int64_t utc_micros);

}  // namespace tally::types
