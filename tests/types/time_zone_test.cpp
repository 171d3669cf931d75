// TimeZone (executor/types/time_zone.hpp): what SET TimeZone accepts and how
// it is named, offsets across daylight-saving changes (from the zone
// database's transitions and, past them, its POSIX footer), PostgreSQL's
// choice in gaps and overlaps, and timestamptz text in the installed zone.
// Expected values are PostgreSQL 15's (psql against a scratch server).
#include <gtest/gtest.h>

#include "executor/types/time_zone.hpp"
#include "executor/types/type_io.hpp"

using namespace tally;
using namespace tally::types;

namespace {

int64_t local(const char* text) { return parse_timestamp(text); }

std::string shown(int64_t instant) {
  std::string s;
  append_timestamptz(s, instant);
  return s;
}

TEST(TimeZone, SettingsAndNames) {
  EXPECT_EQ(TimeZone::find("+02")->name(), "<+02>-02");
  EXPECT_EQ(TimeZone::find("-7")->name(), "<-07>+07");
  EXPECT_EQ(TimeZone::find("5.5")->name(), "<+05:30>-05:30");
  EXPECT_EQ(TimeZone::find("Europe/Berlin")->name(), "Europe/Berlin");
  EXPECT_EQ(TimeZone::find("UTC+3")->offset_at(0), -3 * 3600);
  EXPECT_EQ(TimeZone::find("-05:30")->offset_at(0), 5 * 3600 + 1800);  // POSIX: east is negative
  EXPECT_EQ(TimeZone::named("+02")->offset_at(0), -2 * 3600);         // AT TIME ZONE reads it as POSIX
  EXPECT_EQ(TimeZone::named("utc")->offset_at(0), 0);
  EXPECT_EQ(TimeZone::find("No/Such_Zone"), nullptr);
  EXPECT_EQ(TimeZone::find("../etc/passwd"), nullptr);
  EXPECT_EQ(TimeZone::find("Z"), nullptr);
}

TEST(TimeZone, DaylightSavingChanges) {
  const auto berlin = TimeZone::find("Europe/Berlin");
  ASSERT_NE(berlin, nullptr);
  EXPECT_EQ(berlin->offset_at(berlin->to_utc(local("2024-01-15 12:00:00"))), 3600);
  EXPECT_EQ(berlin->offset_at(berlin->to_utc(local("2024-07-15 12:00:00"))), 7200);
  // Past the database's last listed transition (2037): its footer's rule.
  EXPECT_EQ(berlin->offset_at(berlin->to_utc(local("2040-07-01 12:00:00"))), 7200);
  EXPECT_EQ(berlin->offset_at(berlin->to_utc(local("2040-12-01 12:00:00"))), 3600);
  // 2024-03-31 02:30 does not exist: read with the offset before the gap (03:30+02).
  EXPECT_EQ(berlin->to_utc(local("2024-03-31 02:30:00")), local("2024-03-31 01:30:00"));
  // 2024-10-27 02:30 happens twice: the later reading (+01).
  EXPECT_EQ(berlin->to_utc(local("2024-10-27 02:30:00")), local("2024-10-27 01:30:00"));
}

TEST(TimeZone, TimestamptzTextInTheInstalledZone) {
  const int64_t instant = parse_timestamptz("2024-01-01 10:00:00+02");
  EXPECT_EQ(shown(instant), "2024-01-01 08:00:00+00");  // no zone installed: UTC
  {
    const TimeZoneScope scope(TimeZone::find("America/New_York"));
    EXPECT_EQ(shown(instant), "2024-01-01 03:00:00-05");
    EXPECT_EQ(parse_timestamptz("2024-07-01 12:00:00"), parse_timestamptz("2024-07-01 16:00:00Z"));
    {
      const TimeZoneScope inner(TimeZone::find("Asia/Kolkata"));
      EXPECT_EQ(shown(instant), "2024-01-01 13:30:00+05:30");
    }
    EXPECT_EQ(shown(instant), "2024-01-01 03:00:00-05");
  }
  EXPECT_EQ(shown(instant), "2024-01-01 08:00:00+00");
  EXPECT_EQ(shown(parse_timestamptz("infinity")), "infinity");
  EXPECT_EQ(parse_timestamptz("2024-01-01 10:00:00+0530"), parse_timestamptz("2024-01-01 04:30:00 UTC"));
  EXPECT_THROW(parse_timestamptz("2024-01-01 10:00:00+16"), Error);
}

}  // namespace
