// kill -9 in the middle of COPY loads, at several points, then restart: the
// table holds exactly the batches whose COPY returned (plus possibly the one
// in flight, whole or not at all), every chunk reads back, and recovery leaves
// no orphan files.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>

namespace {

constexpr int rows_per_batch = 30000;
constexpr int chunk_rows = 8192;  // several chunk files per COPY: kills land mid-append

struct Child {
  pid_t pid;
  FILE* out;
};

Child spawn(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe");
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  return {pid, fdopen(fds[0], "r")};
}

// Runs verify; returns batch -> rows, and total/orphans through out-params.
std::map<int, uint64_t> verify(const std::string& dir, uint64_t& total, uint64_t& orphans, uint64_t& recovered) {
  Child c = spawn({TALLY_CRASH_DRIVER, "verify", dir, std::to_string(chunk_rows)});
  std::map<int, uint64_t> batches;
  char line[256];
  total = orphans = ~0ull;
  while (std::fgets(line, sizeof line, c.out)) {
    std::istringstream in(line);
    std::string word;
    in >> word;
    if (word == "batch") {
      int b;
      uint64_t n;
      in >> b >> n;
      batches[b] = n;
    } else if (word == "total") {
      in >> total;
    } else if (word == "recovered") {
      in >> recovered;
    } else if (word == "orphans") {
      in >> orphans;
    } else {
      ADD_FAILURE() << "verify: " << line;
    }
  }
  fclose(c.out);
  int status = 0;
  waitpid(c.pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return batches;
}

TEST(CopyCrash, KillNineDuringCopyKeepsExactlyTheAcknowledgedBatches) {
  const std::string dir = (std::filesystem::temp_directory_path() / ("tally_crash_" + std::to_string(getpid()))).string();
  std::filesystem::remove_all(dir);
  std::mt19937 rng(12345);
  std::set<int> acked;
  int next_batch = 0;
  int kills_mid_load = 0;
  int rounds_with_orphans = 0;  // kills that landed after chunk files were written
  // Ten rounds, and more (up to 40) until a kill has landed after an
  // append wrote its files: where that window is short against a batch (a
  // loaded host; CI 2026-11-23 saw none in ten), random kills miss it.
  for (int round = 0; round < 10 || (rounds_with_orphans == 0 && round < 40); ++round) {
    Child c = spawn({TALLY_CRASH_DRIVER, "load", dir, std::to_string(next_batch), "50", std::to_string(rows_per_batch),
                     std::to_string(chunk_rows)});
    // Let it acknowledge a few batches, then kill at a random moment of the
    // next one (a random fraction of the measured time per batch).
    const int wait_acks = 2 + static_cast<int>(rng() % 3);
    char line[128];
    int seen = 0;
    auto first_ack = std::chrono::steady_clock::now(), last_ack = first_ack;
    while (seen < wait_acks && std::fgets(line, sizeof line, c.out)) {
      int b;
      if (std::sscanf(line, "acked %d", &b) == 1) {
        acked.insert(b);
        last_ack = std::chrono::steady_clock::now();
        if (seen++ == 0) first_ack = last_ack;
      }
    }
    const auto per_batch = (last_ack - first_ack) / std::max(1, seen - 1);
    std::this_thread::sleep_for(per_batch * static_cast<double>(rng() % 1000) / 1000.0);
    kill(c.pid, SIGKILL);
    int status = 0;
    waitpid(c.pid, &status, 0);
    // Acks written before the kill are still in the pipe.
    while (std::fgets(line, sizeof line, c.out)) {
      int b;
      if (std::sscanf(line, "acked %d", &b) == 1) acked.insert(b);
    }
    fclose(c.out);
    if (WIFSIGNALED(status)) ++kills_mid_load;
    const int in_flight = acked.empty() ? next_batch : *acked.rbegin() + 1;
    uint64_t total = 0, orphans = 0, recovered = 0;
    const auto batches = verify(dir, total, orphans, recovered);
    rounds_with_orphans += recovered > 0;
    EXPECT_EQ(orphans, 0u) << "round " << round;
    uint64_t expected_total = 0;
    for (const int b : acked) {
      ASSERT_TRUE(batches.count(b)) << "acknowledged batch " << b << " lost in round " << round;
      EXPECT_EQ(batches.at(b), static_cast<uint64_t>(rows_per_batch));
      expected_total += rows_per_batch;
    }
    for (const auto& [b, n] : batches) {
      if (acked.count(b)) continue;
      // Only the batch in flight may have committed without its ack, and only whole.
      EXPECT_EQ(b, in_flight) << "unexpected batch " << b << " in round " << round;
      EXPECT_EQ(n, static_cast<uint64_t>(rows_per_batch)) << "partial batch " << b;
      acked.insert(b);
      expected_total += n;
    }
    EXPECT_EQ(total, expected_total);
    next_batch = in_flight + 1;
  }
  EXPECT_GE(kills_mid_load, 8);
  EXPECT_GE(rounds_with_orphans, 1) << "kills never interrupted an append after it wrote files";
  std::filesystem::remove_all(dir);
}

}  // namespace
