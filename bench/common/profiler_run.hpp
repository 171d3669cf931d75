#pragma once
// A profiler attached to tallyd for the queries' runs only: a benchmark
// starts `command` (run by /bin/sh, "{pid}" replaced by tallyd's process
// id; `perf record -F 999 -g -p {pid} -o /tmp/perf.data`) once its loads are
// done, and stops it with SIGINT when the runs end, so the profile holds
// the queries and not the COPY before them.
#include <csignal>
#include <cstdio>
#include <string>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tally::bench {

class ProfilerRun {
 public:
  ProfilerRun(std::string command, pid_t target) {
    if (command.empty()) return;
    for (size_t at = command.find("{pid}"); at != std::string::npos; at = command.find("{pid}", at)) {
      command.replace(at, 5, std::to_string(target));
    }
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);  // its own group: SIGINT reaches what the shell starts
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    if (pid_ < 0) std::fprintf(stderr, "could not start the profiler: %s\n", command.c_str());
    else sleep(1);  // perf attaches before the first query
  }
  ~ProfilerRun() {
    if (pid_ <= 0) return;
    kill(-pid_, SIGINT);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  ProfilerRun(const ProfilerRun&) = delete;
  ProfilerRun& operator=(const ProfilerRun&) = delete;

 private:
  pid_t pid_ = -1;
};

}  // namespace tally::bench
