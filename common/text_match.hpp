#pragma once
// A text condition evaluated once per entry of a column's dictionary where
// the programs run (ProgramOp::lookup of a LookupColumn with `text`): a
// column of tens of millions of distinct texts (TPC-H's o_comment) is
// matched on the device over its dictionary's bytes, kept there, instead of
// row by row on the host. The matching code is written once for the host
// compiler and nvcc, so the CPU tests check the code the device runs.
//
// The patterns taken are LIKE's of literal runs and '%' only (no '_', no
// escape, case-sensitive: '%special%requests%', 'PROMO%'): PostgreSQL
// compares such a pattern's runs byte by byte, and the leftmost match of
// each run leaves the most text for the runs after it, so a greedy search
// finds a match whenever one exists (executor's LikePattern does the same).
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "common/host_device.hpp"

namespace tally {

struct RunsPattern {
  static constexpr int kMaxBytes = 192;
  static constexpr int kMaxRuns = 16;
  char bytes[kMaxBytes] = {};        // the runs, one after another
  uint16_t ends[kMaxRuns + 1] = {};  // run r is bytes[ends[r - 1], ends[r]) (ends[-1] = 0)
  int32_t runs = 0;                  // the head, the middle runs, the tail (with '%'; else one)
  bool percent = false;              // false: the text must equal the one run
};

// The pattern `like` as runs, or nullopt where it has '_' or '\\', or more
// runs or bytes than RunsPattern holds.
inline std::optional<RunsPattern> runs_pattern(std::string_view like) {
  if (like.find_first_of("_\\") != std::string_view::npos) return std::nullopt;
  RunsPattern p;
  size_t used = 0;
  auto add = [&](std::string_view run) {
    if (p.runs >= RunsPattern::kMaxRuns || used + run.size() > RunsPattern::kMaxBytes) return false;
    for (char c : run) p.bytes[used++] = c;
    p.ends[p.runs++] = static_cast<uint16_t>(used);
    return true;
  };
  size_t at = like.find('%');
  p.percent = at != std::string_view::npos;
  if (!add(like.substr(0, at))) return std::nullopt;
  if (!p.percent) return p;
  for (;;) {
    const size_t next = like.find('%', at + 1);
    if (next == std::string_view::npos) break;
    if (next > at + 1 && !add(like.substr(at + 1, next - at - 1))) return std::nullopt;
    at = next;
  }
  if (!add(like.substr(at + 1))) return std::nullopt;
  return p;
}

// Whether the `n` bytes at `t` match pattern `p`.
TALLY_HD bool runs_match(const char* t, uint64_t n, const RunsPattern& p) {
  auto equal = [](const char* a, const char* b, uint64_t len) {
    for (uint64_t i = 0; i < len; ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  };
  const uint64_t head = p.ends[0];
  if (!p.percent) return n == head && equal(t, p.bytes, head);
  if (n < head || !equal(t, p.bytes, head)) return false;
  uint64_t at = head;
  for (int r = 1; r + 1 < p.runs; ++r) {
    const char* run = p.bytes + p.ends[r - 1];
    const uint64_t len = p.ends[r] - p.ends[r - 1];
    uint64_t found = at;
    while (found + len <= n && !equal(t + found, run, len)) ++found;
    if (found + len > n) return false;
    at = found + len;
  }
  const uint64_t tail = p.ends[p.runs - 1] - p.ends[p.runs - 2];
  return n >= at + tail && equal(t + n - tail, p.bytes + p.ends[p.runs - 2], tail);
}

// A text column's dictionary entries, as the engines read them.
class TextEntries {
 public:
  virtual ~TextEntries() = default;
  virtual int32_t size() const = 0;
  virtual std::string_view at(int32_t code) const = 0;
  // Entries of one identity agree on every code below the smaller size: a
  // device copy of the first n entries serves any later reader of n or fewer.
  virtual std::weak_ptr<const void> identity() const = 0;
};

// A lookup column's verdicts by code (1 = the entry matches), made where
// the programs run from the first `count` entries.
struct TextVerdicts {
  std::shared_ptr<const TextEntries> entries;
  int32_t count = 0;
  RunsPattern pattern;
};

}  // namespace tally
