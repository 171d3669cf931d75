#pragma once
// Names the calling thread (Linux: 15 characters at most, the rest cut), so
// that top -H, perf, gdb and /proc/<pid>/task/*/comm tell tallyd's threads
// apart: sessions from the tuning-cache writer, the log sink from the
// accept loop. The live tuning bench reads these names to say which thread
// ran beside a restarted server's first query.
#include <pthread.h>

#include <string>

namespace tally {

inline void name_this_thread(const std::string& name) {
  const std::string cut = name.substr(0, 15);
  (void)pthread_setname_np(pthread_self(), cut.c_str());
}

}  // namespace tally
