#pragma once
// The wall clock as PostgreSQL's timestamps count it: microseconds since
// PostgreSQL's epoch (the Unix epoch plus kUnixTo2000 seconds), UTC.
#include <cstdint>
#include <ctime>

namespace tally::executor {

constexpr int64_t kUnixTo2000 = 946684800;

inline int64_t clock_us() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec - kUnixTo2000) * 1'000'000 + ts.tv_nsec / 1000;
}

}  // namespace tally::executor
