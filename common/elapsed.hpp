#pragma once
// Milliseconds since a steady-clock instant: the timings EXPLAIN ANALYZE
// prints for the parts of a run.
#include <chrono>

namespace tally {

inline double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace tally
