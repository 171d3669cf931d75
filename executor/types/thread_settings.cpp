#include "executor/types/thread_settings.hpp"

namespace tally::types {
namespace {
thread_local DateOrder thread_date_order = DateOrder::mdy;
}  // namespace

DateOrder date_order_of(std::string_view datestyle) {
  // The canonical form ("ISO, DMY", settings.cpp) names the order last.
  if (datestyle.ends_with("DMY")) return DateOrder::dmy;
  if (datestyle.ends_with("YMD")) return DateOrder::ymd;
  return DateOrder::mdy;
}

DateOrder current_date_order() { return thread_date_order; }

ThreadSettingsScope::ThreadSettingsScope(const ThreadSettings& settings)
    : zone_(settings.zone), bytea_output_(settings.bytea_output), previous_date_order_(thread_date_order) {
  thread_date_order = settings.date_order;
}

ThreadSettingsScope::~ThreadSettingsScope() { thread_date_order = previous_date_order_; }

ThreadSettings current_thread_settings() {
  return ThreadSettings{current_time_zone_shared(), current_bytea_output(), current_date_order()};
}

}  // namespace tally::types
