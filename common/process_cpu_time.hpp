#pragma once
// The CPU time of every thread of the process so far: beside a wall time, it
// says how many cores a piece of work kept busy (EXPLAIN ANALYZE's "CPU:").
#include <ctime>

namespace tally {

inline double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

}  // namespace tally
