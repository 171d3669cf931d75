#pragma once
// The interval type: PostgreSQL's three fields (months, days, microseconds,
// kept apart because a month and a day have no fixed length), its text input
// (DecodeInterval's postgres forms: "1 year 2 mons", "1 day 02:00", "90",
// "-3 hours ago", fractional units cascading down), its text output in the
// default IntervalStyle 'postgres', and its binary send/recv form.
#include <cstdint>
#include <string>
#include <string_view>

namespace tally::types {

struct Interval {
  int32_t months = 0;
  int32_t days = 0;
  int64_t micros = 0;
  bool operator==(const Interval&) const = default;
};

// The typmod's range bits (PostgreSQL's INTERVAL_MASK of each field), for
// `interval '90' day` (the bare number counts days) and truncation
// (`interval '1 day 02:00' day` is 1 day).
namespace interval_mask {
constexpr int month = 1 << 1;
constexpr int year = 1 << 2;
constexpr int day = 1 << 3;
constexpr int hour = 1 << 10;
constexpr int minute = 1 << 11;
constexpr int second = 1 << 12;
constexpr int full_range = 0x7FFF;
}  // namespace interval_mask
constexpr int interval_full_precision = 0xFFFF;
// The typmod of `interval <range> [(precision)]`; -1 is no typmod.
inline int32_t interval_typmod(int range, int precision) { return (range << 16) | precision; }
inline int interval_range(int32_t typmod) { return typmod < 0 ? interval_mask::full_range : (typmod >> 16) & 0x7FFF; }

// Text input; typmod as above (-1: none). 22007 on bad syntax, 22008 on overflow.
Interval parse_interval(std::string_view text, int32_t typmod = -1);
// Truncates the fields below the typmod's range (AdjustIntervalForTypmod).
Interval apply_interval_typmod(Interval value, int32_t typmod);
void append_interval(std::string& out, const Interval& value);
// Binary form: int64 microseconds, int32 days, int32 months (network order).
void send_interval(std::string& out, const Interval& value);
// 22P03 when bytes is not 16 long.
Interval recv_interval(std::string_view bytes);

}  // namespace tally::types
