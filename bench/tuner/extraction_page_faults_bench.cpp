// What a GPU query's result extraction pays in host page faults, query after
// query: GroupByAggregator::finish builds its result as fresh std::vectors
// (2^16 groups: keys, NULL flags, count and sum lanes, a 128-bit sum), which
// the executor frees after the query. With glibc's default thresholds the
// next query's arrays come from fresh mappings or a trimmed heap top and are
// faulted in again; with the heap policy every tallyd runs with
// (common/heap_retention.hpp retain_large_allocations) they reuse freed pages.
// Each setting runs in its own child process (mallopt is process-wide).
// Prints per round: minor page faults (getrusage) and microseconds, and the
// ratio of the later rounds' median times. Checks the arrays' sums.
//
// Usage: extraction_page_faults_bench [--groups 65536] [--rounds 8]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/heap_retention.hpp"

namespace {

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// One query's result arrays, built as build_result does (assign from a
// staging area, a widened sum), then dropped. Returns a checksum.
int64_t one_result(const std::vector<int64_t>& staging, size_t groups) {
  std::vector<int64_t> keys, counts_nonnull, counts, sums_nonnull;
  std::vector<uint8_t> nulls;
  keys.reserve(groups);
  keys.assign(staging.begin(), staging.begin() + static_cast<long>(groups));
  nulls.assign(groups, 0);
  counts_nonnull.assign(staging.begin() + static_cast<long>(groups), staging.begin() + static_cast<long>(2 * groups));
  counts.assign(counts_nonnull.begin(), counts_nonnull.end());
  sums_nonnull.assign(staging.begin() + static_cast<long>(groups), staging.begin() + static_cast<long>(2 * groups));
  std::vector<__int128> sums(groups);
  for (size_t g = 0; g < groups; ++g) sums[g] = static_cast<__int128>(staging[2 * groups + g]);
  int64_t check = 0;
  for (size_t g = 0; g < groups; g += 4096) check += keys[g] + counts[g] + static_cast<int64_t>(sums[g]) + nulls[g];
  return check;
}

int run(bool retain, size_t groups, int rounds) {
  if (retain) tally::retain_large_allocations();
  std::vector<int64_t> staging(3 * groups);
  for (size_t i = 0; i < staging.size(); ++i) staging[i] = static_cast<int64_t>(i % 1000);
  int64_t expected = 0;
  for (size_t g = 0; g < groups; g += 4096) expected += staging[g] + staging[groups + g] + staging[2 * groups + g];
  std::vector<double> later;
  for (int r = 0; r < rounds; ++r) {
    const long f0 = minor_faults();
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t check = one_result(staging, groups);
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    const long faults = minor_faults() - f0;
    if (check != expected) {
      std::fprintf(stderr, "wrong checksum %lld, expected %lld\n", static_cast<long long>(check), static_cast<long long>(expected));
      return 2;
    }
    std::printf("%-26s round %d: %6ld minor faults %9.0f us\n", retain ? "freed memory retained" : "glibc defaults", r, faults, us);
    if (r >= 2) later.push_back(us);
  }
  std::sort(later.begin(), later.end());
  std::printf("%-26s median of rounds 2+: %.0f us\n", retain ? "freed memory retained" : "glibc defaults",
              later.empty() ? 0.0 : later[later.size() / 2]);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  size_t groups = size_t{1} << 16;
  int rounds = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--groups") groups = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--rounds") rounds = std::atoi(argv[i + 1]);
  }
  std::printf("result arrays of %zu groups (~%.1f MB per query), %d rounds per setting\n", groups,
              static_cast<double>(groups) * (8 * 4 + 16 + 1) / 1e6, rounds);
  int status = 0;
  for (const bool retain : {false, true}) {
    std::fflush(stdout);
    const pid_t child = fork();
    if (child == 0) _exit(run(retain, groups, rounds));
    int st = 0;
    waitpid(child, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) status = 2;
  }
  return status;
}
