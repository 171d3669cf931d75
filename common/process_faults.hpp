#pragma once
// Minor page faults of the whole process so far (getrusage(RUSAGE_SELF)):
// the steps that write fresh memory, on threads of their own too, show in
// EXPLAIN ANALYZE how many pages they took from the kernel.
#include <sys/resource.h>

namespace tally {

inline long process_minor_faults() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return usage.ru_minflt;
}

}  // namespace tally
