#pragma once
// What a benchmarked server process has used, read between its queries.
#include <sys/types.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace tally::bench {

// What a process has used so far, from /proc/<pid>/stat: its CPU seconds
// (user and system; against a query's wall time they say on how many cores
// the server worked) and its page faults (each a fresh page the kernel
// zeroes: how much memory a warm query takes anew instead of reusing).
struct ProcessUse {
  double cpu_seconds = 0;
  unsigned long long page_faults = 0;
};

inline ProcessUse process_use(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t name_end = text.rfind(')');
  if (name_end == std::string::npos) return {};
  std::istringstream fields(text.substr(name_end + 2));
  std::string field;
  unsigned long long minor = 0, major = 0, user = 0, system = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {  // fields 10, 12: minflt, majflt; 14, 15: utime, stime
    if (i == 10) minor = std::stoull(field);
    if (i == 12) major = std::stoull(field);
    if (i == 14) user = std::stoull(field);
    if (i == 15) system = std::stoull(field);
  }
  return {static_cast<double>(user + system) / static_cast<double>(::sysconf(_SC_CLK_TCK)), minor + major};
}

}  // namespace tally::bench
