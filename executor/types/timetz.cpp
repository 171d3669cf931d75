#include "executor/types/timetz.hpp"

#include "common/error.hpp"
#include "executor/types/clock.hpp"
#include "executor/types/time_zone.hpp"
#include "executor/types/type_io.hpp"

namespace tally::types {
namespace {

constexpr int64_t kMicros = 1'000'000;
// Offsets are within ±15:59:59 (PostgreSQL's TZDISP_LIMIT): 17 bits hold
// the offset west plus kZoneBias; the UTC instant, at least -15:59:59 and
// at most 24:00:00 + 15:59:59, sits above them plus kInstantBias.
constexpr int kZoneBits = 17;
constexpr int32_t kZoneBias = 1 << 16;
constexpr int32_t kMaxZone = 15 * 3600 + 59 * 60 + 59;
constexpr int64_t kInstantBias = int64_t{kMaxZone + 1} * kMicros;

int64_t local_time_of_day(int64_t local_micros) {
  int64_t t = local_micros % usecs_per_day;
  return t < 0 ? t + usecs_per_day : t;
}

// The current zone's offset on the current local date at `time_micros`.
int32_t current_offset_at(int64_t time_micros) {
  const TimeZone& zone = current_time_zone();
  const int64_t local_now = zone.to_local(executor::clock_us());
  const int64_t today = local_now - local_time_of_day(local_now);
  return zone.offset_for_local(today + time_micros);
}

}  // namespace

int64_t pack_timetz(int64_t time_micros, int32_t zone_east) {
  const int64_t zone_west = -static_cast<int64_t>(zone_east);
  const int64_t instant = time_micros + zone_west * kMicros;  // PostgreSQL's timetz_cmp key
  return ((instant + kInstantBias) << kZoneBits) | (zone_west + kZoneBias);
}

int32_t timetz_zone(int64_t packed) {
  return -static_cast<int32_t>((packed & ((int64_t{1} << kZoneBits) - 1)) - kZoneBias);
}

int64_t timetz_time(int64_t packed) {
  const int64_t instant = (packed >> kZoneBits) - kInstantBias;
  return instant + static_cast<int64_t>(timetz_zone(packed)) * kMicros;
}

int64_t parse_timetz(std::string_view text, int32_t typmod) {
  std::string_view s = text;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  bool has_zone = false;
  int zone_seconds = 0;
  int64_t micros = 0;
  if (s.size() == 3 && (s[0] | 0x20) == 'n' && (s[1] | 0x20) == 'o' && (s[2] | 0x20) == 'w') {
    const int64_t now = executor::clock_us();
    micros = local_time_of_day(current_time_zone().to_local(now));
    has_zone = true;
    zone_seconds = current_time_zone().offset_at(now);
  } else if (s.size() == 8 && std::string(s) == "allballs") {
    has_zone = true;  // PostgreSQL's 'allballs' is 00:00:00 UTC
  } else {
    micros = parse_time_zone(text, has_zone, zone_seconds);
  }
  micros = round_time(micros, typmod);
  if (!has_zone) zone_seconds = current_offset_at(micros);
  return pack_timetz(micros, zone_seconds);
}

void append_timetz(std::string& out, int64_t packed) {
  append_time(out, timetz_time(packed));
  out += hours_text(timetz_zone(packed));
}

int64_t recv_timetz(std::string_view bytes, int32_t typmod) {
  if (bytes.size() != 12) throw Error(SqlState::invalid_binary_representation, "insufficient data left in message");
  uint64_t t = 0;
  for (size_t i = 0; i < 8; ++i) t = (t << 8) | static_cast<unsigned char>(bytes[i]);
  uint32_t z = 0;
  for (size_t i = 8; i < 12; ++i) z = (z << 8) | static_cast<unsigned char>(bytes[i]);
  const int64_t micros = static_cast<int64_t>(t);
  const int32_t zone_west = static_cast<int32_t>(z);
  if (micros < 0 || micros > usecs_per_day) {
    throw Error(SqlState::datetime_field_overflow, "time out of range");
  }
  if (zone_west < -kMaxZone || zone_west > kMaxZone) {
    throw Error(SqlState::invalid_time_zone_displacement_value, "time zone displacement out of range");
  }
  return pack_timetz(round_time(micros, typmod), -zone_west);
}

void send_timetz(std::string& out, int64_t packed) {
  const uint64_t t = static_cast<uint64_t>(timetz_time(packed));
  for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((t >> shift) & 0xff);
  const uint32_t z = static_cast<uint32_t>(-timetz_zone(packed));
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((z >> shift) & 0xff);
}

int64_t round_timetz(int64_t packed, int32_t typmod) {
  return pack_timetz(round_time(timetz_time(packed), typmod), timetz_zone(packed));
}

int64_t time_to_timetz(int64_t time_micros) {
  return pack_timetz(time_micros, current_offset_at(time_micros));
}

int64_t timestamptz_to_timetz(int64_t utc_micros) {
  const TimeZone& zone = current_time_zone();
  return pack_timetz(local_time_of_day(zone.to_local(utc_micros)), zone.offset_at(utc_micros));
}

}  // namespace tally::types
