#pragma once
// The session settings that change how values are read and printed, as the
// statement running on this thread has them: TimeZone (time_zone.hpp),
// bytea_output (bytea_output.hpp) and the field order of DateStyle. The
// session installs them per statement (ThreadSettingsScope), and every pool
// task of the statement installs the same, so that a value reads and prints
// alike whichever thread handles it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "executor/types/bytea_output.hpp"
#include "executor/types/time_zone.hpp"

namespace tally::types {

// The order DateStyle gives a date's numeric fields ('01/02/2024'): month,
// day, year (MDY, the default), day first (DMY) or year first (YMD).
enum class DateOrder : uint8_t { mdy, dmy, ymd };

// The order a DateStyle value names ("ISO, DMY"); MDY where it names none.
DateOrder date_order_of(std::string_view datestyle);

// This thread's date order (MDY when no scope is installed).
DateOrder current_date_order();

struct ThreadSettings {
  std::shared_ptr<const TimeZone> zone;
  ByteaOutput bytea_output = ByteaOutput::hex;
  DateOrder date_order = DateOrder::mdy;
  bool operator==(const ThreadSettings&) const = default;
};

// This thread's settings, to install on another thread.
ThreadSettings current_thread_settings();

// Installs `settings` for this thread while it lives; nests.
class ThreadSettingsScope {
 public:
  explicit ThreadSettingsScope(const ThreadSettings& settings);
  ~ThreadSettingsScope();
  ThreadSettingsScope(const ThreadSettingsScope&) = delete;
  ThreadSettingsScope& operator=(const ThreadSettingsScope&) = delete;

 private:
  TimeZoneScope zone_;
  ByteaOutputScope bytea_output_;
  DateOrder previous_date_order_;
};

}  // namespace tally::types
