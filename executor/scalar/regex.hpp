#pragma once
// A PostgreSQL regular expression, compiled and run by PCRE2.
//
// Why PCRE2: it matches without recursing on the thread's stack (a 100,000
// character subject against `(a|b)*c` overflowed std::regex's and took the
// server down), a runaway backtrack ends at a match limit with an error, it
// works on UTF-8 characters (`.` is one character, not one byte, as in a
// UTF8 database) and its JIT is many times faster on the scans of whole
// columns that regexp_replace and ~ do.
//
// PostgreSQL's advanced regular expressions share PCRE's common syntax;
// what differs is translated or set by option: `.` and `[^x]` match a
// newline, `$` only at the very end, \w \d \s and [[:alpha:]] take their
// Unicode meaning (as PostgreSQL's do under a UTF-8 locale), and ARE's own escapes `\m` `\M` `\y`
// `\Y` (word boundaries) and `\Z` (the end) are rewritten into PCRE's.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tally::executor::scalar {

// Where each group of a match lies in the subject: byte offsets, npos for a
// group that took no part. Group 0 is the whole match.
struct RegexMatch {
  static constexpr size_t npos = static_cast<size_t>(-1);
  std::vector<size_t> begins, ends;

  size_t groups() const { return begins.size(); }  // including group 0
  bool matched(size_t g) const { return begins[g] != npos; }
  std::string_view group(std::string_view subject, size_t g) const {
    return subject.substr(begins[g], ends[g] - begins[g]);
  }
};

class Regex {
 public:
  // The compiled pattern, from a per-thread cache (a pattern is usually one
  // constant for every row). Throws 2201B for a pattern that does not compile.
  static const Regex& compiled(std::string_view pattern, bool icase);

  Regex(std::string_view pattern, bool icase);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // The first match starting at or after byte `from` of subject (an offset
  // on a character boundary); `out` receives its groups. Throws 2201B when
  // the match gives up at PCRE2's limits.
  bool search(std::string_view subject, size_t from, RegexMatch& out) const;
  bool search(std::string_view subject) const;

  size_t capture_groups() const { return captures_; }

 private:
  struct Compiled;
  std::unique_ptr<Compiled> code_;
  size_t captures_ = 0;
};

// PostgreSQL's ARE escapes that PCRE spells otherwise, rewritten outside
// bracket expressions; everything else is passed as it is.
std::string pcre_pattern(std::string_view are_pattern);

}  // namespace tally::executor::scalar
